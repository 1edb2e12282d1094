"""A hand-written stdio JSON-RPC server (no ``mcp`` import) that misbehaves on purpose.

Usage::

    python llm_mcp_tests/support/servers/raw_stdio.py [--case CASE] [--era handshake|modern]
        [--protocol-version VERSION]

Eras:

* ``handshake`` (default): answers ``initialize`` (echoes the requested
  version when it is a known handshake revision, else ``2025-11-25``; force one
  with ``--protocol-version``) and rejects ``server/discover`` with
  ``-32601 Method not found``, like a pre-2026 server.
* ``modern``: answers ``server/discover`` like a 2026-07-28 server, stamps
  ``resultType``/``_meta`` serverInfo on results, and refuses ``initialize``
  with ``-32022`` (``data.supported == ["2026-07-28"]``).

Tools (present in every case): ``echo(message)``, ``crash()`` (exit status 3
while the call is in flight), ``big(size?, notifications?)`` (sends
``notifications`` progress notifications, default 200, then a text block of
``size`` ``"x"`` characters, default 5 MiB), ``ask_client(method?, params?)`` (sends a
request ``method`` -- default ``roots/list`` -- with ``params``, default a valid
example of that method, to the client mid-call and
answers only after the client replied; the result text is
``client answered: <json>`` where json is the client's response object minus
``jsonrpc``/``id``, keys sorted), ``sleep(seconds)``.

Start-up: every case writes one line to stderr before reading anything:
``raw_stdio: started (case <CASE>, era <ERA>, pid <PID>)`` (the client should
log it under ``llm_mcp.server.<name>``).

Cases (``--case``, default ``none``; names are case-insensitive):

* ``C01``: writes the plain line ``Server started on stdio`` at start-up and
  again before every JSON-RPC message it writes.
* ``C02``: writes the bytes ``b"\\xff\\xfe\\n"`` before every response.
* ``C03``: (use the ``crash`` tool).
* ``C05``: before every ``tools/call`` response sends two
  ``notifications/progress`` (progress 1 and 2 of total 2) and one
  ``notifications/message`` (level ``info``, data ``working``).
* ``C16``: sends ``vendor/heartbeat`` notifications (params
  ``{"seq": n, "payload": {"nested": [1, "two", null]}}``) after the
  ``initialize``/``server/discover`` answer and before every other response.
* ``C17``: (use the ``big`` tool).
* ``S2C``: (use the ``ask_client`` tool).
* ``silent_discover``: never answers ``server/discover`` (reads it and stays
  silent); everything else as in the chosen era. Meant for ``--era handshake``:
  a client must give up on the probe after its timeout and do the handshake.
* ``exit_on_discover``: the process exits with status 1 as soon as it
  receives ``server/discover`` (before answering anything); everything else as
  in the chosen era. Meant for ``--era handshake``: a client must start it again
  and do the handshake.
* ``exit_after_call``: after answering a ``tools/call`` it waits 0.3 s (reading
  nothing) and exits with status 0, as a server that serves one call per process
  does. In the handshake era it is strict: a request other than ``initialize``,
  ``server/discover`` or ``ping`` before ``initialize`` gets ``-32002 Server not
  initialized`` (a new process must be given the handshake again).

Progress notifications use the request's ``_meta.progressToken`` when given,
otherwise the token ``raw-progress``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import deque
from typing import Any

SERVER_INFO = {"name": "raw-stdio", "version": "0.1.0"}
INSTRUCTIONS = "Raw stdio test server."
NOISE_LINE = b"Server started on stdio\n"
BAD_BYTES = b"\xff\xfe\n"
BIG_TEXT_SIZE = 5 * 1024 * 1024
BIG_NOTIFICATIONS = 200
CRASH_EXIT_STATUS = 3
EXIT_ON_DISCOVER_STATUS = 1
DEFAULT_PROGRESS_TOKEN = "raw-progress"
HEARTBEAT_METHOD = "vendor/heartbeat"
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_HANDSHAKE = "2025-11-25"
MODERN_VERSION = "2026-07-28"
CASES = ("none", "C01", "C02", "C03", "C05", "C16", "C17", "S2C", "silent_discover", "exit_on_discover",
         "exit_after_call")
EXIT_AFTER_CALL_SECONDS = 0.3
STARTUP_STDERR = "raw_stdio: started (case {case}, era {era}, pid {pid})"

TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "description": "Return the message.",
        "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
    },
    {"name": "crash", "description": "Exit with status 3 mid-call.", "inputSchema": {"type": "object"}},
    {
        "name": "big",
        "description": "Many progress notifications, then a huge text block.",
        "inputSchema": {
            "type": "object",
            "properties": {"size": {"type": "integer"}, "notifications": {"type": "integer"}},
        },
    },
    {
        "name": "ask_client",
        "description": "Send a request to the client and report its answer.",
        "inputSchema": {"type": "object", "properties": {"method": {"type": "string"}, "params": {"type": "object"}}},
    },
    {
        "name": "bad_sum",
        "description": "Case C13: declares a numeric temperature, answers the string 'warm'.",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "properties": {"temperature": {"type": "number"}},
                         "required": ["temperature"]},
    },
    {
        "name": "sleep",
        "description": "Sleep, then answer.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]},
    },
]

_CLIENT_REQUEST_PARAMS: dict[str, dict[str, Any]] = {
    "roots/list": {},
    "ping": {},
    "sampling/createMessage": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Say hello"}}],
        "maxTokens": 16,
    },
    "elicitation/create": {
        "mode": "form",
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}


class RawServer:
    def __init__(self, case: str, era: str, forced_version: str | None) -> None:
        self.case = case
        self.era = era
        self.forced_version = forced_version
        self.stdin = sys.stdin.buffer
        self.stdout = sys.stdout.buffer
        self.pending: deque[dict[str, Any]] = deque()
        self.heartbeat_seq = 0
        self.server_request_seq = 0

    # ------------------------------------------------------------------ output

    def write_raw(self, data: bytes) -> None:
        self.stdout.write(data)
        self.stdout.flush()

    def send(self, message: dict[str, Any]) -> None:
        if self.case == "C01":
            self.stdout.write(NOISE_LINE)
        self.write_raw(json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n")

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def heartbeat(self) -> None:
        self.heartbeat_seq += 1
        self.notify(HEARTBEAT_METHOD, {"seq": self.heartbeat_seq, "payload": {"nested": [1, "two", None]}})

    def respond(self, request_id: Any, result: dict[str, Any]) -> None:
        if self.era == "modern":
            result = {"resultType": "complete", **result}
            result.setdefault("_meta", {})["io.modelcontextprotocol/serverInfo"] = dict(SERVER_INFO)
        self._before_response()
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def error(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        err: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            err["data"] = data
        self._before_response()
        self.send({"jsonrpc": "2.0", "id": request_id, "error": err})

    def _before_response(self) -> None:
        if self.case == "C02":
            self.write_raw(BAD_BYTES)

    # ------------------------------------------------------------------ input

    def read_message(self) -> dict[str, Any] | None:
        """Next JSON object from stdin; None at EOF. Unparseable lines are skipped."""
        while True:
            line = self.stdin.readline()
            if not line:
                return None
            line = line.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except ValueError:
                sys.stderr.write(f"raw_stdio: unparseable line {line[:80]!r}\n")
                continue
            if isinstance(message, dict):
                return message

    def next_message(self) -> dict[str, Any] | None:
        if self.pending:
            return self.pending.popleft()
        return self.read_message()

    # ------------------------------------------------------------------ main loop

    def run(self) -> None:
        sys.stderr.write(STARTUP_STDERR.format(case=self.case, era=self.era, pid=os.getpid()) + "\n")
        sys.stderr.flush()
        if self.case == "C01":
            self.write_raw(NOISE_LINE)
        initialized = False
        while True:
            message = self.next_message()
            if message is None:
                return
            if "method" not in message:
                continue  # a stray response
            if "id" not in message:
                continue  # notifications are ignored
            strict = self.case == "exit_after_call" and self.era == "handshake"
            if strict and not initialized and message["method"] not in ("initialize", "server/discover", "ping"):
                self.error(message["id"], -32002, "Server not initialized")
                continue
            initialized = initialized or message["method"] == "initialize"
            try:
                self.handle_request(message)
            except Exception as exc:  # pragma: no cover - defensive
                self.error(message.get("id"), -32603, f"internal error: {exc}")
            if self.case == "exit_after_call" and message["method"] == "tools/call":
                time.sleep(EXIT_AFTER_CALL_SECONDS)
                os._exit(0)

    def handle_request(self, message: dict[str, Any]) -> None:
        request_id = message["id"]
        method = message["method"]
        params = message.get("params") or {}
        if method == "initialize":
            if self.era == "modern":
                requested = params.get("protocolVersion")
                self.error(
                    request_id,
                    -32022,
                    "Unsupported protocol version: this server only speaks 2026-07-28",
                    {"supported": [MODERN_VERSION], "requested": requested if isinstance(requested, str) else ""},
                )
                return
            requested = params.get("protocolVersion")
            version = self.forced_version or (requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE)
            self.respond(
                request_id,
                {
                    "protocolVersion": version,
                    "capabilities": {"tools": {}, "logging": {}},
                    "serverInfo": dict(SERVER_INFO),
                    "instructions": INSTRUCTIONS,
                },
            )
            if self.case == "C16":
                self.heartbeat()
            return
        if method == "server/discover":
            if self.case == "silent_discover":
                return  # never answered
            if self.case == "exit_on_discover":
                sys.stderr.write("raw_stdio: exiting on server/discover\n")
                sys.stderr.flush()
                os._exit(EXIT_ON_DISCOVER_STATUS)
            if self.era != "modern":
                self.error(request_id, -32601, "Method not found")
                return
            self.respond(
                request_id,
                {
                    "supportedVersions": [MODERN_VERSION],
                    "capabilities": {"tools": {}},
                    "instructions": INSTRUCTIONS,
                    "ttlMs": 0,
                    "cacheScope": "public",
                },
            )
            if self.case == "C16":
                self.heartbeat()
            return
        if self.case == "C16":
            self.heartbeat()
        if method == "ping":
            self.respond(request_id, {})
        elif method == "tools/list":
            result: dict[str, Any] = {"tools": TOOLS}
            if self.era == "modern":
                result.update({"ttlMs": 0, "cacheScope": "public"})
            self.respond(request_id, result)
        elif method == "tools/call":
            self.call_tool(request_id, params)
        else:
            self.error(request_id, -32601, "Method not found")

    def call_tool(self, request_id: Any, params: dict[str, Any]) -> None:
        name = params.get("name")
        args = params.get("arguments") or {}
        meta = params.get("_meta") or {}
        token = meta.get("progressToken", DEFAULT_PROGRESS_TOKEN)
        if self.case == "C05":
            self.notify("notifications/progress", {"progressToken": token, "progress": 1, "total": 2})
            self.notify("notifications/message", {"level": "info", "logger": "raw-stdio", "data": "working"})
            self.notify("notifications/progress", {"progressToken": token, "progress": 2, "total": 2})
        if name == "echo":
            self.respond(request_id, {"content": [{"type": "text", "text": str(args.get("message", ""))}]})
        elif name == "bad_sum":
            self.respond(request_id, {"content": [{"type": "text", "text": "It is warm."}],
                                      "structuredContent": {"temperature": "warm"}})
        elif name == "crash":
            sys.stderr.write("raw_stdio: crashing on purpose\n")
            sys.stderr.flush()
            os._exit(CRASH_EXIT_STATUS)
        elif name == "big":
            size = int(args.get("size", BIG_TEXT_SIZE))
            count = int(args.get("notifications", BIG_NOTIFICATIONS))
            for i in range(1, count + 1):
                self.notify("notifications/progress", {"progressToken": token, "progress": i, "total": count})
            self.respond(request_id, {"content": [{"type": "text", "text": "x" * size}]})
        elif name == "ask_client":
            method = str(args.get("method", "roots/list"))
            self.ask_client(request_id, method, args.get("params", _CLIENT_REQUEST_PARAMS.get(method, {})))
        elif name == "sleep":
            time.sleep(float(args.get("seconds", 0)))
            self.respond(request_id, {"content": [{"type": "text", "text": "slept"}]})
        else:
            self.error(request_id, -32602, f"Unknown tool: {name}")

    def ask_client(self, request_id: Any, method: str, params: Any) -> None:
        self.server_request_seq += 1
        server_request_id = f"srv-{self.server_request_seq}"
        self.send(
            {
                "jsonrpc": "2.0",
                "id": server_request_id,
                "method": method,
                "params": params,
            }
        )
        while True:
            message = self.read_message()
            if message is None:
                return  # client went away
            if "method" not in message and message.get("id") == server_request_id:
                answer = {k: v for k, v in message.items() if k not in ("jsonrpc", "id")}
                text = "client answered: " + json.dumps(answer, sort_keys=True)
                self.respond(request_id, {"content": [{"type": "text", "text": text}]})
                return
            if "method" in message and "id" in message:
                self.pending.append(message)  # answered after this call


def _case_name(value: str) -> str:
    """The canonical spelling of a case name given in any letter case (``c05`` -> ``C05``)."""
    return next((c for c in CASES if c.lower() == value.lower()), value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="misbehaving raw stdio MCP server")
    parser.add_argument("--case", default="none", type=_case_name, choices=CASES)
    parser.add_argument("--era", choices=("handshake", "modern"), default="handshake")
    parser.add_argument("--protocol-version", default=None, help="force the initialize protocolVersion answer")
    args = parser.parse_args(argv)
    try:
        RawServer(args.case, args.era, args.protocol_version).run()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
