"""Streamable HTTP against real servers on 127.0.0.1: headers, eras, sessions, and cases C04-C08, C22."""

from __future__ import annotations

import json
import logging
import time

import pytest

import llm_mcp

from llm_mcp_tests.support.scripted import answer, modern, result, trickle


def headers_of(entry):
    return {k: v for k, v in entry["headers"]}


def posts(log, method=None):
    found = [e for e in log if e["method"] == "POST" and e["body"]]
    if method:
        found = [e for e in found if json.loads(e["body"]).get("method") == method]
    return found


def test_desc_01_bearer_token_and_standard_headers(raw_http):
    """MCP-DESC-01, MCP-CONN-01: every POST carries the bearer token, Accept, MCP-Protocol-Version (equal to
    the _meta version), Mcp-Method, and Mcp-Name for tools/call."""
    server = llm_mcp.mcp(url=raw_http.url("basic", era="modern"), bearer_token="tok-123")
    with server:
        assert server.echo(message="hi").text == "hi"
    log = raw_http.log()
    sent = posts(log)
    assert [json.loads(e["body"])["method"] for e in sent] == ["server/discover", "tools/list", "tools/call"]
    for entry in sent:
        headers, body = headers_of(entry), json.loads(entry["body"])
        assert headers["authorization"] == "Bearer tok-123"
        assert headers["accept"] == "application/json, text/event-stream"
        assert headers["mcp-protocol-version"] == "2026-07-28"
        assert body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] == {"elicitation": {"form": {}, "url": {}}}
        assert body["params"]["_meta"]["io.modelcontextprotocol/clientInfo"]["name"] == "llm_mcp"
        assert headers["mcp-method"] == body["method"]
    assert headers_of(sent[2])["mcp-name"] == "echo"
    assert "mcp-name" not in headers_of(sent[1])


def test_conn_02_handshake_fallback_and_session(raw_http):
    """MCP-CONN-02, MCP-CONN-06: a handshake-era server (400 without a JSON-RPC body to server/discover) is
    reached through initialize; the session id is sent back; close() DELETEs the session."""
    server = llm_mcp.mcp(url=raw_http.url("basic"))
    assert server.echo(message="hi").text == "hi"
    assert server.protocol_version == "2025-11-25"
    server.close()
    log = raw_http.log()
    methods = [(e["method"], json.loads(e["body"]).get("method") if e["body"] else None) for e in log]
    assert methods[:3] == [("POST", "server/discover"), ("POST", "initialize"), ("POST", "notifications/initialized")]
    init = json.loads(log[1]["body"])
    assert init["params"]["capabilities"] == {} and init["params"]["protocolVersion"] == "2025-11-25"
    session = [headers_of(e).get("mcp-session-id") for e in log[2:]]
    assert session[0] and all(s == session[0] for s in session)
    assert log[-1]["method"] == "DELETE"
    assert all(headers_of(e).get("mcp-protocol-version") == "2025-11-25" for e in log[2:])


def test_conn_02_handshake_era_requests_carry_no_2026_headers(raw_http):
    """MCP-CONN-01, MCP-CONN-02: Mcp-Method and Mcp-Name belong to 2026-07-28; the probe carries them,
    the handshake and the session's requests after it do not."""
    server = llm_mcp.mcp(url=raw_http.url("basic"))
    assert server.echo(message="hi").text == "hi"
    server.close()
    sent = posts(raw_http.log())
    methods = [json.loads(e["body"]).get("method") for e in sent]
    assert methods[0] == "server/discover" and "tools/call" in methods
    assert headers_of(sent[0])["mcp-method"] == "server/discover"
    for entry in sent[1:]:
        headers = headers_of(entry)
        assert "mcp-method" not in headers and "mcp-name" not in headers, headers


def test_conn_02_era_is_remembered_per_endpoint(raw_http):
    """MCP-CONN-02: the era found for an endpoint is remembered in the process: no second probe."""
    url = raw_http.url("basic")
    with llm_mcp.mcp(url=url) as first:
        first.tools
    with llm_mcp.mcp(url=url) as second:
        second.tools
    discovers = posts(raw_http.log(), "server/discover")
    assert len(discovers) == 1


def test_case_c04_sse_priming_ping_and_keepalive(raw_http):
    """C04: an empty-data event with an id, ': ping' comments and a 'keep-alive' event are skipped."""
    with llm_mcp.mcp(url=raw_http.url("c04")) as server:
        assert server.echo(message="through the noise").text == "through the noise"


def test_case_c05_http_notifications_before_response(raw_http, caplog):
    """C05 over HTTP: notifications on the SSE stream before the response are dispatched; the result returns."""
    caplog.set_level(logging.INFO, logger="llm_mcp.server")
    with llm_mcp.mcp(url=raw_http.url("c05"), name="c05", log_level="info") as server:
        progress = []
        result = server.client.request("tools/call", {"name": "echo", "arguments": {"message": "done"}},
                                       on_progress=progress.append)
    assert result["content"][0]["text"] == "done"
    assert [p["progress"] for p in progress] == [1, 2]
    assert any(r.name == "llm_mcp.server.c05" and r.getMessage() == "working" for r in caplog.records)


