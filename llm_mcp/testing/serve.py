"""Serving an ``mcp`` lowlevel server over stdio or Streamable HTTP, in either protocol era.

    from llm_mcp.testing.serve import serve_stdio, serve_http
    serve_stdio(lowlevel_server, era="handshake")          # blocks until stdin closes
    serve_http(lowlevel_server, port=8123, era="modern")   # http://127.0.0.1:8123/mcp

Eras (``ERAS``):

* ``"auto"``: both. stdio: the SDK's dual-era loop, where the first request
  decides (``server/discover`` or an enveloped request -> 2026-07-28,
  ``initialize`` -> handshake). HTTP: the SDK routes on ``MCP-Protocol-Version``.
* ``"handshake"``: a pre-2026 server. stdio: the SDK's handshake-only loop, so
  ``server/discover`` gets ``-32601`` and ``initialize`` works afterwards. HTTP:
  a POST carrying a 2026 ``MCP-Protocol-Version`` is answered the way an old
  server answers it (400, JSON-RPC ``-32600``).
* ``"modern"``: only 2026-07-28. stdio: the SDK's modern stream loop
  (``initialize`` -> ``-32022``). HTTP: POSTs without a 2026 version header get
  400 + ``-32022`` with ``data.supported``; GET and DELETE get 405.

mcp 2.3 has no public switch for this: the stdio modes pick the SDK's own loop
drivers (``serve_loop`` is public, ``_serve_modern_stream`` is private) and the
HTTP modes wrap the SDK's ASGI app in a small filter. Spec: MCP 2026-07-28
"Transports" and "Versioning"; 2025-11-25 "Lifecycle".
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from ._require import require_mcp

__all__ = [
    "ERAS",
    "HANDSHAKE_VERSIONS",
    "MODERN_VERSIONS",
    "HandshakeOnly",
    "ModernOnly",
    "add_serve_arguments",
    "build_http_app",
    "exit_when_threads_linger",
    "read_body",
    "send_json",
    "serve_from_args",
    "serve_http",
    "serve_stdio",
    "serve_stdio_async",
]

ERAS = ("auto", "modern", "handshake")
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)


def _check_era(era: str) -> str:
    if era not in ERAS:
        raise ValueError(f"era must be one of {', '.join(ERAS)}; got {era!r}")
    return era


# --------------------------------------------------------------------------- stdio


async def serve_stdio_async(server: Any, era: str = "auto") -> None:
    """Serve ``server`` (an ``mcp`` lowlevel ``Server``) on this process's stdin/stdout.

        await serve_stdio_async(lowlevel_server, "auto")
        # returns when the client closes stdin
        # ValueError for an unknown era

    Raises:
        ValueError: ``era`` is not one of ``ERAS``.
        ImportError: the ``mcp`` package is missing.
    """
    _check_era(era)
    require_mcp()
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        if era == "auto":
            await server.run(read_stream, write_stream, server.create_initialization_options())
            return
        async with server.lifespan(server) as state:
            try:
                if era == "handshake":
                    from mcp.server.runner import serve_loop

                    await serve_loop(server, read_stream, write_stream, lifespan_state=state)
                else:
                    # The private driver the dual-era loop hands a modern connection to.
                    from mcp.server.runner import _serve_modern_stream

                    await _serve_modern_stream(server, read_stream, write_stream, lifespan_state=state,
                                               raise_exceptions=False)
            finally:
                await write_stream.aclose()


def serve_stdio(server: Any, era: str = "auto") -> None:
    """Blocking form of `serve_stdio_async`.

        serve_stdio(lowlevel_server)                 # both eras
        serve_stdio(lowlevel_server, era="modern")   # 2026-07-28 only
        # returns when stdin closes

    Raises:
        ValueError: unknown ``era``. ImportError: ``mcp`` missing.
    """
    import anyio

    anyio.run(serve_stdio_async, server, _check_era(era))


# --------------------------------------------------------------------------- HTTP


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


async def send_json(send: Any, status: int, body: Any, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    """Send ``body`` as a whole JSON HTTP response with ``status`` (ASGI), plus ``headers``."""
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            *headers]})
    await send({"type": "http.response.body", "body": data})


async def read_body(receive: Any) -> bytes:
    """The whole body of an ASGI HTTP request: every ``http.request`` message's ``body`` until
    ``more_body`` is false (or the client disconnected)."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks)


