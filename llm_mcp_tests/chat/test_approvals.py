"""Approvals and resumes in chats: a call that needs approval pauses the turn, decisions (here or in
another chat object over the same store) resume it, declined calls are reported to the model; a turn
stopped by an exception or a down server resumes without re-running calls; results are saved as each
call finishes.

Real chats: the scripted model through the official SDK, the echo server over Streamable HTTP, the
raw HTTP server for failures.
"""

from __future__ import annotations

import pickle
import threading
from typing import Any

import pytest

import llm_mcp
from llm_mcp.chat import ChatTool, MemoryStore, Message
from llm_mcp.chat.chat import DECLINED, NOT_RUN
from llm_mcp.client import outages
from llm_mcp.testing.scripted_model import reply, tool_call, turn

from llm_mcp_tests.support.chats import http_echo, make_chat, tool_result_text


def test_approval_pauses_and_resumes(chat_on, model, echo_http_url):
    """MCP-APPROVAL-01: a call needing approval pauses the turn; approve() + complete() runs it."""
    server = http_echo(echo_http_url, requires_approval=["add"])
    chat = chat_on([tool_call("add", {"a": 2, "b": 3}), reply("5")]).with_mcp(server)
    waiting = chat.ask("add 2 and 3")
    assert chat.waiting and waiting.tool_calls[0].approval == "pending"
    assert len(model.requests) == 1
    assert chat.complete() is waiting and chat.waiting and len(model.requests) == 1  # nothing decided yet
    [call] = chat.pending_approvals
    call.approve()
    assert chat.complete().content == "5"
    assert not chat.waiting and model.requests[1].tool_results[0]["content"] == '{"sum": 5}'


def test_declined_call_is_reported_to_the_model(chat_on, model, echo_http_url):
    """A declined call does not run; the model is told it was declined, and the turn goes on."""
    chat = chat_on([tool_call("echo", {"message": "x"}), reply("understood")])
    chat.with_mcp(http_echo(echo_http_url, requires_approval=True))
    chat.ask("echo x")
    chat.pending_approvals[0].decline()
    assert chat.complete().content == "understood"
    assert model.requests[1].tool_results[0]["content"] == DECLINED
    with pytest.raises(ValueError, match="not waiting for approval"):
        chat.messages[1].tool_calls[0].approve()


def test_approval_decided_in_another_chat_object_over_the_same_store(model, echo_http_url):
    """Decisions are data: a second Chat over the same store (another process) resumes the turn."""
    server = http_echo(echo_http_url, requires_approval=True)
    first = make_chat(model, [tool_call("echo", {"message": "later"}), reply("done")]).with_mcp(server)
    first.ask("echo later")
    stored = [Message.from_dict(m.to_dict()) for m in first.messages]  # what a database would hold
    from llm_mcp.chat import MemoryStore

    second = make_chat(model, store=MemoryStore(stored)).with_mcp(http_echo(echo_http_url,
                                                                                requires_approval=True))
    assert second.waiting
    second.pending_approvals[0].approve()
    assert second.complete().content == "done"
    assert model.requests[1].tool_results[0]["content"] == "later"


def test_python_tool_can_require_approval(chat_on):
    class Delete(ChatTool):
        description = "Delete everything"
        requires_approval = True
        ran = False

        def execute(self) -> str:
            type(self).ran = True
            return "deleted"

    chat = chat_on([tool_call("delete", {}), reply("ok")]).with_tools(Delete)
    chat.ask("delete")
    assert chat.waiting and not Delete.ran


def test_ask_while_waiting_is_refused(chat_on, echo_http_url):
    chat = chat_on([tool_call("echo", {"message": "x"})]).with_mcp(http_echo(echo_http_url, requires_approval=True))
    chat.ask("echo")
    with pytest.raises(ValueError, match="pending_approvals"):
        chat.ask("something else")


