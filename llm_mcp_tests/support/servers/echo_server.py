"""A well-behaved MCP test server built on the official ``mcp`` package.

Usage::

    python -m llm_mcp_tests.support.servers.echo_server [--era auto|modern|handshake]
        [--http PORT] [--json-response] [--many-tools N] [--page-size N]

(``python llm_mcp_tests/support/servers/echo_server.py ...`` works too: the module only
imports ``mcp``, ``llm_mcp.testing`` and the standard library.)

* stdio is the default transport; ``--http PORT`` serves Streamable HTTP on
  ``http://127.0.0.1:PORT/mcp`` (``--json-response`` answers with single JSON
  bodies instead of SSE streams).
* ``--era`` selects the protocol era(s) served:

  - ``auto`` (default): both. stdio: the SDK's dual-era loop, where the first
    request decides (``server/discover``/enveloped request -> 2026-07-28,
    ``initialize`` -> handshake). HTTP: the SDK routes on the
    ``MCP-Protocol-Version`` header.
  - ``handshake``: behaves like a pre-2026 server. stdio: the SDK's
    handshake-only loop (``serve_loop``), so ``server/discover`` gets
    ``-32601 Method not found`` and ``initialize`` works afterwards on the same
    process. HTTP: a POST carrying a 2026 ``MCP-Protocol-Version`` header is
    answered like an old server answers it (400 "Bad Request: Missing session
    ID" without a session, 400 "Unsupported protocol version" with one); the
    body is a JSON-RPC error with code -32600, never a modern error code.
  - ``modern``: only 2026-07-28. stdio: the SDK's modern stream loop, which
    answers ``initialize`` with ``-32022`` naming the supported versions. HTTP:
    POSTs without a 2026 ``MCP-Protocol-Version`` header get 400 + ``-32022``
    (data ``{"supported": ["2026-07-28"], "requested": ...}``); GET/DELETE 405.

  The serving machinery (era filters, stdio loop drivers) lives in
  ``llm_mcp.testing.serve``.
* ``--many-tools N`` adds ``N`` trivial tools ``t00``..``tNN`` and
  ``--page-size N`` makes ``tools/list`` paginate with an opaque ``nextCursor``
  (the SDK's lowlevel server does not paginate by itself; the handler here
  does). Without ``--page-size`` everything comes in one page.
"""

from __future__ import annotations

import argparse
import base64
import json
import struct
import sys
import warnings
from typing import Any

from llm_mcp.testing.paging import InvalidCursor, page
from llm_mcp.testing.serve import add_serve_arguments, serve_from_args

__all__ = [
    "ADD_OUTPUT_SCHEMA",
    "AUDIO_MIME",
    "BAD_HEADER_TOOLS",
    "BASE_TOOL_NAMES",
    "EMBEDDED_BLOB_URI",
    "EMBEDDED_TEXT",
    "EMBEDDED_TEXT_MIME",
    "EMBEDDED_TEXT_URI",
    "FAIL_TEXT",
    "INSTRUCTIONS",
    "MIXED_TEXT",
    "PNG_B64",
    "PNG_BYTES",
    "RESOURCE_LINK",
    "SERVER_NAME",
    "SERVER_VERSION",
    "WAV_B64",
    "WAV_BYTES",
    "WITH_META_RESULT_META",
    "WITH_META_TOOL_META",
    "build_server",
    "main",
]

SERVER_NAME = "echo-server"
SERVER_VERSION = "1.0.0"
INSTRUCTIONS = "Echo server for llm_mcp tests. Call echo to get your message back."

# A 1x1 red RGB PNG (69 bytes).
PNG_BYTES = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde"
    b"\x00\x00\x00\x0cIDATx\xdac\xf8\xcf\xc0\x00\x00\x03\x01\x01\x00\xf7\x03AC"
    b"\x00\x00\x00\x00IEND\xaeB`\x82"
)
PNG_B64 = base64.b64encode(PNG_BYTES).decode("ascii")


def _make_wav() -> bytes:
    """A mono 8 kHz 8-bit WAV with four samples (48 bytes); struct output is deterministic."""
    samples = bytes([128, 160, 128, 96])
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 8000, 1, 8)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(samples)) + samples
    return b"RIFF" + struct.pack("<I", len(body)) + body


WAV_BYTES = _make_wav()
WAV_B64 = base64.b64encode(WAV_BYTES).decode("ascii")
AUDIO_MIME = "audio/wav"

MIXED_TEXT = "mixed content follows"
EMBEDDED_TEXT_URI = "file:///notes/plan.md"
EMBEDDED_TEXT_MIME = "text/markdown"
EMBEDDED_TEXT = "# Plan"
EMBEDDED_BLOB_URI = "file:///images/pixel.png"
RESOURCE_LINK = {
    "type": "resource_link",
    "uri": "file:///reports/q3.pdf",
    "name": "q3-report",
    "title": "Q3 report",
    "mimeType": "application/pdf",
    "size": 1234,
}
FAIL_TEXT = "quota exceeded"
WITH_META_RESULT_META = {"com.example/request_id": "abc123"}
WITH_META_TOOL_META = {"ui": {"resourceUri": "ui://demo/app.html"}, "com.example/x": 1}
ADD_OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {"sum": {"type": "integer"}},
    "required": ["sum"],
}
# Headers the `headered` tool reports back (lower-case names).
_REPORTED_HEADER_PREFIXES = ("mcp-param-",)
_REPORTED_HEADERS = ("mcp-method", "mcp-name", "mcp-protocol-version")