def replay(body: bytes, receive: Any) -> Any:
    """A ``receive`` that gives the app the already-read ``body`` as one ``http.request`` message,
    then defers to the real ``receive`` (for ``http.disconnect``)."""
    sent = False

    async def receive_again() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return receive_again


class TaskNameCheck:
    """ASGI filter: a ``tasks/get``, ``tasks/update`` or ``tasks/cancel`` POST must name its
    ``taskId`` in the ``Mcp-Name`` header (Tasks extension, "HTTP"), else HTTP 400 with the
    JSON-RPC header-mismatch error. Other requests pass untouched."""

    METHODS = ("tasks/get", "tasks/update", "tasks/cancel")

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or \
                _header(scope, b"mcp-method") not in self.METHODS:
            await self.app(scope, receive, send)
            return
        body = await read_body(receive)
        try:
            message = json.loads(body)
            params = message.get("params") or {}
            task_id, request_id = params.get("taskId"), message.get("id")
        except (ValueError, AttributeError):
            task_id = request_id = None
        name = _header(scope, b"mcp-name")
        if task_id is not None and name != task_id:
            from mcp_types.jsonrpc import HEADER_MISMATCH

            await send_json(send, 400, {"jsonrpc": "2.0", "id": request_id, "error": {
                "code": HEADER_MISMATCH, "message": f"Mcp-Name header {name!r} is not the taskId {task_id!r}"}})
            return
        await self.app(scope, replay(body, receive), send)


class HandshakeOnly:
    """ASGI filter that makes the SDK's dual-era app answer like a pre-2026 server.

        app = HandshakeOnly(lowlevel_server.streamable_http_app())
        # a 2026 MCP-Protocol-Version without a session -> 400 "Missing session ID"
        # with a session -> 400 "Unsupported protocol version", JSON-RPC -32600

    Spec: MCP 2025-11-25 "Transports" (protocol version header).
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            version = _header(scope, b"mcp-protocol-version")
            if version is not None and version not in HANDSHAKE_VERSIONS:
                if _header(scope, b"mcp-session-id") is None:
                    # Without the header the SDK's legacy path answers as an old server does.
                    scope = dict(scope)
                    scope["headers"] = [(k, v) for k, v in scope["headers"] if k.lower() != b"mcp-protocol-version"]
                else:
                    await send_json(send, 400, {
                        "jsonrpc": "2.0",
                        "id": "server-error",
                        "error": {"code": -32600,
                                  "message": f"Bad Request: Unsupported protocol version: {version}. "
                                             f"Supported versions: {', '.join(HANDSHAKE_VERSIONS)}"},
                    })
                    return
        await self.app(scope, receive, send)


class ModernOnly:
    """ASGI filter that refuses everything but 2026-07-28 requests.

        app = ModernOnly(lowlevel_server.streamable_http_app())
        # POST without "MCP-Protocol-Version: 2026-07-28" -> 400, error -32022
        # GET / DELETE on /mcp -> 405

    Spec: MCP 2026-07-28 "Versioning" (unsupported protocol version error).
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].rstrip("/") == "/mcp":
            if scope["method"] in ("GET", "DELETE"):
                await send({"type": "http.response.start", "status": 405, "headers": [(b"allow", b"POST")]})
                await send({"type": "http.response.body", "body": b""})
                return
            version = _header(scope, b"mcp-protocol-version")
            if scope["method"] == "POST" and (version is None or version not in MODERN_VERSIONS):
                body = await read_body(receive)
                request_id: Any = None
                requested = version or ""
                try:
                    decoded = json.loads(body)
                except ValueError:
                    decoded = None
                if isinstance(decoded, dict):
                    request_id = decoded.get("id")
                    params = decoded.get("params") or {}
                    if isinstance(params, dict) and isinstance(params.get("protocolVersion"), str):
                        requested = params["protocolVersion"]
                await send_json(send, 400, {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": -32022,
                              "message": "Unsupported protocol version (this server only speaks 2026-07-28)",
                              "data": {"supported": list(MODERN_VERSIONS), "requested": requested}},
                })
                return
        await self.app(scope, receive, send)


