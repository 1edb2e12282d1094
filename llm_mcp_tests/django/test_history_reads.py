"""A saved chat's history reads: plain SQL written once from public Django API, giving exactly
the rows the ORM gives (SQLite and PostgreSQL, marker ``db``), and the ORM itself for columns of
other types."""

from __future__ import annotations

import pytest
from django.db import connection, models

from llm_mcp.db.store import _CALL_COLUMNS, DatabaseStore, _converter, _History
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


@pytest.mark.parametrize("kind", ["messages", "calls"])
def test_the_history_read_gives_the_orms_rows(kind):
    """Each history read is the SQL path (not the fallback) on this database, and its rows equal
    the ORM's ``values_list`` of the same columns, value for value and type for type (booleans,
    JSON, NULLs, keys). If Django's public field or backend API changes shape, this fails."""
    record = _varied_chat()
    history = _History(kind, "default", MessageRow, ToolCallRow)
    assert history.plain, f"{connection.vendor}: the history should be read as plain SQL"
    fast, orm = history.read(record.pk), list(history.orm(record.pk))
    assert len(fast) == (4 if kind == "messages" else 2)
    assert fast == orm
    assert [[type(v) for v in row] for row in fast] == [[type(v) for v in row] for row in orm]
    assert len(fast[0]) == len(MESSAGE_FIELDS if kind == "messages" else _CALL_COLUMNS)


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
