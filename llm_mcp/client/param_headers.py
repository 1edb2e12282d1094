"""HTTP headers that mirror a request: ``Mcp-Method``, ``Mcp-Name`` and ``Mcp-Param-*``.

MCP 2026-07-28, "Transports / Streamable HTTP / Standard and custom headers" (SEP-2243):
every POST names its JSON-RPC method in ``Mcp-Method``; ``tools/call`` and ``prompts/get``
name the target in ``Mcp-Name`` (``params.name``), ``resources/read`` its URI (``params.uri``);
and a tool whose input schema marks a top-level property with ``"x-mcp-header": "Region"``
has that argument sent as ``Mcp-Param-Region`` as well.
"""

from __future__ import annotations

import base64
import re
from typing import Any

__all__ = ["header_value", "method_headers", "param_headers", "tool_header_map"]

ANNOTATION = "x-mcp-header"
HEADER_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
"""An HTTP header name: RFC 9110 §5.6.2 token characters."""
_SENTINEL = re.compile(r"^=\?base64\?.*\?=$", re.DOTALL)
_ALLOWED_TYPES = {"string", "integer", "boolean"}
MAX_SAFE_INTEGER = 2**53 - 1


def header_value(value: Any) -> str | None:
    """Render one argument as a header value; ``None`` means "send no header".

    Strings go as they are, integers in decimal, booleans as ``true``/``false``. A value
    with a character outside printable ASCII (tab included), with leading or trailing
    whitespace, or that already looks like the sentinel, is sent as
    ``=?base64?<base64 of its UTF-8 bytes>?=``.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int):
        text = str(value)
    else:
        text = str(value)
    if any(ord(c) < 32 or ord(c) > 126 for c in text) or text != text.strip() or _SENTINEL.match(text):
        return "=?base64?" + base64.b64encode(text.encode()).decode("ascii") + "?="
    return text


def tool_header_map(input_schema: dict[str, Any]) -> dict[tuple[str, ...], str]:
    """Map argument path -> header suffix for a tool's ``x-mcp-header`` annotations.

    A path is a tuple of property names (nested objects reached through ``properties``
    only). Raises ``ValueError`` naming the first problem when an annotation is invalid:
    a name that is empty or not an RFC 9110 token (spaces, colons, non-ASCII, control
    characters), two names equal but for case, a property whose ``type`` is not
    ``string``, ``integer`` or ``boolean``, or an annotation reached any other way
    (the schema root, ``items``, ``anyOf``, ``$defs``, ...). The client drops such tools.
    """
    found: dict[tuple[str, ...], str] = {}
    seen: dict[str, tuple[str, ...]] = {}

    def walk(schema: Any, path: tuple[str, ...], reachable: bool) -> None:
        if isinstance(schema, list):
            for item in schema:
                walk(item, path, False)
            return
        if not isinstance(schema, dict):
            return
        if ANNOTATION in schema:
            where = ".".join(path) or "the schema root"
            if not reachable or not path:
                raise ValueError(f"{ANNOTATION} at {where} is not on a property reached through 'properties'")
            name = schema[ANNOTATION]
            if not isinstance(name, str) or not name or not HEADER_TOKEN.match(name):
                raise ValueError(f"property {where!r} has an invalid {ANNOTATION} name {name!r}")
            if name.lower() in seen:
                raise ValueError(f"properties {'.'.join(seen[name.lower()])!r} and {where!r} share the "
                                 f"header name {name!r}")
            if not isinstance(schema.get("type"), str) or schema["type"] not in _ALLOWED_TYPES:
                raise ValueError(f"property {where!r} of type {schema.get('type')!r} cannot be sent as a header")
            seen[name.lower()] = path
            found[path] = name
        for key, value in schema.items():
            if key == "properties" and isinstance(value, dict):
                for prop, sub in value.items():
                    walk(sub, (*path, prop), reachable)
            elif key != ANNOTATION and isinstance(value, (dict, list)):
                walk(value, path, False)

    walk(input_schema, (), True)
    return found


def param_headers(header_map: dict[tuple[str, ...], str], arguments: dict[str, Any]) -> dict[str, str]:
    """The ``Mcp-Param-*`` headers for one call's arguments (absent or null ones send none)."""
    headers = {}
    for path, name in header_map.items():
        value: Any = arguments
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_SAFE_INTEGER:
            raise ValueError(f"argument {'.'.join(path)!r} is too large to send in header Mcp-Param-{name}")
        encoded = header_value(value)
        if encoded is not None:
            headers[f"Mcp-Param-{name}"] = encoded
    return headers


TASK_METHODS = ("tasks/get", "tasks/update", "tasks/cancel")
"""Methods of the Tasks extension whose ``Mcp-Name`` is the ``taskId``."""


def method_headers(message: dict[str, Any]) -> dict[str, str]:
    """``Mcp-Method`` and, where it applies, ``Mcp-Name`` for a request or notification."""
    method = message.get("method")
    if not method:
        return {}
    headers = {"Mcp-Method": method}
    params = message.get("params") or {}
    target = params.get("uri") if method == "resources/read" else (
        params.get("name") if method in ("tools/call", "prompts/get") else (
            params.get("taskId") if method in TASK_METHODS else None))
    if isinstance(target, str):
        encoded = header_value(target)
        if encoded is not None:
            headers["Mcp-Name"] = encoded
    return headers
