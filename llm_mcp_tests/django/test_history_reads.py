"""A saved chat's history reads: plain SQL written once from public Django API, giving exactly
the rows the ORM gives (SQLite and PostgreSQL, marker ``db``), and the ORM itself for columns of
other types."""

from __future__ import annotations

import pytest
from django.db import connection, models

from llm_mcp.db.store import _CALL_COLUMNS, DatabaseStore, _converter, _History
from llm_mcp.chat.messages import ToolCall
from llm_mcp.db.rows import MESSAGE_FIELDS
from llm_mcp.models import Chat as ChatRecord
from llm_mcp.models import Message as MessageRow
from llm_mcp.models import ToolCall as ToolCallRow

pytestmark = [pytest.mark.db, pytest.mark.django_db(transaction=True)]


def _varied_chat() -> ChatRecord:
    """A chat whose rows use every column the history reads, in several shapes."""
    record = ChatRecord.objects.create(model="gpt-test")
    other = ChatRecord.objects.create(model="gpt-test")  # its rows must not be read
    MessageRow.objects.create(chat=other, role="user", content="elsewhere")
    MessageRow.objects.create(chat=record, role="user", content="héllo", key="k1")
    asked = MessageRow.objects.create(chat=record, role="assistant", content="", model="gpt-x", input_tokens=12,
                                      output_tokens=3, raw={"id": "r1", "nested": [1, {"a": None}]})
    answer = MessageRow.objects.create(chat=record, role="tool", content="4", is_error=True,
                                       attachments=[{"kind": "image", "mime_type": "image/png", "content": "AA=="}])
    ToolCallRow.objects.create(message=asked, result=answer, tool_call_id="call_1", name="double",
                               arguments={"n": 2}, approval="approved", task={"taskId": "t1"},
                               mcp_result={"content": [{"type": "text", "text": "4"}], "isError": False})
    ToolCallRow.objects.create(message=asked, tool_call_id="call_2", name="ask", arguments={},
                               pending_questions=[{"key": "q", "response": None}], request_state="s",
                               ui_uri="ui://x")
    MessageRow.objects.create(chat=record, role="assistant", content="done", attachments=[])
    return record


@pytest.mark.parametrize("kind", ["messages", "flagged", "calls"])
def test_the_history_read_gives_the_orms_rows(kind):
    """Each history read is the SQL path (not the fallback) on this database, and its rows equal
    the ORM's ``values_list`` of the same columns, value for value and type for type (booleans,
    JSON, NULLs, keys; ``flagged``: the chat's ``cancelled`` flag last, as the ORM's join reads
    it). If Django's public field or backend API changes shape, this fails."""
    record = _varied_chat()
    for cancelled in (False, True):
        ChatRecord.objects.filter(pk=record.pk).update(cancelled=cancelled)
        history = _History(kind, "default", MessageRow, ToolCallRow)
        assert history.plain, f"{connection.vendor}: the history should be read as plain SQL"
        fast, orm = history.read(record.pk), list(history.orm(record.pk))
        assert len(fast) == (2 if kind == "calls" else 4)
        assert fast == orm
        assert [[type(v) for v in row] for row in fast] == [[type(v) for v in row] for row in orm]
        width = {"messages": len(MESSAGE_FIELDS), "flagged": len(MESSAGE_FIELDS) + 1, "calls": len(_CALL_COLUMNS)}
        assert len(fast[0]) == width[kind]
        if kind == "flagged":
            assert [row[-1] for row in fast] == [cancelled] * 4


def test_the_flag_and_the_messages_read_together_are_the_two_reads():
    """``cancelled_and_messages()`` (what a turn reads first) gives what ``cancelled`` and
    ``messages()`` give, in one query less, for a set and a cleared flag and an empty chat."""
    from django.test.utils import CaptureQueriesContext

    record = _varied_chat()
    empty = ChatRecord.objects.create(model="gpt-test")
    for chat in (record, empty):
        for cancelled in (True, False):
            ChatRecord.objects.filter(pk=chat.pk).update(cancelled=cancelled)
            store = DatabaseStore(ChatRecord.objects.get(pk=chat.pk))
            with CaptureQueriesContext(connection) as together:
                flag, messages = store.cancelled_and_messages()
            with CaptureQueriesContext(connection) as apart:
                expected = (store.cancelled, store.messages())
            assert (flag, messages) == expected and flag is cancelled
            assert len(together) == len(apart) - (1 if chat is record else 0)
    assert [m.role for m in DatabaseStore(record).cancelled_and_messages()[1]] == ["user", "assistant", "tool",
                                                                                   "assistant"]


def test_a_message_row_fills_the_message_fields_in_order():
    """``message_from_row`` builds a ``Message`` from positional arguments: each value lands in
    the field of its name (a reordered ``Message`` dataclass would fail here)."""
    from llm_mcp.chat.messages import Message
    from llm_mcp.db.rows import message_from_row

    call = ToolCall("call_1", "double", {"n": 2})
    built = message_from_row((7, "assistant", "text", [], True, "gpt-x", 11, 3, {"r": 1}), [call], None)
    assert built == Message(role="assistant", content="text", attachments=[], tool_calls=[call], tool_call_id=None,
                            is_error=True, model="gpt-x", input_tokens=11, output_tokens=3, raw={"r": 1}, id=7)
    answer = message_from_row((8, "tool", "4", [], False, "", None, None, None), [], "call_1")
    assert answer == Message(role="tool", content="4", tool_call_id="call_1", id=8)


def test_an_empty_attachment_list_is_a_new_list_each_time():
    """The shortcut for ``[]`` gives a fresh list per row, as the JSON parser does."""
    record = _varied_chat()
    rows = _History("messages", "default", MessageRow, ToolCallRow).read(record.pk)
    empties = [row[3] for row in rows if row[3] == []]
    assert len(empties) == 3 and empties[0] is not empties[1]


def test_columns_of_other_types_are_read_through_the_orm():
    """A field type the SQL path does not convert itself (a decimal, a UUID, a date) makes the read
    go through the ORM, and the store's messages are the same either way."""
    for field in (models.DecimalField(max_digits=5, decimal_places=2), models.UUIDField(), models.DateTimeField()):
        assert _converter(field, connection) is not None and not callable(_converter(field, connection))
    record = _varied_chat()
    store = DatabaseStore(record)
    fast = [(m.id, m.role, m.content, m.is_error, m.raw, [c.id for c in m.tool_calls]) for m in store.messages()]
    try:
        for history in list(_History._built.values()):
            history.plain = False
        slow = [(m.id, m.role, m.content, m.is_error, m.raw, [c.id for c in m.tool_calls]) for m in store.messages()]
    finally:
        _History._built.clear()
    assert fast == slow and len(fast) == 4
    assert fast[1][4] == {"id": "r1", "nested": [1, {"a": None}]} and fast[2][3] is True
