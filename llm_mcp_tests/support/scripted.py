"""Scripted HTTP servers: a real server on 127.0.0.1 that answers each POST with whatever a test's
``script(request)`` returns, raw HTTP bytes (SSE events included), possibly as a generator of chunks
with pauses between them. For servers that misbehave on purpose (hostile answers, broken streams).

    server = scripted(modern(lambda request: result(request, {"content": []})))
    llm_mcp.MCP(url=server.url)

``scripted`` is a fixture (enabled in ``llm_mcp_tests/conftest.py``); the rest are plain helpers.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

DISCOVER = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "serverInfo": {"name": "x"}}
TOOL = {"name": "t", "inputSchema": {"type": "object"}}


def answer(body, status=200, content_type="application/json", headers=()) -> bytes:
    """A whole HTTP response: ``body`` (bytes, or JSON-encoded) with a Content-Length."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    head = [f"HTTP/1.1 {status} X", f"Content-Type: {content_type}", f"Content-Length: {len(data)}",
            "Connection: close", *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + data


def result(request, value) -> bytes:
    """A JSON-RPC result for ``request``, as a whole HTTP response."""
    return answer({"jsonrpc": "2.0", "id": request["id"], "result": value})


class Scripted:
    """A loopback HTTP server answering each POST with ``script(request) -> bytes | iterator of bytes``."""

    def __init__(self, script: Callable[[dict], object], host: str = "127.0.0.1"):
        self.script = script
        self.requests: list[tuple[str, dict, dict]] = []
        self.sock = socket.create_server((host, 0))
        self.url = f"http://{host}:{self.sock.getsockname()[1]}/mcp"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
            length = int(headers.get("content-length", 0))
            while len(body) < length:
                body += conn.recv(65536)
            request = json.loads(body) if body else {}
            self.requests.append((lines[0].split()[0], headers, request))
            if "id" not in request and lines[0].startswith("POST"):
                conn.sendall(answer(b"", status=202))
                return
            reply = self.script(request)
            try:
                for part in ([reply] if isinstance(reply, bytes) else reply):
                    conn.sendall(part)
            except OSError:
                pass

    def close(self) -> None:
        self.sock.close()


def modern(on_call: Callable[[dict], object], tools=None):
    """A 2026-07-28 server whose tools/call answers come from ``on_call``."""
    def script(request):
        if request["method"] == "server/discover":
            return result(request, DISCOVER)
        if request["method"] == "tools/list":
            return result(request, {"tools": tools or [TOOL]})
        return on_call(request)
    return script


def trickle(head: bytes, parts: Iterator[bytes], pause: float) -> Iterator[bytes]:
    """``head``, then each of ``parts`` after ``pause`` seconds."""
    yield head
    for part in parts:
        time.sleep(pause)
        yield part


DISCOVER_ALL = {**DISCOVER, "capabilities": {"tools": {}, "resources": {}, "prompts": {}, "completions": {},
                                             "logging": {}}}


def sse(request, notifications, final) -> bytes:
    """An SSE answer: the notifications (method, params), then the result ``final``."""
    events = [{"jsonrpc": "2.0", "method": method, "params": params} for method, params in notifications]
    events.append({"jsonrpc": "2.0", "id": request["id"], "result": final})
    body = "".join("event: message\ndata: " + json.dumps(event) + "\n\n" for event in events)
    return answer(body.encode(), content_type="text/event-stream")


def server_of(handlers):
    """A script answering server/discover and tools/list, and ``handlers[method](request)`` for the rest."""
    def script(request):
        if request["method"] == "server/discover":
            return result(request, DISCOVER_ALL)
        if request["method"] == "tools/list":
            return result(request, {"tools": [TOOL]})
        return handlers[request["method"]](request)
    return script


@pytest.fixture
def scripted() -> Iterator[Callable[..., Scripted]]:
    """``start(script, host="127.0.0.1") -> Scripted``; every server started is closed after the test."""
    servers: list[Scripted] = []

    def start(script: Callable[[dict], object], host: str = "127.0.0.1") -> Scripted:
        servers.append(Scripted(script, host))
        return servers[-1]

    yield start
    for server in servers:
        server.close()
