"""Every attachment kind a server can send reaches the model API in a form it accepts: images
only when their bytes are an image of an accepted type (sniffed, whatever the label says),
documents only when they are PDFs, the rest described as text; a chat whose request holds a part
the API refuses recovers; resource attachments are capped like tool results.

Both APIs through their real SDKs against the scripted model; the attachments are built from
MCP content blocks as servers send them (``Attachment.from_block``).
"""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any

import pytest

from llm_mcp.chat.chat import MAX_RESULT_CHARS
from llm_mcp.chat.messages import MAX_ATTACHMENT_BYTES, Message
from llm_mcp.chat.providers import AnthropicProvider, ModelRequest, OpenAIProvider
from llm_mcp.client.result import Attachment
from llm_mcp.testing.scripted_model import api_error, reply

from llm_mcp_tests.support.chats import make_chat


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b""))


PNG = _png()
GIF = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00" \
      b"\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"
WEBP = b"RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00/\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00"
WAV = b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00\x80>\x00\x00\x02\x00\x10\x00data" \
      b"\x00\x00\x00\x00"
PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
TEXT = b"this is plain text, not an image"

MAGIC = {b"\x89PNG\r\n\x1a\n": "image/png", b"GIF89a": "image/gif", b"\xff\xd8\xff": "image/jpeg"}
ACCEPTED_IMAGES = {"image/png", "image/gif", "image/jpeg", "image/webp"}


