"""Listening to tasks (``listen(tasks=...)``, Tasks extension "Task Status Notifications"):
``after_change`` gets each ``Task`` as it changes, pushed by the kit's tasking server over
``subscriptions/listen`` (HTTP and stdio, real processes); servers that cannot report on tasks
are refused with a clear ``MCPError``; reconnects check each task again."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest

import llm_mcp
from llm_mcp.client.server import listener as listener_module
from llm_mcp.testing import running_server
from llm_mcp_tests.support.listening import Heard, wait_until
from llm_mcp_tests.support.task_servers import TASKING

CHANGING = "llm_mcp_tests.support.servers.changing"
TASKS = "io.modelcontextprotocol/tasks"


class Refreshes:
    """Counts ``tasks/get`` checks made in this process (``Task.refresh``), by task id."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.ids: list[str] = []
        original = llm_mcp.Task.refresh

        def counting(task: llm_mcp.Task) -> llm_mcp.Task:
            self.ids.append(task.id)
            return original(task)

        monkeypatch.setattr(llm_mcp.Task, "refresh", counting)


def gated_listener(tasking, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``(gate path, Refreshes, Heard, server object)``: a server object of ``tasking`` declaring
    the extension, whose ``after_change`` is the ``Heard``."""
    heard = Heard()
    return (tmp_path / "gate", Refreshes(monkeypatch), heard,
            tasking.mcp(name="tasking", extensions=["tasks"], after_change=heard))


def tasks_heard(heard: Heard) -> list[llm_mcp.Task]:
    return [change for change in heard.changes if isinstance(change, llm_mcp.Task)]


def test_mcp_task_13_each_status_change_reaches_after_change_with_the_result_once_completed(
        tasking, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """MCP-TASK-13, MCP-LISTEN-05, MCP-LISTEN-07, MCP-LISTEN-08: ``listen(tasks=[task])`` returns
    the server object; opening the gate moves the task on, and ``after_change`` gets a ``Task``
    for each change, ``"gate open"`` then ``completed`` with its ``Result``. Only one ``tasks/get``
    is made (the check once subscribed): the changes came as ``notifications/tasks``."""
    gate, refreshes, heard, server = gated_listener(tasking, tmp_path, monkeypatch)
    try:
        task = server.tool("gated").call(path=str(gate))
        assert isinstance(task, llm_mcp.Task) and not task.complete
        assert server.listen(tasks=[task]) is server
        assert wait_until(lambda: refreshes.ids == [task.id])  # the check once subscribed
        gate.touch()
        assert wait_until(lambda: any(t.complete for t in tasks_heard(heard)))
        reported = tasks_heard(heard)
        last = reported[-1]
        assert (last.id, last.status, last.succeeded) == (task.id, "completed", True)
        assert isinstance(last.result, llm_mcp.Result)
        assert last.result.text == f"passed the gate at {gate}"
        assert "gate open" in [t.status_message for t in reported]
        assert all(t.id == task.id and t.server is server for t in reported)
        assert refreshes.ids == [task.id]
        assert task.status == "working"  # the object given is not changed behind the caller's back
    finally:
        server.close()


def test_mcp_task_13_an_input_required_task_is_reported_with_its_questions_and_answered(tasking):
    """MCP-TASK-13: a task that needs input is reported ``input_required`` with its
    ``inputRequests``; answering it (``tasks/update``) brings ``working`` again and then
    ``completed`` with the result built from the answer, all pushed by the server."""
    heard = Heard()
    server = tasking.mcp(name="tasking", extensions=["tasks"], after_change=heard)
    try:
        task = server.tool("curious").call()
        server.listen(tasks=[task])
        assert wait_until(lambda: any(t.status == "input_required" for t in tasks_heard(heard)))
        asking = next(t for t in tasks_heard(heard) if t.status == "input_required")
        assert list(asking.input_requests) == ["year"]
        asking.update({"year": {"action": "accept", "content": {"year": 2026}}})
        assert wait_until(lambda: any(t.complete for t in tasks_heard(heard)))
        statuses = [t.status for t in tasks_heard(heard)]
        assert statuses.index("input_required") < statuses.index("completed")
        assert tasks_heard(heard)[-1].result.text == "year 2026"
    finally:
        server.close()


def test_mcp_task_13_notifications_go_only_to_the_listen_that_named_the_task(tasking_http, tmp_path: Path):
    """MCP-TASK-13 (the kit): ``notifications/tasks`` for a task go only to a subscription that
    named it in ``taskIds``: two listeners, each naming one task; each hears only its own."""
    gate_a, gate_b = tmp_path / "a", tmp_path / "b"
    heard_a, heard_b = Heard(), Heard()
    first = tasking_http.mcp(name="first", extensions=["tasks"], after_change=heard_a)
    second = tasking_http.mcp(name="second", extensions=["tasks"], after_change=heard_b)
    try:
        task_a = first.tool("gated").call(path=str(gate_a))
        task_b = second.tool("gated").call(path=str(gate_b))
        first.listen(tasks=task_a)
        second.listen(tasks=task_b)
        gate_a.touch()
        gate_b.touch()
        assert wait_until(lambda: any(t.complete for t in tasks_heard(heard_a)))
        assert wait_until(lambda: any(t.complete for t in tasks_heard(heard_b)))
        assert {t.id for t in tasks_heard(heard_a)} == {task_a.id}
        assert {t.id for t in tasks_heard(heard_b)} == {task_b.id}
    finally:
        first.close()
        second.close()


def test_mcp_task_13_a_change_made_before_listening_is_reported_once_subscribed(tasking):
    """MCP-TASK-13: a task that completed between its creation and ``listen`` is not lost: the
    check once subscribed reports it, completed with its result."""
    heard = Heard()
    server = tasking.mcp(name="tasking", extensions=["tasks"], after_change=heard)
    try:
        task = server.tool("report").call(steps=1, delay=0.01)
        # a copy checks it (a stdio server object has a process of its own: the same object)
        assert wait_until(lambda: llm_mcp.Task.from_dict(task.to_dict(), server=server).refresh().complete)
        assert task.status == "working"
        server.listen(tasks=[task])
        assert wait_until(lambda: any(t.complete for t in tasks_heard(heard)))
        last = tasks_heard(heard)[-1]
        assert last.status == "completed" and last.result.text == "report with 1 steps"
    finally:
        server.close()


def test_mcp_listen_08_a_task_given_by_id_is_reported_with_its_state_once_subscribed(tasking_http, tmp_path):
    """MCP-LISTEN-08: a task id string is listened to like a ``Task``; as nothing is known of it,
    its current state is reported once subscribed, then each change."""
    gate = tmp_path / "gate"
    heard = Heard()
    server = tasking_http.mcp(name="tasking", extensions=["tasks"], after_change=heard)
    try:
        task = server.tool("gated").call(path=str(gate))
        server.listen(tasks=task.id)
        assert wait_until(lambda: len(tasks_heard(heard)) >= 1)
        assert tasks_heard(heard)[0].status == "working"
        assert tasks_heard(heard)[0].tool_name is None
        gate.touch()
        assert wait_until(lambda: any(t.complete for t in tasks_heard(heard)))
    finally:
        server.close()


def test_mcp_listen_10_listening_again_replaces_the_tasks(tasking_http, tmp_path: Path):
    """MCP-LISTEN-10: ``listen(tasks=[b])`` after ``listen(tasks=[a])`` stops the news of ``a``:
    ``a`` completes unheard, ``b`` is heard."""
    gate_a, gate_b = tmp_path / "a", tmp_path / "b"
    heard = Heard()
    server = tasking_http.mcp(name="tasking", extensions=["tasks"], after_change=heard)
    checker = tasking_http.mcp(name="tasking", extensions=["tasks"])
    try:
        task_a = server.tool("gated").call(path=str(gate_a))
        task_b = server.tool("gated").call(path=str(gate_b))
        server.listen(tasks=[task_a])
        server.listen(tasks=[task_b])  # the first listener's thread has ended when this returns
        assert sorted(server._listener.tasks) == [task_b.id]
        heard.clear()  # what the first subscription reported of ``a`` (its check once subscribed)
        gate_a.touch()
        assert wait_until(lambda: llm_mcp.Task.from_dict(task_a.to_dict(), server=checker).refresh().complete)
        gate_b.touch()
        assert wait_until(lambda: any(t.complete for t in tasks_heard(heard)))
        assert {t.id for t in tasks_heard(heard)} == {task_b.id}
    finally:
        server.close()
        checker.close()


def test_mcp_listen_08_tasks_of_another_server_in_the_list_are_left_to_it(tasking_http, tmp_path: Path):
    """MCP-LISTEN-08: one list (like ``chat.pending_tasks``) may hold tasks of several servers;
    each server object listens to its own only."""
    gate = tmp_path / "gate"
    heard = Heard()
    server = tasking_http.mcp(name="tasking", extensions=["tasks"], after_change=heard)
    other = tasking_http.mcp(name="elsewhere", extensions=["tasks"])
    try:
        mine = server.tool("gated").call(path=str(gate))
        theirs = other.tool("gated").call(path=str(gate))
        server.listen(tasks=[mine, theirs])
        assert list(server._listener.tasks) == [mine.id]
        gate.touch()
        assert wait_until(lambda: any(t.complete for t in tasks_heard(heard)))
        assert {t.id for t in tasks_heard(heard)} == {mine.id}
    finally:
        server.close()
        other.close()


# -- refused ------------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_mcp_task_14_a_server_older_than_2026_07_28_never_reports_on_tasks(transport):
    """MCP-TASK-14: a handshake-era server (the same kit server, on 2025-11-25) cannot report on
    tasks: ``listen(tasks=...)`` raises ``MCPError`` naming the revision and the tasks, and no
    listener is left running."""
    with running_server(TASKING, transport=transport, era="handshake") as running:
        server = running.mcp(name="old", extensions=["tasks"])
        try:
            with pytest.raises(llm_mcp.MCPError, match=r"older than 2026-07-28.*refused: t-1, t-2") as caught:
                server.listen(tasks=["t-1", "t-2"])
            assert caught.value.server == "old"
            assert not server.listening
        finally:
            server.close()


def test_mcp_task_14_a_server_without_the_tasks_extension_is_refused():
    """MCP-TASK-14: a 2026-07-28 server that does not declare io.modelcontextprotocol/tasks in its
    capabilities reports on no task: ``MCPError`` naming the extension."""
    with running_server(CHANGING, transport="http", era="modern") as running:
        server = running.mcp(name="plain", extensions=["tasks"])
        try:
            assert TASKS not in (server.connection.client.capabilities.get("extensions") or {})
            with pytest.raises(llm_mcp.MCPError, match=f"does not declare the {TASKS} extension.*refused: t-9"):
                server.listen(tasks="t-9")
            assert not server.listening
        finally:
            server.close()


def test_mcp_task_14_mcp_listen_13_a_task_the_server_does_not_know_is_refused_by_name(tasking):
    """MCP-TASK-14, MCP-LISTEN-13: the acknowledgement grants only the tasks the server knows; an
    unknown id is refused by name (``MCPError``), a known one with it does not save the call."""
    server = tasking.mcp(name="tasking", extensions=["tasks"])
    try:
        task = server.tool("report").call(steps=2, delay=0.2)
        with pytest.raises(llm_mcp.MCPError, match="will not send updates for: task no-such-task") as caught:
            server.listen(tasks=[task, "no-such-task"])
        assert task.id not in str(caught.value)
        assert not server.listening
    finally:
        server.close()


def test_mcp_task_14_without_declaring_the_extension_the_server_answers_32021(tasking):
    """MCP-TASK-14 (the kit's -32021): a class that does not declare ``"tasks"`` asking for task
    news gets the server's -32021, raised as ``ExtensionRequiredError`` naming the extension."""
    server = tasking.mcp(name="undeclared")
    try:
        with pytest.raises(llm_mcp.ExtensionRequiredError) as caught:
            server.listen(tasks=["t-1"])
        assert caught.value.code == -32021
        assert caught.value.extensions == [TASKS]
        assert not server.listening
    finally:
        server.close()


@pytest.mark.parametrize("tasks, error, words", [
    (42, TypeError, "not int"),
    ([b"t-1"], TypeError, "not bytes"),
    ({"t-1": 1}, TypeError, "not dict"),
    ([""], ValueError, "empty string"),
    (["  "], ValueError, "empty string"),
])
def test_mcp_listen_08_tasks_that_are_neither_tasks_nor_ids_are_refused_before_contacting(tasks, error, words):
    """MCP-LISTEN-08: a ``tasks`` value that is neither a ``Task`` nor a non-empty id string is
    refused before the server is contacted (the URL is unreachable; nothing else is raised)."""
    server = llm_mcp.mcp(url="http://127.0.0.1:9/mcp", extensions=["tasks"])
    with pytest.raises(error, match=words):
        server.listen(tasks=tasks)


# -- reconnecting -------------------------------------------------------------------------------


def test_mcp_listen_17_after_subscribing_again_each_unfinished_task_is_checked_and_reported(
        tasking, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """MCP-LISTEN-17: the server ends every subscription (``hang_up``); the task completes while
    no stream is open; once subscribed again, the listener checks the task (``tasks/get``) and
    reports it completed with its result, and the lists count as changed too."""
    monkeypatch.setattr(listener_module, "FIRST_DELAY", 0.5)
    gate, refreshes, heard, server = gated_listener(tasking, tmp_path, monkeypatch)
    try:
        task = server.tool("gated").call(path=str(gate))
        server.listen(tasks=[task])
        assert wait_until(lambda: refreshes.ids == [task.id])
        heard.clear()
        assert server.call("hang_up").text == "hung up"
        gate.touch()
        assert heard.wait_for("tools")
        assert wait_until(lambda: any(t.complete for t in tasks_heard(heard)))
        assert tasks_heard(heard)[-1].result.text == f"passed the gate at {gate}"
        assert refreshes.ids.count(task.id) >= 2  # checked again after subscribing again
        assert server.listening and 0.5 in server._listener.delays
    finally:
        server.close()


def test_mcp_task_14_an_expired_task_is_refused_by_name(tasking_http):
    """MCP-TASK-14: a task the server has forgotten (``ttlMs`` 1) is not granted: ``MCPError``
    naming it, and no listener runs."""
    server = tasking_http.mcp(name="tasking", extensions=["tasks"])
    try:
        fleeting = server.tool("fleeting").call()
        with pytest.raises(llm_mcp.MCPError, match=f"task {fleeting.id}"):
            server.listen(tasks=[fleeting])  # ttlMs 1: forgotten before the subscription
        assert not server.listening
    finally:
        server.close()


def test_close_ends_a_task_listener_within_seconds(tasking, tmp_path: Path):
    """``close()`` ends the listener thread of a task subscription promptly (the task runs on)."""
    server = tasking.mcp(name="tasking", extensions=["tasks"])
    task = server.tool("gated").call(path=str(tmp_path / "never"))
    server.listen(tasks=[task])
    threads = [t for t in threading.enumerate() if t.name == "mcp-listener-tasking"]
    assert threads and server.listening
    server.close()
    assert wait_until(lambda: not any(t.is_alive() for t in threads), timeout=5)


def tasks_script(frames: list[tuple[str, dict]], task: dict | None = None):
    """A scripted 2026-07-28 server declaring the Tasks extension: every ``subscriptions/listen``
    is answered with ``frames`` (method, params), then its end; ``tasks/get`` with ``task``."""
    from llm_mcp_tests.support.scripted import DISCOVER, result, sse

    def script(request):
        if request["method"] == "server/discover":
            return result(request, {**DISCOVER, "capabilities": {"tools": {}, "extensions": {TASKS: {}}}})
        if request["method"] == "tasks/get":
            return result(request, task)
        return sse(request, frames, {"resultType": "complete"})
    return script


def test_a_malformed_task_notification_is_logged_and_ignored(scripted, monkeypatch, caplog):
    """A ``notifications/tasks`` the client cannot read (an unknown status with control
    characters) is logged on one line and ignored, news of a task not listened to is ignored,
    and the good news after them arrives (a scripted 2026-07-28 server over real HTTP)."""
    monkeypatch.setattr(listener_module, "FIRST_DELAY", 30.0)
    base = {"createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:01Z", "ttlMs": None}

    script = tasks_script([
        ("notifications/subscriptions/acknowledged", {"notifications": {"taskIds": ["t-1"]}}),
        ("notifications/tasks", {"taskId": "t-1", "status": "exploded\x1b[2J", **base}),
        ("notifications/tasks", {"taskId": "t-2", "status": "completed", **base, "result": {"content": []}}),
        ("notifications/tasks", {"taskId": "t-1", "status": "completed", **base,
                                 "result": {"content": [{"type": "text", "text": "done"}]}}),
    ], {"resultType": "complete", "taskId": "t-1", "status": "working", **base})

    heard = Heard()
    server = llm_mcp.mcp(url=scripted(script).url, name="scripted", extensions=["tasks"], after_change=heard)
    try:
        with caplog.at_level(logging.WARNING, logger="llm_mcp.listen"):
            server.listen(tasks=["t-1"])
            assert wait_until(lambda: any(t.complete for t in tasks_heard(heard)))
        assert [(t.id, t.status) for t in tasks_heard(heard)] == [("t-1", "working"), ("t-1", "completed")]
        assert tasks_heard(heard)[-1].result.text == "done"
        assert "malformed task notification" in caplog.text and "\x1b" not in caplog.text
    finally:
        server.close()


def test_a_completion_notified_without_its_result_is_read_with_tasks_get(scripted, monkeypatch):
    """A server that says ``completed`` without the ``result`` (the spec wants the whole task):
    the client checks the task with ``tasks/get`` instead, and reports it completed with the
    result from there. (The check once subscribed still saw it working.)"""
    from llm_mcp_tests.support.scripted import result

    monkeypatch.setattr(listener_module, "FIRST_DELAY", 30.0)
    base = {"createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:01Z", "ttlMs": None}
    working = {"resultType": "complete", "taskId": "t-1", "status": "working", **base}
    finished = {**working, "status": "completed", "result": {"content": [{"type": "text", "text": "from tasks/get"}]}}
    gets: list[str] = []
    listen = tasks_script([
        ("notifications/subscriptions/acknowledged", {"notifications": {"taskIds": ["t-1"]}}),
        ("notifications/tasks", {"taskId": "t-1", "status": "completed", **base}),
    ])

    def script(request):
        if request["method"] != "tasks/get":
            return listen(request)
        gets.append(request["params"]["taskId"])
        return result(request, working if len(gets) == 1 else finished)

    heard = Heard()
    server = llm_mcp.mcp(url=scripted(script).url, name="scripted", extensions=["tasks"], after_change=heard)
    try:
        server.listen(tasks=[llm_mcp.Task(working, server=server)])
        assert wait_until(lambda: any(t.complete for t in tasks_heard(heard)))
        assert [t.status for t in tasks_heard(heard)] == ["completed"]
        assert tasks_heard(heard)[-1].result.text == "from tasks/get"
        assert gets == ["t-1", "t-1"]
    finally:
        server.close()
def test_a_task_id_cannot_forge_lines_in_errors_or_logs(scripted, caplog):
    """Task ids come from servers: one with a newline and an escape sequence, refused by the
    acknowledgement, is named on one line with its control characters escaped."""
    forged = "t-1\n2026-12-02 ERROR forged\x1b[2J"

    script = tasks_script([("notifications/subscriptions/acknowledged", {"notifications": {"taskIds": []}})])

    server = llm_mcp.mcp(url=scripted(script).url, name="scripted", extensions=["tasks"])
    try:
        with caplog.at_level(logging.DEBUG, logger="llm_mcp.listen"), pytest.raises(llm_mcp.MCPError) as caught:
            server.listen(tasks=[forged])
        message = str(caught.value)
        assert "\n" not in message and "\x1b" not in message and "t-1\\n2026-12-02 ERROR forged\\x1b" in message
        assert "\x1b" not in caplog.text and "\nforged" not in caplog.text
    finally:
        server.close()


def test_a_tasks_get_answer_that_breaks_the_extension_stops_listening_to_the_task(scripted, monkeypatch, caplog):
    """A task whose ``tasks/get`` names another task (``TaskProtocolError``) is logged and no
    longer listened to, as an unknown task is; it is not taken for a dropped connection (which
    would subscribe again and ask again, for ever)."""
    from llm_mcp_tests.support.scripted import result

    monkeypatch.setattr(listener_module, "FIRST_DELAY", 0.05)
    base = {"createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:01Z", "ttlMs": None}
    working = {"resultType": "complete", "taskId": "t-1", "status": "working", **base}
    listen = tasks_script([("notifications/subscriptions/acknowledged", {"notifications": {"taskIds": ["t-1"]}})])
    methods: list[str] = []

    def script(request):
        methods.append(request["method"])
        if request["method"] == "tasks/get":
            return result(request, {**working, "taskId": "t-9"})
        return listen(request)

    server = llm_mcp.mcp(url=scripted(script).url, name="scripted", extensions=["tasks"], after_change=Heard())
    caplog.set_level(logging.WARNING, logger="llm_mcp")
    try:
        server.listen(tasks=[llm_mcp.Task(working, server=server)])
        assert wait_until(lambda: "could not be checked" in caplog.text)
        assert "with task 't-9'" in caplog.text and "no longer listened to" in caplog.text
        assert methods.count("tasks/get") == 1
    finally:
        server.close()
