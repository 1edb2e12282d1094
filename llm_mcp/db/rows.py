"""Rows and chat messages: the models in use, and the mapping between a message (or tool
call) row and a chat `Message` (or `ToolCall`).

    rows = message_model().objects.filter(chat_id=pk).values(*MESSAGE_FIELDS)
    messages = [message_from_values(row, [], None) for row in rows]
"""

from __future__ import annotations

import math
from typing import Any

from django.apps import apps
from django.db import models

from .. import conf
from ..chat.messages import Message, ToolCall, attachment_from_dict, attachment_to_dict, clean_text

__all__ = ["CALL_FIELDS", "MESSAGE_FIELDS", "call_from_values", "call_values", "db_alias", "message_from_row",
           "message_from_values", "message_model", "row_values", "storable", "tool_call_model"]


def message_model() -> type[models.Model]:
    """The message model in use (``LLM_MCP_MESSAGE_MODEL``)."""
    return apps.get_model(conf.message_model_name(), require_ready=False)


def tool_call_model() -> type[models.Model]:
    """The tool call model (``llm_mcp.ToolCall``)."""
    return apps.get_model("llm_mcp", "ToolCall", require_ready=False)


def db_alias(record: models.Model) -> str:
    """The database alias a record was loaded from (or will be saved to)."""
    return record._state.db or "default"



def row_values(message: Message) -> dict[str, Any]:
    """The message table's column values for ``message`` (not ``chat`` nor ``key``), storable as they are."""
    return {"role": message.role, "content": message.content,  # cleaned by add()
            "attachments": storable([attachment_to_dict(a) for a in message.attachments]),
            "is_error": message.is_error, "model": clean_text(message.model or ""),
            "input_tokens": message.input_tokens, "output_tokens": message.output_tokens,
            "raw": storable(message.raw)}


def call_values(call: ToolCall) -> dict[str, Any]:
    """The tool call table's column values for ``call``'s state (not its id, name or message)."""
    return {"arguments": storable(call.arguments), "approval": call.approval or "",
            "pending_questions": storable(call.pending_questions), "request_state": call.request_state,
            "task": storable(call.task), **task_columns(call.task), "mcp_result": storable(call.mcp_result),
            "ui_uri": call.ui_uri}


def task_columns(task: dict[str, Any] | None) -> dict[str, Any]:
    """The ``task_*`` columns for a call's stored task (``llm_mcp.Task.to_dict()``; blank for
    ``None``): id, status, status message, poll interval (seconds), expiry, server name.
    A stored task the client cannot read fills what it can (id, status, server)."""
    from ..client.errors import MCPError
    from ..client.task import Task

    if not isinstance(task, dict):
        return {"task_id": "", "task_status": "", "task_status_message": "", "task_poll_interval": None,
                "task_expires_at": None, "task_server": ""}
    text = lambda value, limit: clean_text(value)[:limit] if isinstance(value, str) else ""  # noqa: E731
    columns = {"task_id": text(task.get("taskId"), 255), "task_status": text(task.get("status"), 32),
               "task_status_message": text(task.get("statusMessage"), 10_000), "task_poll_interval": None,
               "task_expires_at": None, "task_server": text(task.get("server"), 255)}
    try:
        read = Task.from_dict(task)
    except MCPError:
        return columns
    columns.update(task_poll_interval=read.poll_interval, task_expires_at=read.expires_at)
    return columns


def storable(value: Any) -> Any:
    """``value`` as every database's JSON column takes it: unpaired surrogates in strings
    become U+FFFD, and NaN/Infinity (which JSON lacks) become ``None``. What a model or a
    server sends is kept otherwise as it is."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {clean_text(str(key)): storable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable(item) for item in value]
    return value


MESSAGE_FIELDS = ("id", "role", "content", "attachments", "is_error", "model", "input_tokens", "output_tokens", "raw")
"""The message columns a chat message is read from."""
CALL_FIELDS = ("tool_call_id", "name", "arguments", "approval", "pending_questions", "request_state", "task",
               "mcp_result", "ui_uri")
"""The tool call columns a chat tool call is read from."""


def call_from_values(values: dict[str, Any]) -> ToolCall:
    """A chat ``ToolCall`` from a tool call row read with ``.values(*CALL_FIELDS)``."""
    return ToolCall(id=values["tool_call_id"], name=values["name"], arguments=values["arguments"] or {},
                    approval=values["approval"] or None, pending_questions=values["pending_questions"] or [],
                    request_state=values["request_state"], task=values["task"], mcp_result=values["mcp_result"],
                    ui_uri=values["ui_uri"])


def message_from_values(values: dict[str, Any], calls: list[ToolCall], tool_call_id: str | None) -> Message:
    """A chat ``Message`` from a message row read with ``.values(*MESSAGE_FIELDS)``: ``calls``
    are its tool calls (kept for an assistant message), ``tool_call_id`` the call it answers
    (kept for a tool message)."""
    return message_from_row(tuple(values[field] for field in MESSAGE_FIELDS), calls, tool_call_id)


def message_from_row(row: tuple[Any, ...], calls: list[ToolCall], tool_call_id: str | None) -> Message:
    """`message_from_values` for a row read with ``.values_list(*MESSAGE_FIELDS)`` (a tuple in that
    order): what a chat's history is read as, every turn, so no dict is built per row."""
    pk, role, content, attachments, is_error, model, input_tokens, output_tokens, raw = row
    # Positional, in the order of Message's fields (a third cheaper than keywords, per row of
    # every turn's read; llm_mcp_tests/django/test_history_reads.py checks the order).
    return Message(role, content, [attachment_from_dict(a) for a in attachments] if attachments else [],
                   calls if role == "assistant" else [], tool_call_id if role == "tool" else None, is_error,
                   model or None, input_tokens, output_tokens, raw, pk)
