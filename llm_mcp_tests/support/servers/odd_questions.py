"""A hand-written 2026-07-28 stdio server (no ``mcp`` import) whose questions are malformed on purpose.

Usage::

    python -m llm_mcp_tests.support.servers.odd_questions

It answers ``server/discover``, ``tools/list`` and ``tools/call`` of one tool, ``odd(case)``.
A call without ``inputResponses`` answers an ``InputRequiredResult`` shaped by ``case``; a call
with them answers ``got <inputResponses as JSON> state <requestState as JSON>``.

Cases:

* ``list``: ``inputRequests`` is a list, not an object.
* ``state_int``: a valid question, with ``requestState`` the number ``123``.
* ``ok``: a valid one-field question (``name``), with ``requestState`` ``"s1"``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

VERSION = "2026-07-28"
QUESTION = {"method": "elicitation/create", "params": {
    "mode": "form", "message": "Your name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}
RESULTS: dict[str, dict[str, Any]] = {
    "list": {"inputRequests": [QUESTION], "requestState": "s1"},
    "state_int": {"inputRequests": {"q": QUESTION}, "requestState": 123},
    "ok": {"inputRequests": {"q": QUESTION}, "requestState": "s1"},
}
TOOL = {"name": "odd", "description": "Asks a malformed question.",
        "inputSchema": {"type": "object", "properties": {"case": {"type": "string"}}}}


def respond(request_id: Any, result: dict[str, Any]) -> None:
    result = {"resultType": "complete", **result}
    result.setdefault("_meta", {})["io.modelcontextprotocol/serverInfo"] = {"name": "odd", "version": "1"}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
    sys.stdout.flush()


def handle(message: dict[str, Any]) -> None:
    method, params, request_id = message.get("method"), message.get("params") or {}, message.get("id")
    if request_id is None:
        return
    if method == "server/discover":
        respond(request_id, {"supportedVersions": [VERSION], "capabilities": {"tools": {}}, "ttlMs": 0,
                             "cacheScope": "public"})
    elif method == "tools/list":
        respond(request_id, {"tools": [TOOL], "ttlMs": 0, "cacheScope": "public"})
    elif method == "tools/call" and "inputResponses" in params:
        text = f"got {json.dumps(params['inputResponses'], sort_keys=True)} state {json.dumps(params.get('requestState'))}"
        respond(request_id, {"content": [{"type": "text", "text": text}]})
    elif method == "tools/call":
        respond(request_id, {"resultType": "input_required", **RESULTS[(params.get("arguments") or {})["case"]]})
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id,
                                     "error": {"code": -32601, "message": "Method not found"}}) + "\n")
        sys.stdout.flush()


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            handle(json.loads(line))


if __name__ == "__main__":
    main()
