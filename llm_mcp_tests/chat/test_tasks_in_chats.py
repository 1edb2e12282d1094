"""A chat whose tool calls the server runs as tasks (Tasks extension): the turn pauses,
``complete()`` checks each task once, questions of ``input_required`` tasks reach
``pending_questions``, failures raise, and ``cancel()`` cancels the paused tasks."""

from __future__ import annotations

import time

import pytest

import llm_mcp
from llm_mcp.chat import ChatTool
from llm_mcp.testing import reply, running_server, tool_call
from llm_mcp.testing.scripted_model import turn
from llm_mcp_tests.support.chats import make_chat
from llm_mcp_tests.support.processes import odd_tasks_command
from llm_mcp_tests.support.relay import Relay
from llm_mcp_tests.support.servers import tasking

TASKING = "llm_mcp_tests.support.servers.tasking"


def settle(chat: llm_mcp.Chat, *, seconds: float = 10) -> int:
    """``complete()`` until the chat stops waiting (the test's own pause between checks);
    returns how many ``complete()`` calls it took."""
    deadline, calls = time.monotonic() + seconds, 0
    while chat.waiting:
        assert time.monotonic() < deadline, chat.pending_tasks
        time.sleep(0.03)
        chat.complete()
        calls += 1
    return calls


@pytest.fixture
def kit():
    """The tasking kit server, in this process over HTTP (its task store readable)."""
    with running_server(tasking.server, transport="http", era="modern") as running:
        yield running


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_mcp_task_02_03_05_a_task_pauses_the_turn_and_the_model_gets_its_result(model, transport):
    """MCP-TASK-02, MCP-TASK-03, MCP-TASK-05, MCP-TOOL-10 (in a chat): ``ask()`` returns as soon as the
    server answers with a task; the chat waits; ``pending_tasks`` lists ``llm_mcp.Task`` objects
    (poll interval in seconds); ``complete()`` returns still waiting until the task ends, then the
    model gets the task's result."""
    with running_server(TASKING, transport=transport, era="modern") as running:
        chat = make_chat(model, [tool_call("report", {"steps": 3, "delay": 0.1}), reply("done")])
        chat.with_mcp(running.mcp(name="reports", extensions=["tasks"]))
        paused = chat.ask("make the report")
        assert paused.tool_calls[0].name == "report" and chat.waiting
        assert len(model.requests) == 1
        [task] = chat.pending_tasks
        assert isinstance(task, llm_mcp.Task) and task.status == "working" and task.poll_interval == 0.02
        assert task.server is chat.mcp["reports"]
        chat.complete()
        assert chat.waiting and len(model.requests) == 1  # not done after one check
        settle(chat)
        assert chat.messages[-1].content == "done" and chat.pending_tasks == []
        results = model.requests[1].tool_results
        assert [r["content"] for r in results] == ["report with 3 steps"]


def test_mcp_task_04_complete_checks_each_task_once_and_never_sleeps(model, kit):
    """MCP-TASK-04: the turn that receives a task does not check it; each ``complete()`` sends
    exactly one ``tasks/get`` per paused task (two tasks here) and returns without sleeping."""
    chat = make_chat(model, [turn(tool_calls=[tool_call("report", {"steps": 1, "delay": 5}, id="c1"),
                                              tool_call("report", {"steps": 2, "delay": 5}, id="c2")])])
    chat.with_mcp(kit.mcp(name="reports", extensions=["tasks"]))
    chat.ask("two reports")
    ids = [t.id for t in chat.pending_tasks]
    assert len(ids) == 2
    checks = tasking.server.tasks.checks
    assert [c for c in checks if c in ids] == []  # the receiving turn checked nothing
    started = time.monotonic()
    chat.complete()
    elapsed = time.monotonic() - started
    assert sorted(c for c in checks if c in ids) == sorted(ids)
    assert elapsed < 2  # the tasks take 5 s: complete() returned without waiting for them
    chat.complete()
    assert sorted(c for c in checks if c in ids) == sorted(ids * 2)
    chat.cancel()
    with pytest.raises(llm_mcp.CancelledError):
        chat.complete()