def _obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


BASE_TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "title": "Echo",
        "description": "Return the message unchanged.",
        "inputSchema": _obj({"message": {"type": "string", "description": "Text to echo"}}, ["message"]),
        "annotations": {"readOnlyHint": True, "idempotentHint": True, "destructiveHint": False, "openWorldHint": False},
    },
    {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": _obj({"a": {"type": "integer"}, "b": {"type": "integer"}}, ["a", "b"]),
        "outputSchema": ADD_OUTPUT_SCHEMA,
    },
    {"name": "image", "description": "Return a 1x1 PNG image.", "inputSchema": _obj({})},
    {
        "name": "mixed",
        "description": "Return text, audio, embedded resources and a resource link.",
        "inputSchema": _obj({}),
    },
    {"name": "fail", "description": "Always fails with isError.", "inputSchema": _obj({})},
    {
        "name": "with_meta",
        "description": "Return a result carrying _meta.",
        "inputSchema": _obj({}),
        "_meta": WITH_META_TOOL_META,
    },
    {
        "name": "headered",
        "description": "Report the Mcp-* HTTP headers this call arrived with.",
        "inputSchema": _obj(
            {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "count": {"type": "integer", "x-mcp-header": "Count"},
            },
            ["region", "count"],
        ),
    },
    {
        "name": "sleep",
        "description": "Sleep for the given number of seconds, then answer.",
        "inputSchema": _obj({"seconds": {"type": "number"}}, ["seconds"]),
    },
    {
        "name": "together",
        "description": "Wait until `parties` calls of the same `group` are in flight at once (at most `seconds`), "
                       "then answer the most that were.",
        "inputSchema": _obj({"group": {"type": "string"}, "parties": {"type": "integer", "minimum": 1},
                             "seconds": {"type": "number"}}, ["group", "parties"]),
    },
    {
        "name": "progress",
        "description": "Emit progress notifications and a log message, then answer.",
        "inputSchema": _obj({"steps": {"type": "integer", "minimum": 0}}, ["steps"]),
    },
    {
        "name": "files/read",
        "description": "A tool whose name is not a Python identifier.",
        "inputSchema": _obj({"path": {"type": "string"}}, ["path"]),
    },
]

# Tools whose x-mcp-header annotations are invalid; a conforming HTTP client drops them.
BAD_HEADER_TOOLS: list[dict[str, Any]] = [
    {
        "name": "bad_header_space",
        "description": "Invalid: x-mcp-header contains a space.",
        "inputSchema": _obj({"q": {"type": "string", "x-mcp-header": "Bad Name"}}),
    },
    {
        "name": "bad_header_dup",
        "description": "Invalid: x-mcp-header values collide case-insensitively.",
        "inputSchema": _obj(
            {"a": {"type": "string", "x-mcp-header": "Dup"}, "b": {"type": "string", "x-mcp-header": "dup"}}
        ),
    },
]

BASE_TOOL_NAMES = [t["name"] for t in BASE_TOOLS] + [t["name"] for t in BAD_HEADER_TOOLS]


_GROUPS: dict[str, dict[str, Any]] = {}
"""``together``'s groups: calls in flight now, the most at once, and whether ``parties`` was reached."""


