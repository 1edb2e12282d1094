"""`DatabaseStore`: the chat `Store` over the message and tool call tables.

    store = DatabaseStore(record)
    llm_mcp.chat(model="gpt-4.1-mini", store=store).ask("Hello")
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from django.db import connections, models, transaction

from ..chat.messages import Message, ToolCall, clean_text
from ..chat.store import Store, with_answer
from ..client.question import open_entries
from .locks import TurnLock
from .rows import (
    CALL_FIELDS,
    MESSAGE_FIELDS,
    call_from_values,
    call_values,
    db_alias,
    message_from_row,
    message_from_values,
    message_model,
    row_values,
    storable,
    tool_call_model,
)

__all__ = ["DatabaseStore"]


class DatabaseStore(Store):
    """A chat's conversation in the database: one row per message and per tool call.

        store = DatabaseStore(record)
        llm_mcp.Chat("gpt-4.1-mini", store=store).ask("Hello")

    Every read is fresh (one query for the messages, one for their tool calls), so a decision
    saved by another process is seen by the next step of a turn here. Writes are small and
    immediate: a message with its tool calls in one transaction, one row per decision.

    A turn starts on clean rows: the first read of the history after the lock is taken drops
    what a process that died mid-write left (see `repair`), with one delete only when there is
    such a row, so a turn costs no query for it otherwise.
    """

    def __init__(self, record: models.Model):
        self.record = record
        lock = TurnLock(record)
        lock.on_acquire = self._repair_on_next_read  # each turn starts on clean rows
        lock.on_release = self._no_repair
        self.lock = lock  # the Store's optional lock: this chat's turns, across processes
        self._owner_thread = threading.get_ident()
        self._cancelled = bool(getattr(record, "cancelled", False))
        self._flag_sql: str | None = None  # the read of the cancelled flag, built on first use
        self._repair_due = False  # set while this process holds the lock and has not read the rows yet
        self.next_key: str | None = None  # the idempotency key of the next user message added
        self._open_seen: dict[tuple[Any, str], set[str]] = {}
        """By (message id, call id): the keys of the call's questions that were open when this
        store last read or wrote it (an answer stored since for one of them came from elsewhere)."""
        self.on_open_calls: Callable[[int], Any] | None = None
        """Called once, by the next read of the history, with the number of tool calls it finds
        with neither a result nor a person's pending or declining decision (when there are any)."""

    # -- reading --------------------------------------------------------------------------

    def messages(self) -> list[Message]:
        """Two queries whatever the length: the messages, then every tool call of the chat
        (read as tuples, not model instances nor dicts: the whole history is read every turn)."""
        return self._history(_History.rows("messages", self._db, self.record.pk))

    def cancelled_and_messages(self) -> tuple[bool, list[Message]]:
        """`cancelled` and `messages()` in the queries of `messages()` alone: the flag is a column
        of the messages' read (a subquery on the chat row, the same snapshot), so a turn's
        first step costs one query less. A chat without messages reads its flag on its own."""
        rows = _History.rows("flagged", self._db, self.record.pk)
        if not rows:
            return self.cancelled, self._history(rows)
        self._cancelled = bool(rows[0][-1])
        return self._cancelled, self._history([row[:-1] for row in rows])

    def _history(self, rows: list[tuple[Any, ...]]) -> list[Message]:
        """The messages of ``rows`` (the messages' read) with their tool calls, read now."""
        calls: dict[Any, list[ToolCall]] = {}
        answers: dict[Any, ToolCall] = {}
        unanswered = 0  # calls with no result that no person holds back (pending) or declined
        for values in _History.rows("calls", self._db, self.record.pk):
            call = dict(zip(_CALL_COLUMNS, values))
            built = call_from_values(call)
            message_id = call.pop("message_id")
            calls.setdefault(message_id, []).append(built)
            result = call.pop("result_id")
            if result is not None:
                answers[result] = built
                continue
            if built.pending_questions:
                self._seen_open(message_id, built.id, built.pending_questions)
            if call["approval"] not in ("pending", "declined"):
                unanswered += 1
        if self._repair_due:
            self._repair_due = False
            rows = self._without_half_written(list(rows), calls)
        if self.on_open_calls is not None:
            report, self.on_open_calls = self.on_open_calls, None
            if unanswered:
                report(unanswered)
        if not calls:  # a chat without tool calls (yet): nothing to look up per row
            return [message_from_row(row, [], None) for row in rows]
        messages = []
        for row in rows:
            parent = answers.get(row[0])
            message = message_from_row(row, calls.get(row[0], []), parent.id if parent is not None else None)
            if parent is not None and message.role == "tool":
                message.parent_tool_call = parent
            messages.append(message)
        return messages

    @property
    def cancelled(self) -> bool:
        """The persisted flag, read fresh (one small query), in any thread: a chat reads it before
        each step and, through its cancel scope, at each event a server streams, also in the
        worker threads of concurrent tool calls. A worker thread that had no database
        connection closes the one this read opened, so none is left behind."""
        value = self._read(lambda: self._read_flag(connections[self._db]))
        self._cancelled = bool(value)
        return self._cancelled

    def held_answer(self, message: Message, call: ToolCall, key: str) -> tuple[dict[str, Any] | None, bool]:
        """One query: the stored response of `call`'s question `key` (``None`` while open)
        and the chat's cancel flag, read fresh (an answer saved by any process is seen)."""
        calls = tool_call_model().objects.using(self._db).filter(tool_call_id=call.id, message__chat_id=self.record.pk)
        if message.id is not None:
            calls = calls.filter(message_id=message.id)
        row = self._read(lambda: calls.values_list("pending_questions", "message__chat__cancelled").first())
        if row is None:
            return None, self.cancelled
        self._cancelled = bool(row[1])
        found = next((q for q in row[0] or [] if isinstance(q, dict) and q.get("key") == key), None)
        return (found or {}).get("response"), self._cancelled

    def _read(self, query: Any) -> Any:
        """``query()``; in a thread that had no database connection, the one it opened is
        closed after, so none is left behind (the worker threads of concurrent tool calls)."""
        connection = connections[self._db]
        opened = threading.get_ident() != self._owner_thread and connection.connection is None
        try:
            return query()
        finally:
            if opened and not connection.in_atomic_block:
                connection.close()

    def _read_flag(self, connection: Any) -> bool:
        """The ``cancelled`` column of the chat row, or ``False`` when the row is gone: plain SQL,
        built once per store, since this runs at every step of a turn and the ORM's query
        building costs ten times the read itself."""
        if self._flag_sql is None:
            meta, quote = type(self.record)._meta, connection.ops.quote_name
            self._flag_sql = (f"SELECT {quote(meta.get_field('cancelled').column)} FROM {quote(meta.db_table)} "
                              f"WHERE {quote(meta.pk.column)} = %s")
        key = type(self.record)._meta.pk.get_db_prep_value(self.record.pk, connection)
        with connection.cursor() as cursor:
            cursor.execute(self._flag_sql, [key])
            row = cursor.fetchone()
        return bool(row[0]) if row else False

    def set_cancelled(self, value: bool) -> None:
        type(self.record)._default_manager.filter(pk=self.record.pk).update(cancelled=value)
        self.record.cancelled = self._cancelled = value

    # -- writing --------------------------------------------------------------------------

    def add(self, message: Message) -> Message:
        """Insert a message (and its tool calls). A tool result for a call that already has
        one is not stored twice: the first result stands, and is returned."""
        Row, Call = message_model(), tool_call_model()
        answered_already = False
        message.content = clean_text(message.content or "")  # what is returned is what is stored
        if not message.tool_calls and message.role not in ("user", "tool"):
            # One row and nothing read first: the INSERT is atomic by itself, so no transaction
            # of our own (its BEGIN and COMMIT cost a fifth of the write; most turns end here).
            message.id = Row.objects.create(chat_id=self.record.pk, key=None, **row_values(message)).pk
            return message
        with transaction.atomic(using=self._db):
            key = None
            if message.role == "user":  # the key waits for the user turn (a prompt may start with the assistant's)
                key, self.next_key = self.next_key, None
            row = Row.objects.create(chat_id=self.record.pk, key=key, **row_values(message))
            if message.tool_calls:
                Call.objects.bulk_create([Call(message=row, tool_call_id=call.id, name=call.name,
                                               **call_values(call)) for call in message.tool_calls])
            if message.role == "tool" and message.tool_call_id:
                calls = Call.objects.filter(tool_call_id=message.tool_call_id, message__chat_id=self.record.pk)
                latest = calls.order_by("-id").values_list("pk", "result_id").first()
                if latest is not None and latest[1] is None:
                    Call.objects.filter(pk=latest[0], result__isnull=True).update(result=row)
                elif latest is not None:
                    answered_already = True
                    transaction.set_rollback(True, using=self._db)  # the first result stands
        if answered_already:
            first = Row.objects.filter(pk=latest[1]).values(*MESSAGE_FIELDS).get()
            return message_from_values(first, [], message.tool_call_id)
        message.id = row.pk
        return message

    def save(self, message: Message) -> None:
        for call in message.tool_calls:
            self.save_call(message, call)

    def save_call(self, message: Message, call: ToolCall) -> None:
        """Write one call's state without undoing what another process recorded meanwhile.

        A decision (approved/declined) is only taken while the row is still pending, so two
        people deciding at once cannot both win: the second gets a ``ValueError`` naming the
        decision already made; the write that takes a decision writes nothing else (the call's
        other state is the turn's). The turn's writes never move ``approval`` back: ``"pending"``
        is only set on an undecided row. An answer saved by another process (`save_question`)
        after this process read the call is kept: while the call still asks a question this
        process saw open, the row is re-read under ``select_for_update`` in a short transaction
        (no server is contacted inside) and the stored answers are merged in. The transaction
        writes before it reads, so SQLite (which has no row locks) takes its write lock first
        and serializes it with `save_question` instead of failing one of them."""
        calls = tool_call_model().objects.filter(tool_call_id=call.id, message__chat_id=self.record.pk)
        if message.id is not None:
            calls = calls.filter(message_id=message.id)
        values = call_values(call)
        approval = values.pop("approval")
        if approval in ("approved", "declined"):
            if calls.filter(approval="pending").update(approval=approval):
                return  # a person's decision: the rest of the row is the turn's to write
            current = calls.values_list("approval", flat=True).first()
            if current != approval:
                raise ValueError(f"tool call {call.id} ({call.name}) was already decided elsewhere "
                                 f"(approval is {current or None!r})")
        elif approval == "pending":
            calls.filter(approval="").update(approval="pending")  # never undoes a decision made elsewhere
        seen = self._open_seen.get((message.id, call.id), set())
        if not seen.intersection(_open_keys(values["pending_questions"])):
            calls.update(**values)  # no question open since this store saw it: nothing to keep
            self._seen_open(message.id, call.id, values["pending_questions"])
            return
        questions = values.pop("pending_questions")
        with transaction.atomic(using=self._db):
            if not calls.update(**values):  # a write first: SQLite takes its write lock before the read
                return
            row = calls.select_for_update().values_list("pk", "pending_questions").first()
            values["pending_questions"] = _with_stored_answers(questions, row[1], seen)
            tool_call_model().objects.filter(pk=row[0]).update(pending_questions=values["pending_questions"])
        call.pending_questions = values["pending_questions"]
        self._seen_open(message.id, call.id, call.pending_questions)

    def _seen_open(self, message_id: Any, call_id: str, questions: Any) -> None:
        keys = _open_keys(questions)
        if keys:
            self._open_seen[(message_id, call_id)] = keys
        else:
            self._open_seen.pop((message_id, call_id), None)

    def save_question(self, message: Message, call: ToolCall, question: Any) -> None:
        """Record one question's answer on its call row, in a transaction that reads the row
        first, so two answers to two questions of one call both stay. Raises ``ValueError``
        when the question was answered elsewhere meanwhile, or the call no longer asks it.
        Contacts no server."""
        calls = tool_call_model().objects.filter(tool_call_id=call.id, message__chat_id=self.record.pk)
        if message.id is not None:
            calls = calls.filter(message_id=message.id)
        with transaction.atomic(using=self._db):
            calls.update(pending_questions=models.F("pending_questions"))  # a write first (SQLite's write lock), as save_call
            row = calls.select_for_update().values_list("pk", "pending_questions").first()
            stored = with_answer((row[1] if row else None) or [], question, call, elsewhere=True)
            tool_call_model().objects.filter(pk=row[0]).update(pending_questions=storable(stored))
        call.pending_questions = stored

    def _repair_on_next_read(self) -> None:
        self._repair_due = True

    def _no_repair(self) -> None:
        self._repair_due = False  # outside a turn, a half-written row may be a live turn's elsewhere

    def _without_half_written(self, rows: list[tuple[Any, ...]], calls: dict[Any, list[ToolCall]]) -> list[tuple[Any, ...]]:
        """``rows`` (read with ``MESSAGE_FIELDS``) without the ones `repair` removes, deleted
        here in one query when there are any."""
        doomed = {row[0] for row in rows
                  if row[1] == "assistant" and row[2] == "" and not row[3] and row[8] is None and row[0] not in calls}
        if not doomed:
            return rows
        message_model().objects.filter(pk__in=doomed).delete()
        return [row for row in rows if row[0] not in doomed]

    def repair(self) -> int:
        """Clean what a process that died mid-write may have left: assistant messages with no
        content, tool calls, attachments or provider data. Returns how many rows went.
        A turn does this by itself on its first read of the history; this is the same as a query.

        (Tool calls without a result need no cleaning: the next ``complete()`` runs them.)"""
        empty = message_model().objects.filter(chat_id=self.record.pk, role="assistant", content="",
                                               tool_calls__isnull=True, raw__isnull=True)
        doomed = [pk for pk, attachments in empty.values_list("pk", "attachments") if not attachments]
        return message_model().objects.filter(pk__in=doomed).delete()[0] if doomed else 0

    @property
    def _db(self) -> str:
        return db_alias(self.record)


