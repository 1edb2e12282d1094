"""``Prompt``: a prompt template a kit server offers to ``prompts/list`` and ``prompts/get``.

    class Review(Prompt):
        name = "code_review"; arguments = [{"name": "language", "required": True}]
        def messages(self): return [self.user_message(f"Review this {self.arguments['language']} code")]

Spec: MCP 2026-07-28 "Prompts" and "Utilities" > "Completion".
"""

from __future__ import annotations

from typing import Any, ClassVar

from .definition import (
    Definable,
    check_completions,
    check_text,
    complete_values,
    named_entry,
)
from .runtime import CallChannel, CallState, bind_call

__all__ = ["Prompt"]


class Prompt(Definable, CallState):
    """Base class of a kit prompt: define it, then implement ``messages()``.

        class Greet(Prompt):
            name = "greet"; arguments = [{"name": "style"}]; completions = {"style": ["formal", "casual"]}
            def messages(self): return [self.user_message("Say hello, " + self.arguments.get("style", "casual"))]

    Definitions: ``name`` (required), ``title``, ``description``, ``arguments``
    (a list of ``{"name", "description", "required"}``), ``completions`` (argument
    -> list of values, or a callable ``fn(value, arguments) -> list``), ``meta``.
    Inside ``messages()``: ``arguments`` (dict of str), ``context``, ``client_logger``,
    ``server_logger``. A missing required argument raises ``ValueError`` (the server
    answers ``-32602``).

    Raises (at class creation): TypeError/ValueError for a bad definition.
    """

    DEFINITIONS = ("name", "title", "description", "arguments", "completions", "meta")
    CALLABLE_DEFINITIONS = ("arguments", "completions", "meta")

    name: ClassVar[str | None] = None
    title: ClassVar[str | None] = None
    description: ClassVar[str | None] = None
    arguments: Any = None  # the definition on the class; the call's values on the instance
    completions: ClassVar[Any] = None
    meta: ClassVar[Any] = None

    @classmethod
    def _check_definitions(cls) -> None:
        owner = cls.__name__
        cls._check_identity()
        check_completions(owner, cls.completions)
        declared = cls.__dict__.get("arguments", cls.arguments)
        if declared is not None:
            if not isinstance(declared, list) or not all(isinstance(a, dict) for a in declared):
                raise TypeError(f"{owner}.arguments must be a list of dicts; got {declared!r}")
            for argument in declared:
                check_text(owner, "arguments[].name", argument.get("name"), required=True)
                if not isinstance(argument.get("required", False), bool):
                    raise TypeError(f"{owner}.arguments: 'required' of {argument['name']!r} must be a bool")
        cls.declared_arguments = list(declared or [])

    declared_arguments: ClassVar[list[dict[str, Any]]] = []

    @classmethod
    def definition(cls) -> dict[str, Any]:
        """The ``prompts/list`` entry; TypeError when the class has no name.

            Greet.definition()   # {"name": "greet", "arguments": [{"name": "style"}]}
        """
        entry = named_entry(cls, "prompt")
        if cls.declared_arguments:
            entry["arguments"] = [dict(a) for a in cls.declared_arguments]
        if cls.meta:
            entry["_meta"] = dict(cls.meta)
        return entry

    def __init__(self, arguments: dict[str, str] | None = None, context: dict[str, Any] | None = None, *,
                 channel: CallChannel | None = None) -> None:
        self.arguments = dict(arguments or {})
        bind_call(self, "prompts", context, channel)

    def messages(self) -> list[dict[str, Any]]:
        """The prompt's messages; override it (use ``user_message`` / ``assistant_message``)."""
        raise NotImplementedError(f"{type(self).__name__}.messages() is not implemented")

    @staticmethod
    def user_message(text: str) -> dict[str, Any]:
        """``{"role": "user", "content": {"type": "text", "text": text}}``."""
        return {"role": "user", "content": {"type": "text", "text": check_text("Prompt", "text", text)}}

    @staticmethod
    def assistant_message(text: str) -> dict[str, Any]:
        """``{"role": "assistant", "content": {"type": "text", "text": text}}``."""
        return {"role": "assistant", "content": {"type": "text", "text": check_text("Prompt", "text", text)}}

    @classmethod
    def render(cls, arguments: dict[str, str] | None = None, context: dict[str, Any] | None = None,
               channel: CallChannel | None = None) -> dict[str, Any]:
        """The ``prompts/get`` result.

            Greet.render({"style": "formal"})   # {"description": ..., "messages": [...]}
            # ValueError when a required argument is missing
        """
        arguments = dict(arguments or {})
        missing = [a["name"] for a in cls.declared_arguments if a.get("required") and a["name"] not in arguments]
        if missing:
            raise ValueError(f"prompt {cls.name}: missing required argument(s) {missing}")
        result: dict[str, Any] = {"messages": cls(arguments, context, channel=channel).messages()}
        if cls.description is not None:
            result["description"] = cls.description
        return result

    @classmethod
    def complete(cls, argument: str, value: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
        """The ``completion/complete`` answer for one argument.

            Greet.complete("style", "f")   # {"values": ["formal"], "total": 1, "hasMore": False}
        """
        return complete_values(cls.completions, argument, value, arguments)
