"""A hand-written handshake-era Streamable HTTP server that records, for each
``notifications/cancelled`` it gets, whether the cancelled call's connection was still open.

Real HTTP on 127.0.0.1 (``http.server``, one thread per connection), no ``mcp`` import, so the
order of what reaches the server is seen on the sockets themselves:

    with cancel_order_server() as server:
        mcp = llm_mcp.mcp(url=server.url, name="order")
        ...                       # call "wait", cancel it
        server.cancels            # [{"requestId": 7, "reason": "...", "stream": "open"}]

``initialize`` starts a session (``Mcp-Session-Id``, revision 2025-11-25); ``tools/list`` offers
one tool, ``wait``; ``tools/call`` answers with an SSE stream that stays silent until the call is
cancelled (then it ends with a ``-32800`` error, as the SDKs' servers do) or 30 seconds pass.
When ``notifications/cancelled`` arrives the server peeks at the call's socket: ``"open"`` when
the client had not shut it, ``"closed"`` when it had (an end of stream was already there).
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["CancelOrderServer", "call_and_cancel", "cancel_order_server"]

REVISION = "2025-11-25"
SESSION = "order-session"


class CancelOrderServer:
    """What the server saw: ``calls`` (request ids of ``tools/call``), ``cancels`` (one dict per
    ``notifications/cancelled``: ``requestId``, ``reason``, ``stream``), ``cancelled_at`` (when the
    first arrived, ``time.monotonic()``) and ``call_started`` (set once a call's stream is open)."""

    def __init__(self, *, ends_cancelled_calls: bool = True, answers_cancels: bool = True) -> None:
        self.ends_cancelled_calls = ends_cancelled_calls
        self.answers_cancels = answers_cancels
        self.released = threading.Event()  # set when the server stops: a held answer is let go
        self.calls: list[Any] = []
        self.cancels: list[dict[str, Any]] = []
        self.cancelled_at: float | None = None  # time.monotonic() when the first cancel arrived
        self.call_started = threading.Event()
        self._sockets: dict[Any, socket.socket] = {}
        self._cancelled: dict[Any, threading.Event] = {}
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/mcp"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _json(self, status: int, body: Any = None) -> None:
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Mcp-Session-Id", SESSION)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_DELETE(self) -> None:
                self._json(200)

            def do_GET(self) -> None:
                self._json(405)

            def do_POST(self) -> None:
                message = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                method, params = message.get("method"), message.get("params") or {}
                if method != "initialize" and self.headers.get("Mcp-Session-Id") != SESSION:
                    body = b"Bad Request: Missing session ID"  # what a 2025 server tells a 2026-07-28 probe
                    self.send_response(400)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                elif method == "initialize":
                    self._json(200, {"jsonrpc": "2.0", "id": message["id"], "result": {
                        "protocolVersion": REVISION, "capabilities": {"tools": {}},
                        "serverInfo": {"name": "cancel-order", "version": "1"}}})
                elif method == "tools/list":
                    self._json(200, {"jsonrpc": "2.0", "id": message["id"], "result": {"tools": [
                        {"name": "wait", "inputSchema": {"type": "object"}}]}})
                elif method == "tools/call":
                    owner._serve_call(self, message["id"])
                elif method == "notifications/cancelled":
                    owner._note_cancel(params)
                    if not owner.answers_cancels:
                        owner.released.wait(30)  # a server that takes the notification and never answers
                    self._json(202)
                elif "id" in message:
                    self._json(200, {"jsonrpc": "2.0", "id": message["id"], "result": {}})
                else:
                    self._json(202)

        return Handler

    def _serve_call(self, handler: BaseHTTPRequestHandler, request_id: Any) -> None:
        cancelled = threading.Event()
        with self._lock:
            self.calls.append(request_id)
            self._sockets[request_id] = handler.connection
            self._cancelled[request_id] = cancelled
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Mcp-Session-Id", SESSION)
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.wfile.flush()
        self.call_started.set()
        if cancelled.wait(30) and self.ends_cancelled_calls:
            error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32800, "message": "Request cancelled"}}
            with contextlib.suppress(OSError):
                handler.wfile.write(f"event: message\ndata: {json.dumps(error)}\n\n".encode())
                handler.wfile.flush()
        elif not self.ends_cancelled_calls:  # a server that ignores the cancel: silent until the client hangs up
            with contextlib.suppress(OSError):
                handler.connection.settimeout(30)
                handler.connection.recv(1)
        handler.close_connection = True

    def _note_cancel(self, params: dict[str, Any]) -> None:
        request_id = params.get("requestId")
        if self.cancelled_at is None:
            self.cancelled_at = time.monotonic()
        with self._lock:
            sock, cancelled = self._sockets.get(request_id), self._cancelled.get(request_id)
        self.cancels.append({"requestId": request_id, "reason": params.get("reason"),
                             "stream": _peer_state(sock) if sock is not None else "unknown"})
        if cancelled is not None:
            cancelled.set()


def _peer_state(sock: socket.socket) -> str:
    """``"closed"`` when the peer has shut the connection (an end of stream waits to be read),
    ``"open"`` when nothing is there to read yet."""
    try:
        data = sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except BlockingIOError:
        return "open"
    except OSError:
        return "closed"
    return "closed" if data == b"" else "open"


@contextlib.contextmanager
def cancel_order_server(*, ends_cancelled_calls: bool = True, answers_cancels: bool = True
                        ) -> Iterator[CancelOrderServer]:
    """A `CancelOrderServer` serving in a thread until the block ends."""
    server = CancelOrderServer(ends_cancelled_calls=ends_cancelled_calls, answers_cancels=answers_cancels)
    thread = threading.Thread(target=server.httpd.serve_forever, name="cancel-order-server", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.released.set()
        server.httpd.shutdown()
        server.httpd.server_close()


def call_and_cancel(server: CancelOrderServer, reason: str, *, within: float = 20.0) -> BaseException | None:
    """Call ``wait`` through ``llm_mcp.mcp(url=server.url)`` in a ``CancelScope`` that another thread
    cancels with ``reason`` once the call's stream is open (waiting up to ``within`` seconds for
    that); the exception the call ended in (``None`` if it returned)."""
    import llm_mcp

    mcp = llm_mcp.mcp(url=server.url, name="order")
    scope = llm_mcp.CancelScope()

    def cancel_when_called() -> None:
        if server.call_started.wait(within):
            scope.cancel(reason)

    threading.Thread(target=cancel_when_called, daemon=True).start()
    try:
        with scope:
            mcp.call("wait")
    except Exception as exc:  # noqa: BLE001 - the caller reads what happened
        return exc
    finally:
        mcp.close()
    return None
