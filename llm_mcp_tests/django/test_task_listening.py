"""Chats paused on server tasks, checked by a listener instead of polling: ``TaskWatch`` (what
``manage.py mcp_listen --tasks`` runs) listens to the tasks paused tool call rows wait on and
enqueues ``check_tasks`` for their chat on each change; ``LLM_MCP["TASK_CHECKS"] = "listen"``
keeps ``check_tasks`` from polling; the command refuses servers that cannot report on tasks
(marker ``db``)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import llm_mcp
from llm_mcp import tasks
from llm_mcp.client.server import listener as listener_module
from llm_mcp.models import Chat as ChatRecord
from llm_mcp.models import ToolCall as ToolCallRow
from llm_mcp.task_watch import TaskWatch
from llm_mcp.testing import reply, running_server, tool_call
from llm_mcp_tests.support.listening import wait_until
from llm_mcp_tests.support.processes import REPO_ROOT
from llm_mcp_tests.support.records import reload
from llm_mcp_tests.support.servers import tasking
from llm_mcp_tests.support.task_agents import TaskAgent

pytestmark = [pytest.mark.db, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def kit(task_kit):
    return task_kit


@pytest.fixture
def paused(model, kit, monkeypatch):
    """``paused(tool, arguments, *script)``: a TaskAgent chat record asked once, paused on the
    task the kit made for ``tool``; returns ``(record, task)``."""
    monkeypatch.setenv("LLM_MCP_TEST_BASE_URL", model.openai_base_url)

    def make(tool, arguments, *script):
        model.add(tool_call(tool, arguments), *script)
        record = TaskAgent.chat(url=kit.url)
        record.ask(f"run {tool}")
        [task] = record.pending_tasks
        return record, task
    return make


class Enqueued:
    """Records the chat ids a watch enqueues (thread-safe), instead of a broker."""

    def __init__(self) -> None:
        self.ids: list[object] = []
        self._lock = threading.Lock()

    def __call__(self, chat_id: object) -> None:
        with self._lock:
            self.ids.append(chat_id)


def reports(kit) -> llm_mcp.MCP:
    """The server object a listener builds: the same name the chats use (``reports``)."""
    return llm_mcp.mcp(name="reports", url=kit.url, extensions=["tasks"], timeout=5)


def assert_call_ended_with_an_error(record, answer: str) -> None:
    """The chat's one tool call no longer waits on a task and got an error result; the model's
    ``answer`` followed it."""
    row = ToolCallRow.objects.get(message__chat=record)
    assert row.task is None and row.result.is_error
    assert ChatRecord.objects.get(pk=record.pk).messages[-1].content == answer


def test_mcp_task_13_a_task_change_enqueues_check_tasks_for_its_chat_and_the_model_gets_the_result(
        model, kit, paused, tmp_path: Path, settings):
    """MCP-TASK-13, MCP-LISTEN-19: the watch listens to the task the paused row holds; when the
    task ends, it enqueues the chat (from the listener's thread, using the ORM); ``check_tasks``
    then finishes the turn with the task's result. No ``tasks/get`` polls the task meanwhile:
    one check once subscribed, then one per ``check_tasks`` the watch enqueued."""
    settings.LLM_MCP = {**settings.LLM_MCP, "TASK_CHECKS": "listen"}
    gate = tmp_path / "gate"
    record, task = paused("gated", {"path": str(gate)}, reply("Through the gate."))
    checks = tasking.server.tasks.checks
    enqueued = Enqueued()
    server = reports(kit)
    watch = TaskWatch(server, enqueue=enqueued, rescan=0.2)
    try:
        watch.start()
        assert watch.listened == frozenset({task.id}) and server.listening
        # the status message changed since the pause ("waiting for the gate"): checked once subscribed
        assert wait_until(lambda: record.pk in enqueued.ids)
        enqueued.ids.clear()
        assert tasks.check_tasks.apply(args=(record.pk,)).get() == "listening"
        runs = 1
        time.sleep(0.5)  # nothing polls meanwhile (pollIntervalMs is 20)
        assert enqueued.ids == [] and checks.count(task.id) == 1 + runs
        gate.touch()
        while ChatRecord.objects.get(pk=record.pk).waiting:  # "gate open", then completed: pushed
            assert runs < 4 and wait_until(lambda: record.pk in enqueued.ids)
            enqueued.ids.clear()
            tasks.check_tasks.apply(args=(record.pk,)).get()
            runs += 1
    finally:
        watch.stop()
        server.close()
    assert ChatRecord.objects.get(pk=record.pk).messages[-1].content == "Through the gate."
    assert model.requests[1].tool_results[0]["content"] == f"passed the gate at {gate}"
    assert checks.count(task.id) == 1 + runs  # the check once subscribed, then one per enqueued check


def test_mcp_task_15_an_input_required_task_with_a_listener_gets_its_answer_and_ends(model, kit, paused, settings):
    """MCP-TASK-15, MCP-TASK-13 (listener): the task turns ``input_required``; the watch has the
    chat checked, which puts the question on the row; answered through the model and checked
    once (``check_tasks``), the answer goes out with ``tasks/update``; the server pushes the
    completion and the watch has the chat checked again, which finishes the turn."""
    settings.LLM_MCP = {**settings.LLM_MCP, "TASK_CHECKS": "listen"}
    record, _ = paused("curious", {}, reply("Noted the year."))
    enqueued = Enqueued()
    server = reports(kit)
    watch = TaskWatch(server, enqueue=enqueued, rescan=0.2)
    try:
        watch.start()
        assert wait_until(lambda: record.pk in enqueued.ids)  # input_required (pushed, or seen once subscribed)
        assert tasks.check_tasks.apply(args=(record.pk,)).get() == "listening"
        [question] = ChatRecord.objects.get(pk=record.pk).pending_questions
        assert question.key == "year"
        question.answer(2001)
        enqueued.ids.clear()
        tasks.check_tasks.apply(args=(record.pk,)).get()  # what the code that answered enqueues
        for _ in range(5):  # then only what the watch enqueues: "working" again, "completed"
            if not ChatRecord.objects.get(pk=record.pk).waiting:
                break
            assert wait_until(lambda: record.pk in enqueued.ids)
            enqueued.ids.clear()
            tasks.check_tasks.apply(args=(record.pk,)).get()
    finally:
        watch.stop()
        server.close()
    assert ChatRecord.objects.get(pk=record.pk).messages[-1].content == "Noted the year."
    assert model.requests[1].tool_results[0]["content"] == "year 2001"


def test_a_chat_paused_after_the_watch_started_is_listened_to_at_the_next_read(model, kit, paused, tmp_path):
    """MCP-LISTEN-10 (Django): rows are read again every ``rescan`` seconds; a newly paused
    chat's task joins the subscription, and a finished one leaves it."""
    enqueued = Enqueued()
    server = reports(kit)
    watch = TaskWatch(server, enqueue=enqueued, rescan=0.1)
    gate = tmp_path / "gate"
    try:
        watch.start()
        assert watch.listened == frozenset()
        record, task = paused("gated", {"path": str(gate)}, reply("ok"))
        assert wait_until(lambda: (watch.tick(), watch.listened)[1] == frozenset({task.id}))
        gate.touch()
        assert wait_until(lambda: record.pk in enqueued.ids)
        assert tasks.check_tasks.apply(args=(record.pk,)).get() == "done"
        assert wait_until(lambda: (watch.tick(), watch.listened)[1] == frozenset())
    finally:
        watch.stop()
        server.close()


def test_a_task_the_server_will_not_report_on_has_its_chat_checked_once(model, kit, paused, caplog):
    """MCP-TASK-14 (Django): an expired task (``ttlMs`` 1) is refused by the server; the watch
    logs it and enqueues its chat once (its check ends the call with the error the model
    sees), not at every read."""
    record, task = paused("fleeting", {}, reply("It expired."))
    enqueued = Enqueued()
    server = reports(kit)
    watch = TaskWatch(server, enqueue=enqueued, rescan=0.05)
    try:
        with caplog.at_level(logging.WARNING, logger="llm_mcp.listen"):
            watch.start()
            for _ in range(3):
                watch.tick(force=True)
        assert enqueued.ids == [record.pk]
        assert f"task {task.id}" in caplog.text and "will not report on the paused tasks" in caplog.text
        tasks.check_tasks.apply(args=(record.pk,)).get()
    finally:
        watch.stop()
        server.close()
    assert_call_ended_with_an_error(record, "It expired.")


def test_mcp_task_14_a_task_forgotten_mid_listen_has_its_chat_checked_once_and_the_rest_still_heard(
        model, kit, paused, tmp_path: Path, monkeypatch, settings):
    """MCP-TASK-14, MCP-LISTEN-10 (Django): two chats wait on two tasks the watch listens to; the
    server forgets one (as when its ``ttlMs`` passed) and ends the subscription; subscribing
    again, the listener drops that task (not granted). The watch then enqueues its chat once
    (not at every read; ``TASK_CHECKS = "listen"`` means nothing else would wake it), whose check
    ends the call with an error the model sees; the other task is still listened to, and its
    completion still enqueues its chat."""
    monkeypatch.setattr(listener_module, "FIRST_DELAY", 0.05)
    settings.LLM_MCP = {**settings.LLM_MCP, "TASK_CHECKS": "listen"}
    lost, kept = tmp_path / "lost", tmp_path / "kept"
    forgotten, task_a = paused("gated", {"path": str(lost)})
    waiting, task_b = paused("gated", {"path": str(kept)}, reply("It was forgotten."), reply("Through."))
    enqueued = Enqueued()
    server = reports(kit)
    watch = TaskWatch(server, enqueue=enqueued, rescan=0.05)
    try:
        watch.start()
        assert watch.listened == frozenset({task_a.id, task_b.id})
        assert wait_until(lambda: {forgotten.pk, waiting.pk} <= set(enqueued.ids))  # checked once subscribed
        enqueued.ids.clear()
        assert tasking.server.tasks.forget(task_a.id)
        tasking.server.end_subscriptions()
        assert wait_until(lambda: (watch.tick(), forgotten.pk in enqueued.ids)[1])
        for _ in range(3):
            watch.tick(force=True)
        assert enqueued.ids.count(forgotten.pk) == 1  # (the other is reported too: a reconnect checks all)
        assert watch.listened == frozenset({task_b.id}) and server.listened_tasks == {task_b.id}
        assert tasks.check_tasks.apply(args=(forgotten.pk,)).get() == "failed"  # the model is told
        enqueued.ids.clear()
        kept.touch()
        assert wait_until(lambda: (watch.tick(), waiting.pk in enqueued.ids)[1])  # still heard
        assert forgotten.pk not in enqueued.ids and watch.listened == frozenset({task_b.id})
        assert tasks.check_tasks.apply(args=(waiting.pk,)).get() == "done"
    finally:
        watch.stop()
        server.close()
    assert_call_ended_with_an_error(forgotten, "It was forgotten.")
    assert ChatRecord.objects.get(pk=waiting.pk).messages[-1].content == "Through."


def test_task_checks_listen_keeps_check_tasks_from_polling(model, kit, paused, settings):
    """``LLM_MCP["TASK_CHECKS"] = "listen"``: a ``check_tasks`` run that leaves the task
    unfinished schedules nothing (``"listening"``; no ``task_next_check``): the listener has
    the chat checked. The default ``"poll"`` would say ``"waiting"`` here (eager jobs)."""
    record, _ = paused("report", {"steps": 2, "delay": 5}, reply("unused"))
    settings.LLM_MCP = {**settings.LLM_MCP, "TASK_CHECKS": "listen"}
    assert tasks.check_tasks.apply(args=(record.pk,)).get() == "listening"
    assert ToolCallRow.objects.get(message__chat=record).task_next_check is None
    settings.LLM_MCP = {**settings.LLM_MCP, "TASK_CHECKS": "poll"}
    assert tasks.check_tasks.apply(args=(record.pk,)).get() == "waiting"
    reload(record, model).cancel()


def test_task_checks_is_checked():
    """A ``TASK_CHECKS`` that is neither ``"poll"`` nor ``"listen"`` is refused by name."""
    from django.core.exceptions import ImproperlyConfigured
    from django.test import override_settings

    from llm_mcp import conf

    with override_settings(LLM_MCP={"TASK_CHECKS": "push"}), pytest.raises(ImproperlyConfigured, match="TASK_CHECKS"):
        conf.get("TASK_CHECKS")


# -- the command ---------------------------------------------------------------------------------


def run_listen(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, **(env or {})}
    environment.pop("DJANGO_SETTINGS_MODULE", None)
    return subprocess.run([sys.executable, "manage.py", "mcp_listen", *args], cwd=REPO_ROOT, env=environment,
                          capture_output=True, text=True, timeout=60, check=False)


def test_mcp_listen_tasks_needs_a_class_declaring_the_extension():
    """``--tasks`` with a class that does not declare ``"tasks"``: exit 1, saying what to add."""
    done = run_listen("llm_mcp_tests.support.listen_targets.ChangingOverHTTP", "--tasks",
                      env={"LLM_MCP_TEST_LISTEN_URL": "http://127.0.0.1:9/mcp"})
    assert done.returncode == 1
    assert 'does not declare the Tasks extension; add extensions = ["tasks"]' in done.stderr


@pytest.mark.parametrize("era, words", [("handshake", "older than 2026-07-28"),
                                         ("modern", "does not declare the io.modelcontextprotocol/tasks")])
def test_mcp_task_14_mcp_listen_tasks_refuses_a_server_that_cannot_report_on_tasks(era, words):
    """MCP-TASK-14 (the command): a handshake-era server, or one without the extension: exit 1
    with one line naming why."""
    server = "llm_mcp_tests.support.servers." + ("tasking" if era == "handshake" else "changing")
    with running_server(server, transport="http", era=era) as running:
        done = run_listen("llm_mcp_tests.support.listen_targets.ReportsOverHTTP", "--tasks",
                          env={"LLM_MCP_TEST_LISTEN_URL": running.url})
    assert done.returncode == 1, done.stderr
    assert words in done.stderr and "Traceback" not in done.stderr


def test_mcp_listen_rescan_must_be_positive():
    done = run_listen("llm_mcp_tests.support.listen_targets.ReportsOverHTTP", "--tasks", "--rescan", "0")
    assert done.returncode == 1 and "--rescan must be a number of seconds above 0" in done.stderr
