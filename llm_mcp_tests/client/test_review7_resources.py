"""Review of issue 7: resource templates (RFC 6570) and saving resources, against the library kit server.

The library server (``llm_mcp_tests/support/servers/library.py``) logs every URI ``resources/read``
asked for (its ``read_log`` tool), so each test sees what reached it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest

import llm_mcp
from llm_mcp.client.resource import expand_template
from llm_mcp_tests.support.scripted import result, server_of

LIBRARY = "llm_mcp_tests.support.servers.library"


@pytest.fixture(scope="module")
def library() -> Iterator[llm_mcp.MCP]:
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


def test_resource_with_an_invalid_template_sends_nothing(library: llm_mcp.MCP) -> None:
    """resource() with an invalid template raises before sending; valid templates still read."""
    before = json.loads(library.call("read_log").text)
    with pytest.raises(ValueError, match="RFC 6570"):
        library.resource("file:///{path", path="x")
    assert json.loads(library.call("read_log").text) == before


def test_save_replaces_a_file_and_creates_no_directory(library: llm_mcp.MCP, tmp_path) -> None:
    """save() over an existing file replaces it (a blob as its bytes); into a missing directory it
    raises FileNotFoundError and creates nothing."""
    from llm_mcp_tests.support.servers import library as kit

    target = tmp_path / "saved"
    target.write_text("old and much longer than the logo" * 100, encoding="utf-8")
    logo = next(r for r in library.resources if r.name == "logo")
    assert logo.save(target) == target
    assert target.read_bytes() == kit.PNG_BYTES
    with pytest.raises(FileNotFoundError):
        logo.save(tmp_path / "missing" / "logo.png")
    assert not (tmp_path / "missing").exists()
