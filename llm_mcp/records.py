"""Chat records: database rows that behave like :class:`llm_mcp.Chat`.

    record = Chat.objects.create(model="gpt-4.1-mini")
    record.with_mcp(Linear(user=user)).ask("Which issues are open?")
    Chat.objects.get(pk=record.pk).complete()     # later, in another process

:class:`DatabaseStore` is the chat :class:`~llm_mcp.chat.Store` over the message and tool
call tables; :class:`ChatRecord` is the behaviour the chat model mixes in; :class:`TurnLock`
makes turns of one chat run one at a time across processes.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import importlib
import json
import logging
import math
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.apps import apps
from django.db import connections, models, router, transaction

from . import conf
from .chat import Chat as LiveChat
from .chat.chat import is_waiting, pending_approvals, pending_questions, with_answer
from .chat.messages import (
    Message,
    ToolCall,
    attachment_from_dict,
    attachment_to_dict,
    clean_text,
)
from .client.prompt import Prompt

if TYPE_CHECKING:
    from .chat import Agent

__all__ = ["ChatRecord", "DatabaseStore", "TurnLock", "agent_path", "decode_inputs", "encode_inputs"]

log = logging.getLogger("llm_mcp.records")


def message_model() -> type[models.Model]:
    """The message model in use (``LLM_MCP_MESSAGE_MODEL``)."""
    return apps.get_model(conf.message_model_name(), require_ready=False)


def tool_call_model() -> type[models.Model]:
    return apps.get_model("llm_mcp", "ToolCall", require_ready=False)


class DatabaseStore:
    """A chat's conversation in the database: one row per message and per tool call.

        store = DatabaseStore(record)
        LiveChat("gpt-4.1-mini", store=store).ask("Hello")

    Every read is fresh (one query for the messages, one for their tool calls), so a decision
    saved by another process is seen by the next step of a turn here. Writes are small and
    immediate: a message with its tool calls in one transaction, one row per decision.
    """

    def __init__(self, record: models.Model):
        self.record = record
        self.lock = TurnLock(record)
        self.lock.on_acquire = self.repair  # each turn starts on clean rows
        self._owner_thread = threading.get_ident()
        self._cancelled = bool(getattr(record, "cancelled", False))
        self.next_key: str | None = None  # the idempotency key of the next user message added

    # -- reading --------------------------------------------------------------------------

    def messages(self) -> list[Message]:
        """Two queries whatever the length: the messages, then every tool call of the chat
        (read as values, not model instances: a long chat is read several times a turn)."""
        rows = message_model().objects.filter(chat_id=self.record.pk).order_by("id").values(*MESSAGE_FIELDS)
        calls: dict[Any, list[ToolCall]] = {}
        answers: dict[Any, str] = {}
        for call in (tool_call_model().objects.filter(message__chat_id=self.record.pk).order_by("id")
                     .values("message_id", "result_id", *CALL_FIELDS)):
            calls.setdefault(call.pop("message_id"), []).append(_call(call))
            result = call.pop("result_id")
            if result is not None:
                answers[result] = call["tool_call_id"]
        return [_message(row, calls.get(row["id"], []), answers.get(row["id"])) for row in rows]

    @property
    def cancelled(self) -> bool:
        """The persisted flag, read fresh (one small query), in any thread: a chat reads it before
        each step and, through its cancel scope, at each event a server streams, also in the
        worker threads of concurrent tool calls. A worker thread that had no database
        connection closes the one this read opened, so none is left behind."""
        connection = connections[self._db]
        opened = threading.get_ident() != self._owner_thread and connection.connection is None
        try:
            value = (type(self.record)._default_manager.using(self._db).filter(pk=self.record.pk)
                     .values_list("cancelled", flat=True).first())
        finally:
            if opened and not connection.in_atomic_block:
                connection.close()
        self._cancelled = bool(value)
        return self._cancelled

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
        with transaction.atomic(using=self._db):
            key = None
            if message.role == "user":  # the key waits for the user turn (a prompt may start with the assistant's)
                key, self.next_key = self.next_key, None
            row = Row.objects.create(chat_id=self.record.pk, key=key, **_row_values(message))
            if message.tool_calls:
                Call.objects.bulk_create([Call(message=row, tool_call_id=call.id, name=call.name,
                                               **_call_values(call)) for call in message.tool_calls])
            if message.role == "tool" and message.tool_call_id:
                calls = Call.objects.filter(tool_call_id=message.tool_call_id, message__chat_id=self.record.pk)
                latest = calls.order_by("-id").values_list("pk", "result_id").first()
                if latest is not None and latest[1] is None:
                    Call.objects.filter(pk=latest[0], result__isnull=True).update(result=row)
                elif latest is not None:
                    answered_already = True
                    transaction.set_rollback(True, using=self._db)  # the first result stands
        if answered_already:
            return _message(Row.objects.filter(pk=latest[1]).values(*MESSAGE_FIELDS).get(), [], message.tool_call_id)
        message.id = row.pk
        return message

    def save(self, message: Message) -> None:
        for call in message.tool_calls:
            self.save_call(message, call)

    def save_call(self, message: Message, call: ToolCall) -> None:
        """Write one call's state. A decision (approved/declined) is only taken while the row
        is still pending, so two people deciding at once cannot both win: the second gets a
        ``ValueError`` naming the decision already made."""
        calls = tool_call_model().objects.filter(tool_call_id=call.id, message__chat_id=self.record.pk)
        if message.id is not None:
            calls = calls.filter(message_id=message.id)
        values = _call_values(call)
        if call.approval in ("approved", "declined"):
            if not calls.filter(approval="pending").update(approval=call.approval):
                current = calls.values_list("approval", flat=True).first()
                if current != call.approval:
                    raise ValueError(f"tool call {call.id} ({call.name}) was already decided elsewhere "
                                     f"(approval is {current or None!r})")
            del values["approval"]  # taken above, only while pending
        calls.update(**values)

    def save_question(self, message: Message, call: ToolCall, question: Any) -> None:
        """Record one question's answer on its call row, in a transaction that reads the row
        first, so two answers to two questions of one call both stay. Raises ``ValueError``
        when the question was answered elsewhere meanwhile, or the call no longer asks it.
        Contacts no server."""
        calls = tool_call_model().objects.filter(tool_call_id=call.id, message__chat_id=self.record.pk)
        if message.id is not None:
            calls = calls.filter(message_id=message.id)
        with transaction.atomic(using=self._db):
            row = calls.select_for_update().values_list("pk", "pending_questions").first()
            stored = with_answer((row[1] if row else None) or [], question, call, elsewhere=True)
            tool_call_model().objects.filter(pk=row[0]).update(pending_questions=_storable(stored))
        call.pending_questions = stored

    def repair(self) -> int:
        """Clean what a process that died mid-write may have left: assistant messages with no
        content, tool calls, attachments or provider data. Returns how many rows went.

        (Tool calls without a result need no cleaning: the next ``complete()`` runs them.)"""
        empty = message_model().objects.filter(chat_id=self.record.pk, role="assistant", content="",
                                               tool_calls__isnull=True, raw__isnull=True)
        doomed = [pk for pk, attachments in empty.values_list("pk", "attachments") if not attachments]
        return message_model().objects.filter(pk__in=doomed).delete()[0] if doomed else 0

    @property
    def _db(self) -> str:
        return _alias(self.record)


class TurnLock:
    """Holds one chat for a turn, across threads and processes; re-entrant in one thread.

        with TurnLock(record):
            ...   # no other turn of this chat runs here or elsewhere

    On PostgreSQL it is a session advisory lock (released by the server if the process dies);
    on an SQLite file, an ``flock`` on a file next to the database (released by the kernel);
    elsewhere (in-memory SQLite, other databases) a lock within this process. It holds no
    transaction open, so each message a turn writes is visible to other processes at once.
    Raises ``TimeoutError`` after ``LLM_MCP["TURN_LOCK_TIMEOUT"]`` seconds of waiting.
    """

    _local_locks: dict[Any, threading.Lock] = {}
    _local_guard = threading.Lock()

    def __init__(self, record: models.Model):
        self.record = record
        self._held = threading.local()
        self.on_acquire: Callable[[], Any] | None = None

    def __enter__(self) -> TurnLock:
        depth = getattr(self._held, "depth", 0)
        if depth == 0:
            self._held.release = self._acquire()
            if self.on_acquire is not None:
                self.on_acquire()
        self._held.depth = depth + 1
        return self

    def __exit__(self, *exc: Any) -> None:
        self._held.depth -= 1
        if self._held.depth == 0:
            release, self._held.release = self._held.release, None
            release()

    def _acquire(self) -> Callable[[], None]:
        db = _alias(self.record)
        connection = connections[db]
        name = f"{self.record._meta.db_table}:{self.record.pk}"
        deadline = time.monotonic() + float(conf.get("TURN_LOCK_TIMEOUT"))
        if connection.vendor == "postgresql":
            key = int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big", signed=True)

            def try_pg() -> Callable[[], None] | None:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_try_advisory_lock(%s)", [key])
                    if not cursor.fetchone()[0]:
                        return None
                return functools.partial(_pg_unlock, connection, key)

            return _wait(try_pg, deadline, name)
        path = _sqlite_lock_path(connection, name)
        if path is not None:
            def try_file() -> Callable[[], None] | None:
                handle = open(path, "a")  # noqa: SIM115 - closed by the release function
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    handle.close()
                    return None
                return handle.close  # closing the file releases the lock

            return _wait(try_file, deadline, name)
        with self._local_guard:
            lock = self._local_locks.setdefault((db, name), threading.Lock())

        def try_local() -> Callable[[], None] | None:
            return lock.release if lock.acquire(blocking=False) else None

        return _wait(try_local, deadline, name)


def _alias(record: models.Model) -> str:
    """The database alias a record was loaded from (or will be saved to)."""
    return record._state.db or "default"


def _wait(attempt: Callable[[], Callable[[], None] | None], deadline: float, name: str) -> Callable[[], None]:
    delay = 0.02
    while True:
        release = attempt()
        if release is not None:
            return release
        if time.monotonic() > deadline:
            raise TimeoutError(f"another turn of chat {name} has run for longer than "
                               f"LLM_MCP['TURN_LOCK_TIMEOUT'] ({conf.get('TURN_LOCK_TIMEOUT')} s)")
        time.sleep(delay)
        delay = min(delay * 2, 0.25)


def _pg_unlock(connection: Any, key: int) -> None:
    if connection.connection is None:
        return  # the connection closed: the server released the lock with it
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_unlock(%s)", [key])


def _sqlite_lock_path(connection: Any, name: str) -> Path | None:
    if connection.vendor != "sqlite":
        return None
    database = str(connection.settings_dict.get("NAME") or "")
    if not database or connection.is_in_memory_db():
        return None
    folder = Path(conf.get("LOCK_DIR") or Path(database).resolve().parent / ".llm_mcp_locks")
    folder.mkdir(parents=True, exist_ok=True)
    digest = hashlib.blake2b(f"{Path(database).resolve()}|{name}".encode(), digest_size=10).hexdigest()
    return folder / f"{digest}.lock"


# -- the behaviour of chat records ---------------------------------------------------------

class ChatRecord:
    """What makes a chat row behave like :class:`llm_mcp.Chat` (mixed into ``AbstractChat``).

        record.with_mcp(Files).ask("What is in README.md?")
        record.waiting, record.pending_approvals, record.pending_questions
        record.cancel()            # sets the persisted flag; the running turn stops

    The live chat behind a record (:attr:`chat`) is built on first use: from the agent that
    created the record when there is one (its instructions, tools and servers), else from
    the record's ``model``, ``provider`` and ``params`` alone, to which ``with_mcp``,
    ``with_tools`` and ``with_instructions`` add. Those additions live in this process; a
    job that resumes a chat in another process gets them from the record's agent.
    ``messages``, ``waiting`` and ``pending_approvals`` read the rows without it.

    Provider options (``base_url``, ``api_key``) come from the agent, else from
    ``LLM_MCP["PROVIDER_OPTIONS"][provider]``, else from the provider SDK's environment
    variables. They are never stored in the row.
    """

    provider_options: dict[str, Any] | None = None

    @property
    def store(self) -> DatabaseStore:
        """The :class:`DatabaseStore` over this record's rows (one per instance).

        Raises ``ValueError`` for a chat that is not saved yet."""
        store = self.__dict__.get("_store")
        if store is None:
            if self.pk is None:
                raise ValueError(f"save the {type(self).__name__} first: its messages are rows that point at it")
            store = self.__dict__["_store"] = DatabaseStore(self)  # type: ignore[arg-type]
        return store

    @property
    def chat(self) -> LiveChat:
        """The :class:`llm_mcp.Chat` over this record's rows (built once per instance)."""
        live = self.__dict__.get("_live_chat")
        if live is None:
            live = self.__dict__["_live_chat"] = self._build_chat()
        return live

    def _build_chat(self) -> LiveChat:
        agent = self.__dict__.get("_agent") or self.load_agent()
        options = dict(conf.get("PROVIDER_OPTIONS").get(self.provider or "openai", {}))
        options.update(agent.provider_options if agent is not None else {})
        options.update(self.provider_options or {})
        live = LiveChat(self.model or (agent.model if agent else ""), self.provider or None, store=self.store,
                        params=self.params or None,
                        concurrency=agent.concurrency if agent is not None else 1, **options)
        if agent is not None:
            agent.build_chat(live)
        return live

    def load_agent(self) -> Agent | None:
        """The agent named in ``agent_class``, with its stored inputs (``None`` without one).

        Raises ``ImportError`` when the class cannot be imported here, and ``TypeError`` when
        the name is not an :class:`llm_mcp.Agent` subclass (a row is data: it never names
        just any callable to run)."""
        from .chat import Agent

        if not self.agent_class:
            return None
        module, _, name = self.agent_class.rpartition(".")
        try:
            agent_class = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError, ValueError) as exc:
            raise ImportError(f"chat {self.pk} was set up by the agent {self.agent_class}, which cannot be imported "
                              "here; agents whose chats other processes resume must be defined at the top level "
                              "of an importable module") from exc
        if not (isinstance(agent_class, type) and issubclass(agent_class, Agent)):
            raise TypeError(f"chat {self.pk}: agent_class {self.agent_class!r} is not an llm_mcp.Agent subclass")
        agent = agent_class(**decode_inputs(self.agent_inputs or {}))
        self.__dict__["_agent"] = agent
        return agent

    # -- the chat interface, delegated ------------------------------------------------------

    def with_mcp(self, *servers: Any, defer: bool = False) -> ChatRecord:
        """Connect MCP servers (see :meth:`llm_mcp.Chat.with_mcp`); returns the record."""
        self.chat.with_mcp(*servers, defer=defer)
        return self

    def with_tools(self, *tools: Any, choice: str | None = None, replace: bool = False) -> ChatRecord:
        """Add Python tools (see :meth:`llm_mcp.Chat.with_tools`); returns the record."""
        self.chat.with_tools(*tools, choice=choice, replace=replace)
        return self

    def with_instructions(self, text: str, *, replace: bool = False) -> ChatRecord:
        """Add system instructions (see :meth:`llm_mcp.Chat.with_instructions`); returns the record."""
        self.chat.with_instructions(text, replace=replace)
        return self

    @property
    def mcp(self) -> Any:
        """The connected servers, by name (``record.mcp.linear``)."""
        return self.chat.mcp

    @property
    def tools(self) -> list[Any]:
        return self.chat.tools

    @property
    def messages(self) -> list[Message]:
        """The conversation as :class:`llm_mcp.chat.Message` objects, read fresh."""
        return self.store.messages()

    def ask(self, text: str | Prompt, *, with_: Any = None, stream: Callable[[str], None] | None = None,
            key: str | None = None) -> Message:
        """Add a user message and run the turn (see :meth:`llm_mcp.Chat.ask`).

        ``text`` may be an MCP :class:`~llm_mcp.Prompt`: each of its turns is stored as a
        message row (assistant turns included), then the model answers.
        ``key`` (at most 255 characters) makes it idempotent: when a user message with this
        key is stored already (a job that runs twice), it is not added again and the turn is
        completed instead. The same key with another text raises ``ValueError`` (for a
        prompt, the key goes on its first user turn and is compared with that turn's text)."""
        if key is not None and (not isinstance(key, str) or not 0 < len(key) <= 255):
            raise ValueError(f"key must be a string of 1 to 255 characters, not {str(key)[:40]!r}...")
        chat = self.chat
        with chat.store.lock:
            if key is not None:
                stored = self.message_records.filter(key=key).values_list("content", flat=True).first()  # type: ignore[attr-defined]
                if stored is not None:
                    if isinstance(text, Prompt):
                        text = next((t.content for t in text.messages if t.role == "user"), "")
                    if stored != text:
                        raise ValueError(f"chat {self.pk} already has a message with key {key!r}, with another text")
                    return chat.complete(stream=stream)
                self.store.next_key = key
            try:
                return chat.ask(text, with_=with_, stream=stream)
            finally:
                self.store.next_key = None  # used by the user turn, or dropped when ask() refused

    def complete(self, *, stream: Callable[[str], None] | None = None) -> Message:
        """Run or resume the turn (see :meth:`llm_mcp.Chat.complete`)."""
        chat = self.chat
        if not self.agent_class and not list(chat.mcp) and not chat._tools:
            open_calls = (tool_call_model().objects.filter(message__chat_id=self.pk, result__isnull=True)
                          .exclude(approval__in=("pending", "declined")).count())  # one small query, no history
            if open_calls:
                log.warning("chat %s has no agent and no tools in this process: its %d open tool call(s) will be "
                            "answered that the tool does not exist (tools added with with_mcp/with_tools in "
                            "another process are not here; use an agent with chat_class)", self.pk, open_calls)
        return chat.complete(stream=stream)

    @property
    def waiting(self) -> bool:
        """Whether a tool call waits for a person (or a server task)."""
        return is_waiting(self.store)

    @property
    def pending_approvals(self) -> list[ToolCall]:
        """Calls that wait for ``approve()``/``decline()``; deciding saves to the database."""
        return pending_approvals(self.store)

    @property
    def pending_questions(self) -> list[Any]:
        """The open :class:`llm_mcp.Question` objects of paused calls; ``answer()``/``decline()``
        saves to the tool call row and contacts no server (``resume_chat`` or ``complete()``
        sends the answers)."""
        return pending_questions(self.store)

    def after_tool_progress(self, callback: Callable[[ToolCall, Any], Any]) -> ChatRecord:
        """Call ``callback(tool_call, progress)`` for each progress report of a tool call run in
        this process (see :meth:`llm_mcp.Chat.after_tool_progress`); returns the record."""
        self.chat.after_tool_progress(callback)
        return self

    def cancel(self) -> None:
        """Set the persisted cancel flag: a turn running anywhere stops at its next check, and a
        server call it waits on stops at the next event the server streams.
        (A paused chat has no running turn: the next ``complete()`` starts a new one.)"""
        live = self.__dict__.get("_live_chat")
        if live is not None:
            live.cancel()
        else:
            self.store.set_cancelled(True)

    def close(self) -> None:
        """Close the servers the chat built from classes (see :meth:`llm_mcp.Chat.close`); a
        job calls it when it is done, so no stdio process outlives it."""
        live = self.__dict__.get("_live_chat")
        if live is not None:
            live.close()

    # -- agents -----------------------------------------------------------------------------

    @classmethod
    def for_agent(cls, agent: Agent) -> ChatRecord:
        """A new row for ``agent`` (what ``Agent.chat()`` returns when ``chat_class`` names
        this model). The chat is set up at once, so a bad declaration raises here and saves
        nothing; no server is contacted."""
        path = agent_path(type(agent))
        if "<locals>" in path or path.startswith("__main__."):
            log.warning("%s is defined where no other process can import it (%s): its chats cannot be resumed "
                        "by a job", type(agent).__qualname__, path)
        provider = agent.provider if isinstance(agent.provider, str) else getattr(agent.provider, "name", "")
        with transaction.atomic(using=router.db_for_write(cls)):
            record = cls._default_manager.create(  # type: ignore[attr-defined]
                model=agent.model, provider=provider or "openai", agent_class=path,
                agent_inputs=encode_inputs(agent))
            record.__dict__["_agent"] = agent
            record.chat  # noqa: B018 - builds the chat: declarations are checked now
        return record

    @classmethod
    def find_for_agent(cls, agent_class: type[Agent], pk: Any) -> ChatRecord:
        """The row ``pk``, set up by ``agent_class`` with the inputs stored in it (what
        ``Agent.find(pk)`` returns). Raises ``DoesNotExist``, and ``ValueError`` when another
        agent set the chat up. Contacts no server."""
        record = cls._default_manager.get(pk=pk)  # type: ignore[attr-defined]
        if record.agent_class and record.agent_class != agent_path(agent_class):
            raise ValueError(f"chat {pk} was set up by {record.agent_class}, not {agent_path(agent_class)}")
        record.__dict__["_agent"] = agent_class(**decode_inputs(record.agent_inputs or {}))
        return record


