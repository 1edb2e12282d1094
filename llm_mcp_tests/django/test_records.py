"""Chat records: rows that behave like plain chats (issue 5), on SQLite and PostgreSQL (marker ``db``)."""

from __future__ import annotations

import json
import logging

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

import llm_mcp
from llm_mcp import tasks
from llm_mcp.chat.chat import DECLINED
from llm_mcp.models import Chat as ChatRecord, Message as MessageRow, ToolCall as ToolCallRow
from llm_mcp.testing.scripted_model import ScriptedModel, reply, tool_call, turn

from llm_mcp_tests.support.chats import MODEL
from llm_mcp_tests.support.processes import ECHO_SERVER, PYTHON
from llm_mcp_tests.support.records import Other, Plain, record_on, reload

pytestmark = [pytest.mark.db, pytest.mark.django_db(transaction=True)]


class Echo(llm_mcp.MCP):
    """The project's echo test server over stdio (tools ``echo``, ``add``, ...)."""

    command = [PYTHON, ECHO_SERVER]


class ApprovedEcho(Echo):
    requires_approval = True


def test_a_record_asks_and_every_message_is_a_row(model):
    """MCP-PERSIST-03: a turn with a Python tool call persists the user message, the assistant's
    call (a ToolCall row with name and arguments), its result and the answer."""
    def double(n: int) -> int:
        """Double a number."""
        return n * 2

    record = record_on(model, tool_call("double", {"n": 21}, id="call_1"), reply("It is 42."))
    answer = record.with_tools(double).ask("Double 21")
    assert answer.content == "It is 42."
    rows = list(MessageRow.objects.filter(chat=record).values_list("role", "content"))
    assert rows == [("user", "Double 21"), ("assistant", ""), ("tool", "42"), ("assistant", "It is 42.")]
    call = ToolCallRow.objects.get()
    assert (call.tool_call_id, call.name, call.arguments) == ("call_1", "double", {"n": 21})
    assert call.result.content == "42" and call.message.role == "assistant"
    again = [m.to_dict() for m in reload(record, model).messages]
    assert again == [m.to_dict() for m in record.messages]
    assert again[2]["tool_call_id"] == "call_1"


def test_with_mcp_and_mcp_on_a_record(model):
    """MCP-PERSIST-01, MCP-PERSIST-03: a saved chat takes ``with_mcp``, exposes ``.mcp``, and the
    MCP tool call is stored as a ToolCall row like any other."""
    record = record_on(model, tool_call("echo", {"message": "hi"}, id="call_e"), reply("done"))
    record.with_mcp(Echo)
    try:
        assert isinstance(record.mcp.echo, Echo)
        record.ask("Echo hi")
        call = ToolCallRow.objects.get(tool_call_id="call_e")
        assert call.name == "echo" and call.arguments == {"message": "hi"}
        assert "hi" in call.result.content
        assert model.requests[1].tool_results[0]["content"] == call.result.content
    finally:
        record.with_mcp(None)


def test_approval_decided_in_another_process_is_read_by_complete(model):
    """MCP-APPROVAL-05: the pending state and the decision live on the ToolCall row; a fresh
    instance decides, a third one completes."""
    record = record_on(model, tool_call("echo", {"message": "ok"}, id="call_a"), reply("echoed"))
    record.with_mcp(ApprovedEcho)
    try:
        paused = record.ask("Echo ok")
        assert record.waiting and paused.tool_calls[0].id == "call_a"
        assert ToolCallRow.objects.get(tool_call_id="call_a").approval == "pending"

        deciding = reload(record, model)
        [pending] = deciding.pending_approvals
        pending.approve()
        assert ToolCallRow.objects.get(tool_call_id="call_a").approval == "approved"

        resuming = reload(record, model).with_mcp(ApprovedEcho)
        try:
            assert resuming.complete().content == "echoed"
        finally:
            resuming.with_mcp(None)
        row = ToolCallRow.objects.get(tool_call_id="call_a")
        with Echo() as direct:
            expected = direct.call("echo", message="ok")
        assert row.result.content == expected.text
        assert row.mcp_result == expected.to_dict()  # kept for an approved call too
    finally:
        record.with_mcp(None)


