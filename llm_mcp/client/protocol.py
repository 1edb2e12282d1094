"""Protocol facts the engine builds on: revisions, reserved keys, error codes, JSON-RPC shapes.

Kept free of heavy imports so that ``import llm_mcp.client`` stays fast; the values are
the ones the MCP specification (revision 2026-07-28, "Base Protocol" and "Versioning")
and the ``mcp-types`` wire models define.
"""

from __future__ import annotations

import itertools
import json
import random
import sys
from typing import Any

import orjson

from .._version import __version__

__all__ = [
    "CLIENT_INFO",
    "HANDSHAKE_REVISIONS",
    "LATEST",
    "SUPPORTED_REVISIONS",
    "notification",
    "request",
]

LATEST = "2026-07-28"
"""The revision we speak first: stateless requests, ``server/discover``, per-request ``_meta``."""

HANDSHAKE_REVISIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
"""Older revisions, reached through the ``initialize`` handshake, newest first."""

SUPPORTED_REVISIONS = (LATEST, *HANDSHAKE_REVISIONS)

CLIENT_INFO = {"name": "llm_mcp", "version": __version__}
"""What we call ourselves in ``clientInfo``."""

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

LIST_CHANGED = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}
"""The list-changed notifications, and the list each one names."""
RESOURCE_UPDATED = "notifications/resources/updated"
"""The notification naming one resource whose content changed (``params.uri``)."""
CHANGE_NOTIFICATIONS = (*LIST_CHANGED, RESOURCE_UPDATED)
"""Every notification that says something changed (MCP "Subscriptions")."""

# JSON-RPC and MCP error codes (JSON-RPC 2.0 §5.1; MCP 2026-07-28 "Error codes").
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND_LEGACY = -32002
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022

RESULT_TYPES = ("complete", "input_required", "task")
"""``resultType`` values the core protocol defines; a missing one means ``complete``."""

_ids = itertools.count(random.randrange(1, 1 << 30))  # unguessable, so no early answer matches a request


def next_id() -> int:
    """A fresh JSON-RPC request id, unique in this process."""
    return next(_ids)