def test_a_turn_stopped_by_an_exception_resumes_without_rerunning_calls(chat_on, model):
    """What ran before the exception is saved; complete() runs only what is left."""
    runs = {"first": 0, "second": 0}
    state = {"fail": True}

    class First(ChatTool):
        def execute(self) -> str:
            runs["first"] += 1
            return "first ran"

    class Second(ChatTool):
        rescue_from = {RuntimeError: "stop"}

        def execute(self) -> str:
            runs["second"] += 1
            if state["fail"]:
                raise RuntimeError("flaky")
            return "second ran"

        def stop(self, error: Exception) -> str:
            raise error

    chat = chat_on([turn(tool_calls=[tool_call("first", {}), tool_call("second", {})]), reply("both ran")])
    chat.with_tools(First, Second)
    with pytest.raises(RuntimeError, match="flaky"):
        chat.ask("run both")
    assert [m.content for m in chat.messages if m.role == "tool"] == ["first ran"]
    state["fail"] = False
    assert chat.complete().content == "both ran"
    assert runs == {"first": 1, "second": 2}
    assert [r["content"] for r in model.requests[1].tool_results] == ["first ran", "second ran"]


def test_ask_after_a_stopped_turn_settles_its_calls(chat_on, model):
    """A turn stopped by an exception leaves calls without results; the next ask() answers them first,
    so the history the model gets stays valid."""

    class Strict(ChatTool):
        rescue_from = {RuntimeError: "stop"}

        def execute(self) -> str:
            raise RuntimeError("stop the chat")

        def stop(self, error: Exception) -> str:
            raise error

    chat = chat_on([tool_call("strict", {}), reply("fresh start")]).with_tools(Strict)
    with pytest.raises(RuntimeError):
        chat.ask("go")
    assert chat.ask("something else").content == "fresh start"
    assert tool_result_text(model.requests[1].tool_results[0]) == NOT_RUN
    assert [m.role for m in chat.messages] == ["user", "assistant", "tool", "user", "assistant"]


def test_extra_tools_follow_the_servers_approval_and_defer(chat_on, model, echo_http_url):
    ran = []

    class Danger(ChatTool):
        description = "Do something dangerous"

        def execute(self) -> str:
            ran.append(1)
            return "done"

    chat = chat_on([tool_call("danger", {})]).with_mcp(
        http_echo(echo_http_url, only=["echo"], requires_approval=True, extra_tools=[Danger]))
    chat.ask("go")
    assert chat.waiting and not ran and chat.pending_approvals[0].name == "danger"
    deferring = chat_on([reply("ok")]).with_mcp(http_echo(echo_http_url, name="d", only=["echo"], defer=True,
                                                      extra_tools=[Danger]))
    deferring.ask("hi")
    assert model.requests[-1].tool_names == ["search_tools"]


def test_two_resumes_at_once_run_an_approved_call_once(model):
    runs = []
    gate = threading.Event()

    class Transfer(ChatTool):
        requires_approval = True

        def execute(self, amount: int) -> str:
            runs.append(amount)
            gate.wait(5)
            return "sent"

    store = MemoryStore()
    first = make_chat(model, [tool_call("transfer", {"amount": 100}), reply("done")], store=store)
    first.with_tools(Transfer)
    first.ask("pay")
    first.pending_approvals[0].approve()
    second = make_chat(model, store=store).with_tools(Transfer)
    threads = [threading.Thread(target=c.complete) for c in (first, second)]
    for thread in threads:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join(30)
    assert runs == [100]
    assert [m.role for m in store.messages()] == ["user", "assistant", "tool", "assistant"]


def test_approval_values_are_checked_and_blank_means_none():
    from llm_mcp.chat import ToolCall

    assert ToolCall("c1", "t", approval="").approval is None
    with pytest.raises(ValueError, match="approval must be one of"):
        ToolCall("c1", "t", approval="maybe")


class Charge(ChatTool):
    description = "Charge an amount"
    charged: list[int] = []
    fail_on = 3

    def execute(self, amount: int) -> str:
        if amount == self.fail_on:
            raise SystemExit("the process died")  # not an Exception: the chat does not turn it into a result
        type(self).charged.append(amount)
        return f"charged {amount}"