async def _together(group: str, parties: int, seconds: float) -> dict[str, Any]:
    """Wait (at most ``seconds``) until ``parties`` calls of ``group`` are in flight at once; answer
    ``together N of P`` with N the most that were (a client that queues its calls never gets N = P)."""
    import anyio

    state = _GROUPS.setdefault(group, {"now": 0, "most": 0, "met": anyio.Event()})
    state["now"] += 1
    state["most"] = max(state["most"], state["now"])
    if state["now"] >= parties:
        state["met"].set()
    try:
        with anyio.move_on_after(seconds):
            await state["met"].wait()
    finally:
        state["now"] -= 1
    return {"content": [_text(f"together {state['most']} of {parties}")],
            "structuredContent": {"most": state["most"], "parties": parties}}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def build_server(*, many_tools: int = 0, page_size: int = 0) -> Any:
    """Build the lowlevel ``mcp`` Server with every test tool registered."""
    import anyio
    import jsonschema
    import mcp_types as types
    from mcp.server.caching import CacheHint
    from mcp.server.lowlevel.server import Server
    from mcp.shared.exceptions import MCPError

    tools: list[dict[str, Any]] = [dict(t) for t in BASE_TOOLS + BAD_HEADER_TOOLS]
    for i in range(many_tools):
        tools.append(
            {
                "name": f"t{i:02d}",
                "description": f"Trivial tool number {i}.",
                "inputSchema": _obj({}),
            }
        )
    by_name = {t["name"]: t for t in tools}

    async def list_tools(ctx: Any, params: Any) -> dict[str, Any]:
        cursor = getattr(params, "cursor", None) if params is not None else None
        try:
            return {"resultType": "complete", **page(tools, "tools", cursor, page_size)}
        except InvalidCursor:
            raise MCPError(code=types.INVALID_PARAMS, message="Invalid cursor") from None

    async def send_log(ctx: Any, level: str, data: Any) -> None:
        # Sent request-scoped on every era (bypassing the 2026 per-request
        # log-level opt-in gate) so tests can rely on receiving it.
        await ctx.session.send_notification(
            types.LoggingMessageNotification(
                params=types.LoggingMessageNotificationParams(level=level, data=data, logger=SERVER_NAME)
            ),
            related_request_id=ctx.request_id,
        )

    async def call_tool(ctx: Any, params: Any) -> dict[str, Any]:
        result = await _call_tool(ctx, params)
        # 2026-07-28 results must say what they are; the SDK's per-version
        # serializer drops the key again on handshake-era connections.
        return {"resultType": "complete", **result}

    async def _call_tool(ctx: Any, params: Any) -> dict[str, Any]:
        name = params.name
        args: dict[str, Any] = dict(params.arguments or {})
        tool = by_name.get(name)
        if tool is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}")
        try:
            jsonschema.validate(args, tool["inputSchema"])
        except jsonschema.ValidationError as exc:
            return {"content": [_text(f"Invalid arguments for {name}: {exc.message}")], "isError": True}

        if name == "echo":
            return {"content": [_text(args["message"])]}
        if name == "add":
            total = args["a"] + args["b"]
            return {"content": [_text(json.dumps({"sum": total}))], "structuredContent": {"sum": total}}
        if name == "image":
            return {"content": [{"type": "image", "data": PNG_B64, "mimeType": "image/png"}]}
        if name == "mixed":
            return {
                "content": [
                    _text(MIXED_TEXT),
                    {"type": "audio", "data": WAV_B64, "mimeType": AUDIO_MIME},
                    {
                        "type": "resource",
                        "resource": {"uri": EMBEDDED_TEXT_URI, "mimeType": EMBEDDED_TEXT_MIME, "text": EMBEDDED_TEXT},
                    },
                    {"type": "resource", "resource": {"uri": EMBEDDED_BLOB_URI, "blob": PNG_B64}},
                    dict(RESOURCE_LINK),
                ]
            }
        if name == "fail":
            return {"content": [_text(FAIL_TEXT)], "isError": True}
        if name == "with_meta":
            return {"content": [_text("has meta")], "_meta": dict(WITH_META_RESULT_META)}
        if name == "headered":
            request = ctx.request
            headers: dict[str, str] = {}
            if request is not None and hasattr(request, "headers"):
                for key, value in request.headers.items():
                    low = key.lower()
                    if low in _REPORTED_HEADERS or low.startswith(_REPORTED_HEADER_PREFIXES):
                        headers[low] = value
            if request is None:
                text = "no http headers"
            else:
                text = "\n".join(f"{k}: {headers[k]}" for k in sorted(headers)) or "no mcp headers"
            return {"content": [_text(text)], "structuredContent": {"headers": headers}}
        if name == "sleep":
            seconds = float(args["seconds"])
            await anyio.sleep(seconds)
            return {"content": [_text(f"slept {seconds:g}")]}
        if name == "together":
            return await _together(str(args["group"]), int(args["parties"]), float(args.get("seconds", 60)))
        if name == "progress":
            steps = int(args["steps"])
            await send_log(ctx, "info", f"progress started: {steps} steps")
            for i in range(1, steps + 1):
                await ctx.session.report_progress(i, steps, f"step {i}/{steps}")
                await anyio.sleep(0.005)
            return {"content": [_text(f"completed {steps} steps")]}
        if name == "files/read":
            return {"content": [_text(f"contents of {args['path']}")]}
        if name in ("bad_header_space", "bad_header_dup"):
            return {"content": [_text("this tool should have been dropped by the client")]}
        if name.startswith("t") and name[1:].isdigit():
            return {"content": [_text(name)]}
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}")  # pragma: no cover

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        server = Server(
            SERVER_NAME,
            version=SERVER_VERSION,
            instructions=INSTRUCTIONS,
            # 2026-07-28 requires ttlMs/cacheScope on tools/list results.
            cache_hints={"tools/list": CacheHint(ttl_ms=0, scope="public")},
            on_list_tools=list_tools,
            on_call_tool=call_tool,
        )

    async def set_level(ctx: Any, params: Any) -> dict[str, Any]:
        return {}

    # Advertise the logging capability to handshake-era clients (the progress
    # tool sends notifications/message).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
    return server


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_serve_arguments(parser)
    parser.add_argument("--many-tools", type=int, default=0, metavar="N", help="add tools t00..t(N-1)")
    parser.add_argument("--page-size", type=int, default=0, metavar="N", help="paginate tools/list (0 = no)")
    args = parser.parse_args(argv)

    serve_from_args(build_server(many_tools=args.many_tools, page_size=args.page_size), args)


if __name__ == "__main__":
    sys.exit(main())