def _open_keys(questions: Any) -> set[str]:
    """The keys of a call's stored ``pending_questions`` that have no response (`open_entries`);
    only string keys, the only ones this store matches against a row (and a set can hold)."""
    return {q["key"] for q in open_entries(questions) if isinstance(q.get("key"), str)}


def _with_stored_answers(mine: list[Any], stored: Any, seen: set[str]) -> list[Any]:
    """``mine`` (a writer's questions) with the stored entry of each question that was open when
    the writer last saw it (``seen``), is still open in ``mine`` and has a response in the row
    now: an answer another process recorded meanwhile. A question asked anew under a key
    answered before the writer saw it (a server asking again) stays open."""
    answers = {q["key"]: q for q in stored or []
               if isinstance(q, dict) and isinstance(q.get("key"), str) and q["key"] in seen
               and q.get("response") is not None}
    return [answers[q["key"]] if isinstance(q, dict) and q.get("response") is None and isinstance(q.get("key"), str)
            and q["key"] in answers else q for q in mine]


_CALL_COLUMNS = ("message_id", "result_id", *CALL_FIELDS)


class _History:
    """A chat's two history reads, as SQL written once per database and message models, then run
    with each chat's key; what every step of every turn reads, where building an ORM query and
    converting rows through the ORM cost more than reading a short history. The messages are
    read as ``"messages"``, or as ``"flagged"``: with the chat's ``cancelled`` flag as a last
    column (what a turn reads first; see `DatabaseStore.cancelled_and_messages`).

    Public API only: table and column names from the models' ``_meta``, names quoted by
    ``connection.ops.quote_name``, the key prepared by ``Field.get_db_prep_value``, values
    converted by each field's own ``from_db_value`` (JSON, custom fields), ``bool`` for booleans,
    and nothing for text, integers and keys. A column of any other type (a swapped-in model's)
    or another database vendor reads through the ORM's ``values_list`` instead (`plain` is
    ``False``), which gives the same rows, slower.
    """

    VENDORS = ("sqlite", "postgresql", "mysql")
    """Backends whose drivers return text, integers and keys as Python values already."""

    _built: dict[tuple[Any, ...], _History] = {}
    _guard = threading.Lock()

    def __init__(self, kind: str, db: str, Row: type[models.Model], Call: type[models.Model]):
        self.kind, self.db, self.Row, self.Call = kind, db, Row, Call
        connection = connections[db]
        quote = connection.ops.quote_name
        model, names = (Call, _CALL_COLUMNS) if kind == "calls" else (Row, MESSAGE_FIELDS)
        fields = [model._meta.get_field(name) for name in names]
        chat = Row._meta.get_field("chat")
        self.key_field = chat.target_field
        flag = chat.related_model._meta.get_field("cancelled")
        self.converters = [_converter(field, connection) for field in fields]
        if kind == "flagged":
            self.converters.append(_converter(flag, connection))
        self.plain = connection.vendor in self.VENDORS and all(c is not _UNKNOWN for c in self.converters)
        self.converting = [(i, c) for i, c in enumerate(self.converters) if c is not None and c is not _UNKNOWN]
        table = quote(model._meta.db_table)
        columns = ", ".join(f"{table}.{quote(field.column)}" for field in fields)
        self.keys = 1
        if kind == "flagged":  # the chat's flag, as a subquery: evaluated once, whatever the number of rows
            chats = quote(chat.related_model._meta.db_table)
            columns += (f", (SELECT {chats}.{quote(flag.column)} FROM {chats} "
                        f"WHERE {chats}.{quote(self.key_field.column)} = %s)")
            self.keys = 2
        if kind != "calls":
            self.sql = (f"SELECT {columns} FROM {table} WHERE {table}.{quote(chat.column)} = %s "
                        f"ORDER BY {table}.{quote(Row._meta.pk.column)}")
        else:
            message = Call._meta.get_field("message")
            rows = quote(Row._meta.db_table)
            self.sql = (f"SELECT {columns} FROM {table} INNER JOIN {rows} ON {table}.{quote(message.column)} = "
                        f"{rows}.{quote(message.target_field.column)} WHERE {rows}.{quote(chat.column)} = %s "
                        f"ORDER BY {table}.{quote(Call._meta.pk.column)}")

    @classmethod
    def rows(cls, kind: str, db: str, chat_pk: Any) -> list[tuple[Any, ...]]:
        """The rows of the ``"messages"``, ``"flagged"`` or ``"calls"`` read of chat ``chat_pk``,
        in id order, as tuples of ``MESSAGE_FIELDS`` (``"flagged"``: and the chat's ``cancelled``
        flag last) or ``_CALL_COLUMNS``."""
        if chat_pk is None:  # a chat not saved yet has no rows
            return []
        Row, Call = message_model(), tool_call_model()
        key = (kind, db, Row, Call)
        built = cls._built.get(key)
        if built is None:
            with cls._guard:
                built = cls._built.setdefault(key, cls(kind, db, Row, Call))
        return built.read(chat_pk)

    def read(self, chat_pk: Any) -> list[tuple[Any, ...]]:
        """This read for chat ``chat_pk`` (see `rows`)."""
        if not self.plain:
            return list(self.orm(chat_pk))
        connection = connections[self.db]
        with connection.cursor() as cursor:
            cursor.execute(self.sql, [self.key_field.get_db_prep_value(chat_pk, connection)] * self.keys)
            fetched = cursor.fetchall()
        converting = self.converting
        if not converting:
            return [tuple(row) for row in fetched]
        out = []
        for row in fetched:
            values = list(row)
            for i, convert in converting:
                values[i] = convert(values[i])
            out.append(tuple(values))
        return out

    def orm(self, chat_pk: Any) -> models.QuerySet[Any]:
        """The same read through the ORM (the fallback, and what tests compare `read` with)."""
        if self.kind != "calls":
            fields = (*MESSAGE_FIELDS, "chat__cancelled") if self.kind == "flagged" else MESSAGE_FIELDS
            return self.Row.objects.using(self.db).filter(chat_id=chat_pk).order_by("id").values_list(*fields)
        return (self.Call.objects.using(self.db).filter(message__chat_id=chat_pk).order_by("id")
                .values_list(*_CALL_COLUMNS))


