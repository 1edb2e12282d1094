"""A person's answer or decision recorded by another process while a turn holds the same tool
call row is never undone by the turn's next write of that row (task checks, held questions,
approvals). Each interleaving is driven explicitly: the other process's write happens at a
known point between the turn's read and its write (marker ``db``)."""

from __future__ import annotations

import copy

import pytest

import llm_mcp
from llm_mcp.chat.messages import Message, ToolCall
from llm_mcp.models import Chat as ChatRecord, ToolCall as ToolCallRow
from llm_mcp.testing import reply, running_server, tool_call

from llm_mcp_tests.support.chats import MODEL
from llm_mcp_tests.support.records import reload
from llm_mcp_tests.support.servers import tasking
from llm_mcp_tests.support.task_agents import TaskAgent

pytestmark = [pytest.mark.db, pytest.mark.django_db(transaction=True)]

YEAR = {"type": "object", "properties": {"year": {"type": "integer"}}, "required": ["year"]}


@pytest.fixture
def kit():
    with running_server(tasking.server, transport="http", era="modern") as running:
        yield running


def open_question(key: str) -> dict:
    return llm_mcp.Question(key, {"message": "Which year?", "requestedSchema": YEAR}, server="s").to_dict()


def paused_call(**state) -> tuple[ChatRecord, Message, ToolCall]:
    """A chat record whose one assistant message has one call (``state``: its columns), stored,
    and that message and call as the record's store reads them (what a turn works on)."""
    record = ChatRecord.objects.create(model=MODEL, provider="openai")
    record.store.add(Message("user", "go"))
    record.store.add(Message("assistant", "", tool_calls=[ToolCall(id="call_1", name="deploy", **state)]))
    assistant = record.store.messages()[-1]
    return record, assistant, assistant.tool_calls[0]


def test_an_answer_given_while_a_task_check_runs_is_not_lost(model, kit, monkeypatch):
    """MCP-TASK-15 (race): the worker's check reads the call (question open), asks the server
    (``tasks/get``: still ``input_required``); meanwhile another process answers through the
    chat row; the check then saves the call: the answer must stay on the row, and the next
    check sends it with ``tasks/update`` (the model sees the task's result)."""
    monkeypatch.setenv("LLM_MCP_TEST_BASE_URL", model.openai_base_url)
    model.add(tool_call("curious", {}), reply("noted"))
    record = TaskAgent.chat(url=kit.url)
    record.ask("which year?")
    for _ in range(200):  # each complete() is one tasks/get: until the question reaches the row
        if ChatRecord.objects.get(pk=record.pk).pending_questions:
            break
        reload(record, model).complete()
    [row] = ToolCallRow.objects.filter(message__chat=record)
    assert [q["key"] for q in row.pending_questions] == ["year"] and row.pending_questions[0]["response"] is None

    checker = reload(record, model)
    answered = []

    def answer_elsewhere(call, progress):  # runs after the check's tasks/get, before it saves the call
        if not answered:
            [question] = ChatRecord.objects.get(pk=record.pk).pending_questions
            question.answer(2001)
            answered.append(question.key)
    checker.after_tool_progress(answer_elsewhere)
    checker.complete()
    assert answered == ["year"]
    row.refresh_from_db()
    assert row.pending_questions[0]["response"] == {"action": "accept", "content": {"year": 2001}}

    for _ in range(200):
        if not ChatRecord.objects.get(pk=record.pk).waiting:
            break
        reload(record, model).complete()
    assert model.requests[1].tool_results[0]["content"] == "year 2001"


def test_a_stale_write_of_a_held_question_keeps_the_answer_saved_meanwhile():
    """A turn that read the call before another process answered its (held) question, then
    writes the call again (adding another question), keeps that answer, and its own copy of
    the call shows it too."""
    record, assistant, call = paused_call(pending_questions=[open_question("held-1")])
    stale = copy.deepcopy(call)
    [question] = ChatRecord.objects.get(pk=record.pk).pending_questions  # another process
    question.answer(1999)
    stale.pending_questions = [*stale.pending_questions, open_question("held-2")]
    record.store.save_call(assistant, stale)
    stored = ToolCallRow.objects.get(message__chat=record).pending_questions
    assert [(q["key"], q["response"]) for q in stored] == [
        ("held-1", {"action": "accept", "content": {"year": 1999}}), ("held-2", None)]
    assert stale.pending_questions == stored


def test_a_question_asked_again_under_an_answered_key_stays_open():
    """A server asking again under a key whose answer the turn had already read (a new round
    of questions replacing the old): the turn's write leaves the new question open; the old
    answer is not carried over to it."""
    answered = dict(open_question("env"), response={"action": "accept", "content": {"year": 1}})
    record, assistant, call = paused_call(pending_questions=[answered])
    call.pending_questions = [open_question("env")]
    record.store.save_call(assistant, call)
    [stored] = ToolCallRow.objects.get(message__chat=record).pending_questions
    assert stored["key"] == "env" and stored["response"] is None


def test_a_decline_saved_meanwhile_survives_a_stale_write():
    """The same for a question declined elsewhere (a decline is an answer too)."""
    record, assistant, call = paused_call(pending_questions=[open_question("year")], task={"taskId": "t1"})
    stale = copy.deepcopy(call)
    ChatRecord.objects.get(pk=record.pk).pending_questions[0].decline()
    stale.task = {"taskId": "t1", "status": "input_required"}
    record.store.save_call(assistant, stale)
    row = ToolCallRow.objects.get(message__chat=record)
    assert row.pending_questions[0]["response"] == {"action": "decline"}
    assert row.task == {"taskId": "t1", "status": "input_required"}  # the turn's own field is written


def test_a_turn_marking_a_call_pending_does_not_undo_a_decision_made_elsewhere():
    """A turn whose copy of the call is older than a person's decision (approved or declined
    through the row in another process) writes the call: the decision stands."""
    for decision, stored in (("approve", "approved"), ("decline", "declined")):
        record, assistant, call = paused_call(approval="pending")
        stale = copy.deepcopy(call)
        row = ToolCallRow.objects.get(message__chat=record)
        getattr(row, decision)()
        record.store.save_call(assistant, stale)
        assert ToolCallRow.objects.get(pk=row.pk).approval == stored


def test_a_decision_writes_only_the_approval():
    """A person's decision through a chat copy that read the call before the turn wrote it
    (its questions, its task) changes the approval only: the turn's fields stay as stored."""
    record, assistant, call = paused_call(approval="pending")
    decider = ChatRecord.objects.get(pk=record.pk)
    [pending] = decider.pending_approvals
    ToolCallRow.objects.filter(pk=ToolCallRow.objects.get(message__chat=record).pk).update(
        pending_questions=[open_question("year")], task={"taskId": "t9"})  # the turn wrote these since
    pending.approve()
    row = ToolCallRow.objects.get(message__chat=record)
    assert row.approval == "approved"
    assert row.task == {"taskId": "t9"} and [q["key"] for q in row.pending_questions] == ["year"]


def test_remembering_open_questions_leaves_the_open_call_count_as_it_was():
    """Reading a call with questions (which the store now remembers as seen open) still counts
    it among the calls with neither a result nor a person's decision (`on_open_calls`)."""
    record, _, _ = paused_call(pending_questions=[open_question("year")])
    store = ChatRecord.objects.get(pk=record.pk).store
    counted = []
    store.on_open_calls = counted.append
    store.messages()
    assert counted == [1]
