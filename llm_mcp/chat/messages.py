"""A conversation as plain data: `Message` and `ToolCall`.

Everything here is JSON-friendly (see ``to_dict``/``from_dict``), so a store can keep it
anywhere: in memory, or in database tables, field for field.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..client import offload
from ..client.question import open_questions
from ..client.result import OCTET_STREAM, Attachment, sniff_mime_type

__all__ = ["Message", "ToolCall", "attachment_from_dict", "attachment_text", "attachment_to_dict", "clean_text",
           "describe", "label", "loads_object", "text_resource"]

ROLES = ("system", "user", "assistant", "tool")

_SURROGATE = re.compile("[\ud800-\udfff]")

APPROVAL_STATES = (None, "pending", "approved", "declined")
"""``ToolCall.approval``: ``None`` (no approval needed), ``"pending"``, ``"approved"``, ``"declined"``."""


@dataclass
class ToolCall:
    """One tool call the model asked for, and what became of it.

        call = chat.messages[-1].tool_calls[0]
        call.name, call.arguments          # ("create_issue", {"title": "..."})
        call.approve(); chat.complete()

    Attributes:
        id: the provider's tool call id (``call_...``, ``toolu_...``), unique in a chat.
        name: the tool's name as the model called it.
        arguments: the arguments the model sent (a dict; ``{}`` when it sent none).
        approval: ``None`` when no approval is needed, else ``"pending"``, ``"approved"``
            or ``"declined"``.
        pending_questions: the questions a server asked during the call, as
            ``Question.to_dict()`` dicts (an answered one has its ``response``); ``[]`` once
            the call finished.
        request_state: the server's opaque ``requestState`` to resume with, or ``None``.
        task: the task the server runs for this call, as sent (later issues).
        mcp_result: the whole MCP result (``Result.to_dict()``) of an MCP tool, kept for
            tools with a UI.
    """

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    approval: str | None = None
    pending_questions: list[dict[str, Any]] = field(default_factory=list)
    request_state: str | None = None
    task: dict[str, Any] | None = None
    mcp_result: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.approval == "":
            self.approval = None  # what a blank database column holds
        if self.approval not in APPROVAL_STATES:
            raise ValueError(f"tool call {self.id}: approval must be one of {APPROVAL_STATES}, not {self.approval!r}")

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_save", None)  # a chat's hook, not data
        return state

    @property
    def waiting(self) -> bool:
        """Whether the call waits for a person (approval or open questions) or a task."""
        return self.approval == "pending" or open_questions(self.pending_questions) or self.task is not None

    def approve(self) -> None:
        """Let a call that waits for approval run at the next ``complete()``.

        Raises ``ValueError`` when the call is not waiting for approval."""
        self._decide("approved")

    def decline(self) -> None:
        """Refuse a call that waits for approval: the model is told it was declined.

        Raises ``ValueError`` when the call is not waiting for approval."""
        self._decide("declined")

    async def aapprove(self) -> None:
        """The async twin of `approve` (a store's save is database work: ``llm_mcp.client.offload.on_orm``)."""
        await offload.on_orm(self.approve)

    async def adecline(self) -> None:
        """The async twin of `decline` (see `aapprove`)."""
        await offload.on_orm(self.decline)

    def _decide(self, decision: str) -> None:
        if self.approval != "pending":
            raise ValueError(f"tool call {self.id} ({self.name}) is not waiting for approval "
                             f"(approval is {self.approval!r})")
        self.approval = decision
        save = self.__dict__.get("_save")  # on_decide()'s hook, when one was set
        if save is not None:
            save()

    def on_decide(self, save: Callable[[], None]) -> None:
        """Run `save()` after each `approve()`/`decline()` of this call, to persist the decision
        (what `pending_approvals` sets up). Not data: it
        is not in `to_dict()` nor pickled."""
        self._save = save

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments, "approval": self.approval,
                "pending_questions": self.pending_questions, "request_state": self.request_state,
                "task": self.task, "mcp_result": self.mcp_result}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCall:
        return cls(**{key: data[key] for key in cls.__dataclass_fields__ if key in data})


