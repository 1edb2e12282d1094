"""A chat paused on a server task, woken by a listener instead of polling:
``server.listen(tasks=chat.pending_tasks)``, and ``after_change`` telling when to ``complete()``,
against the tasking kit server over HTTP and stdio (real processes)."""

from __future__ import annotations

import threading
from pathlib import Path

import llm_mcp
from llm_mcp.testing import reply, tool_call
from llm_mcp_tests.support.chats import make_chat


def test_mcp_task_13_listen_to_a_chat_s_pending_tasks_and_complete_once_they_end(model, tasking, tmp_path: Path):
    """MCP-TASK-13: ``listen(tasks=chat.pending_tasks + [a task of another server])`` listens to
    this server's task only; ``after_change`` hears it end (with its result), and one
    ``complete()`` then finishes the turn with the model getting the task's result."""
    gate = tmp_path / "gate"
    ended = threading.Event()
    heard: list[llm_mcp.Task] = []

    def task_changed(server: llm_mcp.MCP, change: object) -> None:
        if isinstance(change, llm_mcp.Task):
            heard.append(change)
            if change.complete:
                ended.set()

    reports = tasking.mcp(name="reports", extensions=["tasks"], after_change=task_changed)
    archive = tasking.mcp(name="archive", extensions=["tasks"])
    chat = make_chat(model, [tool_call("gated", {"path": str(gate)}), reply("Through the gate.")])
    try:
        chat.with_mcp(reports)
        chat.ask("go through the gate")
        [task] = chat.pending_tasks
        elsewhere = archive.tool("gated").call(path=str(tmp_path / "never"))
        reports.listen(tasks=[*chat.pending_tasks, elsewhere])
        assert list(reports._listener.tasks) == [task.id]
        gate.touch()
        assert ended.wait(15)
        assert heard[-1].id == task.id and heard[-1].result.text == f"passed the gate at {gate}"
        assert chat.waiting  # nothing happens to the chat until it is told to go on
        chat.complete()
        assert not chat.waiting and chat.messages[-1].content == "Through the gate."
        assert model.requests[-1].tool_results[0]["content"] == f"passed the gate at {gate}"
        assert {t.id for t in heard} == {task.id}
        elsewhere.cancel()
    finally:
        reports.close()
        archive.close()