@pytest.mark.parametrize("case", ["c06_202", "c06_null", "c06_obj"])
def test_case_c06_notification_answers(raw_http, case):
    """C06: a notification answered 202 empty, 200 'null' or 200 '{}' is not an error."""
    with llm_mcp.mcp(url=raw_http.url(case)) as server:
        assert server.echo(message="ok").text == "ok"
        server.client.notify("notifications/roots/list_changed")
    assert posts(raw_http.log(), "notifications/initialized")


def test_case_c07_initialize_answered_201(raw_http):
    """C07: any 2xx with a JSON-RPC body is a success."""
    with llm_mcp.mcp(url=raw_http.url("c07")) as server:
        assert server.protocol_version == "2025-11-25"
        assert server.echo(message="created").text == "created"


def test_case_c08_expired_session_renewed_once(raw_http):
    """C08, MCP-CONN-05: a 404 for a forgotten session starts one new session and resends the request."""
    with llm_mcp.mcp(url=raw_http.url("c08")) as server:
        assert server.echo(message="one").text == "one"
        assert server.echo(message="two").text == "two"
    assert len(posts(raw_http.log(), "initialize")) == 2


def test_case_c08_second_404_raises(raw_http):
    """C08: when the new session is refused too, MCPError is raised (no loop)."""
    with llm_mcp.mcp(url=raw_http.url("c08_always")) as server:
        with pytest.raises(llm_mcp.MCPError, match="404"):
            server.tools
    assert len(posts(raw_http.log(), "initialize")) == 2


@pytest.mark.parametrize("case", ["c22_rel", "c22_abs", "c22_split"])
def test_case_c22_legacy_http_sse_endpoint(raw_http, case):
    """C22: a 2024-11-05 HTTP+SSE server's endpoint (relative, absolute, or split over two data lines) is
    resolved against the stream URL and used exactly."""
    with llm_mcp.mcp(url=raw_http.url(case)) as server:
        assert server.protocol_version == "2024-11-05"
        assert server.echo(message="legacy").text == "legacy"
    message_posts = [e for e in raw_http.log() if e["method"] == "POST" and "/messages" in e["path"]]
    assert {json.loads(e["body"])["method"] for e in message_posts} >= {"initialize", "tools/call"}
    assert len({e["raw_path"] + e["query"] for e in message_posts}) == 1


def test_case_c22_legacy_reconnects_after_close(raw_http):
    """MCP-CONN-05: after close() a legacy HTTP+SSE server gets a new stream and handshake; the era is
    remembered, so a second server object goes straight to the event stream."""
    url = raw_http.url("c22_rel")
    server = llm_mcp.mcp(url=url)
    assert server.echo(message="one").text == "one"
    server.close()
    assert server.echo(message="two").text == "two"
    server.close()
    with llm_mcp.mcp(url=url) as again:
        assert again.echo(message="three").text == "three"
    log = raw_http.log()
    initializes = [e for e in posts(log, "initialize") if "/messages" in e["path"]]
    assert len(initializes) == 3
    assert len([e for e in log if e["method"] == "GET"]) == 3
    assert len(posts(log, "server/discover")) == 1


def test_conn_12_redirects_never_followed(raw_http):
    """MCP-CONN-12: a 3xx fails the request; the Location is never requested."""
    with pytest.raises(llm_mcp.MCPError, match="redirect"):
        llm_mcp.mcp(url=raw_http.url("redirect")).tools
    assert raw_http.log("redirect_target") == []


def test_addr_07_unauthorized(raw_http):
    """MCP-ADDR-07: HTTP 401 raises UnauthorizedError with the challenge."""
    with pytest.raises(llm_mcp.UnauthorizedError) as info:
        llm_mcp.mcp(url=raw_http.url("auth401")).tools
    assert "invalid_token" in info.value.www_authenticate


def test_addr_08_insufficient_scope(raw_http):
    """MCP-ADDR-08: HTTP 403 with insufficient_scope raises InsufficientScopeError carrying the scopes."""
    with pytest.raises(llm_mcp.InsufficientScopeError) as info:
        llm_mcp.mcp(url=raw_http.url("auth403")).tools
    assert info.value.scopes == ["a", "b"]
    assert isinstance(info.value, llm_mcp.ForbiddenError)
    with pytest.raises(llm_mcp.ForbiddenError) as plain:
        llm_mcp.mcp(url=raw_http.url("auth403_plain")).tools
    assert not isinstance(plain.value, llm_mcp.InsufficientScopeError)


def test_auth_bearer_accepted(raw_http):
    with llm_mcp.mcp(url=raw_http.url("auth"), bearer_token="test-token") as server:
        assert server.echo(message="authorized").text == "authorized"


@pytest.mark.parametrize(("case", "status", "retry_after"), [("rate429", 429, 1.0), ("err500", 500, None)])
def test_down_statuses_are_connection_errors(raw_http, case, status, retry_after):
    """MCP-DOWN-01, MCP-DOWN-07: 429 and 5xx raise ConnectionError with the status and Retry-After."""
    with pytest.raises(llm_mcp.ConnectionError) as info:
        llm_mcp.mcp(url=raw_http.url(case)).tools
    assert info.value.status == status
    assert info.value.retry_after == retry_after


