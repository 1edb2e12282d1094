"""The fault matrix: every fault against stdio, Streamable HTTP 2026-07-28 and the handshake era,
through the client (``server.call``) and through a chat with the scripted model.

Each cell asserts the error's class and message (with "may have partly run" where the call may
have started: none of the tools is read-only), the time taken against the timeout, exactly one
tool result in the chat, and no process or thread left behind. The server is
``support/servers/faults.py`` (each tool one fault); HTTP runs on 127.0.0.1.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import llm_mcp
from llm_mcp.chat.chat import MAX_RESULT_CHARS
from llm_mcp.client.errors import StreamBrokenError
from llm_mcp.testing.scripted_model import reply, tool_call

from llm_mcp_tests.support.chats import make_chat, tool_result_text
from llm_mcp_tests.support.leftovers import Snapshot, left_behind
from llm_mcp_tests.support.processes import PYTHON, SERVERS_DIR, start_http_server
from llm_mcp_tests.support.servers.faults import BIG_CHARS, ENCODED_TEXT, STALL_SECONDS

FAULTS_SERVER = str(SERVERS_DIR / "faults.py")
TRANSPORTS = ["stdio", "modern", "handshake"]
TIMEOUT = 10.0
"""Seconds each server may take per request, except for the stall (`STALL_TIMEOUT`)."""
STALL_TIMEOUT = 1.0
PARTLY = "may have partly run"
REPLACED = ENCODED_TEXT.replace("é", "\ufffd").replace("è", "\ufffd")

BROKE_OFF = r"MCP server 'faults' received the request tools/call but broke off before its answer \(RemoteProtocolError\)"

# fault -> transport -> (error class or None, message regex or result text, may have partly run)
EXPECTED: dict[str, dict[str, tuple[type | None, str, bool]]] = {
    "exit_mid_call": {
        "stdio": (llm_mcp.ProcessExitedError, r"MCP server 'faults' exited with status 3 while handling tools/call\. "
                  r"Its stderr ended with:\n  faults: exiting in the middle of a call", True),
        "modern": (llm_mcp.ConnectionError, BROKE_OFF, True),
        "handshake": (llm_mcp.ConnectionError, BROKE_OFF, True),
    },
    "http_500": {
        "stdio": (llm_mcp.MCPError, r"MCP server 'faults' answered tools/call with error -32603: internal error",
                  False),
        "modern": (llm_mcp.ConnectionError, r"MCP server 'faults' answered tools/call with HTTP 500", True),
        "handshake": (llm_mcp.ConnectionError, r"MCP server 'faults' answered tools/call with HTTP 500", True),
    },
    "rate_429": {
        "stdio": (llm_mcp.MCPError, r"MCP server 'faults' answered tools/call with error -32000: rate limited",
                  False),
        "modern": (llm_mcp.ConnectionError, r"MCP server 'faults' answered tools/call with HTTP 429", False),
        "handshake": (llm_mcp.ConnectionError, r"MCP server 'faults' answered tools/call with HTTP 429", False),
    },
    "cut_after_headers": {
        "stdio": (llm_mcp.ProcessExitedError, r"MCP server 'faults' exited with status 0 while handling tools/call",
                  True),
        "modern": (StreamBrokenError, r"MCP server 'faults' closed the stream before answering tools/call "
                   r"\(1 attempt\)", True),
        "handshake": (StreamBrokenError, r"MCP server 'faults' closed the stream before answering tools/call "
                      r"\(1 attempt\)", True),
    },
    "stall": {
        transport: (llm_mcp.ServerTimeoutError, rf"MCP server 'faults' did not answer tools/call within "
                    rf"{STALL_TIMEOUT:g} s", True) for transport in TRANSPORTS
    },
    "half_message": {
        "stdio": (llm_mcp.ProcessExitedError, r"MCP server 'faults' exited with status 0 while handling tools/call",
                  True),
        "modern": (llm_mcp.ConnectionError, r"MCP server 'faults' received the request but broke off before its "
                   r"answer \(RemoteProtocolError\)", True),
        "handshake": (llm_mcp.ConnectionError, r"MCP server 'faults' received the request but broke off before its "
                      r"answer \(RemoteProtocolError\)", True),
    },
    "big": {transport: (None, "x" * BIG_CHARS, False) for transport in TRANSPORTS},
    "junk": {transport: (None, "ok", False) for transport in TRANSPORTS},
    "encoding": {transport: (None, REPLACED, False) for transport in TRANSPORTS},
}
CELLS = [(fault, transport) for fault in EXPECTED for transport in TRANSPORTS]


@pytest.fixture(scope="module")
def fault_urls() -> Iterator[dict[str, Any]]:
    servers = {era: start_http_server(lambda port, era=era: [PYTHON, FAULTS_SERVER, "--http", str(port),
                                                              "--era", era])
               for era in ("modern", "handshake")}
    try:
        yield {"urls": {era: f"http://127.0.0.1:{s.port}/mcp" for era, s in servers.items()}}
    finally:
        for server in servers.values():
            server.stop()


def _server(transport: str, fault: str, fault_urls: dict[str, Any]) -> llm_mcp.MCP:
    timeout = STALL_TIMEOUT if fault == "stall" else TIMEOUT
    if transport == "stdio":
        return llm_mcp.mcp(command=[PYTHON, FAULTS_SERVER, "--stdio"], name="faults", timeout=timeout)
    return llm_mcp.mcp(url=fault_urls["urls"][transport], name="faults", timeout=timeout)


def _check_error(exc: BaseException, fault: str, transport: str) -> None:
    kind, pattern, _ = EXPECTED[fault][transport]
    assert type(exc) is kind, type(exc)
    assert re.fullmatch(pattern, str(exc)), str(exc)
    if fault == "rate_429" and transport != "stdio":
        assert exc.status == 429 and exc.retry_after == 7.0
    if fault == "http_500" and transport != "stdio":
        assert exc.status == 500


def _elapsed_within(elapsed: float, fault: str) -> None:
    if fault == "stall":
        assert STALL_TIMEOUT <= elapsed < STALL_TIMEOUT + 3.0, elapsed  # the timeout, not the server's 30 s
        assert elapsed < STALL_SECONDS
    else:
        assert elapsed < TIMEOUT, elapsed  # failed fast: no timeout sat out


def _run_cell(fault: str, transport: str, fault_urls: dict[str, Any], cell: Callable[[llm_mcp.MCP], None]) -> None:
    """Run ``cell`` with a fresh server for the fault, close the server, and check that no process
    or thread is left behind."""
    before = Snapshot()
    server = _server(transport, fault, fault_urls)
    try:
        cell(server)
    finally:
        server.close()
    assert left_behind(before) == (set(), [])


@pytest.mark.parametrize(("fault", "transport"), CELLS)
def test_through_the_client(fault, transport, fault_urls, caplog):
    _run_cell(fault, transport, fault_urls, lambda server: _call_cell(server, fault, transport, caplog))


def _call_cell(server: llm_mcp.MCP, fault: str, transport: str, caplog: pytest.LogCaptureFixture) -> None:
    server.tools  # connected: the cell times the call alone
    kind, expected, _ = EXPECTED[fault][transport]
    caplog.set_level(logging.WARNING, logger="llm_mcp")
    started = time.monotonic()
    try:
        result = server.call(fault)
    except llm_mcp.MCPError as exc:
        elapsed = time.monotonic() - started
        assert kind is not None, f"unexpected {type(exc).__name__}: {exc}"
        _check_error(exc, fault, transport)
    else:
        elapsed = time.monotonic() - started
        assert kind is None, f"expected {kind.__name__}, got a result"
        assert result.text == expected and not result.is_error
    _elapsed_within(elapsed, fault)
    if fault == "encoding":
        assert any("not valid UTF-8" in r.getMessage() and "faults" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(("fault", "transport"), CELLS)
def test_through_a_chat(fault, transport, fault_urls, model):
    _run_cell(fault, transport, fault_urls, lambda server: _chat_cell(server, fault, transport, model))


def _chat_cell(server: llm_mcp.MCP, fault: str, transport: str, model: Any) -> None:
    chat = make_chat(model, [tool_call(fault, {}), reply("done")]).with_mcp(server)
    kind, expected, partly = EXPECTED[fault][transport]
    started = time.monotonic()
    assert chat.ask("go").content == "done"
    elapsed = time.monotonic() - started
    _elapsed_within(elapsed, fault)
    assert len(model.requests) == 2
    (result,) = model.requests[1].tool_results  # exactly one tool result
    assert [m.role for m in chat.messages] == ["user", "assistant", "tool", "assistant"]
    text = tool_result_text(result)
    if kind is None:
        if fault == "big":
            assert text.startswith("x" * MAX_RESULT_CHARS) and "more characters cut" in text
            assert len(text) < MAX_RESULT_CHARS + 100
        else:
            assert text == expected
    else:
        prefix = f"The MCP server 'faults' failed to run {fault}: "
        assert text.startswith(prefix), text
        message = text[len(prefix):]
        assert re.match(EXPECTED[fault][transport][1], message), message
        assert (PARTLY in text) == partly, text
