"""The kit's task tools (Tasks extension, server side): definitions, the HTTP ``Mcp-Name``
rule on the tasks methods, and the store, over real HTTP on 127.0.0.1."""

from __future__ import annotations

import time

import httpx
import pytest

import llm_mcp
from llm_mcp.client import protocol
from llm_mcp.testing import Tool, running_server

TASKING = "llm_mcp_tests.support.servers.tasking"
TASKS = "io.modelcontextprotocol/tasks"


def test_task_settings_are_checked_when_the_class_is_made():
    with pytest.raises(ValueError, match="task must be None, 'optional' or 'required'"):
        class Sometimes(Tool):
            name = "sometimes"
            task = "sometimes"
    with pytest.raises(ValueError, match="task_poll_interval_ms"):
        class Negative(Tool):
            name = "negative"
            task = "optional"
            task_poll_interval_ms = -5


def _tasks_get(url: str, task_id: str, mcp_name: str | None) -> dict:
    headers = {"MCP-Protocol-Version": protocol.LATEST, "Mcp-Method": "tasks/get",
               "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if mcp_name is not None:
        headers["Mcp-Name"] = mcp_name
    body = {"jsonrpc": "2.0", "id": 7, "method": "tasks/get",
            "params": {"taskId": task_id, "_meta": {protocol.META_PROTOCOL_VERSION: protocol.LATEST,
                                                    protocol.META_CLIENT_CAPABILITIES: {"extensions": {TASKS: {}}}}}}
    answer = httpx.post(url, json=body, headers=headers, timeout=10)
    text = answer.text
    if text.lstrip().startswith("event:") or "data:" in text:
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    import json

    return json.loads(text)


def test_tasks_get_over_http_needs_the_task_id_in_mcp_name():
    """The kit answers tasks/get only when ``Mcp-Name`` is the task id (ext-tasks "HTTP")."""
    with running_server(TASKING, transport="http", era="modern") as running:
        task = running.mcp(name="reports", extensions=["tasks"]).tool("report").call(steps=1, delay=0.01)
        right = _tasks_get(running.url, task.id, task.id)
        assert right["result"]["taskId"] == task.id and right["result"]["resultType"] == "complete"
        for wrong in ("another", None):
            answer = _tasks_get(running.url, task.id, wrong)
            assert "result" not in answer and answer["error"]["code"] == protocol.HEADER_MISMATCH


def test_a_tool_error_is_a_completed_task():
    """A tool error (isError) is ``completed`` with the error result, not ``failed``."""
    with running_server(TASKING, transport="stdio", era="modern") as running:
        server = running.mcp(name="reports", extensions=["tasks"])
        task = server.tool("report").call(steps="many").wait()
        assert task.succeeded and task.result.is_error
        assert isinstance(task, llm_mcp.Task)


def test_a_task_tool_that_asks_is_input_required_until_tasks_update_answers():
    """MCP-TASK-15 (kit side): a task tool that asks turns its task ``input_required`` with the
    question in ``inputRequests``; ``tasks/update`` with ``inputResponses`` answers it, and the
    tool runs again with the answer and completes."""
    with running_server(TASKING, transport="http", era="modern") as running:
        server = running.mcp(name="reports", extensions=["tasks"])
        task = server.tool("curious").call()
        deadline = time.monotonic() + 10
        while task.refresh().status != "input_required":
            assert time.monotonic() < deadline and task.status == "working", task.status
            time.sleep(0.02)
        assert list(task.input_requests) == ["year"]
        assert task.input_requests["year"]["params"]["message"] == "Which year?"
        task.update({"year": {"action": "accept", "content": {"year": 1999}}})
        assert task.wait().result.text == "year 1999"