_UNKNOWN = object()
"""A column type `_History` does not convert by itself: the read goes through the ORM."""

_AS_READ = (models.AutoField, models.BigAutoField, models.SmallAutoField, models.IntegerField,
            models.BigIntegerField, models.SmallIntegerField, models.PositiveIntegerField,
            models.PositiveBigIntegerField, models.PositiveSmallIntegerField, models.CharField, models.TextField)
"""Field classes (exactly these) whose values the drivers of `_History.VENDORS` return as Python values."""


def _converter(field: Any, connection: Any) -> Any:
    """What turns a database value of ``field`` into the ORM's: ``None`` (nothing to do), a
    callable, or `_UNKNOWN`."""
    if field.is_relation:
        return _converter(field.target_field, connection) if field.many_to_one or field.one_to_one else _UNKNOWN
    if hasattr(field, "from_db_value"):  # JSONField, custom fields: their documented hook
        convert = field.from_db_value
        if type(field) is models.JSONField and field.decoder is None:
            # Most attachment lists are empty: "[]" needs no parser (what json.loads would give).
            return lambda value: [] if value == "[]" else convert(value, None, connection)
        return lambda value: convert(value, None, connection)
    if type(field) is models.BooleanField:
        return lambda value: value if value is None else bool(value)
    return None if type(field) in _AS_READ else _UNKNOWN
