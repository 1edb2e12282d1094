"""Listening to servers we did not write: the official Python SDK's ``MCPServer``, which serves
``subscriptions/listen`` (2026-07-28) with its own ``ListenHandler``, and the npm
``@modelcontextprotocol/server-everything``, whose resource subscriptions send updates on the
handshake era (``resources/subscribe``, then ``toggle-subscriber-updates``)."""

from __future__ import annotations

import sys
import threading

import pytest

import llm_mcp
from llm_mcp_tests.support.listening import Heard
from llm_mcp_tests.support.processes import start_http_server

SDK = "llm_mcp_tests.support.servers.sdk_listen"
SDK_NOTE = "memo://sdk-note"

pytestmark = pytest.mark.slow


@pytest.fixture(params=["stdio", "http"])
def sdk_server(request: pytest.FixtureRequest):
    """A server object for the SDK's MCPServer, over each transport (a fresh process)."""
    heard = Heard()
    if request.param == "stdio":
        server = llm_mcp.mcp(command=[sys.executable, "-m", SDK], name="sdk", after_change=heard)
        yield server, heard
        server.close()
        return
    process = start_http_server(lambda port: [sys.executable, "-m", SDK, "--http", str(port)])
    server = llm_mcp.mcp(url=f"http://127.0.0.1:{process.port}/mcp", name="sdk", after_change=heard)
    try:
        yield server, heard
    finally:
        server.close()
        process.stop()


def test_the_sdk_mcpserver_acknowledges_and_sends_changes_on_subscriptions_listen(sdk_server):
    """MCP-LISTEN-08, MCP-LISTEN-09: against the SDK's MCPServer, ``listen`` sends
    ``subscriptions/listen``, returns on its acknowledgement, and hears the tool list change and
    the resource update it publishes."""
    server, heard = sdk_server
    assert server.protocol_version == "2026-07-28"
    assert server.listen(resources=[SDK_NOTE]) is server and server.listening
    assert server.call("add_tool").text == "added late"
    assert heard.wait_for("tools")
    assert "late" in {tool.name for tool in server.tools}
    server.call("edit", text="changed by the SDK server")
    assert heard.wait_for(SDK_NOTE)
    assert heard.changes[heard.names.index(SDK_NOTE)].content == "changed by the SDK server"
    server.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("mcp-listener-")]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_server_everything_sends_resource_updates_to_a_handshake_era_listener(transport, everything_stdio_command,
                                                                            everything_http_url):
    """MCP-LISTEN-18: server-everything (2025-11-25) gets ``resources/subscribe`` for the resource
    given and, once its ``toggle-subscriber-updates`` tool runs, sends
    ``notifications/resources/updated`` on the session's stream (stdio pipe, GET stream), which
    ``after_change`` receives as the ``Resource``."""
    heard = Heard()
    if transport == "stdio":
        server = llm_mcp.mcp(command=everything_stdio_command, name="everything", after_change=heard)
    else:
        server = llm_mcp.mcp(url=everything_http_url, name="everything", after_change=heard)
    try:
        assert server.protocol_version == "2025-11-25"
        uri = server.resources[0].uri
        server.listen(resources=[uri])
        server.call("toggle-subscriber-updates")
        assert heard.wait_for(uri, timeout=20), heard.names
        change = heard.changes[heard.names.index(uri)]
        assert isinstance(change, llm_mcp.Resource) and not change.loaded
        assert change.content  # read on first access, from the server
        server.call("toggle-subscriber-updates")  # stop its timer
    finally:
        server.close()