def request(method: str, params: dict[str, Any] | None = None, *, id: int | str | None = None) -> dict[str, Any]:
    """Build a JSON-RPC 2.0 request object (a dict ready for ``json.dumps``)."""
    if params is None:  # one dict built whole either way: every request is built here
        return {"jsonrpc": "2.0", "id": next(_ids) if id is None else id, "method": method}
    return {"jsonrpc": "2.0", "id": next(_ids) if id is None else id, "method": method, "params": params}


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """Build a JSON-RPC 2.0 notification object."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def error_response(id: Any, code: int, message: str) -> dict[str, Any]:
    """Build a JSON-RPC 2.0 error response to a request the server sent us."""
    return {"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
"""The reference encoder: what `encode` means. Built once (``json.dumps`` with options other than its
defaults builds an encoder per message)."""

_FAST_OPTIONS = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS


def _refuse(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def encode(message: dict[str, Any]) -> bytes:
    """Serialize a message as compact UTF-8 JSON.

    Raises ``ValueError`` for values JSON cannot carry (NaN, infinity, objects that are not
    JSON types, text with unpaired surrogates), naming the method, before anything is sent.

    Every message goes through here, so ``orjson`` writes it (about fifteen times faster than
    ``json``). Where its output could differ from the standard library's, ``json`` writes the
    message instead and its verdict stands: a message with a ``null`` in it (``orjson`` writes
    NaN and infinity as ``null``) and one ``orjson`` refuses (a key that is not text, an
    integer past 64 bits, a subclass of a JSON type, a date, a dataclass). Two kinds of value
    ``json`` refuses are written by ``orjson``: a ``uuid.UUID`` (as its text) and a plain
    ``enum.Enum`` member (as its value). An ``orjson.Fragment`` (JSON you serialized before) is
    written as it is, unchecked: it must hold one valid JSON value.
    """
    try:
        data = orjson.dumps(message, default=_refuse, option=_FAST_OPTIONS)
        if data.find(b"null") < 0:  # (`in` would first try b"null" as an int: an exception made and dropped)
            return data
    except (TypeError, ValueError):
        pass
    try:
        return _ENCODER.encode(message).encode()
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValueError(f"{message.get('method', 'a reply')}: the arguments cannot be sent as JSON ({exc})") from None


_DECODER = json.JSONDecoder()
_DECODE = _DECODER.decode

_FOLD = bytes.maketrans(b"0123456789[", b"0000000000{")
"""Digits to ``0`` and ``[`` to ``{``: what `decode` looks for, in one pass."""
_LONG_NUMBER = b"0" * 19
"""Nineteen digits in a row: where ``orjson`` could read a number otherwise than ``json`` (it
reads an integer past 64 bits as a float). A string holding such digits is read by ``json``
too: slower, never different."""
_OPENER = b"{"
"""``{`` and ``[``: their count bounds the nesting depth. ``orjson`` reads 1024 levels, ``json``
as many as the recursion limit leaves it (fewer than 1000 by default), so text with half the
recursion limit of them or more is read by ``json`` (the same verdict while the call stack is
less than half the limit deep)."""
_SHORT = 512
"""Text shorter than this nests fewer than 256 levels (each opens and closes): not counted."""


def decode(data: str | bytes, utf8: bool = False) -> Any:
    """Parse JSON from a server; ``ValueError`` for anything that is not JSON we can hold
    (nesting too deep for the parser included). Reads what Python's ``json`` reads (NaN and
    Infinity, integers of any size, unpaired surrogate escapes; bytes in UTF-8, -16 or -32).
    ``utf8``: ``data`` is bytes that must be UTF-8, read as ``decode(data.decode())`` reads them
    (``UnicodeDecodeError`` for others), without making that text when ``orjson`` reads them.

    Every response goes through here, so ``orjson`` reads it (about twice as fast as ``json``).
    Where it could read otherwise, ``json`` reads the text and its verdict stands: text with a
    run of 19 digits (an integer past 64 bits), text with as many ``{`` and ``[`` as half the
    recursion limit (nesting ``json`` may refuse), and text ``orjson`` refuses (NaN, infinity,
    numbers out of a float's range, unpaired surrogates, encodings other than UTF-8, malformed
    JSON, which ``json`` then names).
    """
    try:
        raw = data.encode() if type(data) is str else data
        mapped = raw.translate(_FOLD)
        if mapped.find(_LONG_NUMBER) < 0 and (len(mapped) < _SHORT
                                                or mapped.count(_OPENER) < sys.getrecursionlimit() // 2):
            return orjson.loads(raw)
    except (orjson.JSONDecodeError, UnicodeEncodeError):
        pass
    if utf8:
        data = data.decode()  # type: ignore[union-attr]
    try:
        return _DECODE(data) if type(data) is str else json.loads(data)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def as_object(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else ``{}``: servers send ill-typed fields too."""
    return value if isinstance(value, dict) else {}


def as_text(value: Any) -> str | None:
    """``value`` when it is a string, else ``None``."""
    return value if isinstance(value, str) else None


def _valid_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def is_response(message: Any) -> bool:
    return isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message) \
        and (_valid_id(message.get("id")) or (message.get("id") is None and "error" in message))


_ID_TYPES = (int, str)  # an id as JSON gives it: `type()` is exact, so a bool (an int subclass) is neither


def is_result(message: dict[str, Any]) -> bool:
    """Whether the dict ``message`` is a JSON-RPC result response (the usual message, told at
    once; `is_message` covers every kind)."""
    return "result" in message and message.get("jsonrpc") == "2.0" and type(message.get("id")) in _ID_TYPES \
        and "method" not in message


def is_request(message: Any) -> bool:
    return isinstance(message, dict) and isinstance(message.get("method"), str) and _valid_id(message.get("id"))


def is_notification(message: Any) -> bool:
    return isinstance(message, dict) and isinstance(message.get("method"), str) and "id" not in message


def is_message(message: Any) -> bool:
    """Whether ``message`` looks like any JSON-RPC 2.0 message."""
    return isinstance(message, dict) and message.get("jsonrpc") == "2.0" and (
        is_response(message) or is_request(message) or is_notification(message))


def origin(url: str) -> str:
    """``scheme://host[:port]`` of a URL: all that messages and reprs show of it, since hosted
    URLs often carry secrets in their path, query or userinfo (and messages can reach a model)."""
    from urllib.parse import urlsplit

    parts = urlsplit(str(url))
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}" if parts.scheme else ""
