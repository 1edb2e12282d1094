"""Custom transports (the four-method contract), Client.meta, and the Mcp-Param-* header rules."""

from __future__ import annotations

import pytest

import llm_mcp
from llm_mcp.client.param_headers import header_value, method_headers, param_headers, tool_header_map
from llm_mcp.client.transports.stdio import StdioTransport, child_environment

from llm_mcp_tests.support.encoding import header_b64
from llm_mcp_tests.support.processes import echo_command, timed_after_start


class RecordingTunnel:
    """A custom transport that carries messages to a real echo server process and records each call."""

    def __init__(self, device):
        self.device = device
        self.inner = StdioTransport(lambda: (echo_command("modern"), child_environment()), name="tunnel")
        self.calls = []

    def request(self, message, *, version, timeout=None, headers=None, on_message=None):
        self.calls.append(("request", message["method"], version, timeout, dict(headers or {})))
        return self.inner.request(message, version=version, timeout=timeout, headers=headers, on_message=on_message)

    def notify(self, message, *, version):
        self.calls.append(("notify", message["method"], version))
        self.inner.notify(message, version=version)

    def cancel(self, notification, *, version):
        self.calls.append(("cancel", notification["method"], version))
        self.inner.cancel(notification, version=version)

    def close(self):
        self.calls.append(("close",))
        self.inner.close()


class LaptopFiles(llm_mcp.MCP):
    inputs = ["device"]
    transport = lambda self: RecordingTunnel(self.device)  # noqa: E731


def test_trans_01_02_05_custom_transport_carries_requests():
    """MCP-TRANS-01, MCP-TRANS-02, MCP-TRANS-05, MCP-TRANS-06: the transport setting is evaluated on the
    instance (inputs available); each request goes through request(message, version=..., timeout=...)."""
    server = LaptopFiles(device="laptop-7")
    tunnel = server.client.transport
    assert isinstance(tunnel, RecordingTunnel) and tunnel.device == "laptop-7"
    with server:
        assert server.echo(message="through the tunnel").text == "through the tunnel"
    requests = [c for c in tunnel.calls if c[0] == "request"]
    assert [c[1] for c in requests] == ["server/discover", "tools/list", "tools/call"]
    assert all(c[2] == "2026-07-28" for c in requests)
    assert tunnel.calls[-1] == ("close",)


def test_trans_07_param_headers_reach_the_transport():
    """MCP-TRANS-07: headers holds the Mcp-Param-* headers for annotated arguments, empty otherwise."""
    with LaptopFiles(device="d") as server:
        server.headered(region="eu west", count=7)
        server.echo(message="plain")
        calls = [c for c in server.client.transport.calls if c[:2] == ("request", "tools/call")]
    headered, echoed = calls
    assert headered[4] == {"Mcp-Param-Region": "eu west", "Mcp-Param-Count": "7"}
    assert echoed[4] == {}


def test_trans_08_close_then_reconnect():
    """MCP-TRANS-08: close() calls transport.close(); a later request goes through the transport again."""
    server = LaptopFiles(device="d")
    tunnel = server.client.transport
    assert server.echo(message="1").text == "1"
    server.close()
    assert tunnel.calls[-1] == ("close",)
    assert server.echo(message="2").text == "2"
    server.close()


def test_trans_09_connection_error_from_transport_propagates():
    """MCP-TRANS-09: a transport that raises ConnectionError makes the server unreachable like HTTP would."""
    class Offline:
        def request(self, message, *, version, timeout=None, headers=None, on_message=None):
            raise llm_mcp.ConnectionError("the laptop is offline", server="laptop")

        def notify(self, message, *, version):
            raise llm_mcp.ConnectionError("the laptop is offline", server="laptop")

        def cancel(self, notification, *, version):
            pass

        def close(self):
            pass

    with pytest.raises(llm_mcp.ConnectionError, match="offline"):
        llm_mcp.mcp(transport=lambda server: Offline(), name="laptop").tools