def test_two_people_deciding_at_once_cannot_both_win(model):
    """MCP-APPROVAL-05: the decision is taken only while the row is pending."""
    record = record_on(model, tool_call("echo", {"message": "x"}, id="call_d"))
    record.with_mcp(ApprovedEcho)
    try:
        record.ask("Echo x")
        first = reload(record, model).pending_approvals[0]
        second = reload(record, model).pending_approvals[0]
        first.decline()
        with pytest.raises(ValueError, match="already decided"):
            second.approve()
        assert ToolCallRow.objects.get(tool_call_id="call_d").approval == "declined"
        model.add(reply("ok, not echoing"))
        assert reload(record, model).complete().content == "ok, not echoing"
        assert ToolCallRow.objects.get(tool_call_id="call_d").result.content == DECLINED
    finally:
        record.with_mcp(None)


def test_tool_call_row_decisions_without_loading_the_chat(model):
    """A view can decide on the row alone: ``ToolCall.approve()``/``decline()``."""
    record = record_on(model, tool_call("echo", {"message": "y"}, id="call_r"), reply("fine"))
    record.with_mcp(ApprovedEcho)
    try:
        record.ask("Echo y")
        row = ToolCallRow.objects.get(tool_call_id="call_r")
        row.approve()
        with pytest.raises(ValueError, match="not waiting"):
            row.decline()
        assert reload(record, model).with_mcp(ApprovedEcho).complete().content == "fine"
    finally:
        record.with_mcp(None)


def test_async_twins_of_a_record_and_its_rows(model):
    """``record.aask``/``acomplete`` and ``ToolCall.aapprove``/``adecline`` (rows) do what the blocking ones
    do, from a coroutine (the row's decision through ``sync_to_async``, the turn in a thread of its own)."""
    import asyncio

    record = record_on(model, tool_call("echo", {"message": "y"}, id="call_a1"), reply("fine"),
                       tool_call("echo", {"message": "z"}, id="call_a2"), reply("refused"))
    record.with_mcp(ApprovedEcho)

    async def run() -> None:
        paused = await record.aask("Echo y")
        assert paused.tool_calls[0].id == "call_a1"
        row = await ToolCallRow.objects.aget(tool_call_id="call_a1")
        await row.aapprove()
        with pytest.raises(ValueError, match="not waiting"):
            await row.adecline()
        assert (await record.acomplete()).content == "fine"
        await record.aask("Echo z")
        await (await ToolCallRow.objects.aget(tool_call_id="call_a2")).adecline()
        assert (await record.acomplete()).content == "refused"

    try:
        asyncio.run(run())
    finally:
        record.with_mcp(None)
    assert ToolCallRow.objects.get(tool_call_id="call_a1").result.content == "y"
    assert ToolCallRow.objects.get(tool_call_id="call_a2").result.content == DECLINED


def test_idempotent_ask_with_a_key(model):
    """A background ``ask`` run twice (same key) adds its user message once."""
    record = record_on(model, reply("first answer"))
    record.ask("Hello", key="job-1")
    again = reload(record, model).ask("Hello", key="job-1")
    assert again.content == "first answer"
    assert MessageRow.objects.filter(chat=record, role="user").count() == 1
    assert len(model.requests) == 1


def test_half_written_rows_are_repaired(model):
    """A crash may leave an assistant row with nothing in it; the next turn removes it."""
    record = record_on(model, reply("recovered"))
    record.message_records.create(role="user", content="hi")
    record.message_records.create(role="assistant", content="")
    assert record.complete().content == "recovered"
    assert list(record.message_records.values_list("role", "content")) == [("user", "hi"),
                                                                            ("assistant", "recovered")]


