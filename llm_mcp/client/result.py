"""What a tool call returns: [`Result`][llm_mcp.Result] and its [`Attachment`][llm_mcp.Attachment] objects.

MCP 2026-07-28, "Server Features / Tools / Tool Result": a result holds ``content``
blocks (``text``, ``image``, ``audio``, ``resource`` (embedded), ``resource_link``),
optional ``structuredContent``, ``isError`` and ``_meta``.
"""

from __future__ import annotations

import base64
import binascii
import copy
import logging
from dataclasses import dataclass, field
from typing import Any

from .protocol import as_object, as_text

__all__ = ["Attachment", "Result", "read_block"]

OCTET_STREAM = "application/octet-stream"

log = logging.getLogger("llm_mcp.client")


_MAGIC = (  # a few signatures, enough to name common blobs sent without a MIME type
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
    (b"OggS", "audio/ogg"),
    (b"ID3", "audio/mpeg"),
)


def sniff_mime_type(data: bytes) -> str:
    """Guess a MIME type from the first bytes; ``application/octet-stream`` when unsure."""
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "audio/wav"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return OCTET_STREAM


def decode_base64(value: Any) -> bytes:
    """Decode base64 as servers send it: standard or URL-safe alphabet, padding optional.

    Raises ``ValueError`` for anything else (other characters, a value that is not a string).
    """
    if not isinstance(value, str):
        raise ValueError("base64 content is not a string")
    compact = "".join(value.split())
    padded = compact + "=" * (-len(compact) % 4)
    for altchars in (None, b"-_"):
        try:
            return base64.b64decode(padded, altchars=altchars, validate=True)
        except binascii.Error:
            continue
    raise ValueError("content is not valid base64")


@dataclass(frozen=True)
class Attachment:
    """A non-text part of a result: an image, audio, an embedded resource or a resource link.

        result = server.call("chart")
        png = result.attachments[0]
        png.kind, png.mime_type, len(png.content)      # ("image", "image/png", 1234)

    Attributes:
        kind: ``"image"``, ``"audio"``, ``"resource"`` (embedded) or ``"resource_link"``.
        mime_type: the MIME type the server gave; for blobs without one, sniffed from the
            bytes, else ``application/octet-stream``; ``None`` for a link without one.
        content: ``bytes`` for images, audio and blob resources; ``str`` for text resources;
            ``None`` for a resource link (the client never fetches it by itself).
        uri: the resource URI (``resource`` and ``resource_link``), else ``None``.
        name: the link's or resource's name, when given.
        meta: the block's ``_meta`` (a dict, empty when absent).
        raw: the content block exactly as sent.
    """

    kind: str
    mime_type: str | None
    content: bytes | str | None
    uri: str | None = None
    name: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def size(self) -> int | None:
        """The content's size in bytes (UTF-8 for text), or the link's declared ``size``."""
        if isinstance(self.content, bytes):
            return len(self.content)
        if isinstance(self.content, str):
            return len(self.content.encode())
        size = self.raw.get("size")
        return size if isinstance(size, int) else None

    @property
    def is_text(self) -> bool:
        return isinstance(self.content, str)

    @classmethod
    def from_block(cls, block: dict[str, Any]) -> Attachment | None:
        """Build an attachment from a content block; ``None`` for text blocks and unknown types."""
        kind = block.get("type")
        meta = as_object(block.get("_meta"))
        if kind in ("image", "audio"):
            data = decode_base64(block.get("data", ""))
            return cls(kind, as_text(block.get("mimeType")) or sniff_mime_type(data), data, meta=meta,
                       raw=block)
        if kind == "resource":
            resource = block.get("resource")
            if not isinstance(resource, dict):
                raise ValueError("an embedded resource block has no resource object")
            uri, mime = as_text(resource.get("uri")), as_text(resource.get("mimeType"))
            if "blob" in resource:
                data = decode_base64(resource.get("blob"))
                return cls(kind, mime or sniff_mime_type(data), data, uri=uri, meta=meta, raw=block)
            text = resource.get("text", "")
            if not isinstance(text, str):
                raise ValueError("an embedded text resource's text is not a string")
            return cls(kind, mime or "text/plain", text, uri=uri, meta=meta, raw=block)
        if kind == "resource_link":
            return cls(kind, as_text(block.get("mimeType")), None, uri=as_text(block.get("uri")),
                       name=as_text(block.get("name")), meta=meta, raw=block)
        return None