def test_trans_14_client_meta_sends_nothing():
    """MCP-TRANS-14: Client(transport).meta is the 2026-07-28 _meta, declares no capabilities, sends nothing."""
    tunnel = RecordingTunnel("d")
    meta = llm_mcp.Client(tunnel).meta
    assert meta == {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "llm_mcp", "version": llm_mcp.__version__},
    }
    assert tunnel.calls == []


# -- Mcp-Param-* rules (MCP 2026-07-28, SEP-2243) ---------------------------------------------


@pytest.mark.parametrize(("value", "expected"), [
    ("us-west1", "us-west1"),
    ("us west 1", "us west 1"),
    ("", ""),
    (42, "42"),
    (True, "true"),
    (False, "false"),
    ("Hello, 世界", header_b64("Hello, 世界")),
    (" padded ", header_b64(" padded ")),
    ("\tindented", header_b64("\tindented")),
    ("line1\r\nline2", header_b64("line1\r\nline2")),
    ("=?base64?abc?=", header_b64("=?base64?abc?=")),
    (None, None),
])
def test_trans_07_header_value_encoding(value, expected):
    """MCP-TRANS-07: strings as-is, integers decimal, booleans true/false, unsafe values base64, null absent."""
    assert header_value(value) == expected


def test_trans_07_nested_properties_and_absent_values():
    schema = {"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "opts": {"type": "object", "properties": {"tenant": {"type": "integer", "x-mcp-header": "Tenant"}}},
        "query": {"type": "string"},
    }}
    mapping = tool_header_map(schema)
    assert mapping == {("region",): "Region", ("opts", "tenant"): "Tenant"}
    assert param_headers(mapping, {"region": "x", "opts": {"tenant": 5}, "query": "q"}) == {
        "Mcp-Param-Region": "x", "Mcp-Param-Tenant": "5"}
    assert param_headers(mapping, {"region": None}) == {}


