"""A chat paused on a server task, driven by a listener instead of polling, across real
processes: the tasking kit server over HTTP (in this process), a Celery worker on a throwaway
Redis, and ``manage.py mcp_listen --tasks`` as its own process, with
``LLM_MCP["TASK_CHECKS"] = "listen"`` in both (issue 20, "the same driven by a listener")."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from llm_mcp.testing import reply, tool_call
from llm_mcp_tests.support.listening import wait_until
from llm_mcp_tests.support.processes import REPO_ROOT
from llm_mcp_tests.support.servers import tasking
from llm_mcp_tests.support.workers import step, wait_for_answer

pytestmark = [pytest.mark.db, pytest.mark.slow]


@pytest.fixture
def listen_mode(monkeypatch):
    """``TASK_CHECKS = "listen"`` for every process started after it (the worker included)."""
    monkeypatch.setenv("LLM_MCP_TASK_CHECKS", "listen")


@pytest.fixture
def kit(task_kit):
    return task_kit


class Listener:
    """``manage.py mcp_listen ... --tasks`` in its own process; its stderr lines as they come."""

    def __init__(self, env: dict[str, str], url: str):
        environment = {**env, "LLM_MCP_TEST_LISTEN_URL": url, "PYTHONIOENCODING": "utf-8"}
        environment.pop("DJANGO_SETTINGS_MODULE", None)
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "mcp_listen", "llm_mcp_tests.support.listen_targets.ReportsOverHTTP",
             "--tasks", "--rescan", "0.3"], cwd=REPO_ROOT, env=environment, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in iter(self.process.stderr.readline, ""):
            self.lines.append(line.rstrip("\n"))

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, text: str, timeout: float = 30) -> bool:
        return wait_until(lambda: text in self.text, timeout)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


def test_a_paused_chat_is_resumed_by_the_task_listener_without_polling(listen_mode, worker, model, kit, tmp_path):
    """MCP-TASK-13, MCP-LISTEN-19, MCP-TASK-06: the worker's ``ask_chat`` pauses the chat on the
    ``gated`` task and schedules no check; the listener process subscribes to the task and
    enqueues ``check_tasks`` on each change; nothing polls in between (the server sees no
    ``tasks/get`` for a second); when the task completes, the worker's ``check_tasks`` finishes
    the turn and the model gets the task's result. The listener exits 0 on SIGTERM."""
    assert os.environ["LLM_MCP_TASK_CHECKS"] == "listen"
    gate = tmp_path / "gate"
    model.add(tool_call("gated", {"path": str(gate)}), reply("Through the gate."))
    listener = Listener(worker, kit.url)
    try:
        assert listener.wait_for("Watching the tasks paused chats wait on"), listener.text
        chat_id = str(step(worker, "task-chat", kit.url, "Open the gate").json["chat"])
        log = Path(worker["WORKER_LOG"])
        assert wait_until(lambda: "the task listener has it checked" in log.read_text()), log.read_text()[-3000:]
        assert listener.wait_for("listening to 1 paused task(s)"), listener.text
        [row] = step(worker, "tasks", chat_id).json["calls"]
        task_id = row["task_id"]
        assert row["has_task"] and row["task_status"] == "working"
        checks = tasking.server.tasks.checks
        # the listener checks the task once subscribed; its status message changed since the
        # pause ("waiting for the gate"), so it has the chat checked once too: then all is quiet
        assert wait_until(lambda: f"task {task_id} is working (waiting for the gate); checking chat {chat_id}"
                          in listener.text), listener.text
        assert wait_until(lambda: "the task listener has it checked" in log.read_text().split("check_tasks", 1)[-1])
        settled = checks.count(task_id)
        assert settled == 2, checks
        time.sleep(1.0)  # a polling job would have checked again and again by now (pollIntervalMs 20)
        assert checks.count(task_id) == settled
        gate.touch()
        state = wait_for_answer(worker, chat_id)
        assert state["messages"][-1]["content"] == "Through the gate."
        assert model.requests[1].tool_results[0]["content"] == f"passed the gate at {gate}"
        assert f"task {task_id} is completed (gate open); checking chat {chat_id}" in listener.text
        # "gate open" and the completion each enqueue check_tasks: one or two reads (the second run
        # finds nothing paused when the first one already finished the turn), never a poll
        assert settled + 1 <= checks.count(task_id) <= settled + 2
    finally:
        code = listener.stop()
    assert code == 0, listener.text
