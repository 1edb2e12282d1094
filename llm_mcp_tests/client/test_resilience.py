"""Resilience: broken streams, resumption, header mismatch, era detection failures, stdio probes, server requests.

Servers: ``servers/raw_http.py`` (cases ``broken_stream*``, ``resume``, ``header_mismatch*``, ``no_revision``,
``unsupported_version``, ``server_request``) and ``servers/raw_stdio.py`` (cases ``silent_discover``,
``exit_on_discover``, and its start-up line on stderr). Each test names its checklist ID.
"""

from __future__ import annotations

import json
import logging
import time

import pytest

import llm_mcp

from llm_mcp_tests.support.processes import raw_stdio_command


def headers_of(entry):
    return {k: v for k, v in entry["headers"]}


def body_of(entry):
    return json.loads(entry["body"]) if entry["body"] else None


def posts(log, method=None):
    """POSTs that carry a JSON-RPC message, optionally only those of ``method``."""
    found = [e for e in log if e["method"] == "POST" and e["body"]]
    if method:
        found = [e for e in found if (body_of(e) or {}).get("method") == method]
    return found


def wait_for(predicate, timeout=5.0):
    """Poll ``predicate`` (log records arrive from reader threads) until true or ``timeout``."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


# --------------------------------------------------------------------------- broken streams (2026-07-28)


def test_conn_08_broken_tools_list_is_resent_with_a_new_id(raw_http):
    """MCP-CONN-08: a tools/list whose SSE stream ends without the response is sent again with a new JSON-RPC
    id and succeeds; on 2026-07-28 the client does not try to resume with GET."""
    with llm_mcp.mcp(url=raw_http.url("broken_stream1_list", era="modern")) as server:
        names = [t.name for t in server.tools]
    assert names[:2] == ["echo", "echo_idempotent"]
    lists = posts(raw_http.log(), "tools/list")
    assert len(lists) == 2
    first, second = (body_of(e)["id"] for e in lists)
    assert first != second
    assert [e for e in raw_http.log() if e["method"] == "GET"] == []


def test_conn_09_broken_call_of_non_idempotent_tool_is_not_resent(raw_http):
    """MCP-CONN-09: a tools/call of a tool without idempotentHint: true whose stream broke is not sent again:
    MCPError, exactly one tools/call POST (the broken tools/list before it is re-sent, being safe)."""
    with llm_mcp.mcp(url=raw_http.url("broken_stream", era="modern")) as server:
        assert server.tool("echo").idempotent is False
        with pytest.raises(llm_mcp.MCPError):
            server.call("echo", message="once")
    log = raw_http.log()
    assert len(posts(log, "tools/list")) == 2
    assert len(posts(log, "tools/call")) == 1


def test_conn_09_broken_call_of_idempotent_tool_is_resent(raw_http):
    """MCP-CONN-09: a tools/call of an idempotent tool (idempotentHint: true) whose stream broke is sent again
    with a new id and the same arguments, and succeeds."""
    with llm_mcp.mcp(url=raw_http.url("broken_stream", era="modern")) as server:
        assert server.tool("echo_idempotent").idempotent is True
        assert server.call("echo_idempotent", message="twice").text == "twice"
    calls = [body_of(e) for e in posts(raw_http.log(), "tools/call")]
    assert len(calls) == 2
    assert calls[0]["id"] != calls[1]["id"]
    assert calls[0]["params"]["arguments"] == calls[1]["params"]["arguments"] == {"message": "twice"}


def test_conn_11_two_broken_streams_then_success_on_the_third_attempt(raw_http):
    """MCP-CONN-11: two broken streams in a row still leave the third attempt, which succeeds."""
    with llm_mcp.mcp(url=raw_http.url("broken_stream2_call", era="modern")) as server:
        assert server.call("echo_idempotent", message="third").text == "third"
    assert len(posts(raw_http.log(), "tools/call")) == 3


def test_conn_11_three_broken_streams_give_up_after_three_attempts(raw_http):
    """MCP-CONN-11: with three broken streams the client makes at most 3 attempts, then raises MCPError."""
    with llm_mcp.mcp(url=raw_http.url("broken_stream3_call", era="modern")) as server:
        with pytest.raises(llm_mcp.MCPError):
            server.call("echo_idempotent", message="never")
    calls = posts(raw_http.log(), "tools/call")
    assert 1 <= len(calls) <= 3
    assert len({body_of(e)["id"] for e in calls}) == len(calls)


def test_conn_11_three_broken_tools_list_streams_give_up(raw_http):
    """MCP-CONN-11: the same bound applies to tools/list: at most 3 POSTs, then MCPError."""
    with llm_mcp.mcp(url=raw_http.url("broken_stream3_list", era="modern")) as server:
        with pytest.raises(llm_mcp.MCPError):
            server.tools
    assert 1 <= len(posts(raw_http.log(), "tools/list")) <= 3


# --------------------------------------------------------------------------- resumption (2025-11-25)


def test_conn_10_stream_resumed_with_last_event_id_after_retry_delay(raw_http):
    """MCP-CONN-10: a handshake-era SSE stream that ends after an event with id ev-1 and retry 200 is resumed by
    GET with Last-Event-ID: ev-1 and the session id, no sooner than the retry delay; the result arrives; the
    request is not re-sent."""
    with llm_mcp.mcp(url=raw_http.url("resume")) as server:
        assert server.protocol_version == "2025-11-25"
        assert server.call("echo", message="resumed").text == "resumed"
    log = raw_http.log()
    calls = posts(log, "tools/call")
    assert len(calls) == 1
    gets = [e for e in log if e["method"] == "GET"]
    assert len(gets) == 1
    get = headers_of(gets[0])
    assert get.get("last-event-id") == "ev-1"
    session = headers_of(calls[0]).get("mcp-session-id")
    assert session and get.get("mcp-session-id") == session
    assert "text/event-stream" in get.get("accept", "")
    assert gets[0]["time"] - calls[0]["time"] >= 0.18


def test_conn_11_legacy_resumptions_count_toward_the_three_attempts(raw_http):
    """MCP-CONN-11 ("either way"): on a handshake-era server whose streams and resumption streams all end
    without the response, the POST and its GET resumptions together are at most 3 attempts, then MCPError."""
    with llm_mcp.mcp(url=raw_http.url("resume_broken")) as server:
        with pytest.raises(llm_mcp.MCPError):
            server.tools
    log = raw_http.log()
    attempts = posts(log, "tools/list") + [e for e in log if e["method"] == "GET"]
    assert 1 <= len(attempts) <= 3, (f"{len(posts(log, 'tools/list'))} tools/list POSTs and "
                                     f"{len(attempts) - len(posts(log, 'tools/list'))} resumption GETs")


# --------------------------------------------------------------------------- header mismatch (2026-07-28)


def test_expl_01_header_mismatch_relists_tools_and_retries_once_with_the_header(raw_http):
    """MCP-EXPL-01 (spec note): on HTTP 400 with -32020 the client lists the tools again, learns the new
    x-mcp-header, and retries the call once, now with Mcp-Param-Message; the call succeeds."""
    with llm_mcp.mcp(url=raw_http.url("header_mismatch", era="modern")) as server:
        assert server.call("echo", message="hi").text == "hi"
        assert server.tool("echo").header_map == {("message",): "Message"}
    log = raw_http.log()
    assert len(posts(log, "tools/list")) == 2
    calls = posts(log, "tools/call")
    assert len(calls) == 2
    assert "mcp-param-message" not in headers_of(calls[0])
    assert headers_of(calls[1]).get("mcp-param-message") == "hi"
    assert body_of(calls[0])["id"] != body_of(calls[1])["id"]


def test_expl_01_header_mismatch_is_retried_only_once(raw_http):
    """MCP-EXPL-01 (spec note): when the retry gets -32020 again the client raises MCPError (code -32020)
    instead of looping: two tools/list, two tools/call POSTs."""
    with llm_mcp.mcp(url=raw_http.url("header_mismatch_always", era="modern")) as server:
        with pytest.raises(llm_mcp.MCPError) as info:
            server.call("echo", message="hi")
    assert info.value.code == -32020
    log = raw_http.log()
    assert len(posts(log, "tools/list")) == 2
    assert len(posts(log, "tools/call")) == 2


# --------------------------------------------------------------------------- no revision in common


def test_conn_07_no_known_revision_raises(raw_http):
    """MCP-CONN-07: server/discover gets 400 without a body (an older server), and initialize answers
    protocolVersion 1999-01-01: MCPError mentioning the revision; no notifications/initialized, no tools/list."""
    server = llm_mcp.mcp(url=raw_http.url("no_revision"))
    with server:
        with pytest.raises(llm_mcp.MCPError) as info:
            server.tools
    message = str(info.value)
    assert "revision" in message.lower()
    assert "1999-01-01" in message
    log = raw_http.log()
    assert len(posts(log, "server/discover")) == 1
    assert len(posts(log, "initialize")) == 1
    assert posts(log, "notifications/initialized") == []
    assert posts(log, "tools/list") == []


def test_conn_07_unsupported_version_without_overlap_raises_without_looping(raw_http):
    """MCP-CONN-07: a server that answers everything with -32022 and data.supported ["2099-01-01"] (no
    revision in common) gives MCPError after a bounded number of POSTs (no renegotiation loop)."""
    with llm_mcp.mcp(url=raw_http.url("unsupported_version", era="modern")) as server:
        with pytest.raises(llm_mcp.MCPError) as info:
            server.tools
    assert not isinstance(info.value, llm_mcp.ConnectionError)
    log = raw_http.log()
    assert 1 <= len(posts(log)) <= 3
    assert posts(log, "tools/list") == []
    assert [e for e in log if e["method"] == "GET"] == []


def test_conn_02_unsupported_version_without_overlap_is_not_a_fallback_signal(raw_http):
    """MCP-CONN-02 (spec note "-32022: retry with a version from data.supported rather than falling back"),
    MCP-CONN-07: -32022 is a 2026-07-28 error, so the server is modern; with no version in common the client
    raises at once instead of trying the initialize handshake."""
    with llm_mcp.mcp(url=raw_http.url("unsupported_version", era="modern")) as server:
        with pytest.raises(llm_mcp.MCPError):
            server.tools
    assert posts(raw_http.log(), "initialize") == []


# --------------------------------------------------------------------------- stdio probes and stderr


def test_conn_02_stdio_silent_discover_falls_back_after_the_probe_timeout():
    """MCP-CONN-02 (stdio note): a handshake-era server that never answers server/discover: after the probe
    timeout, min(10 s, timeout) = 2 s here, the client does the handshake (2025-11-25) and the call works."""
    server = llm_mcp.mcp(command=raw_stdio_command("silent_discover", "handshake"), name="raw-silent", timeout=2)
    with server:
        started = time.monotonic()
        assert server.protocol_version == "2025-11-25"
        elapsed = time.monotonic() - started
        assert server.echo(message="late").text == "late"
    assert 1.5 <= elapsed < 8


def test_conn_02_stdio_exit_on_discover_restarts_and_handshakes(caplog):
    """MCP-CONN-02 (stdio note), MCP-DESC-14: a handshake-era server that exits on server/discover is started
    again, the handshake (2025-11-25) follows, and the call works."""
    caplog.set_level(logging.INFO, logger="llm_mcp.server.raw-exit")
    server = llm_mcp.mcp(command=raw_stdio_command("exit_on_discover", "handshake"), name="raw-exit", timeout=10)
    with server:
        started = time.monotonic()
        assert server.protocol_version == "2025-11-25"
        assert time.monotonic() - started < 8
        assert server.echo(message="again").text == "again"

        def started_lines():
            return [r for r in caplog.records
                    if r.name == "llm_mcp.server.raw-exit" and "raw_stdio: started" in r.getMessage()]

        assert wait_for(lambda: len(started_lines()) >= 2), [r.getMessage() for r in caplog.records]
    assert len(started_lines()) == 2
    assert any("exiting on server/discover" in r.getMessage() for r in caplog.records)


def test_stdio_stderr_reaches_python_logging(caplog):
    """stdio transport (no checklist ID; MCP "stdio": stderr carries the server's logs): a line the server
    writes to stderr at start-up is logged under llm_mcp.server.<name>."""
    caplog.set_level(logging.INFO, logger="llm_mcp.server.raw-stderr")
    with llm_mcp.mcp(command=raw_stdio_command("none", "handshake"), name="raw-stderr") as server:
        assert server.echo(message="x").text == "x"
        found = wait_for(lambda: any(r.name == "llm_mcp.server.raw-stderr"
                                     and r.getMessage().startswith("raw_stdio: started")
                                     for r in caplog.records))
    assert found, [(r.name, r.getMessage()) for r in caplog.records]


# --------------------------------------------------------------------------- server requests over HTTP


def test_conn_04_http_server_request_gets_method_not_found_and_the_call_completes(raw_http):
    """MCP-CONN-04 (HTTP): a sampling/createMessage request sent on a tools/call SSE stream is answered by a
    POSTed JSON-RPC error -32601 (with the session id) and the call's result still arrives."""
    with llm_mcp.mcp(url=raw_http.url("server_request")) as server:
        result = server.call("echo", message="ignored")
    assert result.text.startswith("client answered: ")
    answer = json.loads(result.text[len("client answered: "):])
    assert answer is not None, "the client never POSTed a reply"
    assert answer["error"]["code"] == -32601
    log = raw_http.log()
    replies = [e for e in posts(log) if (body_of(e) or {}).get("id") == "srv-1" and "method" not in body_of(e)]
    assert len(replies) == 1
    session = headers_of(posts(log, "tools/call")[0]).get("mcp-session-id")
    assert session and headers_of(replies[0]).get("mcp-session-id") == session