@pytest.mark.parametrize(("properties", "problem"), [
    ({"a": {"type": "string", "x-mcp-header": ""}}, "invalid"),
    ({"a": {"type": "string", "x-mcp-header": "My Region"}}, "invalid"),
    ({"a": {"type": "string", "x-mcp-header": "Region:Primary"}}, "invalid"),
    ({"a": {"type": "string", "x-mcp-header": "Région"}}, "invalid"),
    ({"a": {"type": "string", "x-mcp-header": "Region\t1"}}, "invalid"),
    ({"a": {"type": "number", "x-mcp-header": "N"}}, "type"),
    ({"a": {"type": "object", "x-mcp-header": "O"}}, "type"),
    ({"a": {"x-mcp-header": "NoType"}}, "type"),
    ({"a": {"type": "string", "x-mcp-header": "MyField"}, "b": {"type": "string", "x-mcp-header": "myfield"}},
     "share"),
    ({"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}}}, "reached"),
])
def test_expl_01_invalid_header_annotations_rejected(properties, problem):
    """MCP-EXPL-01: an invalid x-mcp-header annotation makes the tool invalid (the server drops it)."""
    with pytest.raises(ValueError, match=problem):
        tool_header_map({"type": "object", "properties": properties})


def test_conn_01_method_and_name_headers():
    """MCP-CONN-01: Mcp-Method always, Mcp-Name for tools/call, prompts/get (name) and resources/read (uri)."""
    assert method_headers({"method": "tools/list"}) == {"Mcp-Method": "tools/list"}
    assert method_headers({"method": "tools/call", "params": {"name": "a-b"}}) == {
        "Mcp-Method": "tools/call", "Mcp-Name": "a-b"}
    assert method_headers({"method": "resources/read", "params": {"uri": "file:///a%20b.txt"}})["Mcp-Name"] == \
        "file:///a%20b.txt"
    assert method_headers({"method": "prompts/get", "params": {"name": "résumé"}})["Mcp-Name"] == header_b64("résumé")


class RawTunnel(RecordingTunnel):
    """The recording tunnel, carrying messages to the raw handshake-era stdio server instead."""

    def __init__(self, case="none"):
        from llm_mcp_tests.support.processes import raw_stdio_command

        self.inner = StdioTransport(lambda: (raw_stdio_command(case, "handshake"), child_environment()),
                                    name="raw-tunnel")
        self.calls = []


def test_trans_03_notifications_reach_progress_and_logs(caplog):
    """MCP-TRANS-03: notifications the transport passes to on_message while a request waits reach
    progress callbacks and the server's logger."""
    import logging

    caplog.set_level(logging.INFO, logger="llm_mcp.server")
    with llm_mcp.mcp(transport=lambda server: RawTunnel("C05"), name="tunnelled", log_level="info") as server:
        progress = []
        result = server.client.request("tools/call", {"name": "echo", "arguments": {"message": "x"}},
                                       on_progress=progress.append)
    assert result["content"][0]["text"] == "x"
    assert [p["progress"] for p in progress] == [1, 2]
    assert any(r.name == "llm_mcp.server.tunnelled" and r.getMessage() == "working" for r in caplog.records)


def test_trans_04_notify_and_cancel_go_through_the_transport():
    """MCP-TRANS-04: client notifications go through notify(); a timed-out request is cancelled through
    cancel() with notifications/cancelled carrying its id."""
    server = timed_after_start(llm_mcp.mcp(transport=lambda server: RawTunnel(), name="tunnelled", timeout=60), 1)
    tunnel = server.client.transport
    with server:
        assert server.protocol_version == "2025-11-25"
        with pytest.raises(llm_mcp.ConnectionError):
            server.sleep(seconds=3)
    assert ("notify", "notifications/initialized", "2025-11-25") in tunnel.calls
    assert ("cancel", "notifications/cancelled", "2025-11-25") in tunnel.calls


def test_input_04_url_and_command_may_be_computed(echo_http_modern_url, echo_stdio_command):
    """MCP-INPUT-04: url and command take callables or method names, evaluated with the inputs."""
    class Remote(llm_mcp.MCP):
        inputs = ["endpoint"]
        url = "endpoint_url"
        name = "remote"

        def endpoint_url(self):
            return self.endpoint

    class Local(llm_mcp.MCP):
        inputs = ["argv"]
        command = lambda self: self.argv  # noqa: E731

    with Remote(endpoint=echo_http_modern_url) as remote, Local(argv=echo_stdio_command) as local:
        assert remote.echo(message="computed url").text == "computed url"
        assert local.echo(message="computed command").text == "computed command"
    with pytest.raises(ValueError, match="allow_http"):
        Remote(endpoint="http://elsewhere.example/mcp").tools


def test_inline_01_02_inline_servers_for_both_transports(echo_http_modern_url, echo_stdio_command):
    """MCP-INLINE-01, MCP-INLINE-02, MCP-INLINE-03: llm_mcp.mcp() builds ready servers from keywords
    (url, command, name, timeout, headers, bearer_token, env, directory) for HTTP and stdio."""
    with llm_mcp.mcp(url=echo_http_modern_url, name="h", timeout=5, headers={"X-A": "1"},
                     bearer_token="t") as http:
        assert http.echo(message="over http").text == "over http"
    with llm_mcp.mcp(command=echo_stdio_command, name="s", env={"A": "1"}, directory=".") as stdio:
        assert stdio.echo(message="over stdio").text == "over stdio"
    assert (http.name, stdio.name) == ("h", "s")


def test_addr_06_json_rpc_error_raises_with_code(echo_stdio_command):
    """MCP-ADDR-06: outside chats, a JSON-RPC error raises MCPError whose code is the error's code."""
    with llm_mcp.mcp(command=echo_stdio_command, name="errors") as server:
        with pytest.raises(llm_mcp.MCPError) as info:
            server.client.request("tools/call", {"name": "no_such_tool", "arguments": {}})
        with pytest.raises(llm_mcp.MCPError) as unknown_method:
            server.client.request("vendor/unknown", {})
    assert info.value.code == -32602
    assert unknown_method.value.code == -32601
