"""Making tool names and schemas acceptable to every provider, changing nothing else.

Providers accept tool names matching ``^[a-zA-Z0-9_-]{1,64}$`` (case C11), and some
refuse an ``"array"`` without ``items`` or an ``"object"`` without ``properties`` (case
C12). MCP servers send all of these. The chat sends a safe name and maps the model's
calls back to the tool; schemas get the missing member filled minimally.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

__all__ = ["fill_schema", "schema_problem", "wire_name"]

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
MAX_NAME = 64


def wire_name(name: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """A provider-safe name for ``name``: unsafe characters become ``_``; a name that is too
    long, or that clashes with one in ``taken`` once made safe, ends in a short hash of the
    original, so it stays stable from one request to the next."""
    safe = _UNSAFE.sub("_", name) or "tool"
    if len(safe) <= MAX_NAME and safe not in taken:
        return safe
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{safe[:MAX_NAME - 9]}_{digest}"


_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMAS = ("items", "additionalProperties", "not", "if", "then", "else", "contains")


def fill_schema(schema: Any, *, top: bool = True) -> Any:
    """A copy of ``schema`` where every ``"array"`` has ``items`` and every ``"object"`` has
    ``properties`` (``{}`` when missing); the top level is always an ``"object"`` schema."""
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}} if top else schema
    filled = dict(schema)
    if top and "type" not in filled:
        filled["type"] = "object"
    types = filled.get("type")
    types = types if isinstance(types, list) else [types]
    if "array" in types and "items" not in filled:
        filled["items"] = {}
    if "object" in types and "properties" not in filled:
        filled["properties"] = {}
    for key in _SUBSCHEMA_MAPS:
        if isinstance(filled.get(key), dict):
            filled[key] = {name: fill_schema(sub, top=False) for name, sub in filled[key].items()}
    for key in _SUBSCHEMA_LISTS:
        if isinstance(filled.get(key), list):
            filled[key] = [fill_schema(sub, top=False) for sub in filled[key]]
    for key in _SUBSCHEMAS:
        if isinstance(filled.get(key), dict):
            filled[key] = fill_schema(filled[key], top=False)
    return filled


def schema_problem(name: Any, schema: Any) -> str | None:
    """Why providers would refuse a tool (and with it the whole request), or ``None``: an empty
    name, or an argument schema that is not an object schema with a ``properties`` object and a
    ``required`` list of names."""
    if not isinstance(name, str) or not name:
        return "it has no name"
    if not isinstance(schema, dict):
        return "its input schema is not an object"
    if schema.get("type", "object") != "object":
        return f"its input schema's type is {schema.get('type')!r}, not 'object'"
    if "properties" in schema and not isinstance(schema["properties"], dict):
        return "its input schema's properties is not an object"
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return "its input schema's required is not a list of names"
    return None
