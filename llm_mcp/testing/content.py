"""Content blocks a kit tool puts in its answers (MCP ``ContentBlock`` shapes, as plain dicts).

    from llm_mcp.testing import content
    content.text_content(text="hello")                         # {"type": "text", "text": "hello"}
    content.image_content(data=png_bytes, mime_type="image/png")  # data base64-encoded for you

Binary ``data`` may be ``bytes`` (encoded here) or a base64 ``str`` (sent as is,
after checking it decodes). Every builder takes an optional ``meta`` (``_meta``)
and ``annotations``. Spec: MCP 2026-07-28 "Tools" > "Tool Result" content types.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from .runtime import InvalidResult

__all__ = [
    "audio_content",
    "embedded_resource_content",
    "image_content",
    "resource_contents",
    "resource_link",
    "text_content",
]


def _extras(block: dict[str, Any], meta: dict[str, Any] | None, annotations: dict[str, Any] | None) -> dict[str, Any]:
    if annotations is not None:
        if not isinstance(annotations, dict):
            raise TypeError(f"annotations must be a dict; got {type(annotations).__name__}")
        block["annotations"] = dict(annotations)
    if meta is not None:
        if not isinstance(meta, dict):
            raise TypeError(f"meta must be a dict; got {type(meta).__name__}")
        block["_meta"] = dict(meta)
    return block


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str; got {type(value).__name__}")
    return value


def _mime(value: Any) -> str:
    if not _text(value, "mime_type"):
        raise InvalidResult("mime_type must be a non-empty str such as 'image/png'")
    return value


def _base64(data: Any, what: str) -> str:
    """``bytes`` -> base64 text; a ``str`` must already be valid base64."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(data)).decode("ascii")
    if isinstance(data, str):
        try:
            base64.b64decode(data.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError) as exc:
            raise InvalidResult(f"{what} is a str but not valid base64: {exc}") from None
        return data
    raise TypeError(f"{what} must be bytes or a base64 str; got {type(data).__name__}")


def text_content(*, text: str, meta: dict[str, Any] | None = None,
                 annotations: dict[str, Any] | None = None) -> dict[str, Any]:
    """A text block.

        text_content(text="21 doubled is 42")
        # {"type": "text", "text": "21 doubled is 42"}
        # TypeError when text is missing or not a str
    """
    return _extras({"type": "text", "text": _text(text, "text")}, meta, annotations)


def image_content(*, data: bytes | str, mime_type: str, meta: dict[str, Any] | None = None,
                  annotations: dict[str, Any] | None = None) -> dict[str, Any]:
    """An image block; both ``data`` and ``mime_type`` are required keywords.

        image_content(data=b"test", mime_type="image/png")
        # {"type": "image", "data": "dGVzdA==", "mimeType": "image/png"}
        # TypeError when a keyword is missing, ValueError for a str that is not base64
    """
    return _extras({"type": "image", "data": _base64(data, "image data"), "mimeType": _mime(mime_type)},
                   meta, annotations)


def audio_content(*, data: bytes | str, mime_type: str, meta: dict[str, Any] | None = None,
                  annotations: dict[str, Any] | None = None) -> dict[str, Any]:
    """An audio block; both ``data`` and ``mime_type`` are required keywords.

        audio_content(data=wav_bytes, mime_type="audio/wav")
        # {"type": "audio", "data": "<base64>", "mimeType": "audio/wav"}
        # TypeError when a keyword is missing
    """
    return _extras({"type": "audio", "data": _base64(data, "audio data"), "mimeType": _mime(mime_type)},
                   meta, annotations)


def resource_contents(*, uri: str, text: str | None = None, blob: bytes | str | None = None,
                      mime_type: str | None = None, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """One entry of a resource's contents: text or blob (exactly one), as ``resources/read`` sends it.

        resource_contents(uri="file:///a.txt", text="hi", mime_type="text/plain")
        # {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "hi"}
        # ValueError unless exactly one of text / blob is given
    """
    if (text is None) == (blob is None):
        raise ValueError("resource contents need exactly one of text= or blob=")
    contents: dict[str, Any] = {"uri": _text(uri, "uri")}
    if mime_type is not None:
        contents["mimeType"] = _text(mime_type, "mime_type")
    if text is not None:
        contents["text"] = _text(text, "text")
    else:
        contents["blob"] = _base64(blob, "blob")
    if meta is not None:
        if not isinstance(meta, dict):
            raise TypeError(f"meta must be a dict; got {type(meta).__name__}")
        contents["_meta"] = dict(meta)
    return contents


def embedded_resource_content(*, resource: Any, meta: dict[str, Any] | None = None,
                              annotations: dict[str, Any] | None = None) -> dict[str, Any]:
    """An embedded resource block; ``resource`` is a contents dict or a kit ``Resource`` class/instance.

        embedded_resource_content(resource={"uri": "file:///a.txt", "text": "hi"})
        # {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hi"}}
        # TypeError when resource is missing; ValueError when it has no uri or neither text nor blob
    """
    to_contents = getattr(resource, "contents", None)
    if callable(to_contents):
        resource = to_contents()
    if not isinstance(resource, dict):
        raise TypeError(f"resource must be a dict or a kit Resource; got {type(resource).__name__}")
    if not isinstance(resource.get("uri"), str):
        raise ValueError("an embedded resource needs a str 'uri'")  # noqa: TRY004 - a missing key, not a wrong type
    if ("text" in resource) == ("blob" in resource):
        raise ValueError("an embedded resource needs exactly one of 'text' or 'blob'")
    if "text" in resource and not isinstance(resource["text"], str):
        raise InvalidResult(f"an embedded resource's 'text' must be a str; got {type(resource['text']).__name__}")
    if "blob" in resource:
        _base64(resource["blob"], "an embedded resource's 'blob'")
    return _extras({"type": "resource", "resource": dict(resource)}, meta, annotations)


def resource_link(*, name: str, uri: str, title: str | None = None, description: str | None = None,
                  mime_type: str | None = None, size: int | None = None, meta: dict[str, Any] | None = None,
                  annotations: dict[str, Any] | None = None) -> dict[str, Any]:
    """A link to a resource the client may read later; ``name`` and ``uri`` are required.

        resource_link(name="q3-report", uri="file:///reports/q3.pdf", mime_type="application/pdf")
        # {"type": "resource_link", "name": "q3-report", "uri": "file:///reports/q3.pdf", "mimeType": ...}
        # TypeError when name or uri is missing
    """
    block: dict[str, Any] = {"type": "resource_link", "name": _text(name, "name"), "uri": _text(uri, "uri")}
    for key, value in (("title", title), ("description", description), ("mimeType", mime_type)):
        if value is not None:
            block[key] = _text(value, key)
    if size is not None:
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise TypeError(f"size must be a non-negative int; got {size!r}")
        block["size"] = size
    return _extras(block, meta, annotations)