def test_mcp_task_12_each_check_reports_the_status_message(model):
    """MCP-TASK-12: every check gives the task's status message to the server's
    ``after_progress`` and to the chat's ``after_tool_progress``."""
    heard, told = [], []
    with running_server(TASKING, transport="http", era="modern") as running:
        server = running.mcp(name="reports", extensions=["tasks"],
                             after_progress=lambda progress: heard.append(progress.message))
        chat = make_chat(model, [tool_call("report", {"steps": 2, "delay": 0.15}), reply("ok")])
        chat.with_mcp(server).after_tool_progress(lambda call, progress: told.append((call.name, progress.message)))
        chat.ask("report")
        assert heard == [] and told == []
        checks = settle(chat)
        assert len(heard) == checks  # one report per check
        assert len(told) == len(heard) and all(name == "report" for name, _ in told)
        assert set(heard) <= {"step 1 of 2", "step 2 of 2"} and heard[0] in ("step 1 of 2", "step 2 of 2")
        assert [m for _, m in told] == heard


def test_mcp_task_15_input_required_questions_reach_pending_questions_once(model, kit):
    """MCP-TASK-15: an ``input_required`` task's question appears in ``pending_questions``
    (once, however often it is checked); once answered, ``complete()`` sends it with
    ``tasks/update`` and the task goes on to its result."""
    chat = make_chat(model, [tool_call("curious", {}), reply("thanks")])
    chat.with_mcp(kit.mcp(name="reports", extensions=["tasks"]))
    chat.ask("ask me")
    deadline = time.monotonic() + 10
    while not chat.pending_questions:
        assert time.monotonic() < deadline
        time.sleep(0.03)
        chat.complete()
    chat.complete()
    chat.complete()  # checked again while input_required: the same question, not a second one
    [question] = chat.pending_questions
    assert question.key == "year" and question.message == "Which year?" and question.server == "reports"
    assert chat.pending_tasks[0].status == "input_required" and chat.waiting
    [task_id] = [t.id for t in chat.pending_tasks]
    question.answer(1984)
    settle(chat)
    kit_task = tasking.server.tasks.get(task_id)
    assert kit_task.updates == [{"year": {"action": "accept", "content": {"year": 1984}}}]
    assert [r["content"] for r in model.requests[1].tool_results] == ["year 1984"]
    assert chat.messages[-1].content == "thanks"


def test_mcp_task_16_a_failed_task_raises_and_the_call_gets_one_result(model, kit):
    """MCP-TASK-16: ``complete()`` raises ``llm_mcp.MCPError`` naming the server's error when a
    task failed; the call has exactly one tool result (an error), and the next ``complete()``
    lets the model answer."""
    chat = make_chat(model, [tool_call("broken", {}), reply("sorry")])
    chat.with_mcp(kit.mcp(name="reports", extensions=["tasks"]))
    chat.ask("read the archive")
    # The task fails in the server's thread: wait for that (a fixed pause lost the race under load).
    assert tasking.server.tasks.get(chat.pending_tasks[0].id).done.wait(10)
    with pytest.raises(llm_mcp.MCPError, match="the archive is unreadable") as raised:
        chat.complete()
    assert raised.value.code == -32603 and not isinstance(raised.value, llm_mcp.CancelledError)
    tool_messages = [m for m in chat.messages if m.role == "tool"]
    assert len(tool_messages) == 1 and tool_messages[0].is_error
    assert "the archive is unreadable" in tool_messages[0].content
    assert not chat.waiting
    assert chat.complete().content == "sorry"


def test_an_expired_task_raises_invalid_params_and_the_call_gets_one_result(model, kit):
    """An expired task (``ttlMs`` 1: the server forgets it) answers ``tasks/get`` with -32602:
    ``complete()`` raises ``MCPError`` with that code, and the call has one error result."""
    chat = make_chat(model, [tool_call("fleeting", {}), reply("gone")])
    chat.with_mcp(kit.mcp(name="reports", extensions=["tasks"]))
    chat.ask("quick")
    time.sleep(0.05)
    with pytest.raises(llm_mcp.MCPError) as raised:
        chat.complete()
    assert raised.value.code == -32602
    assert [m.is_error for m in chat.messages if m.role == "tool"] == [True]
    assert chat.complete().content == "gone"