def test_half_written_rows_are_repaired_when_a_turn_asks(model):
    """A turn started with ``ask()`` also drops a crashed turn's empty assistant row (before the
    new question), and the model never sees it."""
    record = record_on(model, reply("fine"))
    record.message_records.create(role="user", content="hi")
    record.message_records.create(role="assistant", content="")
    assert record.ask("still there?").content == "fine"
    assert list(record.message_records.values_list("role", "content")) == [
        ("user", "hi"), ("user", "still there?"), ("assistant", "fine")]
    assert [m["role"] for m in model.requests[-1].messages] == ["user", "user"]


def test_a_read_outside_a_turn_leaves_an_empty_assistant_row(model):
    """Only a turn (holding the chat's lock) repairs: reading the messages elsewhere must not
    delete the row a live turn in another process may be writing."""
    record = record_on(model)
    record.message_records.create(role="user", content="hi")
    record.message_records.create(role="assistant", content="")
    assert [m.role for m in record.messages] == ["user", "assistant"]
    with record.chat.store.lock:
        pass  # a turn that read nothing: the repair is not left pending for a later read
    assert [m.role for m in record.messages] == ["user", "assistant"]
    assert record.message_records.count() == 2


def test_open_calls_without_tools_are_warned_about_without_a_query_of_their_own(model, caplog):
    """A chat with no agent and no tools here whose history has an open tool call logs a warning
    naming how many, counted from the turn's own read of the history (no extra query)."""
    record = record_on(model, reply("sorry"))
    record.message_records.create(role="user", content="hi")
    store = record.chat.store
    store.add(llm_mcp.chat.Message("assistant", "", tool_calls=[llm_mcp.chat.ToolCall("call_a", "gone", {}),
                                                                 llm_mcp.chat.ToolCall("call_b", "gone", {})]))
    with caplog.at_level(logging.WARNING, logger="llm_mcp"):
        assert record.complete().content == "sorry"
    warnings = [r.getMessage() for r in caplog.records if "no agent and no tools" in r.getMessage()]
    assert len(warnings) == 1 and "its 2 open tool call(s)" in warnings[0], warnings
    assert store.on_open_calls is None
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="llm_mcp"):
        model.add(reply("again"))
        assert record.ask("and now?").content == "again"  # both calls have results now: no warning
    assert not [r for r in caplog.records if "no agent and no tools" in r.getMessage()]


def test_a_second_result_for_a_call_is_not_stored(model):
    """Each tool call is answered exactly once, whoever tries to answer it twice."""
    record = record_on(model)
    store = record.chat.store
    store.add(llm_mcp.chat.Message("user", "hi"))
    store.add(llm_mcp.chat.Message("assistant", "", tool_calls=[llm_mcp.chat.ToolCall("call_x", "t", {})]))
    first = store.add(llm_mcp.chat.Message("tool", "one", tool_call_id="call_x"))
    second = store.add(llm_mcp.chat.Message("tool", "two", tool_call_id="call_x"))
    assert second.content == "one" and second.id == first.id
    assert list(record.message_records.filter(role="tool").values_list("content", flat=True)) == ["one"]


def _queries_to_continue(model: ScriptedModel, size: int) -> list[str]:
    """The SQL of loading a chat of ``size`` messages and running one turn on it."""
    record = ChatRecord.objects.create(model=MODEL)
    rows = []
    for i in range(size - 1):
        rows.append(MessageRow(chat=record, role="user" if i % 2 == 0 else "assistant", content=f"m{i}"))
    MessageRow.objects.bulk_create([*rows, MessageRow(chat=record, role="user", content="last question")])
    model.add(reply("answer"))
    with CaptureQueriesContext(connection) as queries:
        loaded = ChatRecord.objects.get(pk=record.pk)
        loaded.provider_options = {"base_url": model.openai_base_url, "api_key": "test-key"}
        assert loaded.complete().content == "answer"
    assert len(model.requests[-1].messages) == size
    return [query["sql"] for query in queries]


