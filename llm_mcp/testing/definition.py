"""Shared definition machinery of kit tools, resources and prompts.

    class Weather(Tool):
        name = "get_weather"                          # a class attribute ...
        input_schema = lambda: {"type": "object"}     # ... or a callable returning the value
        @classmethod
        def define(cls): return {"title": "Weather"}  # ... or a define() hook returning a dict

Every definition is resolved and checked once, when the subclass is created, so
a mistake raises ``TypeError``/``ValueError`` at import time, naming the class
and the attribute. Spec: none (kit API).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from typing import Any, ClassVar

__all__ = ["Definable", "check_dict", "check_schema", "check_text"]

NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.\-/]{1,128}$")

_LIKELY_TYPOS = {"inputSchema": "input_schema", "outputSchema": "output_schema", "inputschema": "input_schema",
                 "outputschema": "output_schema", "annotation": "annotations", "securitySchemes": "security_schemes",
                 "security_scheme": "security_schemes", "_meta": "meta", "mimeType": "mime_type",
                 "uriTemplate": "uri_template", "argument": "arguments", "completion": "completions"}
"""Attribute names that are almost certainly a misspelt definition (checked on every kit class)."""


def check_text(owner: str, key: str, value: Any, *, required: bool = False) -> str | None:
    """``value`` if it is a ``str`` (or ``None`` when not required); TypeError otherwise.

        check_text("Weather", "title", "Weather")     # "Weather"
        check_text("Weather", "title", 3)             # TypeError naming Weather.title
    """
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value):
        raise TypeError(f"{owner}.{key} must be a non-empty str; got {value!r}")
    return value


def check_dict(owner: str, key: str, value: Any) -> dict[str, Any] | None:
    """``value`` as a dict, ``None`` stays ``None``; TypeError for anything else.

        check_dict("Weather", "meta", {"k": 1})       # {"k": 1}
    """
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise TypeError(f"{owner}.{key} must be a dict with str keys; got {type(value).__name__}")
    return dict(value)


def check_schema(owner: str, key: str, value: Any, *, required: bool = False) -> dict[str, Any] | None:
    """A JSON Schema for an object (``"type": "object"``), checked with ``jsonschema``.

        check_schema("Weather", "input_schema", {"type": "object"})
        # TypeError: not a dict; ValueError: not an object schema or not a valid schema
    """
    if value is None and not required:
        return None
    schema = check_dict(owner, key, value)
    if schema is None:
        raise TypeError(f"{owner}.{key} is required (a JSON Schema dict)")
    if schema.get("type") != "object":
        raise ValueError(f'{owner}.{key} must describe an object: {{"type": "object", ...}}; got {schema!r}')
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        raise ValueError(f"{owner}.{key} is not a valid JSON Schema: {exc.message}") from None
    _check_refs(owner, key, schema)
    return schema


def _refs(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        ref = value.get("$ref")
        if isinstance(ref, str):
            yield ref
        for item in value.values():
            yield from _refs(item)
    elif isinstance(value, list):
        for item in value:
            yield from _refs(item)


def _check_refs(owner: str, key: str, schema: dict[str, Any]) -> None:
    """Every ``$ref`` must resolve inside the schema itself (the kit never fetches remote schemas)."""
    refs = sorted(set(_refs(schema)))
    if not refs:
        return
    from referencing import Registry, Resource
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import DRAFT202012

    resource = Resource.from_contents(schema, default_specification=DRAFT202012)
    resolver = Registry().with_resource("urn:llm-mcp-kit:schema", resource).crawl().resolver(
        base_uri="urn:llm-mcp-kit:schema")
    for ref in refs:
        try:
            resolver.lookup(ref)
        except Unresolvable:
            raise ValueError(f"{owner}.{key}: $ref {ref!r} does not resolve inside the schema") from None


def _resolve(cls: type, value: Any) -> Any:
    """A callable definition (a Ruby block in the seed) is called once: with no argument or with ``cls``."""
    if isinstance(value, (classmethod, staticmethod)):
        value = value.__get__(None, cls)
    if not callable(value) or isinstance(value, type):
        return value
    try:
        takes_cls = len(inspect.signature(value).parameters) > 0
    except (TypeError, ValueError):
        takes_cls = False
    return value(cls) if takes_cls else value()


class Definable:
    """Base of kit classes whose definitions are checked when a subclass is created.

        class MyTool(Tool):            # Tool is a Definable
            name = "x"
        # a bad value raises TypeError/ValueError here, at class creation

    Subclasses list their definition names in ``DEFINITIONS`` (resolved from
    callables) and check them in ``_check_definitions``.
    """

    DEFINITIONS: ClassVar[tuple[str, ...]] = ()
    CALLABLE_DEFINITIONS: ClassVar[tuple[str, ...]] = ()
    WORK_METHOD: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for wrong, right in _LIKELY_TYPOS.items():
            if wrong in cls.__dict__ and right in cls.DEFINITIONS:
                raise ValueError(f"{cls.__name__}.{wrong}: did you mean {right}? (kit definitions are snake_case "
                                 f"class attributes: {', '.join(cls.DEFINITIONS)})")
        work = cls.__dict__.get(cls.WORK_METHOD) if cls.WORK_METHOD else None
        if work is not None and (inspect.iscoroutinefunction(work) or inspect.isasyncgenfunction(work)):
            raise TypeError(f"{cls.__name__}.{cls.WORK_METHOD}() must be a plain def: the kit runs it in a worker "
                            f"thread, where it may block (use time.sleep, files, sockets, not await)")
        define = cls.__dict__.get("define")
        if define is not None:
            hook = define.__get__(None, cls) if isinstance(define, (classmethod, staticmethod)) else define
            values = hook() if isinstance(define, (classmethod, staticmethod)) else hook(cls)
            if values is not None:
                if not isinstance(values, dict):
                    raise TypeError(f"{cls.__name__}.define() must return a dict of definitions or None")
                unknown = sorted(set(values) - set(cls.DEFINITIONS))
                if unknown:
                    raise ValueError(f"{cls.__name__}.define() returned unknown definitions {unknown}; "
                                     f"known: {', '.join(cls.DEFINITIONS)}")
                for key, value in values.items():
                    setattr(cls, key, value)
        for key in cls.CALLABLE_DEFINITIONS:
            if key in cls.__dict__:
                setattr(cls, key, _resolve(cls, cls.__dict__[key]))
        cls._check_definitions()

    @classmethod
    def _check_definitions(cls) -> None:
        """Check this class's definitions; raise TypeError/ValueError naming the attribute."""

    @classmethod
    def _check_identity(cls) -> None:
        """Check ``name`` (letters, digits, ``_ - . /``), ``title`` and ``description``."""
        cls._check_name()
        check_text(cls.__name__, "title", getattr(cls, "title", None))
        check_text(cls.__name__, "description", getattr(cls, "description", None))

    @classmethod
    def _check_name(cls) -> None:
        name = getattr(cls, "name", None)
        if name is not None and (not isinstance(name, str) or not NAME_PATTERN.match(name)):
            raise ValueError(f"{cls.__name__}.name must be 1-128 characters of letters, digits, '_', '-', '.' "
                             f"or '/'; got {name!r}")


