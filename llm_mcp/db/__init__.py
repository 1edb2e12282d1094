"""Chats in the database: the Django side of a chat's persistence.

    record = Chat.objects.create(model="gpt-4.1-mini")       # llm_mcp.models.Chat mixes in ChatRecord
    record.with_mcp(Linear(user=user)).ask("Which issues are open?")
    Chat.objects.get(pk=record.pk).complete()                # later, in another process

Modules, one concern each:

- `store`: `DatabaseStore`, the chat store over the message and tool call tables;
- `locks`: `TurnLock`, one turn of a chat at a time across processes;
- `record`: `ChatRecord`, what makes a chat row behave like a chat;
- `agents`: an agent's import path and its inputs as JSON;
- `rows`: the models in use, and rows to chat messages and back.
"""

from .agents import agent_path, decode_inputs, encode_inputs
from .locks import TurnLock
from .record import ChatRecord
from .store import DatabaseStore

__all__ = ["ChatRecord", "DatabaseStore", "TurnLock", "agent_path", "decode_inputs", "encode_inputs"]