def test_a_task_asking_too_many_questions_is_stopped_and_cancelled(model, kit):
    """A task that asks more questions at once than a client takes (``MAX_INPUT_REQUESTS``) does
    not fill the chat: ``complete()`` raises ``MCPError``, the task is cancelled, and the call
    has one error result; ``pending_questions`` stays empty."""
    chat = make_chat(model, [tool_call("nosy", {}), reply("too many")])
    chat.with_mcp(kit.mcp(name="reports", extensions=["tasks"]))
    chat.ask("ask away")
    [task] = chat.pending_tasks
    deadline = time.monotonic() + 10
    with pytest.raises(llm_mcp.MCPError, match="101 questions"):
        while True:
            assert time.monotonic() < deadline
            time.sleep(0.03)
            chat.complete()
    assert chat.pending_questions == [] and not chat.waiting
    assert tasking.server.tasks.cancels.count(task.id) == 1
    assert [m.is_error for m in chat.messages if m.role == "tool"] == [True]


@pytest.mark.parametrize("how", ["cancel", "flag"])
def test_mcp_task_18_cancel_drops_tasks_and_next_complete_sends_tasks_cancel(model, kit, how):
    """MCP-TASK-18: ``chat.cancel()`` (or the store's cancel flag alone, as another process sets
    it) empties ``pending_tasks`` at once; the next ``complete()`` sends ``tasks/cancel`` for the
    task, gives the call its one result, and raises ``llm_mcp.CancelledError``."""
    chat = make_chat(model, [tool_call("report", {"steps": 2, "delay": 5}), reply("after")])
    chat.with_mcp(kit.mcp(name="reports", extensions=["tasks"]))
    chat.ask("slow report")
    [task] = chat.pending_tasks
    chat.cancel() if how == "cancel" else chat.store.set_cancelled(True)
    assert chat.pending_tasks == []
    assert task.id not in tasking.server.tasks.cancels
    with pytest.raises(llm_mcp.CancelledError):
        chat.complete()
    assert tasking.server.tasks.cancels.count(task.id) == 1
    assert [(m.content, m.is_error) for m in chat.messages if m.role == "tool"] == [
        ("The call was cancelled before it finished.", True)]
    assert not chat.waiting and not chat.store.cancelled
    assert tasking.server.tasks.get(task.id).done.wait(5) and tasking.server.tasks.get(task.id).status == "cancelled"
    assert chat.complete().content == "after"


def test_mcp_task_22_a_check_while_the_server_is_down_raises_and_the_call_stays(model):
    """MCP-TASK-22 (in a chat): a check while the task's server is down raises a
    ``ConnectionError`` (not a tool error, not skipped by the outage backoff); the call and its
    task stay paused, and ``complete()`` once the server is back goes on to the result."""
    with running_server(TASKING, transport="http", era="modern") as running, Relay(running.port) as relay:
        server = llm_mcp.mcp(url=f"http://127.0.0.1:{relay.port}/mcp", name="reports", extensions=["tasks"],
                             timeout=3)
        chat = make_chat(model, [tool_call("report", {"steps": 1, "delay": 0.05}), reply("done")])
        chat.with_mcp(server)
        chat.ask("report")
        [task] = chat.pending_tasks
        stored = chat.messages[-1].tool_calls[0].task
        relay.down()
        for _ in range(2):  # the second check contacts the server again
            with pytest.raises(llm_mcp.ConnectionError):
                chat.complete()
            assert chat.waiting and chat.messages[-1].tool_calls[0].task == stored
            assert [t.id for t in chat.pending_tasks] == [task.id]
            assert [m for m in chat.messages if m.role == "tool"] == []
        relay.up()
        settle(chat)
        assert chat.messages[-1].content == "done"
        assert [r["content"] for r in model.requests[1].tool_results] == ["report with 1 steps"]


