"""Chats and agents that offer MCP tools (and plain Python tools) to a model. No Django import.

    import llm_mcp
    chat = llm_mcp.chat(model="gpt-4.1-mini", provider="openai").with_mcp(Linear(user=user))
    chat.ask("Which open issues mention the flaky login spec?")

This package is itself callable: ``llm_mcp.chat(...)`` builds a `Chat`.

Modules, one concern each:

- `chat`: `Chat`, a conversation's turns (asking the model, running tool calls, pausing);
- `toolbox`: `ToolLike`, the contract of a chat tool, and the tools of one model request;
- `tools`: `ChatTool`, tools written in Python (plain functions, the tool-search tool);
- `store`: `Store`, where a conversation lives, and what waits in a stored one;
- `messages`: `Message` and `ToolCall`, the conversation as data; attachments as text;
- `agent`: `Agent`, a kind of chat declared as a class;
- `schemas`: argument schemas made acceptable to the providers, safe tool names;
- `providers`: the model APIs (OpenAI, Anthropic) and the interface for others.
"""

import sys
import types
from typing import Any

from .agent import Agent
from .chat import Chat, new_chat
from .messages import Message, ToolCall
from .providers import ModelRequest, Provider, ToolSpec, get_provider, register_provider
from .store import MemoryStore, Store
from .toolbox import ToolLike
from .tools import ChatTool, FunctionTool, report_progress

__all__ = ["Agent", "Chat", "ChatTool", "FunctionTool", "MemoryStore", "Message", "ModelRequest", "Provider",
           "Store", "ToolCall", "ToolLike", "ToolSpec", "get_provider", "new_chat", "register_provider",
           "report_progress"]


class _CallableModule(types.ModuleType):
    """Lets ``llm_mcp.chat(model=...)`` build a chat while ``llm_mcp.chat`` stays this package."""

    def __call__(self, model: str, provider: Any = None, **options: Any) -> Chat:
        return new_chat(model, provider, **options)


sys.modules[__name__].__class__ = _CallableModule
