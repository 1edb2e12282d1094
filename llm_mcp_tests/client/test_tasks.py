"""Tasks (``io.modelcontextprotocol/tasks``) outside a chat: declaring the extension, the
``Task`` a ``tools/call`` may become, checking, waiting, cancelling and storing it, against the
kit's tasking server over HTTP and stdio, and servers that never make tasks."""

from __future__ import annotations

import pickle
import time
from datetime import datetime, timedelta, timezone

import pytest

import llm_mcp
from llm_mcp.client.param_headers import method_headers
from llm_mcp.testing import running_server
from llm_mcp_tests.support.task_servers import TASKING

TASKS = "io.modelcontextprotocol/tasks"


def test_mcp_task_01_tasks_declares_the_extension_and_sends_the_task_id_as_mcp_name(tasking):
    """MCP-TASK-01: ``extensions = ["tasks"]`` declares io.modelcontextprotocol/tasks with ``{}``;
    the kit server then answers with a task (it never does to a client that did not declare it),
    and the tasks methods name the task in ``Mcp-Name`` (the kit refuses a mismatch over HTTP, so
    the refresh below passing over HTTP shows the header was right)."""
    class Reports(llm_mcp.MCP):
        url = "http://127.0.0.1:9/mcp"
        extensions = ["tasks"]

    assert Reports().declared_capabilities("modern")["extensions"] == {TASKS: {}}
    server = tasking.mcp(name="reports", extensions=["tasks"])
    task = server.tool("report").call(steps=1, delay=0.01)
    assert isinstance(task, llm_mcp.Task)
    assert task.refresh() is task
    plain = tasking.mcp(name="plain")
    assert isinstance(plain.tool("report").call(steps=1, delay=0.01), llm_mcp.Result)
    assert method_headers({"method": "tasks/get", "params": {"taskId": "t-1"}}) == {
        "Mcp-Method": "tasks/get", "Mcp-Name": "t-1"}
    assert method_headers({"method": "tasks/cancel", "params": {"taskId": "t-2"}})["Mcp-Name"] == "t-2"


def test_mcp_tool_10_tool_call_returns_the_task_at_once(tasking):
    """MCP-TOOL-10 (outside a chat): ``tool.call()`` returns the ``llm_mcp.Task`` without waiting:
    the report takes 3 x 0.2 s, and the task comes back still working."""
    server = tasking.mcp(name="reports", extensions=["tasks"])
    task = server.tool("report").call(steps=3, delay=0.2)
    assert isinstance(task, llm_mcp.Task)
    assert task.status == "working" and not task.complete and task.result is None
    assert task.tool_name == "report" and task.server_name == "reports"
    task.cancel()


def test_mcp_task_03_08_09_10_refresh_reads_status_message_and_result(tasking):
    """MCP-TASK-08, MCP-TASK-09, MCP-TASK-10 (and the Task fields of MCP-TASK-03): ``refresh()`` is one ``tasks/get``;
    ``status_message`` follows the tool's steps, ``poll_interval`` is pollIntervalMs / 1000, the
    predicates are booleans, and ``result`` is a ``Result`` only once completed."""
    server = tasking.mcp(name="reports", extensions=["tasks"])
    task = server.tool("report").call(steps=2, delay=0.3)
    assert task.poll_interval == 20 / 1000
    assert (task.complete, task.succeeded, task.failed, task.cancelled) == (False, False, False, False)
    deadline = time.monotonic() + 10
    while task.status_message is None and time.monotonic() < deadline:
        task.refresh()
    assert task.status == "working" and task.status_message in ("step 1 of 2", "step 2 of 2")
    assert task.result is None
    task.wait()
    assert (task.complete, task.succeeded, task.failed, task.cancelled) == (True, True, False, False)
    assert isinstance(task.result, llm_mcp.Result) and task.result.text == "report with 2 steps"
    assert task.status_message == "step 2 of 2"


def test_mcp_task_11_expires_at_is_created_at_plus_ttl(tasking_http):
    """MCP-TASK-11: ``created_at``/``expires_at`` are aware UTC datetimes, ``expires_at`` is
    createdAt + ttlMs (the kit's report keeps tasks 60 s), ``None`` for a null ttlMs."""
    server = tasking_http.mcp(name="reports", extensions=["tasks"])
    before = datetime.now(timezone.utc)
    task = server.tool("report").call(steps=1, delay=0.01)
    after = datetime.now(timezone.utc)
    assert task.created_at.tzinfo is not None and task.created_at.utcoffset() == timedelta(0)
    assert before - timedelta(seconds=1) <= task.created_at <= after + timedelta(seconds=1)
    assert task.expires_at == task.created_at + timedelta(milliseconds=60_000)
    forever = llm_mcp.Task({"taskId": "x", "status": "working", "createdAt": "2026-08-01T10:00:00Z",
                            "lastUpdatedAt": "2026-08-01T10:00:00Z", "ttlMs": None}, server_name="s")
    assert forever.expires_at is None and forever.poll_interval is None
    assert forever.created_at == datetime(2026, 8, 1, 10, 0, tzinfo=timezone.utc)


