"""Server tasks across real processes: a chat whose tool the tasking kit server (HTTP, in this
process) runs as a task; the Celery worker's ``ask_chat`` pauses it, its ``check_tasks`` checks
at the poll interval until the task ends, and the scripted model gets the result. Questions
are answered from another process through the Django model; failures, cancellation, expiry
and a server that is down for a while take their paths (issue 20)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from llm_mcp.testing import reply, running_server, tool_call

from llm_mcp_tests.support.relay import Relay
from llm_mcp_tests.support.servers import tasking
from llm_mcp_tests.support.workers import step, wait_for_answer

pytestmark = [pytest.mark.db, pytest.mark.slow]


@pytest.fixture
def kit():
    with running_server(tasking.server, transport="http", era="modern") as running:
        yield running


def wait_for(env, what, check, seconds=30):
    """Run the step ``what`` (a list of arguments) until ``check(json)`` holds; returns the json."""
    deadline = time.monotonic() + seconds
    while True:
        out = step(env, *what).json
        if check(out):
            return out
        assert time.monotonic() < deadline, (out, Path(env["WORKER_LOG"]).read_text()[-3000:])
        time.sleep(0.2)


def test_a_job_pauses_on_a_task_and_check_tasks_polls_until_the_model_gets_its_result(worker, model, kit):
    """MCP-TASK-02, MCP-TASK-04, MCP-TASK-06: ``ask_chat`` pauses on the task; the worker's
    ``check_tasks`` runs again and again at the task's poll interval (one ``tasks/get`` each)
    until the task completes; the model receives the task's result."""
    model.add(tool_call("report", {"steps": 3, "delay": 0.2}), reply("The report is ready."))
    chat_id = str(step(worker, "task-chat", kit.url, "Make the report").json["chat"])
    state = wait_for_answer(worker, chat_id)
    assert [(m["role"], m["content"]) for m in state["messages"]] == [
        ("user", "Make the report"), ("assistant", ""), ("tool", "report with 3 steps"),
        ("assistant", "The report is ready.")]
    assert model.requests[1].tool_results[0]["content"] == "report with 3 steps"
    log = Path(worker["WORKER_LOG"]).read_text()
    assert log.count("llm_mcp.check_tasks") >= 2 and "checking again in 0.0 s" in log
    [row] = step(worker, "tasks", chat_id).json["calls"]
    assert row["has_task"] is False and row["result"] == "report with 3 steps"
    task_id = next(t for t in tasking.server.tasks.checks)  # the kit saw tasks/get for it
    assert task_id


def test_an_input_required_task_is_answered_from_another_process(worker, model, kit):
    """MCP-TASK-15 (across processes): the task's question reaches the chat's rows; another
    process answers it through the Django model; the next ``check_tasks`` sends it with
    ``tasks/update`` and the model gets the result."""
    model.add(tool_call("curious", {}), reply("Noted the year."))
    chat_id = str(step(worker, "task-chat", kit.url, "Ask me the year").json["chat"])
    pending = wait_for(worker, ["pending", chat_id], lambda out: out["questions"])
    assert [q["key"] for q in pending["questions"]] == ["year"]
    assert pending["questions"][0]["params"]["message"] == "Which year?"
    step(worker, "answer-json", chat_id, '{"year": 2001}')
    state = wait_for_answer(worker, chat_id)
    assert state["messages"][-1]["content"] == "Noted the year."
    assert model.requests[1].tool_results[0]["content"] == "year 2001"


def test_a_failed_task_reaches_the_model_as_one_error(worker, model, kit):
    """MCP-TASK-16 (in a job): the check raises ``MCPError``; the job lets the model answer with
    the call's one error result."""
    model.add(tool_call("broken", {}), reply("The archive could not be read."))
    chat_id = str(step(worker, "task-chat", kit.url, "Read the archive").json["chat"])
    state = wait_for_answer(worker, chat_id)
    tool_messages = [m for m in state["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 1 and tool_messages[0]["is_error"]
    assert "the archive is unreadable" in tool_messages[0]["content"]
    assert "a task failed" in Path(worker["WORKER_LOG"]).read_text()


def test_an_expired_task_is_invalid_params_and_the_model_is_told(worker, model, kit):
    """An expired task (``ttlMs`` 1, no poll interval: checked after the 5 s default) answers
    -32602; the call gets one error result and the model answers."""
    model.add(tool_call("fleeting", {}), reply("It expired."))
    chat_id = str(step(worker, "task-chat", kit.url, "Quick one").json["chat"])
    state = wait_for_answer(worker, chat_id, seconds=40)
    [tool_message] = [m for m in state["messages"] if m["role"] == "tool"]
    assert tool_message["is_error"] and "-32602" in tool_message["content"]
    assert state["messages"][-1]["content"] == "It expired."


def test_a_chat_cancelled_from_another_process_sends_tasks_cancel(worker, model, kit):
    """MCP-TASK-18 (across processes): ``cancel()`` in one process sets the flag; the worker's
    next ``check_tasks`` sends ``tasks/cancel`` (the kit server sees it) and settles the call."""
    model.add(tool_call("report", {"steps": 2, "delay": 30}), reply("unused"))
    chat_id = str(step(worker, "task-chat", kit.url, "Slow report").json["chat"])
    [row] = wait_for(worker, ["tasks", chat_id], lambda out: out["calls"] and out["calls"][0]["task_id"])["calls"]
    step(worker, "cancel", chat_id)
    wait_for(worker, ["tasks", chat_id], lambda out: out["calls"][0]["result"] is not None)
    deadline = time.monotonic() + 10
    while row["task_id"] not in tasking.server.tasks.cancels:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    state = step(worker, "dump", chat_id).json
    assert state["calls"][0]["result"] == "The call was cancelled before it finished."
    assert len(model.requests) == 1
    assert "was cancelled" in Path(worker["WORKER_LOG"]).read_text()


def test_a_check_while_the_server_is_down_raises_and_the_next_one_succeeds(worker, model, kit, tmp_path):
    """MCP-TASK-17, MCP-TASK-22 (across processes): while the server is unreachable the
    worker's check raises (logged), the call and its task stay on the row; once it is back, a
    later ``check_tasks`` finishes the turn. The task waits for a gate the test opens once the
    server is back, so it cannot end before the outage, however slow the machine."""
    gate = tmp_path / "gate"
    with Relay(kit.port) as relay:
        model.add(tool_call("gated", {"path": str(gate)}), reply("Done after the outage."))
        chat_id = str(step(worker, "task-chat", f"http://127.0.0.1:{relay.port}/mcp", "Report").json["chat"])
        wait_for(worker, ["tasks", chat_id], lambda out: out["calls"] and out["calls"][0]["task_id"])
        relay.down()
        log = Path(worker["WORKER_LOG"])
        deadline = time.monotonic() + 30
        while "checking its tasks failed" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.1)
        [row] = step(worker, "tasks", chat_id).json["calls"]
        assert row["has_task"] and row["result"] is None
        relay.up()
        gate.touch()
        state = wait_for_answer(worker, chat_id, seconds=40)
        assert state["messages"][-1]["content"] == "Done after the outage."
        assert model.requests[1].tool_results[0]["content"] == f"passed the gate at {gate}"
