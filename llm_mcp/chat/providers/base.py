"""The provider interface: what a chat hands a model, and what it gets back.

A provider turns a `ModelRequest` into one call of its API and returns the
assistant's `llm_mcp.chat.messages.Message`. Tool names and schemas arrive ready
to send (the chat has already made them acceptable to every provider, see
``llm_mcp.chat.schemas``); a provider only changes their *shape*.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..messages import Message

__all__ = ["ModelRequest", "Provider", "ToolSpec"]


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it.

    Attributes:
        name: the name the model calls it by (matches ``^[a-zA-Z0-9_-]{1,64}$``).
        description: what the tool does.
        parameters: the JSON Schema (an ``"object"`` schema) of its arguments.
    """

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass
class ModelRequest:
    """Everything one model call needs.

    Attributes:
        model: the model id, e.g. ``"gpt-4.1-mini"`` or ``"claude-sonnet-4-5"``.
        messages: the conversation so far (no ``"system"`` messages: see ``instructions``).
        instructions: system instructions, in order (joined by the provider as it needs).
        tools: the tools offered for this call.
        choice: ``None`` (provider default), ``"auto"``, ``"required"``, ``"none"``, or a
            tool name the model must call.
        params: extra provider parameters merged into the API call (``temperature``,
            ``max_tokens``, ...).
    """

    model: str
    messages: list[Message]
    instructions: list[str] = field(default_factory=list)
    tools: list[ToolSpec] = field(default_factory=list)
    choice: str | None = None
    params: dict[str, Any] = field(default_factory=dict)


class Provider:
    """A model API. Subclasses implement `complete`.

        class EchoProvider(Provider):
            def complete(self, request, *, on_text=None):
                return Message("assistant", request.messages[-1].content)
    """

    name: str = "provider"

    def complete(self, request: ModelRequest, *, on_text: Callable[[str], None] | None = None) -> Message:
        """Call the model once and return its assistant message.

        ``on_text``, when given, asks for a streamed answer: it is called with each piece
        of text as it arrives (the returned message holds the whole text). The returned
        message carries ``tool_calls`` (ids and names as the model sent them, arguments
        parsed to dicts; arguments that are not a JSON object come as
        ``{"_raw_arguments": "<the string as sent>"}`` so the chat can tell the model),
        ``model``, ``input_tokens``/``output_tokens`` when the API reports them, and
        ``raw`` when the provider must get data back verbatim later.

        Errors of the API (authentication, rate limits, bad requests) propagate as the
        SDK raises them.
        """
        raise NotImplementedError

    def refused_request(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the API refusing the request as sent (HTTP 400: a part it cannot
        read, such as an image it rejects). A chat then sends the request once more with every
        binary attachment described as text. The default: ``False`` (never retried)."""
        return False