def test_continuing_a_chat_costs_the_same_queries_whatever_its_length(model):
    """Loading a chat and running a turn issues as many queries for 10 messages as for 200."""
    short, long = _queries_to_continue(model, 10), _queries_to_continue(model, 200)
    assert len(short) == len(long), (short, long)
    # The chat row, the messages with the cancelled flag (a column of their read: the turn's
    # start), the tool calls, the flag before the answer is stored, and the answer's insert (one
    # INSERT, atomic by itself: no transaction); PostgreSQL adds the advisory lock and unlock.
    # No repair query and no COUNT of open calls: both come from the history read.
    assert len(short) == (5 if connection.vendor == "sqlite" else 7), short
    assert not any("COUNT(" in sql for sql in short), short
    assert sum('FROM "llm_mcp_messages"' in sql for sql in short) == 1, short


def test_a_turn_with_a_tool_call_costs_the_same_queries_at_10_100_and_1000_messages(model):
    """The queries of loading a chat and running a turn in which the model calls a tool (the call
    and its result stored, the model asked again) do not grow with the history: a count, not a time."""
    def double(n: int) -> int:
        """Double a number."""
        return n * 2

    counts = {}
    for size in (10, 100, 1000):
        record = ChatRecord.objects.create(model=MODEL)
        MessageRow.objects.bulk_create([MessageRow(chat=record, role="user" if i % 2 == 0 else "assistant",
                                                   content=f"m{i}") for i in range(size - 1)]
                                       + [MessageRow(chat=record, role="user", content="double 2")])
        model.add(tool_call("double", {"n": 2}, id=f"call_{size}"), reply("4"))
        with CaptureQueriesContext(connection) as queries:
            loaded = ChatRecord.objects.get(pk=record.pk)
            loaded.provider_options = {"base_url": model.openai_base_url, "api_key": "test-key"}
            assert loaded.with_tools(double).complete().content == "4"
        assert len(model.requests[-1].messages) == size + 2  # the whole history, the call and its result
        stored = list(record.message_records.order_by("id").values_list("role", "content"))
        assert stored[-2:] == [("tool", "4"), ("assistant", "4")]
        counts[size] = len(queries)
    assert counts[10] == counts[100] == counts[1000], counts


def test_agents_with_a_chat_class_create_and_find_records(model):
    """MCP-PERSIST-02, MCP-DOWN-15: an agent with ``chat_class`` creates a row, connects its servers
    to it, stores its inputs (a model instance by reference), and ``find(pk)`` loads it with the
    same servers; neither contacts a server (the command would fail if run)."""
    from django.contrib.auth.models import User

    user = User.objects.create(username="ada")

    class Broken(llm_mcp.MCP):
        command = [PYTHON, "-c", "import sys; sys.exit(3)"]

    options = {"base_url": model.openai_base_url, "api_key": "test-key"}

    class Triage(llm_mcp.Agent):
        chat_class = ChatRecord
        model = MODEL
        provider_options = options
        inputs = ["user", "team"]
        instructions = "Triage."
        mcp = "servers"

        def servers(self):
            return [Broken]

    record = Triage.chat(user=user, team="core")
    assert isinstance(record, ChatRecord) and record.pk is not None
    assert record.agent_inputs == {"user": {"$model": "auth.user", "pk": user.pk}, "team": {"$json": "core"}}
    assert isinstance(record.mcp.broken, Broken)
    found = Triage.find(record.pk)
    assert found.pk == record.pk and found.chat.agent.user == user and found.chat.agent.team == "core"
    assert isinstance(found.mcp.broken, Broken)
    with pytest.raises(TypeError, match="chat_class"):
        type("Plain", (llm_mcp.Agent,), {"model": MODEL}).find(1)


def test_raw_tool_call_columns_hold_json(model):
    """Arguments and results are JSON in the database, readable by other tools."""
    record = record_on(model)
    record.chat.store.add(llm_mcp.chat.Message(
        "assistant", "", tool_calls=[llm_mcp.chat.ToolCall("call_j", "t", {"q": "ü"})]))
    with connection.cursor() as cursor:
        cursor.execute("SELECT arguments FROM llm_mcp_tool_calls WHERE tool_call_id = %s", ["call_j"])
        raw = cursor.fetchone()[0]
    assert (json.loads(raw) if isinstance(raw, str) else raw) == {"q": "ü"}