def build_http_app(server: Any, era: str = "auto", json_response: bool = False) -> Any:
    """The ASGI app serving ``server`` at ``/mcp`` in the given era.

        app = build_http_app(lowlevel_server, "handshake")
        uvicorn.run(app, host="127.0.0.1", port=8123)
        # ValueError for an unknown era

    ``json_response=True`` answers with single JSON bodies instead of SSE streams.
    """
    require_mcp()
    app = TaskNameCheck(server.streamable_http_app(json_response=json_response))
    if _check_era(era) == "handshake":
        return HandshakeOnly(app)
    if era == "modern":
        return ModernOnly(app)
    return app


def serve_http(server: Any, port: int, era: str = "auto", *, json_response: bool = False,
               host: str = "127.0.0.1") -> None:
    """Serve Streamable HTTP on ``http://HOST:PORT/mcp`` until the process is stopped.

        serve_http(lowlevel_server, 8123)                   # both eras, SSE answers
        serve_http(lowlevel_server, 8123, era="modern")
        # blocks; SIGTERM / Ctrl-C stop it

    Raises:
        ValueError: unknown ``era`` or a port outside 0..65535. ImportError: ``mcp`` missing.
    """
    if not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"port must be an int in 0..65535; got {port!r}")
    import uvicorn

    config = uvicorn.Config(build_http_app(server, era, json_response), host=host, port=port,
                            log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    uvicorn.Server(config).run()


# --------------------------------------------------------------------------- command line


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0..65535; got {port}")
    return port


def add_serve_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add ``--era``, ``--http PORT`` and ``--json-response`` to ``parser``.

        parser = add_serve_arguments(argparse.ArgumentParser())
        args = parser.parse_args(["--http", "8123", "--era", "modern"])
        serve_from_args(lowlevel_server, args)
    """
    parser.add_argument("--era", choices=ERAS, default="auto", help="protocol era(s) to serve (default: auto)")
    parser.add_argument("--http", type=_port, metavar="PORT", help="serve Streamable HTTP on 127.0.0.1:PORT/mcp")
    parser.add_argument("--json-response", action="store_true", help="HTTP: answer with JSON instead of SSE")
    return parser


def serve_from_args(server: Any, args: argparse.Namespace) -> None:
    """Serve ``server`` as `add_serve_arguments`' options say (stdio unless ``--http``).

        args = add_serve_arguments(argparse.ArgumentParser()).parse_args()
        serve_from_args(lowlevel_server, args)
        # blocks until stdin closes (stdio) or the process is stopped (HTTP)
    """
    if args.http is not None:
        serve_http(server, args.http, args.era, json_response=args.json_response)
    else:
        serve_stdio(server, args.era)
        exit_when_threads_linger()


def exit_when_threads_linger(grace: float = 1.0) -> None:
    """End this process once the stdio loop is over, even if a tool's worker thread still blocks.

        serve_stdio(lowlevel_server); exit_when_threads_linger()
        # stdin closed (the client ended or died): worker threads get ``grace`` seconds, then os._exit(0)

    A ``call()`` stuck in ``while True: time.sleep(...)`` would otherwise keep an orphaned
    server alive forever, since Python waits for non-daemon threads at exit.
    """
    import os
    import sys
    import threading
    import time

    deadline = time.monotonic() + grace
    for thread in threading.enumerate():
        if thread is threading.current_thread() or thread.daemon:
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.current_thread()):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(0)
