"""The client follows the capabilities a server announces: what it does not offer is not asked for.

A listing of resources, resource templates or prompts from a server that announces none is empty,
with no request and a debug line saying why; reading a resource, filling in a prompt or asking
for completions raises MCPError saying the server offers none. The server is the fault-matrix
server (it announces ``tools`` only), over stdio and over HTTP 2026-07-28 through a recording
HTTP context that shows which methods were sent; the library kit server (which offers resources)
shows they are asked for when offered.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

import llm_mcp
from llm_mcp.client.prompt import Prompt

from llm_mcp_tests.support.processes import PYTHON, SERVERS_DIR, start_http_server
from llm_mcp_tests.support.recording_transport import RecordingTransport

FAULTS = str(SERVERS_DIR / "faults.py")


@pytest.fixture(scope="module")
def tools_only_url() -> Iterator[str]:
    server = start_http_server(lambda port: [PYTHON, FAULTS, "--http", str(port), "--era", "modern"])
    yield f"http://127.0.0.1:{server.port}/mcp"
    server.stop()


def _unoffered_reads(server: llm_mcp.MCP) -> None:
    with pytest.raises(llm_mcp.MCPError, match=r"^MCP server 'tools_only' offers no resources \(its capabilities do "
                       r"not announce 'resources'\); resources/read was not sent$") as failed:
        server.resource("file:///notes.md")
    assert failed.value.code is None
    with pytest.raises(llm_mcp.MCPError, match=r"offers no prompts .*prompts/get was not sent"):
        server.prompt("review", code="x")
    prompt = Prompt(server, {"name": "review", "arguments": [{"name": "language"}]})
    with pytest.raises(llm_mcp.MCPError, match=r"offers no completions .*completion/complete was not sent"):
        prompt.suggest(language="py")


def test_listings_of_what_is_not_offered_are_empty_and_not_requested(tools_only_url, caplog):
    recorder = RecordingTransport()
    server = llm_mcp.context(transport=recorder).mcp(url=tools_only_url, name="tools_only")
    caplog.set_level(logging.DEBUG, logger="llm_mcp.client")
    assert server.resources == [] and server.resource_templates == [] and server.prompts == []
    assert server.refresh_resources() == [] and server.refresh_prompts() == []
    _unoffered_reads(server)
    assert [t.name for t in server.tools][:1] == ["ok"]
    sent = set(recorder.mcp_methods)
    assert "server/discover" in sent and "tools/list" in sent
    assert not any(method.startswith(("resources/", "prompts/", "completion/")) for method in sent), sent
    said = [r.getMessage() for r in caplog.records]
    assert "MCP server tools_only offers no resources: resources/list not sent, the list is empty" in said
    assert "MCP server tools_only offers no prompts: prompts/list not sent, the list is empty" in said
    server.close()


def test_the_same_over_stdio():
    server = llm_mcp.mcp(command=[PYTHON, FAULTS, "--stdio"], name="tools_only")
    assert server.resources == [] and server.prompts == []  # the server would answer -32601 if asked
    _unoffered_reads(server)
    server.close()


def test_a_server_that_offers_resources_is_asked(mcp_test_server):
    """The library kit server announces resources: they are listed and read."""
    running = mcp_test_server("llm_mcp_tests.support.servers.library", transport="stdio", era="modern")
    with running.mcp(timeout=20, name="library") as server:
        assert "resources" in server.capabilities
        assert server.resources and server.resource(server.resources[0].uri).uri == server.resources[0].uri
