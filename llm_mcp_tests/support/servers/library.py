"""A kit server with resources, resource templates, prompts and completions, for the client's tests.

Usage::

    python -m llm_mcp_tests.support.servers.library [--http PORT] [--era modern|handshake|auto] [--page-size N]

Lists come two to a page (``--page-size`` changes it), so the client must follow
``nextCursor``. An unknown resource URI is answered as the request's revision says:
``-32602`` on 2026-07-28, ``-32002`` before.

Resources: ``guide`` (markdown text; its listing ``_meta`` and its contents ``_meta``
differ), ``logo`` (PNG blob), ``report`` (PDF blob), ``archive`` (every byte value, an
octet-stream blob), ``recording`` (WAV blob), ``web-page`` (an ``https`` URI on a host
that does not resolve: only the server can read it).
Templates: ``file:///{+path}`` (any path, answered by the server, never the disk) and
``library://books/{genre}/{title}`` (completions; the titles depend on the genre).
Prompts: ``code_review`` (code, language; four turns, two of them the assistant's),
``show_and_tell`` (an image, an embedded resource and a resource link), ``greeting``
(no arguments, one turn), ``story`` (the assistant's turn first).
Tool ``read_log``: the URIs every ``resources/read`` of this process asked for, in order,
so a test sees what reached the server.
"""

from __future__ import annotations

import json
from typing import Any

from llm_mcp.testing import (
    Prompt,
    Resource,
    ResourceTemplate,
    Server,
    Tool,
    embedded_resource_content,
    image_content,
    resource_contents,
    resource_link,
)

__all__ = [
    "ARCHIVE_BYTES", "BOOKS", "GUIDE_TEXT", "LANGUAGES", "PDF_BYTES", "PNG_BYTES", "SERVER", "WAV_BYTES", "WEB_TEXT",
    "main",
]

READS: list[str] = []
"""Every URI ``resources/read`` asked for, in this process."""

GUIDE_TEXT = "# Library guide\n\nBorrow up to 3 books.\r\nReturn them within 14 days.\n"
PNG_BYTES = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde"
    b"\x00\x00\x00\x0cIDATx\xdac\xf8\xcf\xc0\x00\x00\x03\x01\x01\x00\xf7\x03AC"
    b"\x00\x00\x00\x00IEND\xaeB`\x82"
)
PDF_BYTES = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
ARCHIVE_BYTES = bytes(range(256)) + b"\x00\xff\n\r"
WAV_BYTES = b"RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00"
WEB_TEXT = "<h1>Served by the library server, not fetched from the web</h1>"
BOOKS = {"fantasy": ["The Hobbit", "Earthsea"], "science": ["Cosmos", "The Selfish Gene"],
         "fiction": ["Middlemarch"]}
LANGUAGES = ["go", "python", "ruby", "rust"]


def _logged(uri: str) -> None:
    READS.append(uri)


class Guide(Resource):
    uri = "file:///library/guide.md"
    name = "guide"
    title = "Library guide"
    description = "How borrowing works."
    mime_type = "text/markdown"
    size = len(GUIDE_TEXT.encode())
    annotations = {"audience": ["user"], "priority": 0.8}
    meta = {"com.example/from": "listing"}

    def read(self) -> list[dict[str, Any]]:
        _logged(self.uri or "")
        return [resource_contents(uri=self.uri or "", text=GUIDE_TEXT, mime_type="text/markdown",
                                  meta={"com.example/from": "contents", "revision": 7})]


class _Blob(Resource):
    data: bytes = b""

    def read(self) -> bytes:
        _logged(self.uri or "")
        return self.data


def _blob(uri: str, name: str, mime_type: str, data: bytes) -> type[_Blob]:
    """A binary resource that answers ``data``."""
    return type(name.title(), (_Blob,), {"uri": uri, "name": name, "mime_type": mime_type, "data": data})


Logo, Report, Archive, Recording = (
    _blob("file:///library/logo.png", "logo", "image/png", PNG_BYTES),
    _blob("file:///library/report.pdf", "report", "application/pdf", PDF_BYTES),
    _blob("file:///library/archive.bin", "archive", "application/octet-stream", ARCHIVE_BYTES),
    _blob("file:///library/welcome.wav", "recording", "audio/wav", WAV_BYTES),
)


