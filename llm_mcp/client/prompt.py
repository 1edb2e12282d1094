"""Messages a server writes for you: [`Prompt`][llm_mcp.Prompt], its [`PromptMessage`][llm_mcp.PromptMessage] turns and arguments.

    review = github.prompt("code_review", code=diff, language="Ruby")
    [(m.role, m.content) for m in review.messages]     # [("user", "Review this Ruby code..."), ...]
    chat.ask(review)                                   # every turn goes in, then the model answers

MCP 2026-07-28, "Server Features / Prompts": ``prompts/list`` names prompts and their
arguments; ``prompts/get`` fills one in and returns ``messages``, each a ``role``
(``user`` or ``assistant``) and one content block (text, image, audio, an embedded
resource or a resource link).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .completion import Completable
from .errors import MCPError
from .protocol import as_object, as_text
from .result import Attachment, read_block

if TYPE_CHECKING:
    from .server import MCP

__all__ = ["Prompt", "PromptArgument", "PromptMessage", "check_arguments"]

log = logging.getLogger("llm_mcp.client")

ROLES = ("user", "assistant")


@dataclass(frozen=True)
class PromptArgument:
    """One argument a prompt takes, as ``prompts/list`` describes it.

        [a.name for a in prompt.argument_definitions if a.required]    # ["code"]

    Attributes:
        name: the argument's name (a keyword of ``server.prompt(...)``).
        title: a display name, or ``None``.
        description: what to give, or ``None``.
        required: whether the server needs it.
    """

    name: str
    title: str | None = None
    description: str | None = None
    required: bool = False


@dataclass(frozen=True)
class PromptMessage:
    """One turn of a filled-in prompt.

        turn = prompt.messages[0]
        turn.role, turn.content, turn.attachments     # ("user", "Please review...", [])

    Attributes:
        role: ``"user"`` or ``"assistant"``.
        content: the turn's text (``""`` when its block is not text).
        attachments: [`Attachment`][llm_mcp.Attachment] objects for an image, audio, embedded
            resource or resource link block (a link is never fetched).
        raw: the message as sent.
    """

    role: str
    content: str = ""
    attachments: list[Attachment] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


def _arguments(entry: dict[str, Any]) -> list[Any]:
    """A listing entry's ``arguments`` when they are a list, else ``[]`` (a server may send anything)."""
    arguments = entry.get("arguments")
    return arguments if isinstance(arguments, list) else []


def check_arguments(arguments: dict[str, Any]) -> dict[str, str]:
    """Prompt arguments as the protocol carries them (strings); ``TypeError`` naming one that is not."""
    for name, value in arguments.items():
        if not isinstance(value, str):
            raise TypeError(f"prompt argument {name!r} must be a string, not {type(value).__name__} "
                            "(MCP prompt arguments are strings)")
    return dict(arguments)


class Prompt(Completable):
    """A prompt a server offers, listed or filled in.

        review = github.prompts[0]                      # listed: name, arguments
        review.suggest(language="ru")                   # ["ruby", "rust"]
        filled = review.fill(code=diff, language="Ruby")
        chat.ask(filled)

    Attributes:
        server: the [`MCP`][llm_mcp.MCP] it comes from.
        name: the prompt's name.
        title: a display name, or ``None``.
        description: what it is for (the ``prompts/get`` result's, once filled), or ``None``.
        arguments: the argument names, in the server's order (``["code", "language"]``).
        argument_definitions: the arguments with their title, description and
            ``required`` flag, as [`PromptArgument`][llm_mcp.PromptArgument] objects.
        values: the arguments it was filled in with (``{}`` for a listed prompt).
        meta: the ``_meta`` of the listing entry, or of the ``prompts/get`` result once filled.
        raw: the listing entry as sent (``{}`` when the prompt was not listed).
    """

    def __init__(self, server: MCP, entry: dict[str, Any], *, values: dict[str, str] | None = None,
                 result: dict[str, Any] | None = None):
        name = self._take_listing(server, entry, "name", "prompt")
        self.name: str = name
        self.meta: dict[str, Any] = as_object(entry.get("_meta"))
        self.argument_definitions: list[PromptArgument] = [
            PromptArgument(a["name"], as_text(a.get("title")), as_text(a.get("description")), a.get("required") is True)
            for a in _arguments(entry) if isinstance(a, dict) and isinstance(a.get("name"), str)]
        self.arguments: list[str] = [a.name for a in self.argument_definitions]
        self.completion_ref = {"type": "ref/prompt", "name": name}
        self.completion_names = self.arguments
        self.values: dict[str, str] = dict(values or {})
        self._messages: list[PromptMessage] | None = None
        self._lock = threading.Lock()
        if result is not None:
            self._take(result)

    def _take(self, result: dict[str, Any]) -> None:
        messages = result.get("messages")
        if not isinstance(messages, list):
            raise MCPError(f"MCP server {self.server.name!r} answered prompts/get {self.name!r} without messages",
                           server=self.server.name)
        self.description = as_text(result.get("description")) or self.description
        if "_meta" in result:
            self.meta = as_object(result.get("_meta"))
        self._messages = [turn for index, raw in enumerate(messages)
                          if (turn := _message(self.server.name, self.name, index, raw)) is not None]

    @property
    def filled(self) -> bool:
        """Whether the messages were fetched (nothing is sent to find out)."""
        return self._messages is not None

    @property
    def messages(self) -> list[PromptMessage]:
        """The prompt's turns, in order. A listed prompt is fetched now without arguments
        (once); one that requires arguments raises ``ValueError``: fill it in with
        [`fill`][llm_mcp.Prompt.fill] or ``server.prompt(name, ...)``. Raises [`MCPError`][llm_mcp.client.errors.MCPError] when
        the server refuses (``-32602`` for an unknown prompt or a missing argument)."""
        with self._lock:
            if self._messages is None:
                required = [a.name for a in self.argument_definitions if a.required and a.name not in self.values]
                if required:
                    raise ValueError(f"prompt {self.name!r} needs {', '.join(required)}: "
                                     f"use prompt.fill({required[0]}=...) or server.prompt({self.name!r}, ...)")
                self._take(self.server.request_answering("prompts/get", {"name": self.name, "arguments": self.values}))
            assert self._messages is not None
            return list(self._messages)

    def fill(self, /, **arguments: str) -> Prompt:
        """The prompt filled in with these arguments (sends ``prompts/get``); see ``MCP.prompt``."""
        return self.server.prompt(self.name, **arguments)

    def __repr__(self) -> str:
        return f"<Prompt name={self.name!r} arguments={self.arguments!r}>"


def _message(server: str, prompt: str, index: int, raw: Any) -> PromptMessage | None:
    """One ``PromptMessage``; ``None`` (logged) for a turn that cannot be read."""
    problem = None
    if not isinstance(raw, dict) or raw.get("role") not in ROLES:
        problem = "has no role user or assistant"
    else:
        blocks = raw.get("content")
        texts: list[str] = []
        attachments: list[Attachment] = []
        for block in blocks if isinstance(blocks, list) else [blocks]:
            text, attachment, trouble = read_block(block)
            if text is not None:
                texts.append(text)
            elif attachment is not None:
                attachments.append(attachment)
            else:
                problem = f"has a content block that {trouble}" if trouble else \
                    f"has a content block of unknown type {block.get('type')!r}"
        if problem is None:
            return PromptMessage(raw["role"], "\n".join(texts), attachments, raw)
    log.warning("MCP server %s: prompt %r message %d %s; skipped", server, prompt, index, problem)
    return None
