"""A stdio server whose process hands its pipes to a child and exits (a launcher that daemonizes).

Usage::

    python llm_mcp_tests/support/servers/hands_off.py RECORD_FILE

Answers ``server/discover`` (2026-07-28) and ``tools/list`` (one tool, ``record``). Right after
answering ``tools/list`` it forks and exits with status 0; the child keeps stdin and stdout,
waits 1.5 s, then reads one more request and handles it. ``record`` (not idempotent) appends
the line ``recorded by <pid>`` to ``RECORD_FILE`` and answers ``recorded``. A process started
afresh answers ``record`` at once. Lines are read a byte at a time: what the process has not
handled stays in its stdin pipe. POSIX only (``os.fork``).
"""

from __future__ import annotations

import json
import os
import sys
import time

VERSION = "2026-07-28"


def read_line() -> bytes:
    line = b""
    while not line.endswith(b"\n"):
        byte = os.read(0, 1)
        if not byte:
            return b""
        line += byte
    return line


def answer(message: dict, result: dict) -> None:
    os.write(1, (json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n").encode())


def handle(message: dict, record_file: str) -> bool:
    """Answer ``message``; whether it was ``tools/list``."""
    method = message.get("method")
    if method == "server/discover":
        answer(message, {"supportedVersions": [VERSION], "capabilities": {"tools": {}},
                         "serverInfo": {"name": "hands-off", "version": "0.1.0"}})
    elif method == "tools/list":
        answer(message, {"tools": [{"name": "record", "inputSchema": {"type": "object"}}]})
        return True
    elif method == "tools/call":
        with open(record_file, "a") as record:
            record.write(f"recorded by {os.getpid()}\n")
        answer(message, {"content": [{"type": "text", "text": "recorded"}]})
    elif "id" in message:
        os.write(1, (json.dumps({"jsonrpc": "2.0", "id": message["id"],
                                 "error": {"code": -32601, "message": "Method not found"}}) + "\n").encode())
    return False


def main() -> None:
    record_file = sys.argv[1]
    while True:
        line = read_line()
        if not line:
            return
        message = json.loads(line)
        if "id" in message and handle(message, record_file):
            if os.fork():
                os._exit(0)  # the parent: gone; the child holds the pipes
            time.sleep(1.5)
            line = read_line()
            if line:
                handle(json.loads(line), record_file)
            os._exit(0)


if __name__ == "__main__":
    main()