def test_mcp_task_20_server_call_and_tool_method_wait_for_the_result(tasking):
    """MCP-TASK-20: ``server.call`` and the tool as a method poll the task and return its
    ``Result``."""
    server = tasking.mcp(name="reports", extensions=["tasks"])
    assert server.call("report", steps=2, delay=0.05).text == "report with 2 steps"
    assert server.only_as_task().text == "ran as a task"


def test_mcp_task_20_waiting_stops_at_the_servers_timeout(tasking_http):
    """MCP-TASK-20: waiting lasts at most the server's ``timeout``: a task still running after it
    raises ServerTimeoutError (HTTP only: a stdio start under load may take longer than 3 s)."""
    hurried = tasking_http.mcp(name="hurried", extensions=["tasks"], timeout=3)
    hurried.tools  # reached and listed within the timeout
    started = time.monotonic()
    with pytest.raises(llm_mcp.ServerTimeoutError, match="still working"):
        hurried.call("report", steps=60, delay=0.2)  # 12 s of work
    assert time.monotonic() - started < 11


def test_mcp_task_21_wait_returns_the_task(tasking):
    """MCP-TASK-21: ``task.wait()`` polls until the task ends and returns the task itself, so
    ``task.wait().result`` works; ``wait(timeout=...)`` gives up with ServerTimeoutError."""
    server = tasking.mcp(name="reports", extensions=["tasks"])
    task = server.tool("report").call(steps=3, delay=0.05)
    assert task.wait() is task
    assert task.wait().result.text == "report with 3 steps"
    slow = server.tool("report").call(steps=30, delay=0.2)
    with pytest.raises(llm_mcp.ServerTimeoutError):
        slow.wait(timeout=0.3)
    slow.cancel()


def test_mcp_task_19_cancel_sends_tasks_cancel_and_the_task_may_still_complete(tasking):
    """MCP-TASK-19: ``task.cancel()`` sends ``tasks/cancel`` at once: the kit's report stops and
    ends ``cancelled``; the stubborn tool ignores it and ends ``completed`` with its result."""
    server = tasking.mcp(name="reports", extensions=["tasks"])
    task = server.tool("report").call(steps=100, delay=0.1)
    assert task.cancel() is task
    assert task.wait().cancelled and task.result is None
    with pytest.raises(llm_mcp.CancelledError):
        task.outcome()
    stubborn = server.tool("stubborn").call(delay=0.3)
    stubborn.cancel()
    assert stubborn.wait().succeeded and stubborn.result.text == "finished anyway"


def test_failed_task_raises_mcperror_with_the_servers_error(tasking):
    """A task that fails: ``failed`` is true, ``error`` is the JSON-RPC error, and ``server.call``
    raises MCPError with its code and message (never a Result)."""
    server = tasking.mcp(name="reports", extensions=["tasks"])
    task = server.tool("broken").call().wait()
    assert task.failed and task.result is None
    assert task.error == {"code": -32603, "message": "the archive is unreadable"}
    with pytest.raises(llm_mcp.MCPError, match="the archive is unreadable") as caught:
        server.call("broken")
    assert caught.value.code == -32603


def test_undeclared_extension_is_a_clear_error(tasking):
    """A tool that only runs as a task, called without ``"tasks"``: the server's -32021 becomes an
    ``ExtensionRequiredError`` naming the extension; ``tasks/get`` without it is refused the same way."""
    plain = tasking.mcp(name="plain")
    with pytest.raises(llm_mcp.ExtensionRequiredError, match=TASKS) as caught:
        plain.call("only_as_task")
    assert caught.value.code == -32021 and caught.value.extensions == [TASKS]
    assert "extensions" in str(caught.value)
    task = tasking.mcp(name="reports", extensions=["tasks"]).tool("report").call(steps=1, delay=0.01)
    stranger = llm_mcp.Task.from_dict(task.to_dict(), server=plain)
    with pytest.raises(llm_mcp.ExtensionRequiredError):
        stranger.refresh()


def test_unknown_or_expired_task_is_invalid_params(tasking):
    """An expired task (the kit's fleeting tool keeps it 1 ms) is -32602 on ``refresh``."""
    server = tasking.mcp(name="reports", extensions=["tasks"])
    task = server.tool("fleeting").call()
    assert task.poll_interval is None and task.expires_at == task.created_at + timedelta(milliseconds=1)
    time.sleep(0.05)
    with pytest.raises(llm_mcp.MCPError) as caught:
        task.refresh()
    assert caught.value.code == -32602


