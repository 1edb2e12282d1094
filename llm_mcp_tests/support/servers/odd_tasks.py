"""A hand-written 2026-07-28 stdio server (no ``mcp`` import) whose tasks misbehave on purpose.

Usage::

    python llm_mcp_tests/support/servers/odd_tasks.py --case CASE

It answers ``server/discover`` (declaring ``io.modelcontextprotocol/tasks``), lists one tool
``build``, and answers every ``tools/call`` with a well-formed ``CreateTaskResult`` (task
``t-1``, ``working``, ``pollIntervalMs`` 10; case ``bad_create``: ``taskId`` null).
``tasks/get`` answers by case:

* ``other_id``: task ``t-2`` (not the one asked about), ``completed`` with a result.
* ``no_result``: ``completed`` without ``result``.
* ``bad_status``: status ``"paused"`` (not a status of the extension).
* ``bad_requests``: ``input_required`` with ``inputRequests`` ``"junk"`` (not an object).

``tasks/cancel`` and ``tasks/update`` answer ``{}``. Each request's method is appended, one
line each, to the file named by ``--log`` (when given).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

VERSION = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
CREATED = "2026-08-01T10:00:00Z"
CASES = ("other_id", "no_result", "bad_status", "bad_requests", "bad_create")
TOOL = {"name": "build", "description": "Build something slowly.", "inputSchema": {"type": "object"}}


def task(**fields: Any) -> dict[str, Any]:
    return {"taskId": "t-1", "status": "working", "createdAt": CREATED, "lastUpdatedAt": CREATED,
            "ttlMs": None, "pollIntervalMs": 10, **fields}


def tasks_get(case: str) -> dict[str, Any]:
    result = {"content": [{"type": "text", "text": "built"}]}
    if case == "other_id":
        return task(resultType="complete", taskId="t-2", status="completed", result=result)
    if case == "no_result":
        return task(resultType="complete", status="completed")
    if case == "bad_status":
        return task(resultType="complete", status="paused")
    return task(resultType="complete", status="input_required", inputRequests="junk")


def answer(case: str, method: str) -> dict[str, Any] | None:
    if method == "server/discover":
        return {"supportedVersions": [VERSION], "capabilities": {"tools": {}, "extensions": {TASKS: {}}},
                "serverInfo": {"name": "odd-tasks", "version": "0.1.0"}, "ttlMs": 0, "cacheScope": "public"}
    if method == "tools/list":
        return {"tools": [TOOL], "ttlMs": 0, "cacheScope": "public"}
    if method == "tools/call":
        return task(resultType="task", taskId=None) if case == "bad_create" else task(resultType="task")
    if method == "tasks/get":
        return tasks_get(case)
    if method in ("tasks/cancel", "tasks/update", "ping"):
        return {}
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="stdio MCP server whose tasks misbehave")
    parser.add_argument("--case", choices=CASES, required=True)
    parser.add_argument("--log", default=None)
    args = parser.parse_args(argv)
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            continue
        if args.log:
            with open(args.log, "a", encoding="utf-8") as log:
                log.write(f"{message['method']}\n")
        result = answer(args.case, message["method"])
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if result is None:
            reply["error"] = {"code": -32601, "message": "Method not found"}
        else:
            reply["result"] = result
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
