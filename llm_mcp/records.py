"""Chat records: the names this module held, kept importable from here. The code lives in
`llm_mcp.db` now, one concern per module:

- `ChatRecord`: `llm_mcp.db.record`;
- `DatabaseStore`: `llm_mcp.db.store`;
- `TurnLock`: `llm_mcp.db.locks`;
- `agent_path`, `encode_inputs`, `decode_inputs`: `llm_mcp.db.agents`;
- `message_model`, `tool_call_model` (and the row/message mapping): `llm_mcp.db.rows`.
"""

from .db.agents import agent_path, decode_inputs, encode_inputs
from .db.locks import TurnLock
from .db.record import ChatRecord
from .db.rows import message_model, tool_call_model
from .db.store import DatabaseStore

__all__ = ["ChatRecord", "DatabaseStore", "TurnLock", "agent_path", "decode_inputs", "encode_inputs",
           "message_model", "tool_call_model"]