@dataclass
class Message:
    """One turn of a conversation.

        chat.ask("What's 2 + 2?")
        message = chat.messages[-1]
        message.role, message.content       # ("assistant", "4")

    Attributes:
        role: ``"system"``, ``"user"``, ``"assistant"`` or ``"tool"``.
        content: the text (``""`` when there is none, e.g. an assistant turn that only calls tools).
        attachments: `llm_mcp.client.result.Attachment` objects (images, audio,
            documents, resources) sent with a user turn or returned by a tool.
        tool_calls: the calls an assistant turn asks for.
        tool_call_id: on a ``"tool"`` message, the id of the call it answers.
        is_error: on a ``"tool"`` message, whether the result is an error.
        model: the model that wrote an assistant turn, when known.
        input_tokens: tokens the provider counted in the request (assistant turns).
        output_tokens: tokens the provider counted in the answer (assistant turns).
        raw: provider data to send back as it was (e.g. Anthropic thinking blocks), or ``None``.
        id: the store's identifier, once stored.
    """

    role: str
    content: str = ""
    attachments: list[Attachment] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    is_error: bool = False
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    raw: dict[str, Any] | None = None
    id: Any = None

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"message role must be one of {ROLES}, not {self.role!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "content": self.content,
                "attachments": [attachment_to_dict(a) for a in self.attachments],
                "tool_calls": [c.to_dict() for c in self.tool_calls], "tool_call_id": self.tool_call_id,
                "is_error": self.is_error, "model": self.model, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "raw": self.raw}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        return cls(role=data["role"], content=data.get("content") or "",
                   attachments=[attachment_from_dict(a) for a in data.get("attachments") or ()],
                   tool_calls=[ToolCall.from_dict(c) for c in data.get("tool_calls") or ()],
                   tool_call_id=data.get("tool_call_id"), is_error=bool(data.get("is_error")),
                   model=data.get("model"), input_tokens=data.get("input_tokens"),
                   output_tokens=data.get("output_tokens"), raw=data.get("raw"), id=data.get("id"))


def attachment_to_dict(attachment: Attachment) -> dict[str, Any]:
    """JSON-friendly form of an attachment: bytes become ``{"base64": ...}``."""
    content: Any = attachment.content
    if isinstance(content, bytes):
        content = {"base64": base64.b64encode(content).decode("ascii")}
    return {"kind": attachment.kind, "mime_type": attachment.mime_type, "content": content,
            "uri": attachment.uri, "name": attachment.name, "meta": attachment.meta}


def attachment_from_dict(data: dict[str, Any]) -> Attachment:
    """The inverse of `attachment_to_dict`."""
    content = data.get("content")
    if isinstance(content, dict) and "base64" in content:
        content = base64.b64decode(content["base64"])
    return Attachment(data["kind"], data.get("mime_type"), content, uri=data.get("uri"), name=data.get("name"),
                      meta=data.get("meta") or {})


def loads_object(text: str) -> dict[str, Any]:
    """Parse ``text`` as a JSON object that any store and any API can keep as it is.

        loads_object('{"a": 1}')          # {"a": 1}
        loads_object('{"a": NaN}')        # ValueError: NaN is not JSON

    Raises ``ValueError`` naming the problem for anything else: invalid JSON, a value that is
    not an object, ``NaN``/``Infinity`` (Python's json accepts them; JSON and databases do
    not), an unpaired surrogate (``"\\ud800"``: not encodable as UTF-8), or nesting too deep
    to parse."""
    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    try:
        value = json.loads(text, parse_constant=refuse)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply") from None
    if not isinstance(value, dict):
        raise ValueError(f"a JSON object is needed, not {type(value).__name__}")
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("the JSON holds an unpaired surrogate (\\ud800-\\udfff), which is not text") from None
    return value