def test_task_pickles_and_rebuilds_from_stored_data(tasking):
    """A task pickles without its server (checking it then says what is missing) and is rebuilt
    from ``to_dict()`` with a server; both go on to the same result."""
    server = tasking.mcp(name="reports", extensions=["tasks"])
    task = server.tool("report").call(steps=2, delay=0.05)
    copy = pickle.loads(pickle.dumps(task))
    assert (copy.id, copy.status, copy.server_name, copy.tool_name) == (task.id, "working", "reports", "report")
    assert copy.created_at == task.created_at and copy.server is None
    with pytest.raises(llm_mcp.ConfigurationError, match="no server"):
        copy.refresh()
    copy.server = server
    assert copy.wait().result.text == "report with 2 steps"
    rebuilt = llm_mcp.Task.from_dict(task.to_dict(), server=server)
    assert rebuilt.wait().result.text == "report with 2 steps"


def test_mcp_task_22_checking_while_the_server_is_down_raises():
    """MCP-TASK-22: a check while the server is down raises ConnectionError every time: it is
    neither a tool error nor skipped by the outage backoff (the second check contacts again)."""
    with running_server(TASKING, transport="http", era="modern") as running:
        server = running.mcp(name="reports", extensions=["tasks"], timeout=2)
        task = server.tool("report").call(steps=50, delay=0.2)
    for _ in range(2):
        with pytest.raises(llm_mcp.ConnectionError):
            task.refresh()
    assert task.status == "working"


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_older_server_never_makes_tasks(transport):
    """Against a server on an older revision (the handshake), ``"tasks"`` declared changes
    nothing: calls answer Results as before, and a task-only tool is not offered as a task."""
    with running_server(TASKING, transport=transport, era="handshake") as running:
        server = running.mcp(name="old", extensions=["tasks"])
        result = server.tool("report").call(steps=1, delay=0.01)
        assert isinstance(result, llm_mcp.Result) and result.text == "report with 1 steps"
        assert server.call("report", steps=2, delay=0.01).text == "report with 2 steps"
        assert server.protocol_version != "2026-07-28"


@pytest.mark.parametrize(("change", "words"), [
    ({"taskId": ""}, "without a taskId"),
    ({"status": "sleeping"}, "unknown status 'sleeping'"),
    ({"ttlMs": -1}, "invalid ttlMs"),
    ({"pollIntervalMs": "fast"}, "invalid pollIntervalMs"),
    ({"createdAt": "yesterday\x1b[2J"}, "malformed createdAt"),
    ({"createdAt": None}, "without a valid createdAt"),
    ({"ttlMs": float("nan")}, "invalid ttlMs"),
    ({"pollIntervalMs": float("nan")}, "invalid pollIntervalMs"),
    ({"pollIntervalMs": float("inf")}, "invalid pollIntervalMs"),
    ({"createdAt": "0001-01-01T00:00:00+01:00"}, "createdAt out of range"),
    ({"lastUpdatedAt": "9999-12-31T23:59:59-05:00"}, "lastUpdatedAt out of range"),
    ({"status": "completed", "result": "not an object"}, "completed without its result"),
    ({"status": "input_required", "inputRequests": ["year"]}, "input_required without its inputRequests"),
])
def test_a_malformed_task_is_refused_with_a_clear_error(change, words):
    """What a server sends as a task is checked: each malformed field is named in an MCPError
    (control characters from the server are not echoed)."""
    data = {"taskId": "t-1", "status": "working", "createdAt": "2026-08-01T10:00:00Z",
            "lastUpdatedAt": "2026-08-01T10:00:00Z", "ttlMs": 1000, **change}
    with pytest.raises(llm_mcp.MCPError, match=words) as caught:
        llm_mcp.Task(data, server_name="odd")
    assert "\x1b" not in str(caught.value) and "'odd'" in str(caught.value)


def test_a_huge_poll_interval_is_capped():
    """``pollIntervalMs`` is any JSON number: one beyond a float (or of years) is read as
    `MAX_POLL_INTERVAL` seconds (one day), so waiting does not overflow; a ``ttlMs`` beyond the
    calendar means no expiry."""
    from llm_mcp.client.task import MAX_POLL_INTERVAL

    assert MAX_POLL_INTERVAL == 24 * 3600
    for huge in (10 ** 400, 1e300, 86_400_001):
        task = llm_mcp.Task({"taskId": "t-1", "status": "working", "createdAt": "2026-08-01T10:00:00Z",
                             "pollIntervalMs": huge, "ttlMs": 10 ** 400}, server_name="odd")
        assert task.poll_interval == MAX_POLL_INTERVAL and task.expires_at is None
    small = llm_mcp.Task({"taskId": "t-2", "status": "working", "createdAt": "2026-08-01T10:00:00Z",
                          "pollIntervalMs": 250}, server_name="odd")
    assert small.poll_interval == 0.25
