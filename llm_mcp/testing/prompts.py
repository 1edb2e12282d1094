"""``Prompt``: a prompt template a kit server offers to ``prompts/list`` and ``prompts/get``.

    class Review(Prompt):
        name = "code_review"; arguments = [{"name": "language", "required": True}]
        def messages(self): return [self.user_message(f"Review this {self.arguments['language']} code")]

Spec: MCP 2026-07-28 "Prompts" and "Utilities" > "Completion".
"""

from __future__ import annotations

from typing import Any, ClassVar

from .asking import Asking
from .definition import (
    Definable,
    check_completions,
    check_text,
    complete_values,
    named_entry,
)
from .results import check_prompt_result, run_user_code
from .runtime import CallChannel, CallState, bind_call

__all__ = ["MissingPromptArguments", "Prompt"]

_ARGUMENT_KEYS = ("name", "title", "description", "required")


class MissingPromptArguments(ValueError):
    """``prompts/get`` without a required argument (the server answers -32602)."""


class Prompt(Definable, CallState, Asking):
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
    WORK_METHOD = "messages"

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
                unknown = sorted(str(k) for k in argument if k not in _ARGUMENT_KEYS)
                if unknown:
                    raise ValueError(f"{owner}.arguments: {argument['name']!r} has unknown key(s) {unknown}; "
                                     f"known: {', '.join(_ARGUMENT_KEYS)}")
                if not isinstance(argument.get("required", False), bool):
                    raise TypeError(f"{owner}.arguments: 'required' of {argument['name']!r} must be a bool")
                for key in ("title", "description"):
                    check_text(owner, f"arguments[{argument['name']!r}].{key}", argument.get(key))
            names = [a["name"] for a in declared]
            doubled = sorted({n for n in names if names.count(n) > 1})
            if doubled:
                raise ValueError(f"{owner}.arguments: the argument name(s) {doubled} appear more than once")
        cls.declared_arguments = list(declared or [])
        unknown_completions = sorted(set(cls.completions or {}) - {a["name"] for a in cls.declared_arguments})
        if unknown_completions:
            raise ValueError(f"{owner}.completions names {unknown_completions}, which are not in {owner}.arguments")

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
            # MissingPromptArguments (a ValueError) when a required argument is missing
            # InvalidResult when messages() raises or returns something that is not a list of messages
        """
        arguments = dict(arguments or {})
        missing = [a["name"] for a in cls.declared_arguments if a.get("required") and a["name"] not in arguments]
        if missing:
            raise MissingPromptArguments(f"prompt {cls.name}: missing required argument(s) {missing}")
        owner = f"{cls.__name__}.messages()"
        prompt = cls(arguments, context, channel=channel)
        messages = run_user_code(owner, prompt.server_logger, prompt.messages)
        result: dict[str, Any] = {"messages": messages}
        if cls.description is not None:
            result["description"] = cls.description
        return check_prompt_result(owner, result)

    @classmethod
    def complete(cls, argument: str, value: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
        """The ``completion/complete`` answer for one argument.

            Greet.complete("style", "f")   # {"values": ["formal"], "total": 1, "hasMore": False}
        """
        return complete_values(cls.completions, argument, value, arguments, owner=cls.__name__)