def _what_it_is(data: bytes) -> str | None:
    """The image type of ``data`` by its signature (this test's own reading, not the library's)."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((kind for magic, kind in MAGIC.items() if data.startswith(magic)), None)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# (name, content block as a server sends it, what the API must get: "image"/"document"/"audio"/"text",
#  and for text a phrase the description holds)
KINDS: list[tuple[str, dict[str, Any], str, str]] = [
    ("png image", {"type": "image", "data": b64(PNG), "mimeType": "image/png"}, "image", ""),
    ("jpeg image", {"type": "image", "data": b64(JPEG), "mimeType": "image/jpeg"}, "image", ""),
    ("webp image", {"type": "image", "data": b64(WEBP), "mimeType": "image/webp"}, "image", ""),
    ("gif labelled png (blob resource)", {"type": "resource", "resource": {
        "uri": "file:///a.png", "mimeType": "image/png", "blob": b64(GIF)}}, "image", ""),
    ("text labelled png (image block)", {"type": "image", "data": b64(TEXT), "mimeType": "image/png"}, "text",
     "its bytes are not image/png"),
    ("png labelled jpeg", {"type": "image", "data": b64(PNG), "mimeType": "image/jpeg"}, "image", ""),
    ("svg image", {"type": "image", "data": b64(b"<svg xmlns='http://www.w3.org/2000/svg'/>"),
                   "mimeType": "image/svg+xml"}, "text", "(image/svg+xml)"),
    ("image without a type", {"type": "image", "data": b64(PNG)}, "image", ""),
    ("pdf resource", {"type": "resource", "resource": {"uri": "file:///r.pdf", "mimeType": "application/pdf",
                                                      "blob": b64(PDF)}}, "document", ""),
    ("text labelled pdf", {"type": "resource", "resource": {"uri": "file:///x.pdf", "mimeType": "application/pdf",
                                                           "blob": b64(TEXT)}}, "text", "its bytes are not application/pdf"),
    ("png labelled pdf", {"type": "resource", "resource": {"uri": "file:///y.pdf", "mimeType": "application/pdf",
                                                          "blob": b64(PNG)}}, "image", ""),
    ("wav audio", {"type": "audio", "data": b64(WAV), "mimeType": "audio/wav"}, "audio", ""),
    ("text labelled wav", {"type": "audio", "data": b64(TEXT), "mimeType": "audio/wav"}, "text",
     "its bytes are not audio/wav"),
    ("octet-stream blob", {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": b64(b"\x00\x01\x02")}},
     "text", "(application/octet-stream)"),
    ("text resource", {"type": "resource", "resource": {"uri": "file:///n.md", "mimeType": "text/markdown",
                                                       "text": "# Notes"}}, "text", "# Notes"),
    ("resource link", {"type": "resource_link", "uri": "file:///big.csv", "name": "big", "mimeType": "text/csv"},
     "text", "resource_link \"big\" <file:///big.csv>"),
]


def _parts(api: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    content = body["messages"][-1]["content"]
    return content[1:]  # after the text "see"


def _check_part(api: str, part: dict[str, Any], expected: str, phrase: str, block: dict[str, Any]) -> None:
    if expected == "image":
        if api == "openai":
            assert part["type"] == "image_url"
            header, data = part["image_url"]["url"].split(",", 1)
            declared = header.removeprefix("data:").removesuffix(";base64")
        else:
            assert part["type"] == "image" and part["source"]["type"] == "base64"
            declared, data = part["source"]["media_type"], part["source"]["data"]
        raw = base64.b64decode(data)
        assert declared in ACCEPTED_IMAGES and declared == _what_it_is(raw)  # the label is what the bytes are
    elif expected == "document":
        if api == "openai":
            assert part["type"] == "file" and part["file"]["file_data"].startswith("data:application/pdf;base64,")
            assert base64.b64decode(part["file"]["file_data"].split(",", 1)[1]).startswith(b"%PDF-")
        else:
            assert part["type"] == "document" and part["source"]["media_type"] == "application/pdf"
    elif expected == "audio":
        if api == "openai":
            assert part["type"] == "input_audio" and part["input_audio"]["format"] == "wav"
            assert base64.b64decode(part["input_audio"]["data"])[8:12] == b"WAVE"
        else:  # the Messages API takes no audio: described
            assert part["type"] == "text" and "(audio/wav)" in part["text"]
    else:
        assert part["type"] == "text" and phrase in part["text"], part
        assert "base64" not in str(part)


@pytest.mark.parametrize("api", ["openai", "anthropic"])
@pytest.mark.parametrize(("name", "block", "expected", "phrase"), KINDS, ids=[k[0] for k in KINDS])
def test_each_attachment_kind_is_sent_in_a_form_the_api_accepts(scripted_model, api, name, block, expected,
                                                                 phrase):
    model = scripted_model([reply("ok")])
    provider = (OpenAIProvider(base_url=model.openai_base_url, api_key="k") if api == "openai"
                else AnthropicProvider(base_url=model.anthropic_base_url, api_key="k"))
    attachment = Attachment.from_block(block)
    assert attachment is not None
    provider.complete(ModelRequest("m", [Message("user", "see", attachments=[attachment])]))
    (part,) = _parts(api, model.requests[0].body)
    _check_part(api, part, expected, phrase, block)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_chat_whose_request_the_api_refuses_for_an_attachment_recovers(model, provider):
    """The API answers 400 to a request with an image (as for an image it cannot process): the chat
    sends it once more with the image described, and describes it from then on."""
    chat = make_chat(model, [api_error(400, "Could not process image"), reply("described")], provider=provider)
    picture = Attachment("image", "image/png", PNG, name="chart.png")
    assert chat.ask("what is this?", with_=picture).content == "described"
    assert len(model.requests) == 2
    first, second = (str(r.body) for r in model.requests)
    assert b64(PNG) in first and b64(PNG) not in second
    assert '[attachment not included: image "chart.png" (image/png)' in second
    assert chat.messages[0].attachments == [picture]  # the history keeps the image itself
    model.add(reply("again"))
    assert chat.ask("and now?").content == "again"
    assert len(model.requests) == 3 and b64(PNG) not in str(model.requests[2].body)  # no second refusal


def test_a_refusal_without_attachments_is_not_retried(model):
    chat = make_chat(model, [api_error(400, "bad request")])
    with pytest.raises(Exception) as failed:
        chat.ask("hi")
    assert type(failed.value).__name__ == "BadRequestError" and len(model.requests) == 1


def test_resource_attachments_are_capped_like_tool_results(model):
    chat = make_chat(model, [reply("read it"), reply("ok")], max_result_chars=1000)
    huge = Attachment("resource", "text/plain", "y" * 50_000, uri="file:///huge.txt")
    chat.ask("read", with_=huge)
    (kept,) = chat.messages[0].attachments
    assert kept.content.startswith("y" * 1000) and kept.content.endswith("[... 49000 more characters cut: the "
                                                                         "resource was too long]")
    assert str(model.requests[0].body).count("y") < 1100
    big_image = Attachment("image", "image/png", PNG + b"\x00" * MAX_ATTACHMENT_BYTES, name="big.png")
    chat.ask("and this", with_=big_image)
    (dropped,) = chat.messages[2].attachments
    assert dropped.content is None and dropped.size == len(PNG) + MAX_ATTACHMENT_BYTES
    assert f'[attachment not included: image "big.png" (image/png) {dropped.size} bytes]' in str(
        model.requests[1].body)


def test_the_default_cap_is_the_tool_result_cap(model):
    chat = make_chat(model, [reply("ok")])
    chat.ask("read", with_=Attachment("resource", "text/plain", "z" * (MAX_RESULT_CHARS + 10)))
    assert len(chat.messages[0].attachments[0].content) < MAX_RESULT_CHARS + 100
