"""The fault-matrix server: each tool is one fault, served over stdio or raw HTTP, either era.

Usage::

    python llm_mcp_tests/support/servers/faults.py --stdio [--era modern|handshake]
    python llm_mcp_tests/support/servers/faults.py --http PORT [--era modern|handshake]

Standard library only (it starts in tens of milliseconds). No tool has annotations, so a
client treats each as one with effects (the "may have partly run" warning applies).

Tools (``tools/call`` with no arguments):

* ``ok``: answers the text ``ok``.
* ``exit_mid_call``: stdio: the process exits with status 3 (after writing ``faults: exiting``
  to stderr); HTTP: the connection is closed with no response.
* ``http_500``: HTTP 500; stdio: a JSON-RPC error ``-32603 internal error`` (its nearest form).
* ``rate_429``: HTTP 429 with ``Retry-After: 7``; stdio: a JSON-RPC error ``-32000 rate limited``.
* ``cut_after_headers``: HTTP 200 ``text/event-stream`` headers, then the connection closes;
  stdio: the process exits with status 0 without writing anything.
* ``stall``: answers after `STALL_SECONDS` (a client's timeout is shorter).
* ``half_message``: stdio: the first bytes of the response line, then exit (status 0); HTTP: a
  JSON body cut after those bytes (``Content-Length`` promised more), then the close.
* ``big``: a text block of `BIG_CHARS` characters ``x``.
* ``junk``: stdio: lines that are not JSON-RPC (text, JSON that is not a message, bytes that
  are not UTF-8) before and after the response; HTTP: an SSE stream with a comment, events
  whose data is not JSON or not a message, the response, then more junk.
* ``encoding``: the response is encoded in Windows-1252, not UTF-8: its text ``café crème``
  has the bytes 0xE9 and 0xE8.

HTTP eras: ``modern`` (2026-07-28: ``server/discover``, stateless) or ``handshake``
(2025-11-25: ``initialize`` hands out an ``Mcp-Session-Id``; ``server/discover`` without a
session gets 400 plain text, GET 405, DELETE 200).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import socketserver
import sys
import threading
import time
from typing import Any

MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
STALL_SECONDS = 30
BIG_CHARS = 20 * 1024 * 1024
ENCODED_TEXT = "café crème"
HALF = b'{"jsonrpc":"2.0","id":'
TOOLS = ["ok", "exit_mid_call", "http_500", "rate_429", "cut_after_headers", "stall", "half_message", "big",
         "junk", "encoding"]
SERVER_INFO = {"name": "faults", "version": "1.0.0"}


def result_for(era: str, result: dict[str, Any]) -> dict[str, Any]:
    if era == "modern":
        result = {"resultType": "complete", **result}
        result.setdefault("_meta", {})["io.modelcontextprotocol/serverInfo"] = dict(SERVER_INFO)
    return result


def text_result(era: str, text: str) -> dict[str, Any]:
    return result_for(era, {"content": [{"type": "text", "text": text}], "isError": False})


def protocol_answer(era: str, message: dict[str, Any]) -> dict[str, Any] | None:
    """The answer to anything but a tools/call (``None`` for a notification)."""
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        return None
    if method == "initialize":
        if era == "modern":
            return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32022, "message": "Unsupported protocol "
                    "version", "data": {"supported": [MODERN]}}}
        return {"jsonrpc": "2.0", "id": request_id, "result": {
            "protocolVersion": HANDSHAKE, "capabilities": {"tools": {}}, "serverInfo": SERVER_INFO}}
    if method == "server/discover":
        if era != "modern":
            return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}}
        return {"jsonrpc": "2.0", "id": request_id, "result": result_for(era, {
            "supportedVersions": [MODERN], "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "public"})}
    if method == "tools/list":
        tools = [{"name": name, "inputSchema": {"type": "object"}} for name in TOOLS]
        return {"jsonrpc": "2.0", "id": request_id, "result": result_for(era, {"tools": tools})}
    if method == "ping":
        return {"jsonrpc": "2.0", "id": request_id, "result": result_for(era, {})}
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}}


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def encoded_in_cp1252(request_id: Any, era: str) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "result": text_result(era, ENCODED_TEXT)}
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("cp1252")


# -- stdio ------------------------------------------------------------------------------------


def serve_stdio(era: str) -> None:
    out = sys.stdout.buffer
    lock = threading.Lock()

    def write(data: bytes) -> None:
        with lock:
            out.write(data)
            out.flush()

    for raw in sys.stdin.buffer:
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        if message.get("method") != "tools/call":
            answer = protocol_answer(era, message)
            if answer is not None:
                write(encode(answer) + b"\n")
            continue
        request_id, name = message["id"], message.get("params", {}).get("name")
        if name == "exit_mid_call":
            sys.stderr.write("faults: exiting in the middle of a call\n")
            sys.stderr.flush()
            os._exit(3)
        elif name == "cut_after_headers":
            os._exit(0)
        elif name == "half_message":
            write(HALF)
            os._exit(0)
        elif name == "http_500":
            write(encode({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": "internal error"}})
                  + b"\n")
        elif name == "rate_429":
            write(encode({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32000, "message": "rate limited"}})
                  + b"\n")
        elif name == "stall":
            def late(request_id: Any = request_id) -> None:
                time.sleep(STALL_SECONDS)
                write(encode({"jsonrpc": "2.0", "id": request_id, "result": text_result(era, "late")}) + b"\n")
            threading.Thread(target=late, daemon=True).start()
        elif name == "big":
            write(encode({"jsonrpc": "2.0", "id": request_id, "result": text_result(era, "x" * BIG_CHARS)}) + b"\n")
        elif name == "junk":
            write(b"starting up...\n" + b'{"not": "json-rpc"}\n' + b"\xff\xfe\n")
            write(encode({"jsonrpc": "2.0", "id": request_id, "result": text_result(era, "ok")}) + b"\n")
            write(b"done.\n")
        elif name == "encoding":
            write(encoded_in_cp1252(request_id, era) + b"\n")
        else:
            write(encode({"jsonrpc": "2.0", "id": request_id, "result": text_result(era, "ok")}) + b"\n")


# -- HTTP -------------------------------------------------------------------------------------


class Handler(socketserver.StreamRequestHandler):
    era = "modern"
    sessions: set[str] = set()

    def handle(self) -> None:
        while True:
            request = self.read_request()
            if request is None:
                return
            if not self.answer(*request):
                return

    def read_request(self) -> tuple[str, dict[str, str], bytes] | None:
        line = self.rfile.readline()
        if not line:
            return None
        method = line.split(b" ", 1)[0].decode()
        headers: dict[str, str] = {}
        while True:
            header = self.rfile.readline()
            if header in (b"\r\n", b"\n", b""):
                break
            key, _, value = header.decode("latin-1").partition(":")
            headers[key.strip().lower()] = value.strip()
        body = self.rfile.read(int(headers.get("content-length", "0") or 0))
        return method, headers, body

    def send(self, status: str, body: bytes = b"", kind: str = "application/json",
             extra: dict[str, str] | None = None) -> bool:
        head = [f"HTTP/1.1 {status}", f"Content-Type: {kind}", f"Content-Length: {len(body)}"]
        head += [f"{k}: {v}" for k, v in (extra or {}).items()]
        self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        self.wfile.flush()
        return True

    def drop(self) -> bool:
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        return False

    def answer(self, method: str, headers: dict[str, str], body: bytes) -> bool:
        era = self.era
        if method == "GET":
            return self.send("405 Method Not Allowed", b"")
        if method == "DELETE":
            self.sessions.discard(headers.get("mcp-session-id", ""))
            return self.send("200 OK", b"")
        message = json.loads(body)
        if era == "handshake" and message.get("method") != "initialize" and \
                headers.get("mcp-session-id") not in self.sessions:
            return self.send("400 Bad Request", b"Bad Request: Missing session ID", "text/plain")
        if message.get("method") != "tools/call":
            answer = protocol_answer(era, message)
            if answer is None:
                return self.send("202 Accepted")
            extra = {}
            if message.get("method") == "initialize" and era == "handshake":
                session = os.urandom(8).hex()
                self.sessions.add(session)
                extra["Mcp-Session-Id"] = session
            return self.send("200 OK", encode(answer), extra=extra)
        request_id, name = message["id"], message.get("params", {}).get("name")
        if name == "exit_mid_call":
            return self.drop()
        if name == "http_500":
            return self.send("500 Internal Server Error", b"Internal Server Error", "text/plain")
        if name == "rate_429":
            return self.send("429 Too Many Requests", b"slow down", "text/plain", {"Retry-After": "7"})
        if name == "cut_after_headers":
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                             b"Transfer-Encoding: chunked\r\n\r\n")
            self.wfile.flush()
            return self.drop()
        if name == "stall":
            time.sleep(STALL_SECONDS)
            return self.drop()
        if name == "half_message":
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n" + HALF)
            self.wfile.flush()
            return self.drop()
        if name == "big":
            return self.send("200 OK", encode({"jsonrpc": "2.0", "id": request_id,
                                               "result": text_result(era, "x" * BIG_CHARS)}))
        if name == "junk":
            response = encode({"jsonrpc": "2.0", "id": request_id, "result": text_result(era, "ok")})
            stream = (b": ping\n\ndata: not json\n\ndata: {\"not\": \"json-rpc\"}\n\nevent: message\ndata: " + response
                      + b"\n\ndata: trailing junk\n\n")
            return self.send("200 OK", stream, "text/event-stream")
        if name == "encoding":
            return self.send("200 OK", encoded_in_cp1252(request_id, era))
        return self.send("200 OK", encode({"jsonrpc": "2.0", "id": request_id, "result": text_result(era, "ok")}))


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def serve_http(port: int, era: str) -> None:
    handler = type("EraHandler", (Handler,), {"era": era, "sessions": set()})
    with Server(("127.0.0.1", port), handler) as server:
        print(f"faults: listening on {port} ({era})", file=sys.stderr, flush=True)
        server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stdio", action="store_true")
    parser.add_argument("--http", type=int)
    parser.add_argument("--era", choices=["modern", "handshake"], default="modern")
    args = parser.parse_args()
    if args.http is not None:
        serve_http(args.http, args.era)
    else:
        serve_stdio(args.era)


if __name__ == "__main__":
    main()
