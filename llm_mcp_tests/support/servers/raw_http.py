"""A hand-written HTTP MCP server (starlette + uvicorn, no ``mcp`` import) with misbehaviour cases.

Usage::

    python llm_mcp_tests/support/servers/raw_http.py --port PORT [--case CASE] [--era handshake|modern]

One process serves every case; the case is picked by the URL path:

    http://127.0.0.1:PORT/<case>/mcp
    http://127.0.0.1:PORT/<case>/<tag>/mcp      (free-form tag: separate state + log filter)
    http://127.0.0.1:PORT/mcp                   (the --case given on the command line, default "basic")

The era is ``--era`` (default ``handshake``) unless the URL has ``?era=modern``
or ``?era=handshake``.

Recorder: every request except ``/_log`` is recorded. ``GET /_log`` returns a
JSON list of ``{"seq", "time", "method", "path", "raw_path", "query", "case",
"tag", "headers": [[lower-name, value], ...], "body"}`` (``time``: when the
request arrived, ``time.time()`` seconds; optional filters
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

Resilience cases (state is per ``(case, tag)``):

* ``broken_stream[K][_list|_call]`` (either era; meant for modern): the first
  ``K`` (default 1) ``tools/list`` POSTs and the first ``K`` ``tools/call``
  POSTs (counted per method) are answered ``200`` with an SSE stream holding one
  ``notifications/progress`` event (``id: bs-N``, token = the request's
  ``_meta.progressToken`` or ``raw-progress``) that then ends WITHOUT the
  JSON-RPC response; later ones are answered normally. ``_list`` / ``_call``
  break only that method. Examples: ``broken_stream``, ``broken_stream3``,
  ``broken_stream3_call``. The tool list here has annotations: ``echo``
  (``idempotentHint: false``) plus ``echo_idempotent(message)``
  (``idempotentHint: true``, ``readOnlyHint: true``), ``headers``, ``sleep``.
* ``resume`` (handshake era): the n-th ``tools/call`` is answered by an SSE
  stream with one event ``id: ev-<2n-1>``, ``retry: 200``, empty ``data:``,
  which then ends without the response. ``GET`` with ``Last-Event-ID:
  ev-<2n-1>`` and the same ``Mcp-Session-Id`` gets a new SSE stream with the
  response as ``event: message``, ``id: ev-<2n>`` (once); a GET with a wrong
  session gets ``400``, an unknown event id ``404``, no ``Last-Event-ID``
  ``405``.
* ``resume_broken`` (handshake era): every ``tools/list`` and ``tools/call``
  POST, and every resumption GET (``Last-Event-ID`` of an event it sent, same
  session), is answered by an SSE stream with one event ``id: rb-<N>`` (N
  counting per tag), ``retry: 50``, empty ``data:``, which then ends: the
  response never comes.
* ``header_mismatch`` (modern era): the first ``tools/call`` gets HTTP ``400``
  with JSON-RPC error ``-32020`` (header mismatch); from then on ``tools/list``
  shows echo's ``message`` property with ``"x-mcp-header": "Message"``, and a
  ``tools/call`` of ``echo`` succeeds only when it carries ``Mcp-Param-Message``
  equal to ``arguments.message`` (else ``400`` + ``-32020`` again).
  ``header_mismatch_always``: every ``tools/call`` gets ``400`` + ``-32020``
  (the tool list changes the same way).
* ``no_revision`` (either era): ``server/discover`` gets ``400`` with an empty
  body; ``initialize`` succeeds (session created) but answers
  ``protocolVersion: "1999-01-01"``; the rest as the handshake era.
* ``unsupported_version`` (either era): every POST gets ``400`` + JSON-RPC
  ``-32022`` with ``data.supported == ["2099-01-01"]``.
* ``server_request`` (handshake era): a ``tools/call`` is answered by an SSE
  stream that first sends the JSON-RPC request ``sampling/createMessage``
  (id ``srv-<n>``, n counting per tag), then waits up to 10 s for the client to
  POST its reply (answered ``202``), then sends the tool response whose text is
  ``client answered: <json>`` (the reply minus ``jsonrpc``/``id``, keys sorted;
  ``client answered: null`` after the 10 s).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import re
import sys
import time
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
BROKEN_STREAM = re.compile(r"^broken_stream(\d*)(?:_(list|call))?$")
HEADER_MISMATCH = -32020
UNSUPPORTED_VERSION = -32022
NO_REVISION_VERSION = "1999-01-01"
UNSUPPORTED_SUPPORTED = ["2099-01-01"]
RESUME_RETRY_MS = 200
RESUME_BROKEN_RETRY_MS = 50
SERVER_REQUEST_WAIT = 10.0

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


ANNOTATED_TOOLS: list[dict[str, Any]] = [
    {**TOOLS[0], "annotations": {"idempotentHint": False, "readOnlyHint": False}},
    {
        "name": "echo_idempotent",
        "description": "Return the message (safe to repeat).",
        "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
        "annotations": {"idempotentHint": True, "readOnlyHint": True},
    },
    *TOOLS[1:],
]

HEADER_TOOLS: list[dict[str, Any]] = [
    {
        **TOOLS[0],
        "inputSchema": {
            "type": "object",
            "properties": {"message": {"type": "string", "x-mcp-header": "Message"}},
            "required": ["message"],
        },
    },
    *TOOLS[1:],
]


@dataclass
class CaseState:
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    legacy_queues: dict[str, asyncio.Queue[dict[str, Any]]] = field(default_factory=dict)
    broken: dict[str, int] = field(default_factory=dict)  # broken_stream: method -> streams broken so far
    headers_required: bool = False  # header_mismatch: tools/list now announces x-mcp-header
    resume_calls: int = 0
    resumable: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)  # event id -> (sid, response)
    server_requests: int = 0
    broken_events: int = 0
    replies: dict[Any, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)


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
        request = Request(scope, receive)
        body = await request.body() if scope["method"] in ("POST", "PUT", "PATCH", "DELETE") else b""
        if scope["path"] == "/_log":
            response = self.handle_log(request)
        else:
            case, tag, kind = self.parse_path(scope["path"])
            self.log.append(
                {
                    "seq": next(self.seq),
                    "time": time.time(),
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

        if case == "unsupported_version" and request.method == "POST":
            request_id = message.get("id") if isinstance(message, dict) else None
            return JSONResponse(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {
                        "code": UNSUPPORTED_VERSION,
                        "message": "Unsupported protocol version",
                        "data": {"supported": list(UNSUPPORTED_SUPPORTED),
                                 "requested": request.headers.get("mcp-protocol-version", "")},
                    },
                },
                status_code=400,
            )
        resumable = case in ("resume", "resume_broken")
        if request.method == "GET" and resumable and request.headers.get("last-event-id"):
            return self.resume_stream(request, case, tag)
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
        if "method" not in message and "id" in message:
            future = self.state(case, tag).replies.get(message["id"])
            if future is not None and not future.done():
                future.set_result(message)  # a reply to a request we sent (server_request)
        if "method" not in message or "id" not in message:
            return self.notification_response(request, case, tag, era)
        if case == "no_revision":
            if message["method"] == "server/discover":
                return Response(status_code=400)
            return await self.handshake_request(request, message, case, tag)
        if era == "modern":
            return await self.modern_request(request, message, case, tag)
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
            if case == "no_revision":
                version = NO_REVISION_VERSION
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
        broken = self.broken_stream(case, tag, message)
        if broken is not None:
            return broken
        if case == "resume" and method == "tools/call":
            return self.resume_first_stream(message, st, sid)
        if case == "resume_broken" and method in ("tools/list", "tools/call"):
            return self.resume_broken_stream(message, st, sid)
        if case == "server_request" and method == "tools/call":
            return StreamingResponse(self._server_request_stream(st, request_id), media_type="text/event-stream")
        response = self.handle_method(request, message, modern=False, tools=self.tools_for(case, tag))
        if method == "tools/call":
            session["calls"] += 1
            if case == "c08":
                session["alive"] = False
        return self.reply(request, case, response, 200, {}, params=params, rpc_method=method)

    async def modern_request(self, request: Request, message: dict[str, Any], case: str, tag: str) -> Response:
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
        broken = self.broken_stream(case, tag, message)
        if broken is not None:
            return broken
        if case.startswith("header_mismatch") and method == "tools/call":
            mismatch = self.header_mismatch(request, case, tag, message)
            if mismatch is not None:
                return mismatch
        response = self.handle_method(request, message, modern=True, tools=self.tools_for(case, tag))
        status = 404 if response.get("error", {}).get("code") == -32601 else 200
        return self.reply(request, case, response, status, {}, params=params, rpc_method=method)

    def handle_method(self, request: Request, message: dict[str, Any], *, modern: bool,
                      tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
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
            result = {"tools": TOOLS if tools is None else tools}
            if modern:
                result.update({"ttlMs": 0, "cacheScope": "public"})
        elif method == "tools/call":
            name = params.get("name")
            args = params.get("arguments") or {}
            if name == "echo" or (name == "echo_idempotent" and tools is ANNOTATED_TOOLS):
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

    # ------------------------------------------------------------------ resilience cases

    def tools_for(self, case: str, tag: str) -> list[dict[str, Any]]:
        if BROKEN_STREAM.match(case):
            return ANNOTATED_TOOLS
        if case.startswith("header_mismatch") and self.state(case, tag).headers_required:
            return HEADER_TOOLS
        return TOOLS

    def broken_stream(self, case: str, tag: str, message: dict[str, Any]) -> Response | None:
        """broken_stream*: an SSE stream with one progress event and no response, K times per method."""
        match = BROKEN_STREAM.match(case)
        method = message.get("method")
        if match is None or method not in ("tools/list", "tools/call"):
            return None
        limit = int(match.group(1) or 1)
        only = match.group(2)
        if only is not None and method != f"tools/{only}":
            return None
        st = self.state(case, tag)
        done = st.broken.get(method, 0)
        if done >= limit:
            return None
        st.broken[method] = done + 1
        token = ((message.get("params") or {}).get("_meta") or {}).get("progressToken", DEFAULT_PROGRESS_TOKEN)
        note = {"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": token, "progress": 1, "total": 2}}
        event = _sse(_dumps(note), event="message", event_id=f"bs-{sum(st.broken.values())}")
        return StreamingResponse(self._broken_stream(event), media_type="text/event-stream")

    async def _broken_stream(self, event: bytes) -> Any:
        yield event
        await asyncio.sleep(0.01)  # then end without the response

    def header_mismatch(self, request: Request, case: str, tag: str, message: dict[str, Any]) -> Response | None:
        """header_mismatch*: -32020 for the first call (always, for _always), then demand Mcp-Param-Message."""
        st = self.state(case, tag)
        params = message.get("params") or {}
        if st.headers_required and case == "header_mismatch" and params.get("name") != "echo":
            return None
        expected = str((params.get("arguments") or {}).get("message", ""))
        sent = request.headers.get("mcp-param-message")
        first = not st.headers_required
        st.headers_required = True
        if not first and case == "header_mismatch" and sent == expected:
            return None
        return JSONResponse(
            {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {
                    "code": HEADER_MISMATCH,
                    "message": "Header mismatch: Mcp-Param-Message is missing or differs from arguments.message",
                },
            },
            status_code=400,
        )

    def resume_first_stream(self, message: dict[str, Any], st: CaseState, sid: str) -> Response:
        """resume: the n-th tools/call gets a priming event ev-<2n-1> (retry 200) and no response."""
        st.resume_calls += 1
        return self._primed_and_broken(message, st, sid, f"ev-{2 * st.resume_calls - 1}", RESUME_RETRY_MS)

    def resume_broken_stream(self, message: dict[str, Any], st: CaseState, sid: str) -> Response:
        """resume_broken: a priming event rb-<N> (retry 50) and no response, for POSTs and resumptions alike."""
        st.broken_events += 1
        return self._primed_and_broken(message, st, sid, f"rb-{st.broken_events}", RESUME_BROKEN_RETRY_MS)

    def _primed_and_broken(self, message: dict[str, Any], st: CaseState, sid: str, event_id: str,
                           retry_ms: int) -> Response:
        """A stream with one priming event ``event_id`` (``retry: retry_ms``) that then breaks; a
        resumption from ``event_id`` answers ``message``."""
        st.resumable[event_id] = (sid, message)
        priming = f"id: {event_id}\nretry: {retry_ms}\ndata: \n\n".encode()
        return StreamingResponse(self._broken_stream(priming), media_type="text/event-stream")

    def resume_stream(self, request: Request, case: str, tag: str) -> Response:
        st = self.state(case, tag)
        last = request.headers.get("last-event-id", "")
        sid = request.headers.get("mcp-session-id")
        pending = st.resumable.get(last)
        if pending is None:
            return PlainTextResponse("Unknown Last-Event-ID", status_code=404)
        if sid != pending[0]:
            return PlainTextResponse(MISSING_SESSION_TEXT, status_code=400)
        del st.resumable[last]
        if case == "resume_broken":
            return self.resume_broken_stream(pending[1], st, pending[0])
        response = self.handle_method(request, pending[1], modern=False, tools=TOOLS)
        response.get("result", {}).pop("_sleep", None)
        next_id = f"ev-{int(last.split('-')[1]) + 1}"
        return StreamingResponse(iter([_sse(_dumps(response), event="message", event_id=next_id)]),
                                 media_type="text/event-stream")

    async def _server_request_stream(self, st: CaseState, request_id: Any) -> Any:
        st.server_requests += 1
        asked = f"srv-{st.server_requests}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        st.replies[asked] = future
        question = {
            "jsonrpc": "2.0",
            "id": asked,
            "method": "sampling/createMessage",
            "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "Say hello"}}],
                       "maxTokens": 16},
        }
        yield _sse(_dumps(question), event="message")
        try:
            reply: Any = await asyncio.wait_for(future, timeout=SERVER_REQUEST_WAIT)
            answer = {k: v for k, v in reply.items() if k not in ("jsonrpc", "id")}
        except asyncio.TimeoutError:
            answer = None
        finally:
            st.replies.pop(asked, None)
        text = "client answered: " + json.dumps(answer, sort_keys=True)
        response = {"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}}
        yield _sse(_dumps(response), event="message")

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
