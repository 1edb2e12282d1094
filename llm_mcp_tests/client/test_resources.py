"""Resources and resource templates (MCP-RES), against real servers.

The library kit server (``llm_mcp_tests/support/servers/library.py``) runs in both eras over both
transports; its ``read_log`` tool tells what ``resources/read`` requests reached it, so
laziness, template expansion and "the client never fetches a URI itself" are seen from
the server's side. Lists come two to a page there, so every page must be followed.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import llm_mcp
from llm_mcp.client.resource import expand_template

from llm_mcp_tests.support.scripted import result, server_of
from llm_mcp_tests.support.servers import library


LIBRARY = "llm_mcp_tests.support.servers.library"
COMBOS = [("stdio", "modern"), ("stdio", "handshake"), ("http", "modern"), ("http", "handshake")]
GUIDE = "file:///library/guide.md"
LISTED = [  # (uri, name, mime type), in the server's order
    (GUIDE, "guide", "text/markdown"),
    ("file:///library/logo.png", "logo", "image/png"),
    ("file:///library/report.pdf", "report", "application/pdf"),
    ("file:///library/archive.bin", "archive", "application/octet-stream"),
    ("file:///library/welcome.wav", "recording", "audio/wav"),
    ("https://library.invalid/opening-hours.html", "web-page", "text/html"),
]


class Library:
    """One connection to the library server, and what its ``read_log`` says."""

    def __init__(self, server: llm_mcp.MCP, era: str):
        self.server = server
        self.era = era

    def reads(self) -> list[str]:
        return json.loads(self.server.call("read_log").text)

    def new_reads(self, action: Callable[[], Any]) -> tuple[Any, list[str]]:
        """Run ``action``; return its value and the URIs read while it ran."""
        before = len(self.reads())
        value = action()
        return value, self.reads()[before:]


@pytest.fixture(scope="module", params=COMBOS, ids=[f"{t}-{e}" for t, e in COMBOS])
def lib(request: pytest.FixtureRequest, mcp_test_server: Callable[..., Any]) -> Iterator[Library]:
    transport, era = request.param
    running = mcp_test_server(LIBRARY, transport=transport, era=era)
    with running.mcp(timeout=20, name="library") as server:
        yield Library(server, era)


def test_resources_come_from_every_page(lib: Library) -> None:
    """MCP-RES-01: every page of resources/list, as Resource objects with uri, name and mime_type."""
    first_page = lib.server.client.request("resources/list", {})
    assert len(first_page["resources"]) == 2 and isinstance(first_page["nextCursor"], str)
    resources = lib.server.refresh_resources()
    assert all(isinstance(r, llm_mcp.Resource) for r in resources)
    assert [(r.uri, r.name, r.mime_type) for r in resources] == LISTED
    guide = resources[0]
    assert (guide.title, guide.description, guide.size) == ("Library guide", "How borrowing works.",
                                                            len(library.GUIDE_TEXT.encode()))
    assert guide.annotations == {"audience": ["user"], "priority": 0.8}
    assert lib.server.resources == resources  # kept: the same objects, no new listing


def test_listing_reads_nothing_and_content_is_read_once(lib: Library) -> None:
    """MCP-RES-02: listing sends no resources/read; the first .content sends one, later ones reuse it."""
    resources, read = lib.new_reads(lib.server.refresh_resources)
    assert read == [] and not any(r.loaded for r in resources)
    guide = resources[0]
    content, read = lib.new_reads(lambda: guide.content)
    assert read == [GUIDE] and guide.loaded
    again, read = lib.new_reads(lambda: (guide.content, guide.content, guide.save, guide.as_attachment()))
    assert read == [] and again[0] == content == library.GUIDE_TEXT


def test_resource_by_uri_reads_it_now(lib: Library) -> None:
    """MCP-RES-03: server.resource(uri) sends one resources/read and returns a Resource with its content."""
    resource, read = lib.new_reads(lambda: lib.server.resource("file:///library/logo.png"))
    assert read == ["file:///library/logo.png"]
    assert isinstance(resource, llm_mcp.Resource) and resource.loaded
    assert (resource.uri, resource.mime_type, resource.content) == ("file:///library/logo.png", "image/png",
                                                                    library.PNG_BYTES)
    _, read = lib.new_reads(lambda: resource.content)
    assert read == []


def test_text_is_str_and_blobs_are_their_exact_bytes(lib: Library) -> None:
    """MCP-RES-04: text contents give str (line endings as sent), blob contents their base64-decoded bytes."""
    by_name = {r.name: r for r in lib.server.refresh_resources()}
    assert by_name["guide"].content == "# Library guide\n\nBorrow up to 3 books.\r\nReturn them within 14 days.\n"
    archive = by_name["archive"].content
    assert isinstance(archive, bytes) and archive == bytes(range(256)) + b"\x00\xff\n\r"
    assert by_name["logo"].content == library.PNG_BYTES and by_name["report"].content == library.PDF_BYTES
    assert by_name["guide"].is_text and not by_name["archive"].is_text


def test_save_writes_text_or_bytes(lib: Library, tmp_path: Path) -> None:
    """MCP-RES-05: save(path) writes the text as UTF-8 exactly as sent, or the blob's bytes."""
    by_name = {r.name: r for r in lib.server.refresh_resources()}
    text_path = by_name["guide"].save(tmp_path / "guide.md")
    assert text_path == tmp_path / "guide.md"
    assert text_path.read_bytes() == library.GUIDE_TEXT.encode("utf-8")
    by_name["archive"].save(str(tmp_path / "archive.bin"))
    assert (tmp_path / "archive.bin").read_bytes() == library.ARCHIVE_BYTES
    by_name["logo"].save(tmp_path / "logo.png")
    assert (tmp_path / "logo.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(OSError):
        by_name["guide"].save(tmp_path / "missing-directory" / "guide.md")


def test_meta_of_the_listing_or_of_the_contents(lib: Library) -> None:
    """MCP-RES-07: a listed resource's meta is its listing entry's _meta (also once read); one read
    with server.resource() has the _meta of its contents item."""
    listed = lib.server.refresh_resources()[0]
    assert listed.meta == {"com.example/from": "listing"}
    assert listed.content == library.GUIDE_TEXT
    assert listed.meta == {"com.example/from": "listing"}
    read = lib.server.resource(GUIDE)
    assert read.meta == {"com.example/from": "contents", "revision": 7}
    assert read.name == "guide"  # the listing this server object holds names it
    assert lib.server.resource("file:///library/archive.bin").meta == {}


def test_resource_templates(lib: Library) -> None:
    """MCP-RES-08: resource_templates are ResourceTemplate objects with the template uri and a name."""
    templates = lib.server.resource_templates
    assert all(isinstance(t, llm_mcp.ResourceTemplate) for t in templates)
    assert [(t.uri, t.name) for t in templates] == [("file:///{+path}", "any-file"),
                                                     ("library://books/{genre}/{title}", "book")]
    files, books = templates
    assert (files.title, files.mime_type, files.meta, files.variables) == (
        "Any file", "text/plain", {"com.example/kind": "files"}, ["path"])
    assert books.variables == ["genre", "title"]


def test_template_expansion_is_what_the_server_receives(lib: Library) -> None:
    """MCP-RES-09: RFC 6570 expansion, {+path} keeping "/", simple expansion percent-encoding; the
    expanded URI is the one resources/read sends."""
    user, read = lib.new_reads(lambda: lib.server.resource("file:///{+path}", path="app/models/user.rb"))
    assert read == ["file:///app/models/user.rb"] and user.uri == "file:///app/models/user.rb"
    assert user.content == "served by the library server for app/models/user.rb"
    books = lib.server.resource_templates[1]
    assert books.expand(genre="fantasy", title="The Hobbit") == "library://books/fantasy/The%20Hobbit"
    hobbit, read = lib.new_reads(lambda: books.read(genre="fantasy", title="The Hobbit"))
    assert read == ["library://books/fantasy/The Hobbit"]  # the server decodes what it received
    assert (hobbit.uri, hobbit.content) == ("library://books/fantasy/The%20Hobbit", "The Hobbit (fantasy)")


def test_template_mistakes_are_refused_before_sending(lib: Library) -> None:
    """MCP-RES-09: an unknown or missing variable raises ValueError naming it; nothing is sent."""
    def attempts() -> list[str]:
        problems = []
        for variables in ({"path": "a", "other": "b"}, {}):
            with pytest.raises(ValueError) as caught:
                lib.server.resource("file:///{+path}", **variables)
            problems.append(str(caught.value))
        with pytest.raises(ValueError) as caught:
            lib.server.resource_templates[1].expand(genre="fantasy")
        problems.append(str(caught.value))
        return problems

    problems, read = lib.new_reads(attempts)
    assert read == []
    assert "no variable 'other'" in problems[0] and "needs 'path'" in problems[1] and "needs 'title'" in problems[2]


def test_the_client_never_fetches_a_uri_itself(lib: Library, tmp_path: Path) -> None:
    """MCP-RES-10: an https resource and a file: resource both come from resources/read, never
    from the web or the disk."""
    web = next(r for r in lib.server.refresh_resources() if r.uri.startswith("https://"))
    content, read = lib.new_reads(lambda: web.content)
    assert read == [web.uri] and content == library.WEB_TEXT  # library.invalid resolves nowhere
    on_disk = tmp_path / "notes.txt"
    on_disk.write_text("ON DISK", encoding="utf-8")
    uri = on_disk.as_uri()
    served, read = lib.new_reads(lambda: lib.server.resource(uri))
    assert read == [uri]
    assert served.content == f"served by the library server for {uri.removeprefix('file:///')}"


def test_unknown_resource_raises_mcp_error_with_the_servers_code(lib: Library) -> None:
    """MCP-RES-11: not found is -32602 from a 2026-07-28 server and -32002 from an older one; outside
    chats both raise llm_mcp.MCPError with that code."""
    expected = -32602 if lib.era == "modern" else -32002
    with pytest.raises(llm_mcp.MCPError) as caught:
        lib.server.resource("library://nothing/here")
    assert caught.value.code == expected and caught.value.server == "library"
    assert "library://nothing/here" in str(caught.value)
    missing = llm_mcp.Resource(lib.server, {"uri": "library://gone", "name": "gone"})
    with pytest.raises(llm_mcp.MCPError) as caught:
        _ = missing.content
    assert caught.value.code == expected and not missing.loaded


def test_a_failing_read_raises_and_is_tried_again(lib: Library) -> None:
    """MCP-RES-02: a read the server fails keeps nothing: the next access asks again."""
    lost = llm_mcp.Resource(lib.server, {"uri": "library://books/fantasy/Dune", "name": "dune"})
    for _ in range(2):
        _, read = lib.new_reads(lambda: pytest.raises(llm_mcp.MCPError, lambda: lost.content))
        assert read == ["library://books/fantasy/Dune"]


def test_an_invalid_listed_template_does_not_break_the_listing(scripted, caplog):
    """A listed template that is not RFC 6570 (``{path:}`` makes uritemplate fail) is kept, logged,
    and raises a ValueError naming it when used; the other templates work."""
    templates = [{"uriTemplate": "x:/{path:}", "name": "broken"}, {"uriTemplate": "x:/{+path}", "name": "fine"}]
    server = scripted(server_of({"resources/templates/list": lambda r: result(r, {"resourceTemplates": templates})}))
    with caplog.at_level(logging.WARNING, logger="llm_mcp.client"), llm_mcp.mcp(url=server.url) as client:
        broken, fine = client.resource_templates
        assert (broken.name, broken.variables, fine.variables) == ("broken", [], ["path"])
        assert fine.expand(path="a/b") == "x:/a/b"
        with pytest.raises(ValueError, match="not an RFC 6570 URI template"):
            broken.expand(path="a")
    assert any("x:/{path:}" in r.getMessage() for r in caplog.records)


@pytest.fixture(scope="module")
def library_stdio() -> Iterator[llm_mcp.MCP]:
    """One stdio connection to the library server for the module (its ``read_log`` tool lists what it read)."""
    with llm_mcp.mcp(command=[sys.executable, "-m", LIBRARY], name="library", timeout=20) as server:
        yield server


def read_uri(server: llm_mcp.MCP, template: str, **variables: str) -> str:
    """The URI the server was asked for when reading ``template`` with ``variables``."""
    server.resource(template, **variables)
    return json.loads(server.call("read_log").text)[-1]


@pytest.mark.parametrize(("value", "simple", "reserved"), [
    ("a/../b", "a%2F..%2Fb", "a/../b"),
    ("q?x=1#frag", "q%3Fx%3D1%23frag", "q?x=1#frag"),
    ("café menu", "caf%C3%A9%20menu", "caf%C3%A9%20menu"),
    # RFC 6570 3.2.3: {+var} keeps pct-encoded triplets, and still encodes what is not allowed
    ("café%20menu", "caf%C3%A9%2520menu", "caf%C3%A9%20menu"),
    ("100% sure%21", "100%25%20sure%2521", "100%25%20sure%21"),
])
def test_values_are_encoded_as_rfc_6570_says(value: str, simple: str, reserved: str) -> None:
    """``{var}`` percent-encodes everything but unreserved characters; ``{+var}`` also keeps
    reserved characters and pct-encoded triplets, and encodes the rest (spaces, non-ASCII, a
    lone ``%``) whatever else the value holds."""
    assert expand_template("x:/{v}", {"v": value}) == "x:/" + simple
    assert expand_template("x:/{+v}", {"v": value}) == "x:/" + reserved
    assert expand_template("x:/{#v}", {"v": value}) == "x:/#" + reserved


def test_the_server_receives_the_encoded_uri(scripted) -> None:
    """What reaches the server is the encoded URI (a scripted server records the request as sent)."""
    def read(request):
        return result(request, {"contents": [{"uri": request["params"]["uri"], "text": "ok"}]})
    server = scripted(server_of({"resources/read": read}))
    with llm_mcp.mcp(url=server.url) as client:
        client.resource("file:///{+path}", path="notes/café%20menu.txt")
    assert [r["params"]["uri"] for _, _, r in server.requests if r.get("method") == "resources/read"] == [
        "file:///notes/caf%C3%A9%20menu.txt"]


@pytest.mark.parametrize("template", ["x:/{", "x:/}", "x:/{a b}", "x:/{}", "x:/{=a}", "x:/{a:0}", "x:/{a:10000}",
                                      "x:/{a,}", "x:/{a}{", "x:/a b{c}", "x:/{a}%zz"])
def test_an_invalid_template_is_a_value_error(template: str) -> None:
    """A template that is not RFC 6570 raises ``ValueError`` naming it, before anything is sent."""
    with pytest.raises(ValueError, match="RFC 6570") as info:
        expand_template(template, {"a": "1", "c": "2"})
    assert repr(template) in str(info.value)


def test_resource_with_an_invalid_template_sends_nothing(library_stdio: llm_mcp.MCP) -> None:
    """resource() with an invalid template raises before sending; valid templates still read."""
    before = json.loads(library_stdio.call("read_log").text)
    with pytest.raises(ValueError, match="RFC 6570"):
        library_stdio.resource("file:///{path", path="x")
    assert json.loads(library_stdio.call("read_log").text) == before


def test_save_replaces_a_file_and_creates_no_directory(library_stdio: llm_mcp.MCP, tmp_path) -> None:
    """save() over an existing file replaces it (a blob as its bytes); into a missing directory it
    raises FileNotFoundError and creates nothing."""
    from llm_mcp_tests.support.servers import library as kit

    target = tmp_path / "saved"
    target.write_text("old and much longer than the logo" * 100, encoding="utf-8")
    logo = next(r for r in library_stdio.resources if r.name == "logo")
    assert logo.save(target) == target
    assert target.read_bytes() == kit.PNG_BYTES
    with pytest.raises(FileNotFoundError):
        logo.save(tmp_path / "missing" / "logo.png")
    assert not (tmp_path / "missing").exists()