# -- agents as JSON ------------------------------------------------------------------------

def agent_path(agent_class: type) -> str:
    """The import path another process loads ``agent_class`` from.

    A class defined in a module run with ``python -m package.module`` is found under that
    module's real name, not ``__main__``. A class defined in a function or a plain script
    gets a path no other process can import: :meth:`ChatRecord.load_agent` says so there."""
    module = agent_class.__module__
    if module == "__main__":
        spec = getattr(sys.modules["__main__"], "__spec__", None)
        module = spec.name if spec is not None else module
    return f"{module}.{agent_class.__qualname__}"


def encode_inputs(agent: Agent) -> dict[str, Any]:
    """An agent's inputs as JSON, each in an envelope: ``{"$model": label, "pk": pk}`` for a
    saved model instance, ``{"$json": value}`` for anything else JSON can hold.

    Raises ``TypeError`` naming the input for anything else (an unsaved instance, an object,
    a model instance inside a list or dict)."""
    names = [agent.inputs] if isinstance(agent.inputs, str) else list(agent.inputs or ())
    encoded = {}
    for name in names:
        value = getattr(agent, name, None)
        if isinstance(value, models.Model):
            if value.pk is None:
                raise TypeError(f"{type(agent).__name__} input {name!r}: the {type(value).__name__} is not saved")
            encoded[name] = {"$model": value._meta.label_lower, "pk": value.pk}
            continue
        try:
            json.dumps(value)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{type(agent).__name__} input {name!r} cannot be stored with the chat: {exc} (inputs "
                            "are JSON values or saved model instances)") from None
        encoded[name] = {"$json": value}
    return encoded