def test_addr_09_refused_connection():
    """MCP-ADDR-09: an unreachable server raises ConnectionError."""
    from llm_mcp_tests.support.processes import free_port

    with pytest.raises(llm_mcp.ConnectionError, match="could not be reached"):
        llm_mcp.mcp(url=f"http://127.0.0.1:{free_port()}/mcp").tools


def test_conn_13_logs_never_carry_headers(raw_http, caplog):
    """MCP-CONN-13: nothing logged while talking to a server contains its token or custom headers."""
    caplog.set_level(logging.DEBUG)
    with llm_mcp.mcp(url=raw_http.url("basic"), bearer_token="tok-SECRET-1",
                     headers={"X-Api-Key": "key-SECRET-2"}) as server:
        server.echo(message="hi")
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "SECRET" not in text


def test_expl_10_unknown_result_type(raw_http):
    """MCP-EXPL-10: a result without resultType counts as complete (handshake server); an unknown one raises."""
    from llm_mcp.client.session import Client

    client = Client.__new__(Client)
    client.name = "x"
    assert client._complete({"content": []}, "tools/call") == {"content": []}
    with pytest.raises(llm_mcp.MCPError, match="resultType"):
        client._complete({"resultType": "mystery"}, "tools/call")


def test_sse_pings_forever_stop_at_the_timeout(scripted):
    """A stream of ': ping' comments that never answers times out on the request's deadline."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
    server = scripted(modern(lambda r: trickle(head, iter(lambda: b": ping\n\n", None), 0.2)))
    started = time.monotonic()
    with pytest.raises(llm_mcp.ConnectionError) as info, llm_mcp.mcp(url=server.url, timeout=1) as client:
        client.call("t")
    assert info.value.timed_out and time.monotonic() - started < 4


def test_a_trickled_json_body_stops_at_the_timeout(scripted):
    """A JSON body sent a byte at a time is bounded by the request's timeout, not per read."""
    def slow(request):
        body = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"content": []}}).encode()
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        return trickle(head.encode(), (body[i:i + 1] for i in range(len(body))), 0.2)
    server = scripted(modern(slow))
    started = time.monotonic()
    with pytest.raises(llm_mcp.ConnectionError) as info, llm_mcp.mcp(url=server.url, timeout=1) as client:
        client.call("t")
    assert info.value.timed_out and time.monotonic() - started < 4


def test_event_stream_content_type_in_any_case(scripted):
    body = lambda r: ("event: message\ndata: " + json.dumps(  # noqa: E731
        {"jsonrpc": "2.0", "id": r["id"], "result": {"content": [{"type": "text", "text": "cased"}]}}) + "\n\n").encode()
    server = scripted(modern(lambda r: answer(body(r), content_type="Text/Event-Stream; Charset=UTF-8")))
    with llm_mcp.mcp(url=server.url) as client:
        assert client.call("t").text == "cased"


def test_non_ascii_session_id_is_refused_and_close_still_works(scripted):
    def script(request):
        if request["method"] == "initialize":
            return answer({"jsonrpc": "2.0", "id": request["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "x"}}},
                headers=["Mcp-Session-Id: s\xe9ssion"])
        return answer(b"", status=400, content_type="text/plain")
    server = scripted(script)
    client = llm_mcp.mcp(url=server.url)
    with pytest.raises(llm_mcp.MCPError, match="Mcp-Session-Id"):
        client.tools
    client.close()


def test_legacy_endpoint_on_another_origin_gets_no_token(scripted):
    """MCP-CONN-13 spirit: an HTTP+SSE server cannot send our bearer token to another origin."""
    thief = scripted(lambda r: result(r, {}), host="127.0.0.2")
    stream = (f"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
              f"event: endpoint\ndata: {thief.url.replace('/mcp', '/steal')}\n\n").encode()

    def legacy(request):
        if not request:  # the GET that opens the event stream
            return trickle(stream, iter([b": still here\n\n"] * 20), 0.1)
        return answer(b"", status=405, content_type="text/plain")
    server = scripted(legacy)
    with pytest.raises(llm_mcp.MCPError, match="origin"):
        llm_mcp.mcp(url=server.url, bearer_token="SECRET-TOKEN", timeout=3).tools
    assert thief.requests == []


def test_httpx_request_log_shows_only_the_origin_of_mcp_urls(raw_http, caplog):
    url = raw_http.url("basic", era="modern") + "&token=QSECRET"
    server = llm_mcp.mcp(url=url, name="q")
    with caplog.at_level(logging.INFO, logger="httpx"):
        assert server.call("echo", message="hi").text == "hi"
    lines = [r.getMessage() for r in caplog.records if r.name == "httpx"]
    assert lines and all("QSECRET" not in line and "/basic/" not in line for line in lines)
    assert any("HTTP Request: POST http://127.0.0.1:" in line for line in lines)