class WebPage(Resource):
    uri = "https://library.invalid/opening-hours.html"
    name = "web-page"
    mime_type = "text/html"

    def read(self) -> str:
        _logged(self.uri or "")
        return WEB_TEXT


class AnyFile(ResourceTemplate):
    uri_template = "file:///{+path}"
    name = "any-file"
    title = "Any file"
    description = "Any path: the server answers for it (it never reads the disk)."
    mime_type = "text/plain"
    meta = {"com.example/kind": "files"}
    completions = {"path": ["app/models/user.rb", "app/models/book.rb", "app/views/index.html", "README.md"]}

    def read(self) -> str:
        path = self.params["path"]
        _logged("file:///" + path)
        return f"served by the library server for {path}"


class Book(ResourceTemplate):
    uri_template = "library://books/{genre}/{title}"
    name = "book"
    mime_type = "text/plain"

    @staticmethod
    def _titles(value: str, arguments: dict[str, str]) -> list[str]:
        titles = BOOKS.get(arguments.get("genre", ""), [t for ts in BOOKS.values() for t in ts])
        return [t for t in titles if t.lower().startswith(value.lower())]

    completions = {"genre": sorted(BOOKS), "title": _titles}

    def read(self) -> str:
        genre, title = self.params["genre"], self.params["title"]
        _logged(f"library://books/{genre}/{title}")
        if title not in BOOKS.get(genre, []):
            raise LookupError(f"no book {title!r} in {genre!r}")
        return f"{title} ({genre})"


class CodeReview(Prompt):
    name = "code_review"
    title = "Code review"
    description = "Review a piece of code."
    arguments = [
        {"name": "code", "description": "The code to review", "required": True},
        {"name": "language", "title": "Language", "description": "Its programming language", "required": True},
    ]
    completions = {"language": LANGUAGES}

    def messages(self) -> list[dict[str, Any]]:
        code, language = self.arguments["code"], self.arguments["language"]
        return [
            self.user_message(f"Please review this {language} code:\n{code}"),
            self.assistant_message(f"I will review the {language} code. What matters most to you?"),
            self.user_message("Correctness first, then readability."),
            self.assistant_message("Understood: correctness, then readability."),
        ]


class ShowAndTell(Prompt):
    name = "show_and_tell"
    description = "An image, the guide and a link."

    def messages(self) -> list[dict[str, Any]]:
        return [
            {"role": "user", "content": image_content(data=PNG_BYTES, mime_type="image/png")},
            {"role": "user", "content": embedded_resource_content(
                resource=resource_contents(uri=Guide.uri or "", text=GUIDE_TEXT, mime_type="text/markdown"))},
            {"role": "assistant", "content": resource_link(name="report", uri=Report.uri or "",
                                                                mime_type="application/pdf")},
            self.user_message("What do you see?"),
        ]


class Greeting(Prompt):
    name = "greeting"
    description = "Say hello."

    def messages(self) -> list[dict[str, Any]]:
        return [self.user_message("Hello, library!")]


class Story(Prompt):
    name = "story"
    description = "The assistant starts, the user asks for more."

    def messages(self) -> list[dict[str, Any]]:
        return [self.assistant_message("Once upon a time, a library lent a dragon."), self.user_message("Go on.")]


class ReadLog(Tool):
    name = "read_log"
    description = "The URIs resources/read asked for so far, in order (JSON list)."

    def call(self) -> dict[str, Any]:
        return self.respond_with(content=self.text_content(text=json.dumps(READS)))


SERVER = Server(
    "library",
    instructions="Resources, templates and prompts for llm_mcp's tests.",
    tools=[ReadLog],
    resources=[Guide, Logo, Report, Archive, Recording, WebPage],
    resource_templates=[AnyFile, Book],
    prompts=[CodeReview, ShowAndTell, Greeting, Story],
    page_size=2,
)
SERVER.resource_not_found_code = None  # -32602 on 2026-07-28, -32002 before


def main(argv: list[str] | None = None) -> None:
    """Serve as the command line says (see the module docstring)."""
    SERVER.serve(argv)


if __name__ == "__main__":
    main()
