"""A hand-written HTTP MCP server (starlette + uvicorn, no ``mcp`` import) with misbehaviour cases.

Usage::

    python llm_mcp_tests/servers/raw_http.py --port PORT [--case CASE] [--era handshake|modern]

One process serves every case; the case is picked by the URL path:

    http://127.0.0.1:PORT/<case>/mcp
    http://127.0.0.1:PORT/<case>/<tag>/mcp      (free-form tag: separate state + log filter)
    http://127.0.0.1:PORT/mcp                   (the --case given on the command line, default "basic")

The era is ``--era`` (default ``handshake``) unless the URL has ``?era=modern``
or ``?era=handshake``.

Recorder: every request except ``/_log`` is recorded. ``GET /_log`` returns a
JSON list of ``{"seq", "method", "path", "raw_path", "query", "case", "tag",
"headers": [[lower-name, value], ...], "body"}`` (optional filters
``?case=...&tag=...``); ``DELETE /_log`` clears it.

Handshake era (a 2025-11-25 Streamable HTTP server): ``initialize`` creates a
session (``Mcp-Session-Id``); other requests without a session id get ``400``
with the plain-text body ``Bad Request: Missing session ID`` (no JSON-RPC body
-- that is what a ``server/discover`` probe gets); an unknown session id gets
``404`` with ``{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not
found"},"id":null}``; GET answers ``405``; DELETE forgets the session.
Modern era (2026-07-28): no sessions; a POST without ``MCP-Protocol-Version:
2026-07-28`` gets ``400`` + ``-32022`` (``data.supported == ["2026-07-28"]``);
``server/discover``, ``tools/list``, ``tools/call``, ``ping`` are served.
Tools: ``echo(message)``, ``headers()`` (text = JSON object of the request's
headers, lower-case names), ``sleep(seconds)``.

Cases:

* ``basic``: nothing special. ``redirect_target`` is an alias.
* ``c04``: every request is answered with an SSE stream: an event with
  ``id: prime-0`` and empty ``data:``, a ``: ping`` comment, an event whose data
  is ``keep-alive``, another ``: ping``, then ``event: message`` with the
  JSON-RPC response.
* ``c05``: ``tools/call`` answered by SSE: ``notifications/progress`` (1/2),
  ``notifications/message`` (info, ``working``), ``notifications/progress``
  (2/2), then the response. Token = request's ``_meta.progressToken`` or
  ``raw-progress``.
* ``c06_202`` / ``c06_null`` / ``c06_obj``: notification POSTs answered
  ``202`` with an empty body / ``200`` with body ``null`` / ``200`` with body
  ``{}`` (both ``application/json``).
* ``c07``: ``initialize`` answered with HTTP ``201``.
* ``c08``: a session answers one ``tools/call``; afterwards its id gets 404.
  A new ``initialize`` mints a new session. ``c08_always``: every request
  carrying a session id gets 404 (notifications still get 202).
* ``c22_rel`` / ``c22_abs`` / ``c22_split``: 2024-11-05 HTTP+SSE server. POST
  to ``.../mcp`` is ``405``; GET ``.../mcp`` opens the SSE stream whose first
  event is ``endpoint`` with data ``/<case>[/<tag>]/messages?session_id=SID``
  (relative), ``http://127.0.0.1:PORT/<case>[/<tag>]/messages?session_id=SID``
  (absolute), or the relative form split over two ``data:`` lines right after
  ``?sessi`` (joined per SSE rules the value contains a ``\\n``; the server
  tolerates ``\\n``/``%0A`` in the query). POSTs there get ``202 Accepted`` and
  the JSON-RPC responses arrive as ``event: message`` on the GET stream.
  ``initialize`` answers ``protocolVersion`` ``2024-11-05``.
* ``redirect``: every request gets ``307`` with ``Location:
  http://127.0.0.1:PORT/redirect_target[/<tag>]/mcp``; whether the target was
  requested shows in ``/_log`` (case ``redirect_target``).
* ``auth``: requires ``Authorization: Bearer test-token`` (else 401).
* ``auth401``: ``401`` with ``WWW-Authenticate: Bearer realm="mcp",
  error="invalid_token"``.
* ``auth403``: ``403`` with ``WWW-Authenticate: Bearer
  error="insufficient_scope", scope="a b"``.
* ``auth403_plain``: ``403`` without ``WWW-Authenticate``.
* ``rate429``: ``429`` with ``Retry-After: 1``.
* ``err500``: ``500`` with body ``Internal Server Error: boom``.
* Append ``_call`` to any of the last five (``auth401_call``, ...) to fail only
  ``tools/call`` requests; everything else then works normally.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse

SERVER_INFO = {"name": "raw-http", "version": "0.1.0"}
INSTRUCTIONS = "Raw HTTP test server."
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_HANDSHAKE = "2025-11-25"
LEGACY_SSE_VERSION = "2024-11-05"
MODERN_VERSION = "2026-07-28"
VALID_TOKEN = "test-token"
DEFAULT_PROGRESS_TOKEN = "raw-progress"
INSUFFICIENT_SCOPE_CHALLENGE = 'Bearer error="insufficient_scope", scope="a b"'
INVALID_TOKEN_CHALLENGE = 'Bearer realm="mcp", error="invalid_token"'
SESSION_NOT_FOUND = {"jsonrpc": "2.0", "error": {"code": -32001, "message": "Session not found"}, "id": None}
MISSING_SESSION_TEXT = "Bad Request: Missing session ID"
ERROR_CASES = ("auth401", "auth403", "auth403_plain", "rate429", "err500")

TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "description": "Return the message.",
        "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
    },
    {"name": "headers", "description": "Return the request headers as JSON text.", "inputSchema": {"type": "object"}},
    {
        "name": "sleep",
        "description": "Sleep, then answer.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]},
    },
]


@dataclass
class CaseState:
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    legacy_queues: dict[str, asyncio.Queue[dict[str, Any]]] = field(default_factory=dict)


def _sse(data: str, event: str | None = None, event_id: str | None = None) -> bytes:
    lines = []
    if event_id is not None:
        lines.append(f"id: {event_id}")
    if event is not None:
        lines.append(f"event: {event}")
    lines.extend(f"data: {part}" for part in data.split("\n"))
    return ("\n".join(lines) + "\n\n").encode()


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


class RawHTTPApp:
    def __init__(self, default_case: str = "basic", default_era: str = "handshake") -> None:
        self.default_case = default_case
        self.default_era = default_era
        self.log: list[dict[str, Any]] = []
        self.seq = itertools.count(1)
        self.states: dict[tuple[str, str], CaseState] = {}
        self.port: int | None = None

    # ------------------------------------------------------------------ ASGI

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        if self.port is None and scope.get("server"):
            self.port = scope["server"][1]
        body = b""
        if scope["method"] in ("POST", "PUT", "PATCH", "DELETE"):
            chunks = []
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    break
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    break
            body = b"".join(chunks)
        request = Request(scope, receive)
        if scope["path"] == "/_log":
            response = self.handle_log(request)
        else:
            case, tag, kind = self.parse_path(scope["path"])
            self.log.append(
                {
                    "seq": next(self.seq),
                    "method": scope["method"],
                    "path": scope["path"],
                    "raw_path": (scope.get("raw_path") or b"").decode("latin-1"),
                    "query": scope.get("query_string", b"").decode("latin-1"),
                    "case": case,
                    "tag": tag,
                    "headers": [[k.decode("latin-1").lower(), v.decode("latin-1")] for k, v in scope["headers"]],
                    "body": body.decode("utf-8", "replace"),
                }
            )
            try:
                response = await self.dispatch(request, body, case, tag, kind)
            except Exception as exc:  # pragma: no cover - debugging aid
                response = PlainTextResponse(f"raw_http bug: {exc!r}", status_code=599)
        await response(scope, receive, send)

    def handle_log(self, request: Request) -> Response:
        if request.method == "DELETE":
            self.log.clear()
            return Response(status_code=204)
        entries = self.log
        case = request.query_params.get("case")
        tag = request.query_params.get("tag")
        if case is not None:
            entries = [e for e in entries if e["case"] == case]
        if tag is not None:
            entries = [e for e in entries if e["tag"] == tag]
        return JSONResponse(entries)

    def parse_path(self, path: str) -> tuple[str, str, str]:
        """(case, tag, kind) where kind is 'mcp', 'messages' or 'other'."""
        parts = [p for p in path.split("/") if p]
        if not parts:
            return self.default_case, "", "other"
        last = parts[-1]
        if last == "mcp":
            kind = "mcp"
        elif "messa" in last or (len(parts) >= 2 and "messa" in parts[-2]):
            kind = "messages"
        else:
            kind = "other"
        if parts == ["mcp"]:
            return self.default_case, "", kind
        case = parts[0]
        tag = parts[1] if len(parts) >= 3 else ""
        return case, tag, kind

    def state(self, case: str, tag: str) -> CaseState:
        return self.states.setdefault((case, tag), CaseState())

    def base_url(self, request: Request) -> str:
        port = self.port or request.url.port
        return f"http://127.0.0.1:{port}"

    # ------------------------------------------------------------------ dispatch

    async def dispatch(self, request: Request, body: bytes, case: str, tag: str, kind: str) -> Response:
        era = request.query_params.get("era", self.default_era)
        prefix = f"/{case}/{tag}" if tag else f"/{case}"
        if case.startswith("c22_"):
            return await self.legacy_sse(request, body, case, tag, kind, prefix)
        if kind != "mcp":
            return PlainTextResponse("Not Found", status_code=404)
        if case == "redirect":
            target = f"{self.base_url(request)}/redirect_target{'/' + tag if tag else ''}/mcp"
            if request.url.query:
                target += "?" + request.url.query
            return Response(status_code=307, headers={"Location": target})

        message: Any = None
        if request.method == "POST":
            try:
                message = json.loads(body) if body else None
            except ValueError:
                return JSONResponse(
                    {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
                    status_code=400,
                )
        rpc_method = message.get("method") if isinstance(message, dict) else None

        failure = self.failure(request, case, rpc_method)
        if failure is not None:
            return failure

        if request.method == "GET":
            return Response(status_code=405, headers={"Allow": "POST, DELETE" if era != "modern" else "POST"})
        if request.method == "DELETE":
            if era == "modern":
                return Response(status_code=405, headers={"Allow": "POST"})
            self.state(case, tag).sessions.pop(request.headers.get("mcp-session-id", ""), None)
            return Response(status_code=200)
        if request.method != "POST":
            return Response(status_code=405)
        if not isinstance(message, dict):
            return JSONResponse(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}},
                status_code=400,
            )
        if "method" not in message or "id" not in message:
            return self.notification_response(request, case, tag, era)
        if era == "modern":
            return await self.modern_request(request, message, case)
        return await self.handshake_request(request, message, case, tag)

    def failure(self, request: Request, case: str, rpc_method: str | None) -> Response | None:
        if case == "auth":
            if request.headers.get("authorization") != f"Bearer {VALID_TOKEN}":
                return JSONResponse(
                    {"error": "invalid_token"}, status_code=401, headers={"WWW-Authenticate": INVALID_TOKEN_CHALLENGE}
                )
            return None
        base = case[: -len("_call")] if case.endswith("_call") else case
        if base not in ERROR_CASES:
            return None
        if case.endswith("_call") and rpc_method != "tools/call":
            return None
        if base == "auth401":
            return JSONResponse(
                {"error": "invalid_token"}, status_code=401, headers={"WWW-Authenticate": INVALID_TOKEN_CHALLENGE}
            )
        if base == "auth403":
            return JSONResponse(
                {"error": "insufficient_scope"},
                status_code=403,
                headers={"WWW-Authenticate": INSUFFICIENT_SCOPE_CHALLENGE},
            )
        if base == "auth403_plain":
            return PlainTextResponse("Forbidden", status_code=403)
        if base == "rate429":
            return PlainTextResponse("Too Many Requests", status_code=429, headers={"Retry-After": "1"})
        return PlainTextResponse("Internal Server Error: boom", status_code=500)

    def notification_response(self, request: Request, case: str, tag: str, era: str) -> Response:
        if case == "c08_always" or case == "c08":
            sid = request.headers.get("mcp-session-id")
            if case == "c08" and sid and not self.state(case, tag).sessions.get(sid, {}).get("alive", False):
                return JSONResponse(SESSION_NOT_FOUND, status_code=404)
        if case == "c06_null":
            return Response(b"null", status_code=200, media_type="application/json")
        if case == "c06_obj":
            return Response(b"{}", status_code=200, media_type="application/json")
        return Response(status_code=202)

    # ------------------------------------------------------------------ eras

    async def handshake_request(self, request: Request, message: dict[str, Any], case: str, tag: str) -> Response:
        st = self.state(case, tag)
        request_id = message["id"]
        method = message["method"]
        params = message.get("params") or {}
        if method == "initialize":
            requested = params.get("protocolVersion")
            version = requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE
            sid = uuid.uuid4().hex
            st.sessions[sid] = {"alive": True, "calls": 0, "version": version}
            result = {
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": dict(SERVER_INFO),
                "instructions": INSTRUCTIONS,
            }
            status = 201 if case == "c07" else 200
            return self.reply(request, case, {"jsonrpc": "2.0", "id": request_id, "result": result}, status,
                              {"Mcp-Session-Id": sid})
        sid = request.headers.get("mcp-session-id")
        if not sid:
            return PlainTextResponse(MISSING_SESSION_TEXT, status_code=400)
        session = st.sessions.get(sid)
        if case == "c08_always" or session is None or not session["alive"]:
            return JSONResponse(SESSION_NOT_FOUND, status_code=404)
        response = self.handle_method(request, message, modern=False)
        if method == "tools/call":
            session["calls"] += 1
            if case == "c08":
                session["alive"] = False
        return self.reply(request, case, response, 200, {}, params=params, rpc_method=method)

    async def modern_request(self, request: Request, message: dict[str, Any], case: str) -> Response:
        request_id = message["id"]
        method = message["method"]
        params = message.get("params") or {}
        version = request.headers.get("mcp-protocol-version")
        if version != MODERN_VERSION:
            requested = params.get("protocolVersion") if method == "initialize" else version
            return JSONResponse(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {
                        "code": -32022,
                        "message": "Unsupported protocol version",
                        "data": {"supported": [MODERN_VERSION], "requested": requested or ""},
                    },
                },
                status_code=400,
            )
        response = self.handle_method(request, message, modern=True)
        status = 404 if response.get("error", {}).get("code") == -32601 else 200
        return self.reply(request, case, response, status, {}, params=params, rpc_method=method)

    def handle_method(self, request: Request, message: dict[str, Any], *, modern: bool) -> dict[str, Any]:
        request_id = message["id"]
        method = message["method"]
        params = message.get("params") or {}
        result: dict[str, Any] | None = None
        if method == "ping":
            result = {}
        elif method == "server/discover" and modern:
            result = {
                "supportedVersions": [MODERN_VERSION],
                "capabilities": {"tools": {}},
                "instructions": INSTRUCTIONS,
                "ttlMs": 0,
                "cacheScope": "public",
            }
        elif method == "tools/list":
            result = {"tools": TOOLS}
            if modern:
                result.update({"ttlMs": 0, "cacheScope": "public"})
        elif method == "tools/call":
            name = params.get("name")
            args = params.get("arguments") or {}
            if name == "echo":
                result = {"content": [{"type": "text", "text": str(args.get("message", ""))}]}
            elif name == "headers":
                headers = {k.lower(): v for k, v in request.headers.items()}
                result = {"content": [{"type": "text", "text": _dumps(headers)}]}
            elif name == "sleep":
                result = {"content": [{"type": "text", "text": "slept"}], "_sleep": float(args.get("seconds", 0))}
            else:
                return {"jsonrpc": "2.0", "id": request_id,
                        "error": {"code": -32602, "message": f"Unknown tool: {name}"}}
        if result is None:
            return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}}
        if modern:
            result = {"resultType": "complete", **result, "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO}}
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    # ------------------------------------------------------------------ response shapes

    def reply(
        self,
        request: Request,
        case: str,
        response: dict[str, Any],
        status: int,
        headers: dict[str, str],
        *,
        params: dict[str, Any] | None = None,
        rpc_method: str | None = None,
    ) -> Response:
        delay = 0.0
        result = response.get("result")
        if isinstance(result, dict) and "_sleep" in result:
            delay = result.pop("_sleep")
        if case == "c04":
            return StreamingResponse(self._c04_stream(response, delay), status_code=status, headers=headers,
                                     media_type="text/event-stream")
        if case == "c05" and rpc_method == "tools/call":
            token = ((params or {}).get("_meta") or {}).get("progressToken", DEFAULT_PROGRESS_TOKEN)
            return StreamingResponse(self._c05_stream(response, token, delay), status_code=status, headers=headers,
                                     media_type="text/event-stream")
        if delay:
            return StreamingResponse(self._delayed_json(response, delay), status_code=status, headers=headers,
                                     media_type="application/json")
        return JSONResponse(response, status_code=status, headers=headers)

    async def _delayed_json(self, response: dict[str, Any], delay: float) -> Any:
        await asyncio.sleep(delay)
        yield _dumps(response).encode()

    async def _c04_stream(self, response: dict[str, Any], delay: float) -> Any:
        yield b"id: prime-0\ndata: \n\n"
        await asyncio.sleep(0.01)
        yield b": ping\n\n"
        await asyncio.sleep(0.01)
        yield b"data: keep-alive\n\n"
        await asyncio.sleep(0.01 + delay)
        yield b": ping\n\n"
        yield _sse(_dumps(response), event="message", event_id="ev-1")

    async def _c05_stream(self, response: dict[str, Any], token: Any, delay: float) -> Any:
        notes = [
            {"jsonrpc": "2.0", "method": "notifications/progress",
             "params": {"progressToken": token, "progress": 1, "total": 2}},
            {"jsonrpc": "2.0", "method": "notifications/message",
             "params": {"level": "info", "logger": "raw-http", "data": "working"}},
            {"jsonrpc": "2.0", "method": "notifications/progress",
             "params": {"progressToken": token, "progress": 2, "total": 2}},
        ]
        for note in notes:
            yield _sse(_dumps(note), event="message")
            await asyncio.sleep(0.01)
        await asyncio.sleep(delay)
        yield _sse(_dumps(response), event="message")

    # ------------------------------------------------------------------ 2024-11-05 HTTP+SSE

    async def legacy_sse(self, request: Request, body: bytes, case: str, tag: str, kind: str, prefix: str) -> Response:
        st = self.state(case, tag)
        if kind == "mcp" and request.method == "GET":
            sid = uuid.uuid4().hex
            queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
            st.legacy_queues[sid] = queue
            relative = f"{prefix}/messages?session_id={sid}"
            if case == "c22_abs":
                first = _sse(self.base_url(request) + relative, event="endpoint")
            elif case == "c22_split":
                cut = relative.index("?sessi") + len("?sessi")
                first = f"event: endpoint\ndata: {relative[:cut]}\ndata: {relative[cut:]}\n\n".encode()
            else:
                first = _sse(relative, event="endpoint")
            return StreamingResponse(self._legacy_stream(st, sid, first), media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache"})
        if kind == "mcp":
            return PlainTextResponse("Method Not Allowed", status_code=405, headers={"Allow": "GET"})
        if kind != "messages" or request.method != "POST":
            return PlainTextResponse("Not Found", status_code=404)
        query = unquote(request.scope.get("query_string", b"").decode("latin-1")).replace("\n", "").replace("\r", "")
        sid = (parse_qs(query).get("session_id") or [""])[0]
        queue = st.legacy_queues.get(sid)
        if queue is None:
            return PlainTextResponse("Could not find session", status_code=404)
        try:
            message = json.loads(body)
        except ValueError:
            return PlainTextResponse("Could not parse message", status_code=400)
        if isinstance(message, dict) and "method" in message and "id" in message:
            if message["method"] == "initialize":
                reply = {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {
                        "protocolVersion": LEGACY_SSE_VERSION,
                        "capabilities": {"tools": {}},
                        "serverInfo": dict(SERVER_INFO),
                        "instructions": INSTRUCTIONS,
                    },
                }
            else:
                reply = self.handle_method(request, message, modern=False)
                reply.get("result", {}).pop("_sleep", None)
            await queue.put(reply)
        return PlainTextResponse("Accepted", status_code=202)

    async def _legacy_stream(self, st: CaseState, sid: str, first: bytes) -> Any:
        queue = st.legacy_queues[sid]
        try:
            yield first
            while True:
                try:
                    reply = await asyncio.wait_for(queue.get(), timeout=10)
                except asyncio.TimeoutError:
                    yield b": keepalive\n\n"
                    continue
                yield _sse(_dumps(reply), event="message")
        finally:
            st.legacy_queues.pop(sid, None)


def main(argv: list[str] | None = None) -> int:
    import uvicorn

    parser = argparse.ArgumentParser(description="misbehaving raw HTTP MCP server")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--case", default="basic", help="case served at the bare /mcp path")
    parser.add_argument("--era", choices=("handshake", "modern"), default="handshake")
    args = parser.parse_args(argv)
    app = RawHTTPApp(args.case, args.era)
    app.port = args.port
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