def decode_inputs(data: dict[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`encode_inputs` (one query per model instance)."""
    decoded = {}
    for name, value in data.items():
        if isinstance(value, dict) and set(value) == {"$model", "pk"}:
            value = apps.get_model(value["$model"])._default_manager.get(pk=value["pk"])
        elif isinstance(value, dict) and set(value) == {"$json"}:
            value = value["$json"]
        else:
            raise ValueError(f"agent input {name!r} is not stored in an envelope ($json or $model): {value!r:.80}")
        decoded[name] = value
    return decoded


# -- rows <-> messages ---------------------------------------------------------------------

def _row_values(message: Message) -> dict[str, Any]:
    return {"role": message.role, "content": message.content,  # cleaned by add()
            "attachments": _storable([attachment_to_dict(a) for a in message.attachments]),
            "is_error": message.is_error, "model": clean_text(message.model or ""),
            "input_tokens": message.input_tokens, "output_tokens": message.output_tokens,
            "raw": _storable(message.raw)}


def _call_values(call: ToolCall) -> dict[str, Any]:
    return {"arguments": _storable(call.arguments), "approval": call.approval or "",
            "pending_questions": _storable(call.pending_questions), "request_state": call.request_state,
            "task": _storable(call.task), "mcp_result": _storable(call.mcp_result)}


def _storable(value: Any) -> Any:
    """``value`` as every database's JSON column takes it: unpaired surrogates in strings
    become U+FFFD, and NaN/Infinity (which JSON lacks) become ``None``. What a model or a
    server sends is kept otherwise as it is."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {clean_text(str(key)): _storable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_storable(item) for item in value]
    return value


MESSAGE_FIELDS = ("id", "role", "content", "attachments", "is_error", "model", "input_tokens", "output_tokens", "raw")
CALL_FIELDS = ("tool_call_id", "name", "arguments", "approval", "pending_questions", "request_state", "task",
               "mcp_result")


def _call(values: dict[str, Any]) -> ToolCall:
    return ToolCall(id=values["tool_call_id"], name=values["name"], arguments=values["arguments"] or {},
                    approval=values["approval"] or None, pending_questions=values["pending_questions"] or [],
                    request_state=values["request_state"], task=values["task"], mcp_result=values["mcp_result"])


def _message(values: dict[str, Any], calls: list[ToolCall], tool_call_id: str | None) -> Message:
    return Message(role=values["role"], content=values["content"],
                   attachments=[attachment_from_dict(a) for a in values["attachments"] or ()],
                   tool_calls=calls if values["role"] == "assistant" else [],
                   tool_call_id=tool_call_id if values["role"] == "tool" else None, is_error=values["is_error"],
                   model=values["model"] or None, input_tokens=values["input_tokens"],
                   output_tokens=values["output_tokens"], raw=values["raw"], id=values["id"])
