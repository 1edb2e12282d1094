"""Chat records paused on server tasks (Tasks extension): the task is saved on its tool call row,
another instance of the row (another process, after a deploy) checks it, a failed check leaves
it in place, and ``llm_mcp.tasks.check_tasks`` checks and schedules itself (marker ``db``)."""

from __future__ import annotations

import time

import pytest
from django.urls import reverse

import llm_mcp
from llm_mcp import tasks
from llm_mcp.models import Chat as ChatRecord, ToolCall as ToolCallRow
from llm_mcp.testing import reply, running_server, tool_call

from llm_mcp_tests.support.records import reload
from llm_mcp_tests.support.relay import Relay
from llm_mcp_tests.support.servers import tasking
from llm_mcp_tests.support.task_agents import OddTaskAgent, TaskAgent

pytestmark = [pytest.mark.db, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def kit():
    with running_server(tasking.server, transport="http", era="modern") as running:
        yield running


@pytest.fixture
def agent_chat(model, monkeypatch):
    """``agent_chat(url, *script)``: a TaskAgent record on the scripted model."""
    monkeypatch.setenv("LLM_MCP_TEST_BASE_URL", model.openai_base_url)

    def make(url, *script):
        model.add(*script)
        return TaskAgent.chat(url=url)
    return make


def settle(record: ChatRecord, model, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while ChatRecord.objects.get(pk=record.pk).waiting:
        assert time.monotonic() < deadline
        time.sleep(0.03)
        reload(record, model).complete()


def test_mcp_task_06_the_task_is_saved_on_its_row_and_another_instance_checks_it(model, kit, agent_chat):
    """MCP-TASK-06: the paused call's row holds the task (id, status, status message, poll
    interval, expiry, server); a fresh instance of the chat row (as another process loads it,
    its servers set up again by its agent) checks the task and finishes the turn."""
    record = agent_chat(kit.url, tool_call("report", {"steps": 2, "delay": 0.1}), reply("done"))
    record.ask("report please")
    row = ToolCallRow.objects.get(message__chat=record)
    [task] = record.pending_tasks
    assert row.task["taskId"] == task.id == row.task_id and row.task_status == "working"
    assert row.task_server == "reports" and row.task_poll_interval == 0.02
    assert row.task_expires_at == task.expires_at and row.task_expires_at is not None
    assert row.waiting and row.result is None
    fresh = reload(record, model)
    assert [t.id for t in fresh.pending_tasks] == [task.id] and fresh.pending_tasks[0].server is not None
    settle(record, model)
    row.refresh_from_db()
    assert row.task is None and row.task_id == "" and row.result.content == "report with 2 steps"
    assert ChatRecord.objects.get(pk=record.pk).messages[-1].content == "done"
    assert model.requests[1].tool_results[0]["content"] == "report with 2 steps"


def test_mcp_task_17_a_check_that_raises_leaves_the_call_and_its_task(model, kit, agent_chat):
    """MCP-TASK-17: while the server is unreachable, ``complete()`` raises and the row keeps the
    paused call and its task; once the server is back, the next ``complete()`` (another
    instance) checks again and the turn finishes."""
    with Relay(kit.port) as relay:
        record = agent_chat(f"http://127.0.0.1:{relay.port}/mcp", tool_call("report", {"steps": 1, "delay": 0.05}),
                            reply("done"))
        record.ask("report please")
        before = ToolCallRow.objects.get(message__chat=record).task
        relay.down()
        with pytest.raises(llm_mcp.ConnectionError):
            reload(record, model).complete()
        row = ToolCallRow.objects.get(message__chat=record)
        assert row.task == before and row.result is None and ChatRecord.objects.get(pk=record.pk).waiting
        relay.up()
        settle(record, model)
        assert ChatRecord.objects.get(pk=record.pk).messages[-1].content == "done"


def test_mcp_task_15_a_question_answered_through_the_row_goes_out_with_tasks_update(model, kit, agent_chat):
    """MCP-TASK-15 (Django): an ``input_required`` task's question is on the row
    (``pending_questions``); answered through another instance of the chat, the next
    ``complete()`` sends it with ``tasks/update`` and the task completes."""
    record = agent_chat(kit.url, tool_call("curious", {}), reply("noted"))
    record.ask("which year?")
    deadline = time.monotonic() + 10
    while not ChatRecord.objects.get(pk=record.pk).pending_questions:
        assert time.monotonic() < deadline
        time.sleep(0.03)
        reload(record, model).complete()
    [question] = ChatRecord.objects.get(pk=record.pk).pending_questions
    question.answer(2001)
    settle(record, model)
    assert model.requests[1].tool_results[0]["content"] == "year 2001"


def test_check_tasks_runs_complete_and_says_what_is_left(model, kit, agent_chat):
    """``check_tasks`` (eager here) checks the tasks once per run: ``"waiting"`` while one is
    left (eager jobs do not schedule), ``"done"`` once the turn finished, and ``"done"`` at once
    for a chat with no task."""
    record = agent_chat(kit.url, tool_call("report", {"steps": 1, "delay": 0.3}), reply("done"))
    record.ask("report please")
    [task] = record.pending_tasks
    checks = tasking.server.tasks.checks
    assert tasks.check_tasks.apply(args=(record.pk,)).get() == "waiting"
    assert checks.count(task.id) == 1
    deadline = time.monotonic() + 10
    while tasks.check_tasks.apply(args=(record.pk,)).get() != "done":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert ChatRecord.objects.get(pk=record.pk).messages[-1].content == "done"
    assert tasks.check_tasks.apply(args=(record.pk,)).get() == "done"


def test_check_tasks_cancels_when_the_chat_was_cancelled(model, kit, agent_chat):
    """MCP-TASK-18 (Django): with the persisted cancel flag set (another process's ``cancel()``),
    the next ``check_tasks`` sends ``tasks/cancel`` and the call gets its one result."""
    record = agent_chat(kit.url, tool_call("report", {"steps": 2, "delay": 5}), reply("unused"))
    record.ask("slow report")
    [task] = record.pending_tasks
    ChatRecord.objects.get(pk=record.pk).cancel()
    assert reload(record, model).pending_tasks == []
    assert tasks.check_tasks.apply(args=(record.pk,)).get() == "cancelled"
    assert tasking.server.tasks.cancels.count(task.id) == 1
    row = ToolCallRow.objects.get(message__chat=record)
    assert row.task is None and row.result.is_error and not ChatRecord.objects.get(pk=record.pk).cancelled


def test_the_chat_page_and_the_admin_show_pending_tasks_with_their_status_message(model, kit, agent_chat,
                                                                                    admin_client):
    """The shipped chat page shows a call paused on a task (its status, status message and
    server; the state says the calls wait for server tasks, not for the user), and so do the
    admin's chat page (pending tasks) and tool call list (task column)."""
    record = agent_chat(kit.url, tool_call("report", {"steps": 2, "delay": 5}), reply("unused"))
    record.ask("slow report")
    deadline = time.monotonic() + 10
    while ToolCallRow.objects.get(message__chat=record).task_status_message != "step 1 of 2":
        assert time.monotonic() < deadline
        time.sleep(0.03)
        reload(record, model).complete()
    page = admin_client.get(reverse("llm_mcp:chat_detail", args=[record.pk])).content.decode()
    assert 'data-state="tasks"' in page and "1 tool call waits for server tasks" in page
    assert "Task working" in page and "step 1 of 2" in page and "reports runs this call as a task" in page
    assert "checked every 0.02 s" in page
    state = admin_client.get(reverse("llm_mcp:chat_state", args=[record.pk])).json()
    assert state["state"] == "tasks" and state["task_calls"] == 1 and state["waiting_calls"] == 0
    change = admin_client.get(f"/admin/llm_mcp/chat/{record.pk}/change/").content.decode()
    assert "report - task working: step 1 of 2 (reports)" in change
    listing = admin_client.get("/admin/llm_mcp/toolcall/").content.decode()
    assert "working: step 1 of 2" in listing
    ChatRecord.objects.get(pk=record.pk).cancel()
    with pytest.raises(llm_mcp.CancelledError):
        reload(record, model).complete()
    page = admin_client.get(reverse("llm_mcp:chat_detail", args=[record.pk])).content.decode()
    assert "Task working" not in page and "The call was cancelled before it finished." in page


def test_a_huge_poll_interval_schedules_the_next_check_a_day_later_at_most():
    """A stored task whose ``pollIntervalMs`` is beyond a float (a hostile or buggy server)
    schedules its next check after one day (`MAX_POLL_INTERVAL`), not an overflowing countdown."""
    from llm_mcp.chat.messages import ToolCall
    from llm_mcp.client.task import MAX_POLL_INTERVAL

    calls = []
    for index, poll in enumerate((10 ** 400, 1e300)):
        call = ToolCall(f"c{index}", "report", {})
        call.task = {"taskId": f"t-{index}", "status": "working", "createdAt": "2026-08-01T10:00:00Z",
                     "pollIntervalMs": poll, "server": "reports"}
        calls.append(call)
        assert tasks.next_check([call]) == MAX_POLL_INTERVAL == 86_400
    assert tasks.next_check(calls) == 86_400


def test_check_tasks_lets_the_model_answer_when_a_task_answer_breaks_the_extension(model, monkeypatch):
    """A ``tasks/get`` answer that breaks the extension (``completed`` without its result) is
    not retried for ever: ``check_tasks`` returns ``"failed"``, the row's call has one error
    result naming the problem, and the model answered in the same run."""
    monkeypatch.setenv("LLM_MCP_TEST_BASE_URL", model.openai_base_url)
    model.add(tool_call("build", {}), reply("the build broke"))
    record = OddTaskAgent.chat(case="no_result")
    record.ask("build it")
    assert [t.id for t in record.pending_tasks] == ["t-1"]
    assert tasks.check_tasks.apply(args=(record.pk,)).get() == "failed"
    row = ToolCallRow.objects.get(message__chat=record)
    assert row.task is None and row.result.is_error and "completed without its result" in row.result.content
    assert ChatRecord.objects.get(pk=record.pk).messages[-1].content == "the build broke"


def test_check_tasks_for_a_deleted_chat_is_done_quietly(model, kit, agent_chat):
    """A scheduled ``check_tasks`` whose chat was deleted meanwhile (the user removed it while
    its task ran) returns ``"done"``: nothing is left to check, and the worker logs no error."""
    record = agent_chat(kit.url, tool_call("report", {"steps": 1, "delay": 5}), reply("unused"))
    record.ask("slow report")
    pk = record.pk
    ChatRecord.objects.filter(pk=pk).delete()
    assert tasks.check_tasks.apply(args=(pk,)).get() == "done"
    assert not ToolCallRow.objects.filter(message__chat_id=pk).exists()