def on(model: ScriptedModel, record: ChatRecord) -> ChatRecord:
    record.provider_options = {"base_url": model.openai_base_url, "api_key": "k"}
    return record


def test_a_row_never_names_just_any_callable(tmp_path):
    """``agent_class`` must be an llm_mcp.Agent: a row naming ``os.system`` runs nothing."""
    marker = tmp_path / "ran"
    row = ChatRecord.objects.create(model=MODEL, agent_class="os.system",
                                    agent_inputs={"command": {"$json": f"touch {marker}"}})
    with pytest.raises(TypeError, match="not an llm_mcp.Agent subclass"):
        ChatRecord.objects.get(pk=row.pk).chat  # noqa: B018
    assert not marker.exists()
    assert ChatRecord.objects.get(pk=row.pk).messages == []  # reading needs no agent


def test_call_ids_repeated_across_chats_and_within_a_reply(model):
    """Providers that reuse ids (``call_1`` in every chat, or twice in one reply) do not break
    storage: ids are unique per message, and the chat renames a repeat within a conversation."""
    def noop() -> str:
        """Do nothing."""
        return "done"

    answers = []
    for _ in range(2):  # two chats, the same call id
        model.add(tool_call("noop", {}, id="call_1"), reply("ok"))
        answers.append(on(model, ChatRecord.objects.create(model=MODEL)).with_tools(noop).ask("go").content)
    assert answers == ["ok", "ok"]
    model.add(turn(tool_calls=[tool_call("noop", {}, id="same"), tool_call("noop", {}, id="same")]), reply("both"))
    record = on(model, ChatRecord.objects.create(model=MODEL)).with_tools(noop)
    assert record.ask("twice").content == "both"
    ids = list(ToolCallRow.objects.filter(message__chat=record).values_list("tool_call_id", flat=True))
    assert ids[0] == "same" and ids[1] != "same" and ids[1].startswith("call_")
    assert [r["tool_call_id"] for r in model.requests[-1].tool_results] == ids
    model.add(tool_call("noop", {}, id="same"), reply("again"))  # an id used in an earlier turn
    assert record.ask("once more").content == "again"
    assert all(len(m.tool_calls) == 0 or m.tool_calls[0].id != "same" for m in record.messages[-3:])


def test_long_names_and_ids_from_the_model_are_stored(model):
    """A hallucinated 300-character tool name or call id is answered, not a database error."""
    model.add(tool_call("x" * 300, {}, id="c" * 300), reply("sorry"))
    record = on(model, ChatRecord.objects.create(model=MODEL))
    assert record.ask("go").content == "sorry"
    call = ToolCallRow.objects.get(message__chat=record)
    assert call.name == "x" * 300 and len(call.tool_call_id) <= 200
    assert call.result.content.startswith("There is no tool named")


def test_dict_inputs_round_trip_even_when_they_look_like_references(model):
    """A plain dict input shaped like a model reference stays a dict."""
    User.objects.create(username="alice")
    record = Plain.chat(settings={"$model": "auth.user", "pk": 1})
    assert Plain.find(record.pk).chat.agent.settings == {"$model": "auth.user", "pk": 1}
    with pytest.raises(TypeError, match="input 'settings' cannot be stored"):
        Plain.chat(settings={"who": User.objects.get()})  # a model inside a dict


def test_find_refuses_a_chat_of_another_agent():
    record = Other.chat()
    with pytest.raises(ValueError, match="was set up by .*Other, not .*Plain"):
        Plain.find(record.pk)


def test_local_agents_warn_and_their_chats_stay_readable(caplog):
    """An agent defined in a function cannot be imported by a job: creating its chat warns,
    and a process without it can still read the messages."""
    class Local(llm_mcp.Agent):
        chat_class = ChatRecord
        model = MODEL

    with caplog.at_level(logging.WARNING, logger="llm_mcp.records"):
        record = Local.chat()
    assert "no other process can import it" in caplog.text
    fresh = ChatRecord.objects.get(pk=record.pk)
    assert fresh.messages == [] and fresh.waiting is False and fresh.pending_approvals == []
    with pytest.raises(ImportError, match="cannot be imported here"):
        fresh.chat  # noqa: B018


