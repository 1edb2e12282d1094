"""The kit's ``notifications/tasks`` on the wire (Tasks extension, "Task Status Notifications"):
what a ``subscriptions/listen`` naming ``taskIds`` is granted and sent, read as raw SSE frames
over real HTTP on 127.0.0.1, and the -32021 to a client that did not declare the extension."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx

from llm_mcp.client import protocol
from llm_mcp.testing import running_server
from llm_mcp_tests.support.listening import wait_until

TASKING = "llm_mcp_tests.support.servers.tasking"
TASKS = "io.modelcontextprotocol/tasks"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


def _listen_body(task_ids: list[str], *, declared: bool) -> dict[str, Any]:
    capabilities = {"extensions": {TASKS: {}}} if declared else {}
    return {"jsonrpc": "2.0", "id": 41, "method": "subscriptions/listen",
            "params": {"notifications": {"taskIds": task_ids},
                       "_meta": {protocol.META_PROTOCOL_VERSION: protocol.LATEST,
                                 protocol.META_CLIENT_CAPABILITIES: capabilities}}}


HEADERS = {"MCP-Protocol-Version": protocol.LATEST, "Mcp-Method": "subscriptions/listen",
           "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _frames(url: str, body: dict[str, Any], frames: list[dict[str, Any]], until: Any) -> None:
    """POST ``body`` and append each JSON-RPC message of the answer to ``frames`` until ``until(frames)``."""
    with httpx.stream("POST", url, json=body, headers=HEADERS, timeout=20) as answer:
        for line in answer.iter_lines():
            if line.startswith("data:"):
                frames.append(json.loads(line[5:]))
                if until(frames):
                    return
            elif not line.startswith("event:") and line.strip().startswith("{"):
                frames.append(json.loads(line))
                return


def test_mcp_task_13_the_kit_grants_known_tasks_and_sends_each_change_with_the_whole_task(tmp_path: Path):
    """MCP-TASK-13 (the kit): the acknowledgement is the first frame, grants the known task and
    leaves the unknown id out; each change comes as ``notifications/tasks`` with the listen's
    subscription id, the ``ttlMs`` field (null allowed) and, once completed, the ``result``;
    the last one is what ``tasks/get`` answers (without ``resultType``)."""
    gate = tmp_path / "gate"
    with running_server(TASKING, transport="http", era="modern") as running:
        server = running.mcp(name="wire", extensions=["tasks"])
        try:
            task = server.tool("gated").call(path=str(gate))
            frames: list[dict[str, Any]] = []
            done = lambda got: any(f.get("params", {}).get("status") == "completed" for f in got)
            reader = threading.Thread(target=_frames, args=(running.url, _listen_body([task.id, "unknown"],
                                                                                        declared=True), frames, done))
            reader.start()
            try:
                assert wait_until(lambda: len(frames) >= 1)
                gate.touch()
                reader.join(20)
            finally:
                gate.touch()
            assert not reader.is_alive()
            ack, *news = frames
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            assert ack["params"]["notifications"]["taskIds"] == [task.id]
            assert ack["params"]["_meta"][SUBSCRIPTION_ID] == 41
            assert news and all(f["method"] == "notifications/tasks" for f in news)
            assert all(f["params"]["taskId"] == task.id and f["params"]["_meta"][SUBSCRIPTION_ID] == 41
                       and "ttlMs" in f["params"] for f in news)
            assert [f["params"]["statusMessage"] for f in news][-2:] == ["gate open", "gate open"]
            last = news[-1]["params"]
            assert last["result"]["content"][0]["text"] == f"passed the gate at {gate}"
            fetched = server.connection.client.request("tasks/get", {"taskId": task.id})
            expected = {k: v for k, v in fetched.items() if k not in ("resultType", "_meta")}
            assert {k: v for k, v in last.items() if k != "_meta"} == expected
        finally:
            server.close()


def test_mcp_task_14_the_kit_answers_32021_to_a_listen_for_tasks_without_the_extension():
    """MCP-TASK-14 (the kit): ``taskIds`` in a listen from a client that did not declare the
    extension is answered with -32021 naming it in ``requiredCapabilities``."""
    with running_server(TASKING, transport="http", era="modern") as running:
        frames: list[dict[str, Any]] = []
        _frames(running.url, _listen_body(["t-1"], declared=False), frames, lambda got: "id" in got[-1])
        error = frames[-1]["error"]
        assert error["code"] == -32021
        assert error["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