def clean_text(text: str) -> str:
    """``text`` with unpaired surrogates replaced by U+FFFD, so it can be stored and sent."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)  # a Python str holds no pairs: any surrogate is unpaired


# -- attachments as text, for the model ----------------------------------------------------

def label(attachment: Attachment) -> str:
    """A short name for an attachment: its name, else its URI, else its kind."""
    return attachment.name or attachment.uri or attachment.kind


def describe(attachment: Attachment) -> str:
    """One line telling the model about an attachment it cannot be shown.

        describe(Attachment("resource_link", "application/pdf", None, uri="file:///r.pdf", name="r"))
        # '[attachment not included: resource_link "r" <file:///r.pdf> (application/pdf)]'
    """
    parts = [f"[attachment not included: {attachment.kind}"]
    if attachment.name:
        parts.append(f'"{attachment.name}"')
    if attachment.uri:
        parts.append(f"<{attachment.uri}>")
    if attachment.mime_type:
        parts.append(f"({attachment.mime_type})")
    if attachment.size is not None and attachment.kind != "resource_link":
        parts.append(f"{attachment.size} bytes")
    if isinstance(attachment.content, bytes) and attachment.mime_type:
        sniffed = sniff_mime_type(attachment.content)
        labelled = attachment.mime_type.split(";")[0].strip().lower()
        if sniffed != labelled and labelled in SNIFFABLE:  # a label that lies, and we can tell
            return " ".join(parts) + (f"; its bytes are not {labelled}]" if sniffed == OCTET_STREAM else
                                      f"; its bytes are {sniffed}, not {labelled}]")
    return " ".join(parts) + "]"


SNIFFABLE = ("image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf", "audio/wav", "audio/ogg")
"""Types `sniff_mime_type` recognizes by their first bytes: a label naming one is checked."""

MAX_ATTACHMENT_BYTES = 5 * 1024 * 1024
"""Bytes of one binary attachment a chat keeps and sends (the strictest API's image limit);
a larger one is described instead."""


def capped(attachment: Attachment, *, max_chars: int | None, max_bytes: int = MAX_ATTACHMENT_BYTES) -> Attachment:
    """``attachment`` within a chat's limits: a text resource longer than ``max_chars`` is cut
    (with a note, as tool results are), bytes beyond ``max_bytes`` are dropped (the attachment
    keeps its kind, type, URI and name, and the model is told its size)."""
    content = attachment.content
    if isinstance(content, str) and max_chars is not None and len(content) > max_chars:
        cut = len(content) - max_chars
        return dataclasses.replace(attachment, content=content[:max_chars] + f"\n[... {cut} more characters cut: "
                                   "the resource was too long]")
    if isinstance(content, bytes) and len(content) > max_bytes:
        return dataclasses.replace(attachment, content=None, raw={"size": len(content), "dropped": "too large"})
    return attachment


def binary_described(messages: list[Message]) -> list[Message]:
    """Copies of ``messages`` in which every binary attachment (image, audio, blob) is replaced by
    the line `describe` writes, appended to the text; text resources are kept. What a chat sends
    once more when the model API refused a part of its request."""
    out = []
    for message in messages:
        binary = [a for a in message.attachments if not a.is_text]
        if not binary:
            out.append(message)
            continue
        lines = "\n".join(describe(a) for a in binary)
        out.append(dataclasses.replace(message, content=f"{message.content}\n{lines}" if message.content else lines,
                                       attachments=[a for a in message.attachments if a.is_text]))
    return out


def text_resource(attachment: Attachment) -> str:
    """A text resource as text: a header line naming it, then its text."""
    assert isinstance(attachment.content, str)
    header = f"[resource {label(attachment)}"
    if attachment.mime_type:
        header += f" ({attachment.mime_type})"
    return header + "]\n" + attachment.content


def attachment_text(attachment: Attachment) -> str:
    """An attachment as the model reads it where it cannot be shown: a text resource's text
    (see `text_resource`), else the line `describe` writes."""
    return text_resource(attachment) if attachment.is_text else describe(attachment)

