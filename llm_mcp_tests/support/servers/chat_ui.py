"""A kit server for the chat pages' tests: media, structured content, questions, errors and text that
tries to inject markup. ``python -m llm_mcp_tests.support.servers.chat_ui`` (stdio).

Tools:

* ``chart(title)``: a small PNG (:func:`chart_png`, 48x24, three colored bars) and a caption.
* ``add(a, b)``: ``{"sum": a + b}`` as structured content (``a``/``b`` must be numbers).
* ``deploy(service)``: asks a form question (``environment``: staging/production, ``replicas``:
  integer 1..5, default 1), then answers with what it got.
* ``login()``: asks a URL question (``https://auth.example.test/device?code=XYZ``).
* ``echo(message)``: the message as text (a reply carrying markup comes back as it was sent).
* ``files()``: a resource link and an embedded text resource.
* ``summarize(text)``: asks the client's model to summarize ``text`` (a ``sampling/createMessage``
  input request with the system prompt :data:`SUMMARY_SYSTEM`, at most 60 tokens), then answers
  ``summary: <the model's text>``.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

from llm_mcp.testing import Server, Tool

COLORS = [(220, 60, 60), (60, 170, 90), (60, 110, 220)]
URL = "https://auth.example.test/device?code=XYZ"
SUMMARY_SYSTEM = "You write one-line summaries for the release notes."
"""The system prompt ``summarize`` sends with its sampling request."""


def chart_png(width: int = 48, height: int = 24) -> bytes:
    """A PNG of three vertical bars (red, green, blue), built with zlib alone."""
    rows = []
    for _ in range(height):
        row = bytearray([0])
        for x in range(width):
            row += bytes(COLORS[x * len(COLORS) // width])
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"".join(rows)))
            + chunk(b"IEND", b""))


class Chart(Tool):
    name = "chart"
    description = "Draw a small bar chart."
    input_schema = {"type": "object", "properties": {"title": {"type": "string"}}}

    def call(self) -> dict[str, Any]:
        return self.respond_with(content=[
            self.text_content(text=f"Chart: {self.arguments.get('title', 'untitled')}"),
            self.image_content(data=chart_png(), mime_type="image/png")])


class Add(Tool):
    name = "add"
    description = "Add two numbers."
    input_schema = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "required": ["a", "b"]}

    def call(self) -> dict[str, Any]:
        return self.respond_with(structured_content={"sum": self.arguments["a"] + self.arguments["b"]})


class Deploy(Tool):
    name = "deploy"
    description = "Deploy a service (asks where)."
    input_schema = {"type": "object", "properties": {"service": {"type": "string"}}, "required": ["service"]}

    def call(self) -> dict[str, Any]:
        answer = self.ask("target", "Where should the service go?", schema={
            "type": "object", "required": ["environment"], "properties": {
                "environment": {"type": "string", "title": "Environment", "enum": ["staging", "production"]},
                "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 5, "default": 1}}})
        if answer.get("action") != "accept":
            return self.respond_with(content=self.text_content(text="not deployed"))
        content = answer["content"]
        return self.respond_with(content=self.text_content(
            text=f"deployed {self.arguments['service']} to {content['environment']} x{content.get('replicas', 1)}"))


class Login(Tool):
    name = "login"
    description = "Sign in at a web page."

    def call(self) -> dict[str, Any]:
        answer = self.ask("signin", "Sign in to continue", url=URL)
        return self.respond_with(content=self.text_content(text=f"login {answer.get('action')}"))


class Echo(Tool):
    name = "echo"
    description = "Send the message back."
    input_schema = {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}

    def call(self) -> dict[str, Any]:
        return self.respond_with(content=self.text_content(text=self.arguments["message"]))


class Files(Tool):
    name = "files"
    description = "A linked file and an embedded one."

    def call(self) -> dict[str, Any]:
        return self.respond_with(content=[
            self.resource_link(name="report.pdf", uri="https://files.example.test/report.pdf", mime_type="application/pdf"),
            self.embedded_resource_content(resource=self.resource_contents(uri="file:///notes.txt", text="the notes",
                                                                           mime_type="text/plain"))])


class Summarize(Tool):
    name = "summarize"
    description = "Summarize a text (asks the client's model)."
    input_schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}

    def call(self) -> dict[str, Any]:
        reply = self.sample("summary", f"Summarize: {self.arguments['text']}", max_tokens=60,
                            system_prompt=SUMMARY_SYSTEM)
        return self.respond_with(content=self.text_content(text=f"summary: {reply['content']['text']}"))


server = Server("chat-ui", tools=[Chart, Add, Deploy, Login, Echo, Files, Summarize])

if __name__ == "__main__":
    server.serve_stdio("modern")