def test_mcp_task_07_a_python_tool_pauses_by_returning_a_task(model, kit):
    """MCP-TASK-07: a Python tool that returns a ``llm_mcp.Task`` (started on a server of its
    own) pauses its call the same way; ``complete()`` checks it with that task's server."""
    reports = kit.mcp(name="reports", extensions=["tasks"])

    class Archive(ChatTool):
        name = "archive"
        description = "Archive the year's reports."
        parameters = {"type": "object", "properties": {}}

        def execute(self):
            return reports.tool("report").call(steps=1, delay=0.05)

    chat = make_chat(model, [tool_call("archive", {}), reply("archived")]).with_tools(Archive())
    chat.ask("archive it")
    assert chat.waiting and [t.tool_name for t in chat.pending_tasks] == ["report"]
    settle(chat)
    assert [r["content"] for r in model.requests[1].tool_results] == ["report with 1 steps"]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_older_server_never_makes_tasks_and_calls_work_as_before(model, transport):
    """Against a handshake-era server (no Tasks extension) the same chat never pauses on a task:
    the call answers in the turn, as before."""
    with running_server(TASKING, transport=transport, era="handshake") as running:
        chat = make_chat(model, [tool_call("report", {"steps": 2, "delay": 0.01}), reply("done")])
        chat.with_mcp(running.mcp(name="reports", extensions=["tasks"]))
        assert chat.ask("report").content == "done" and not chat.waiting and chat.pending_tasks == []
        assert [r["content"] for r in model.requests[1].tool_results] == ["report with 2 steps"]


def test_asking_while_calls_wait_on_tasks_says_how_to_go_on(model, kit):
    """``ask()`` while a call waits on a server task refuses with a message naming
    ``pending_tasks``, ``complete()`` and ``cancel()``; nothing is added to the chat."""
    chat = make_chat(model, [tool_call("report", {"steps": 2, "delay": 5}), reply("fine")])
    chat.with_mcp(kit.mcp(name="reports", extensions=["tasks"]))
    chat.ask("slow report")
    count = len(chat.messages)
    with pytest.raises(ValueError, match=r"pending_tasks.*cancel\(\)"):
        chat.ask("and another thing")
    assert len(chat.messages) == count
    chat.cancel()
    # cancelled but not yet settled: the refusal says what is left to do, not "decide approvals"
    with pytest.raises(ValueError, match=r"^the chat was cancelled while calls wait on server tasks: "
                                         r"complete\(\) cancels them") as refused:
        chat.ask("something else then")
    assert "pending_approvals" not in str(refused.value) and len(chat.messages) == count
    with pytest.raises(llm_mcp.CancelledError):
        chat.complete()
    assert chat.ask("something else then") is not None


@pytest.mark.parametrize(("case", "words"), [
    ("other_id", "with task 't-2'"),
    ("no_result", "completed without its result"),
    ("bad_status", "unknown status 'paused'"),
    ("bad_requests", "input_required without its inputRequests"),
])
def test_a_malformed_task_answer_ends_the_call_with_one_error_result(model, tmp_path, case, words):
    """A ``tasks/get`` answer that breaks the extension (another task's id, ``completed`` without
    its result, a status not in the extension, ``input_required`` whose ``inputRequests`` is not
    an object) is not retried for ever as if lost: ``complete()``
    raises ``TaskProtocolError`` naming the problem, the call gets one error result saying so,
    and the next ``complete()`` lets the model answer (one ``tasks/get`` in all)."""
    log = tmp_path / "requests.log"
    chat = make_chat(model, [tool_call("build", {}), reply("could not build")])
    chat.with_mcp(llm_mcp.mcp(command=odd_tasks_command(case, str(log)), name="odd", extensions=["tasks"]))
    chat.ask("build it")
    assert chat.waiting and [t.id for t in chat.pending_tasks] == ["t-1"]
    with pytest.raises(llm_mcp.TaskProtocolError, match=words) as raised:
        chat.complete()
    assert raised.value.code is None and isinstance(raised.value, llm_mcp.MCPError)
    [result] = [m for m in chat.messages if m.role == "tool"]
    assert result.is_error and words in result.content and chat.pending_tasks == []
    assert chat.complete().content == "could not build"
    assert words in model.requests[1].tool_results[0]["content"]
    assert log.read_text().split().count("tasks/get") == 1


def test_a_malformed_create_task_result_gives_one_result_saying_it_may_have_run(model):
    """A ``tools/call`` answered with a ``CreateTaskResult`` that cannot be followed (``taskId``
    null) gets one error result that names the problem and warns that the tool may have
    partly run (the server started something), and the turn goes on."""
    chat = make_chat(model, [tool_call("build", {}), reply("told")])
    chat.with_mcp(llm_mcp.mcp(command=odd_tasks_command("bad_create"), name="odd", extensions=["tasks"]))
    assert chat.ask("build it").content == "told" and not chat.waiting
    [result] = [m for m in chat.messages if m.role == "tool"]
    assert result.is_error and "without a taskId" in result.content and "may have partly run" in result.content