def check_completions(owner: str, completions: Any) -> dict[str, Any] | None:
    """``{argument: list of str | callable(value, arguments) -> list of str}``, checked.

        check_completions("Greet", {"style": ["formal", "casual"]})
        # TypeError for a value that is neither a list of str nor callable
    """
    if completions is None:
        return None
    table = check_dict(owner, "completions", completions) or {}
    for key, value in table.items():
        if not callable(value) and not (isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)):
            raise TypeError(f"{owner}.completions[{key!r}] must be a list of str or a callable; got {value!r}")
    return table


def complete_values(completions: dict[str, Any] | None, argument: str, value: str,
                    arguments: dict[str, str] | None = None, limit: int = 100, *,
                    owner: str = "ResourceTemplate") -> dict[str, Any]:
    """The ``completion/complete`` answer: candidates starting with ``value`` (case-insensitive).

        complete_values({"style": ["formal", "casual"]}, "style", "fo")
        # {"values": ["formal"], "total": 1, "hasMore": False}

    A callable candidate source is called as ``fn(value, arguments)`` and its list used as is.
    Spec: MCP 2026-07-28 "Utilities" > "Completion" (at most 100 values).
    """
    source = (completions or {}).get(argument)
    if source is None:
        candidates: list[str] = []
    elif callable(source):
        from .runtime import InvalidResult

        name = getattr(source, "__qualname__", type(source).__name__)
        try:
            found = source(value, dict(arguments or {}))
        except Exception as exc:
            raise InvalidResult(f"{owner}.completions[{argument!r}] ({name}) failed: "
                                f"{type(exc).__name__}: {exc}") from exc
        if not isinstance(found, (list, tuple)) or not all(isinstance(v, str) for v in found):
            raise InvalidResult(f"{owner}.completions[{argument!r}] ({name}) must return a list of str; "
                                f"got {found!r}")
        candidates = list(found)
    else:
        candidates = [v for v in source if v.lower().startswith(value.lower())]
    return {"values": candidates[:limit], "total": len(candidates), "hasMore": len(candidates) > limit}


def named_entry(cls: Any, kind: str) -> dict[str, Any]:
    """The start of a list entry: ``name``, then ``title`` and ``description`` when defined.

        named_entry(Fetch, "tool")   # {"name": "fetch", "description": "..."}
        # TypeError naming the class when it has no name
    """
    if not cls.name:
        raise TypeError(f"{kind} class {cls.__name__} has no name; set name = '...'")
    entry: dict[str, Any] = {"name": cls.name}
    for key in ("title", "description"):
        if getattr(cls, key) is not None:
            entry[key] = getattr(cls, key)
    return entry