def test_a_failed_agent_declaration_saves_no_row():
    class BadServers(llm_mcp.Agent):
        chat_class = ChatRecord
        model = MODEL
        mcp = ["not a server"]

    before = ChatRecord.objects.count()
    with pytest.raises(TypeError, match="with_mcp"):
        BadServers.chat()
    assert ChatRecord.objects.count() == before


def test_unsaved_chats_keys_and_empty_resumes(model):
    with pytest.raises(ValueError, match="save the Chat first"):
        ChatRecord(model=MODEL).ask("hi")
    record = on(model, ChatRecord.objects.create(model=MODEL))
    with pytest.raises(ValueError, match="1 to 255"):
        record.ask("hi", key="k" * 300)
    model.add(reply("hello"))
    record.ask("hi", key="job-7")
    with pytest.raises(ValueError, match="another text"):
        record.ask("something else", key="job-7")
    empty = ChatRecord.objects.create(model=MODEL)
    assert tasks.resume_chat.apply(args=(empty.pk,)).get() == "empty"


def test_what_json_columns_cannot_hold_is_stored_safely(model):
    """Unpaired surrogates and NaN, from a model or a server, do not fail the turn: arguments
    that hold them reach the model as malformed (a tool error), text keeps U+FFFD."""
    def echo(message: str) -> str:
        """Echo."""
        return message

    model.add(tool_call("echo", raw_arguments='{"message": NaN}', id="call_nan"), reply("bad \ud800 text"))
    record = on(model, ChatRecord.objects.create(model=MODEL)).with_tools(echo)
    assert record.ask("go").content == "bad \ufffd text"
    call = ToolCallRow.objects.get(message__chat=record)
    assert call.arguments == {"_raw_arguments": '{"message": NaN}'}
    assert call.result.is_error and "not a JSON object" in call.result.content




def test_cancelling_a_queued_aask_of_a_record_leaves_the_running_turn_alone(model):
    """Two ``record.aask`` on one saved chat run one after the other (its turn lock). Cancelling the task
    of the second while the first turn runs drops the second (no user row, no model request) without
    setting the chat's persisted cancel flag, so the first turn finishes with its tool's real result."""
    import asyncio

    record = record_on(model, tool_call("sleep", {"seconds": 2}), reply("first done"), reply("second done"))
    record.with_mcp(Echo)

    async def run() -> tuple:
        first = asyncio.ensure_future(record.aask("sleep"))
        while not model.requests:
            await asyncio.sleep(0.05)
        second = asyncio.ensure_future(record.aask("then this"))
        await asyncio.sleep(0.3)
        second.cancel()
        return tuple(await asyncio.gather(first, second, return_exceptions=True))

    try:
        first, second = asyncio.run(run())
    finally:
        record.with_mcp(None)
    assert isinstance(second, asyncio.CancelledError)
    assert not isinstance(first, BaseException) and first.content == "first done", first
    assert list(MessageRow.objects.filter(chat=record, role="user").values_list("content", flat=True)) == ["sleep"]
    assert ToolCallRow.objects.get(message__chat=record).result.content == "slept 2" and len(model.requests) == 2


def test_cancelling_a_record_aask_cancels_its_turn(model):
    """Cancelling the task awaiting ``record.aask`` (a client gone from an async view) cancels the running
    turn: the persisted flag is set from a thread (not the event loop, where Django refuses ORM work), the
    slow call stops long before its 30 s, and its row gets the cancelled result."""
    import asyncio
    import time

    from llm_mcp.chat.chat import CANCELLED

    record = record_on(model, tool_call("sleep", {"seconds": 30}), reply("never"))
    record.with_mcp(Echo)

    async def run() -> float:
        task = asyncio.ensure_future(record.aask("sleep"))
        while not model.requests:
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        cancelled_at = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - cancelled_at

    try:
        assert asyncio.run(run()) < 15
    finally:
        record.with_mcp(None)
    assert ToolCallRow.objects.get(message__chat=record).result.content == CANCELLED and len(model.requests) == 1