def read_block(block: Any) -> tuple[str | None, Attachment | None, str | None]:
    """One content block (MCP "Content") as ``(text, attachment, problem)``.

    A text block gives its text; an image, audio, resource link or embedded resource gives
    an [`Attachment`][llm_mcp.Attachment]; a block of a type this client does not know gives three ``None``;
    a malformed block gives ``problem``, a phrase such as ``"is not an object"``.
    """
    if not isinstance(block, dict):
        return None, None, "is not an object"
    if block.get("type") == "text":
        text = block.get("text")
        if isinstance(text, str):
            return text, None, None
        return None, None, "is a text block whose text is not a string"
    try:
        return None, Attachment.from_block(block), None
    except ValueError as exc:
        return None, None, str(exc)


class Result:
    """The answer to a ``tools/call``.

        result = server.call("get_weather", city="Paris")
        result.text, result.structured, result.is_error
        result.to_dict()                     # exactly what the server sent

    Attributes:
        text: the text blocks' text joined with newlines (``""`` when there is none).
        structured: ``structuredContent`` (any JSON value), or ``None`` when absent.
        attachments: a list of [`Attachment`][llm_mcp.Attachment] for every non-text block, in order.
        meta: the result's ``_meta`` dict with keys as sent, ``{}`` when absent.
        is_error: ``True`` when the server set ``isError`` (a tool-level failure).
        schema_errors: what did not match the protocol's shapes or the tool's
            ``outputSchema`` (content blocks that were skipped, structured content that
            does not conform); empty when all is well.
        tool_name: the server-side name of the tool that produced it, when known.
        ui_uri: the ``ui://`` resource of the MCP App that renders it (the tool's
            ``_meta.ui.resourceUri``), ``None`` for a tool without a UI.
    """

    __slots__ = ("_raw", "attachments", "is_error", "meta", "schema_errors", "structured", "text", "tool_name",
                 "ui_uri")

    def __init__(self, raw: dict[str, Any], tool_name: str | None = None, ui_uri: str | None = None):
        self._raw = raw
        self.tool_name = tool_name
        self.ui_uri = ui_uri
        content = raw.get("content")
        try:  # the usual answer, one text block, read here (fewer tests than the type checks)
            [block] = content
            text = block["text"] if block["type"] == "text" else None
        except (TypeError, ValueError, KeyError):  # not one block, or not a text block's dict
            text = None
        self.text = text if type(text) is str and type(content) is list else self._read(content)
        self.structured = raw.get("structuredContent")
        self.is_error = raw.get("isError") is True

    def __getattr__(self, name: str) -> Any:
        # ``meta``, ``schema_errors`` and ``attachments`` are made when first read: the usual
        # answer (one text block) needs none of them, and most callers read none. After that
        # they are plain attributes (a list appended to stays appended).
        if name == "meta":
            value: Any = as_object(self._raw.get("_meta"))
        elif name in ("schema_errors", "attachments"):
            value = []
        else:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}", name=name, obj=self)
        object.__setattr__(self, name, value)
        return value

    def _read(self, content: Any) -> str:
        """The text of ``content`` (the blocks as sent); its other blocks go to ``attachments``,
        what is malformed to ``schema_errors``."""
        if content is None:
            self.schema_errors.append("content is missing (the protocol requires it)")
            return ""
        if not isinstance(content, list):
            self.schema_errors.append("content is not a list; ignored")
            log.warning("MCP tool %s: content is not a list; ignored", self.tool_name)
            return ""
        texts: list[str] = []
        for index, block in enumerate(content):
            text, attachment, problem = read_block(block)
            if text is not None:
                texts.append(text)
            elif attachment is not None:
                self.attachments.append(attachment)
            if problem:  # keep the rest of the result: the tool has run, its other blocks count
                self.schema_errors.append(f"content[{index}] {problem}; skipped")
                log.warning("MCP tool %s: content block %d %s; skipped", self.tool_name, index, problem)
        return "\n".join(texts)

    @property
    def content(self) -> list[dict[str, Any]]:
        """The raw content blocks, as sent."""
        return self._raw.get("content") or []

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the result exactly as the server sent it."""
        return copy.deepcopy(self._raw)

    def __repr__(self) -> str:
        text = self.text if len(self.text) <= 60 else self.text[:57] + "..."
        return f"<Result text={text!r} attachments={len(self.attachments)} is_error={self.is_error}>"
