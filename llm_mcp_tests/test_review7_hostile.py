"""Review of issue 7 (resources, prompts, progress, logs) against servers that misbehave on purpose.

Each test scripts a real 2026-07-28 server on 127.0.0.1 (``scripted`` from test_hostile): a
function of the JSON-RPC request returning the raw HTTP answer, SSE events included.
"""

from __future__ import annotations

import json
import logging

import pytest

import llm_mcp
from llm_mcp_tests.test_hostile import DISCOVER, Scripted, answer, result

DISCOVER_ALL = {**DISCOVER, "capabilities": {"tools": {}, "resources": {}, "prompts": {}, "completions": {},
                                             "logging": {}}}
TOOL = {"name": "t", "inputSchema": {"type": "object"}}


@pytest.fixture
def scripted():
    servers = []

    def start(script):
        servers.append(Scripted(script))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def sse(request, notifications, final) -> bytes:
    """An SSE answer: the notifications (method, params), then the result ``final``."""
    events = [{"jsonrpc": "2.0", "method": method, "params": params} for method, params in notifications]
    events.append({"jsonrpc": "2.0", "id": request["id"], "result": final})
    body = "".join("event: message\ndata: " + json.dumps(event) + "\n\n" for event in events)
    return answer(body.encode(), content_type="text/event-stream")


def server_of(handlers):
    """A script answering server/discover and tools/list, and ``handlers[method](request)`` for the rest."""
    def script(request):
        if request["method"] == "server/discover":
            return result(request, DISCOVER_ALL)
        if request["method"] == "tools/list":
            return result(request, {"tools": [TOOL]})
        return handlers[request["method"]](request)
    return script


def token(request):
    return request["params"]["_meta"]["progressToken"]


def test_progress_with_numbers_too_large_for_a_float_is_ignored(scripted):
    """A progress value or total that no float holds (a 400-digit integer) is dropped, like NaN:
    the call's result is not lost to an OverflowError."""
    def call(request):
        t = token(request)
        return sse(request, [("notifications/progress", {"progressToken": t, "progress": 1, "total": 4}),
                             ("notifications/progress", {"progressToken": t, "progress": 10**400, "total": 4}),
                             ("notifications/progress", {"progressToken": t, "progress": 2, "total": 10**400}),
                             ("notifications/progress", {"progressToken": t, "progress": 3, "total": 4})],
                   {"content": [{"type": "text", "text": "done"}]})
    reports: list[llm_mcp.Progress] = []
    server = scripted(server_of({"tools/call": call}))
    with llm_mcp.mcp(url=server.url, after_progress=reports.append) as client:
        assert client.call("t").text == "done"
    assert [(p.value, p.total, p.fraction) for p in reports] == [(1, 4, 0.25), (2, None, None), (3, 4, 0.75)]