def test_results_are_stored_as_each_call_finishes(model):
    """A process that dies mid-batch has stored the calls that finished; a resume runs only the rest."""
    Charge.charged = []
    store = MemoryStore()
    chat = make_chat(model, [turn(tool_calls=[tool_call("charge", {"amount": n}) for n in (1, 2, 3)]),
                             reply("all charged")], store=store).with_tools(Charge)
    with pytest.raises(SystemExit):
        chat.ask("charge three times")
    assert [m.content for m in store.messages() if m.role == "tool"] == ["charged 1", "charged 2"]
    Charge.fail_on = 0
    try:
        resumed = make_chat(model, store=MemoryStore(list(store.messages()))).with_tools(Charge)
        assert resumed.complete().content == "all charged"
    finally:
        Charge.fail_on = 3
    assert Charge.charged == [1, 2, 3]


class CallStore(MemoryStore):
    """A store that writes calls one by one, the way a database store would."""

    def __init__(self) -> None:
        super().__init__()
        self.saved_calls: list[tuple[str, str | None]] = []

    def save(self, message: Any) -> None:
        raise AssertionError("the whole message must not be written back when save_call exists")

    def save_call(self, message: Any, call: Any) -> None:
        self.saved_calls.append((call.id, call.approval))


def test_calls_are_saved_one_by_one_and_pending_marks_first(model):
    seen_before_running: list[Any] = []

    class Pay(ChatTool):
        requires_approval = True

        def execute(self) -> str:
            return "paid"

    store = CallStore()

    class Look(ChatTool):
        def execute(self) -> str:
            seen_before_running.extend(store.saved_calls)
            return "looked"

    chat = make_chat(model, [turn(tool_calls=[tool_call("pay", {}, id="c_pay"), tool_call("look", {}, id="c_look")]),
                             reply("done")], store=store).with_tools(Pay, Look)
    chat.ask("go")
    assert seen_before_running == [("c_pay", "pending")]  # other processes saw the pending call before Look ran
    chat.pending_approvals[0].approve()
    assert store.saved_calls[-1] == ("c_pay", "approved")
    assert chat.complete().content == "done"


def test_ask_after_decisions(chat_on, model, echo_http_url):
    chat = chat_on([tool_call("echo", {"message": "x"}), reply("ok")]).with_mcp(http_echo(echo_http_url,
                                                                                      requires_approval=True))
    chat.ask("echo")
    chat.pending_approvals[0].decline()
    assert chat.ask("never mind").content == "ok"
    assert model.requests[1].tool_results[0]["content"] == "The user declined this tool call; it did not run."
    assert model.requests[1].last_user_text == "never mind"
    assert [m.content for m in chat.messages if m.role == "user"] == ["echo", "never mind"]
    model.add(tool_call("echo", {"message": "y"}))
    chat.ask("echo again")
    chat.pending_approvals[0].approve()
    with pytest.raises(ValueError, match="approved but not run"):
        chat.ask("something else")


def test_approved_call_in_a_fresh_chat_while_the_server_is_down(chat_on, model, raw_http):
    server = llm_mcp.mcp(url=raw_http.url("basic", era="modern"), name="fresh", requires_approval=True)
    first = chat_on([tool_call("echo", {"message": "x"}), reply("ok")]).with_mcp(server)
    first.ask("go")
    copy = [llm_mcp.chat.Message.from_dict(m.to_dict()) for m in first.messages]
    again = llm_mcp.mcp(url=raw_http.url("basic", era="modern"), name="fresh", requires_approval=True)
    outages.record(again, llm_mcp.ConnectionError("gone", status=503))
    fresh = make_chat(model, store=MemoryStore(copy)).with_mcp(again)
    fresh.pending_approvals[0].approve()
    fresh.complete()
    assert tool_result_text(model.requests[1].tool_results[0]).startswith("The tool 'echo' is not available right now")


def test_pending_calls_pickle_and_with_tools_none_drops_the_choice(chat_on, model):
    import pickle

    def lookup() -> str:
        return "found"

    class Gate(ChatTool):
        requires_approval = True

        def execute(self) -> str:
            return "opened"

    chat = chat_on([tool_call("gate", {})]).with_tools(Gate)
    chat.ask("open")
    copy = pickle.loads(pickle.dumps(chat.pending_approvals[0]))
    assert copy.approval == "pending" and not hasattr(copy, "_save")
    other = chat_on([reply("no tools")]).with_tools(lookup, choice="lookup").with_tools(None)
    assert other.ask("hi").content == "no tools"
