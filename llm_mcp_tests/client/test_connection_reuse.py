"""Connections kept alive across calls: SSE-answered calls reuse one connection once the server ends
the stream, and a server that keeps an answered stream open never holds a call up."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator

import pytest

import llm_mcp

from llm_mcp_tests.support.scripted import modern

CONNECT = "connect_tcp.started"


class Connects(logging.Handler):
    """Counts the TCP connections httpcore opens (its DEBUG trace of ``connect_tcp``)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if CONNECT in record.getMessage():
            self.count += 1


@pytest.fixture
def connects() -> Iterator[Connects]:
    logger = logging.getLogger("httpcore.connection")
    handler, level = Connects(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def test_sse_answered_handshake_calls_share_one_connection(echo_http_server, connects: Connects) -> None:
    """A handshake-era server that answers every POST with an SSE stream and ends it after the
    response: 20 calls after the first open no new connection."""
    url = echo_http_server("handshake")  # no --json-response: SSE answers
    with llm_mcp.mcp(url=url, name="echo") as server:
        assert server.call("echo", message="first").text == "first"
        assert server.protocol_version != "2026-07-28"
        before = connects.count
        for i in range(20):
            assert server.call("echo", message=f"m{i}").text == f"m{i}"
        assert connects.count == before


def open_stream(request: dict, after: str) -> Iterator[bytes]:
    """An SSE answer whose stream stays open after the response: silent, or pinging every 10 ms."""
    event = {"jsonrpc": "2.0", "id": request["id"], "result": {"content": [{"type": "text", "text": "kept"}]}}
    yield (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
           + b"event: message\ndata: " + json.dumps(event).encode() + b"\n\n")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if after == "pings":
            yield b": ping\n\n"
            time.sleep(0.01)
        else:
            time.sleep(0.5)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("after", ["silent", "pings"])
def test_a_stream_kept_open_after_the_response_does_not_hold_the_call(scripted, after: str) -> None:
    """The server sends the response, then keeps the stream open for a minute (silent, or with
    pings): each call returns its answer, well inside the test's 30 s limit, three times over
    (the first costs the short drain; later ones close such streams at once)."""
    server = scripted(modern(lambda request: open_stream(request, after)))
    with llm_mcp.mcp(url=server.url, timeout=45) as client:
        for _ in range(3):
            assert client.call("t").text == "kept"
