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
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.apps import apps
from django.db import connections, models, transaction

from . import conf
from .chat import Chat as LiveChat
from .chat.messages import Message, ToolCall, attachment_from_dict, attachment_to_dict

if TYPE_CHECKING:
    from .chat import Agent

__all__ = ["ChatRecord", "DatabaseStore", "TurnLock", "decode_inputs", "encode_inputs"]


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
        self._owner_thread = threading.get_ident()
        self._cancelled = bool(getattr(record, "cancelled", False))
        self.next_key: str | None = None  # the idempotency key of the next user message added

    # -- reading --------------------------------------------------------------------------

    def messages(self) -> list[Message]:
        rows = (message_model().objects.filter(chat_id=self.record.pk).order_by("id")
                .select_related("tool_result").prefetch_related("tool_calls"))
        return [_from_row(row) for row in rows]

    @property
    def cancelled(self) -> bool:
        """The persisted flag, read fresh. Tool calls running in worker threads see the value
        the chat's own thread read last (so those threads open no database connections)."""
        if threading.get_ident() == self._owner_thread:
            value = (type(self.record)._default_manager.filter(pk=self.record.pk)
                     .values_list("cancelled", flat=True).first())
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
        with transaction.atomic(using=self._db):
            key, self.next_key = (self.next_key if message.role == "user" else None), None
            row = Row.objects.create(chat_id=self.record.pk, key=key, **_row_values(message))
            if message.tool_calls:
                Call.objects.bulk_create([Call(message=row, tool_call_id=call.id, name=call.name,
                                               **_call_values(call)) for call in message.tool_calls])
            if message.role == "tool" and message.tool_call_id:
                calls = Call.objects.filter(tool_call_id=message.tool_call_id, message__chat_id=self.record.pk)
                if not calls.filter(result__isnull=True).update(result=row) and calls.exists():
                    answered_already = True
                    transaction.set_rollback(True, using=self._db)  # the first result stands
        if answered_already:
            first = Call.objects.select_related("result").get(tool_call_id=message.tool_call_id)
            return _from_row(first.result, tool_call_id=message.tool_call_id)
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
        values = _call_values(call)
        if call.approval in ("approved", "declined"):
            if not calls.filter(approval="pending").update(approval=call.approval):
                current = calls.values_list("approval", flat=True).first()
                if current != call.approval:
                    raise ValueError(f"tool call {call.id} ({call.name}) was already decided elsewhere "
                                     f"(approval is {current or None!r})")
            del values["approval"]  # taken above, only while pending
        calls.update(**values)

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
        return self.record._state.db or "default"


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
        db = self.record._state.db or "default"
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
        record.waiting, record.pending_approvals
        record.cancel()            # sets the persisted flag; the running turn stops

    The live chat behind a record (:attr:`chat`) is built on first use: from the agent that
    created the record when there is one (its instructions, tools and servers), else from
    the record's ``model``, ``provider`` and ``params`` alone, to which ``with_mcp``,
    ``with_tools`` and ``with_instructions`` add. Those additions live in this process; a
    job that resumes a chat in another process gets them from the record's agent.

    Provider options (``base_url``, ``api_key``) come from the agent, else from
    ``LLM_MCP["PROVIDER_OPTIONS"][provider]``, else from the provider SDK's environment
    variables. They are never stored in the row.
    """

    provider_options: dict[str, Any] | None = None

    @property
    def chat(self) -> LiveChat:
        """The :class:`llm_mcp.Chat` over this record's rows (built once per instance)."""
        live = self.__dict__.get("_live_chat")
        if live is None:
            live = self.__dict__["_live_chat"] = self._build_chat()
        return live

    def _build_chat(self) -> LiveChat:
        agent = self.__dict__.get("_agent") or self.load_agent()
        store = DatabaseStore(self)  # type: ignore[arg-type]
        store.lock.on_acquire = store.repair
        options = dict((conf.get("PROVIDER_OPTIONS") or {}).get(self.provider or "openai", {}))
        options.update(agent.provider_options if agent is not None else {})
        options.update(self.provider_options or {})
        live = LiveChat(self.model or (agent.model if agent else ""), self.provider or None, store=store,
                        params=self.params or None,
                        concurrency=agent.concurrency if agent is not None else 1, **options)
        if agent is not None:
            agent.build_chat(live)
        return live

    def load_agent(self) -> Agent | None:
        """The agent named in ``agent_class``, with its stored inputs (``None`` without one).

        Raises ``ImportError`` when the class cannot be imported here."""
        if not self.agent_class:
            return None
        module, _, name = self.agent_class.rpartition(".")
        try:
            agent_class = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError) as exc:
            raise ImportError(f"chat {self.pk} was set up by the agent {self.agent_class}, which cannot be imported "
                              "here; agents whose chats other processes resume must be defined at the top level "
                              "of an importable module") from exc
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
        return self.chat.messages

    def ask(self, text: str, *, with_: Any = None, stream: Callable[[str], None] | None = None,
            key: str | None = None) -> Message:
        """Add a user message and run the turn (see :meth:`llm_mcp.Chat.ask`).

        ``key`` makes it idempotent: when a user message with this key is already stored
        (a job that runs twice), it is not added again; the turn is completed instead."""
        chat = self.chat
        with chat.store.lock:
            if key is not None:
                if self.message_records.filter(key=key).exists():  # type: ignore[attr-defined]
                    return chat.complete(stream=stream)
                chat.store.next_key = key  # type: ignore[attr-defined]
            return chat.ask(text, with_=with_, stream=stream)

    def complete(self, *, stream: Callable[[str], None] | None = None) -> Message:
        """Run or resume the turn (see :meth:`llm_mcp.Chat.complete`)."""
        return self.chat.complete(stream=stream)

    @property
    def waiting(self) -> bool:
        return self.chat.waiting

    @property
    def pending_approvals(self) -> list[ToolCall]:
        """Calls that wait for ``approve()``/``decline()``; deciding saves to the database."""
        return self.chat.pending_approvals

    def cancel(self) -> None:
        """Set the persisted cancel flag: a turn running anywhere stops at its next check."""
        self.chat.cancel()

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
        this model); contacts no server."""
        provider = agent.provider if isinstance(agent.provider, str) else getattr(agent.provider, "name", "")
        record = cls._default_manager.create(  # type: ignore[attr-defined]
            model=agent.model, provider=provider or "openai", agent_class=agent_path(type(agent)),
            agent_inputs=encode_inputs(agent))
        record.__dict__["_agent"] = agent
        return record

    @classmethod
    def find_for_agent(cls, agent_class: type[Agent], pk: Any) -> ChatRecord:
        """The row ``pk``, set up by ``agent_class`` with the inputs stored in it (what
        ``Agent.find(pk)`` returns). Raises ``DoesNotExist``; contacts no server."""
        record = cls._default_manager.get(pk=pk)  # type: ignore[attr-defined]
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
    """An agent's inputs as JSON: model instances become ``{"$model": label, "pk": pk}``.

    Raises ``TypeError`` for an input that is neither JSON nor a saved model instance."""
    names = [agent.inputs] if isinstance(agent.inputs, str) else list(agent.inputs or ())
    encoded = {}
    for name in names:
        value = getattr(agent, name, None)
        if isinstance(value, models.Model):
            if value.pk is None:
                raise TypeError(f"{type(agent).__name__} input {name!r}: the {type(value).__name__} is not saved")
            encoded[name] = {"$model": value._meta.label_lower, "pk": value.pk}
        elif isinstance(value, (str, int, float, bool, type(None), list, dict)):
            encoded[name] = value
        else:
            raise TypeError(f"{type(agent).__name__} input {name!r} cannot be stored with the chat: "
                            f"{type(value).__name__} is not JSON or a model instance")
    return encoded


def decode_inputs(data: dict[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`encode_inputs` (one query per model instance)."""
    decoded = {}
    for name, value in data.items():
        if isinstance(value, dict) and set(value) == {"$model", "pk"}:
            value = apps.get_model(value["$model"])._default_manager.get(pk=value["pk"])
        decoded[name] = value
    return decoded


# -- rows <-> messages ---------------------------------------------------------------------

def _row_values(message: Message) -> dict[str, Any]:
    return {"role": message.role, "content": message.content or "",
            "attachments": [attachment_to_dict(a) for a in message.attachments],
            "is_error": message.is_error, "model": message.model or "",
            "input_tokens": message.input_tokens, "output_tokens": message.output_tokens, "raw": message.raw}


def _call_values(call: ToolCall) -> dict[str, Any]:
    return {"arguments": call.arguments, "approval": call.approval or "",
            "pending_questions": call.pending_questions, "request_state": call.request_state,
            "task": call.task, "mcp_result": call.mcp_result}


def _from_row(row: Any, *, tool_call_id: str | None = None) -> Message:
    if tool_call_id is None and row.role == "tool":
        try:
            tool_call_id = row.tool_result.tool_call_id
        except models.ObjectDoesNotExist:
            tool_call_id = None
    calls = [ToolCall(id=c.tool_call_id, name=c.name, arguments=c.arguments or {}, approval=c.approval or None,
                      pending_questions=c.pending_questions or [], request_state=c.request_state, task=c.task,
                      mcp_result=c.mcp_result)
             for c in row.tool_calls.all()] if row.role == "assistant" else []
    return Message(role=row.role, content=row.content, attachments=[attachment_from_dict(a) for a in row.attachments],
                   tool_calls=calls, tool_call_id=tool_call_id, is_error=row.is_error, model=row.model or None,
                   input_tokens=row.input_tokens, output_tokens=row.output_tokens, raw=row.raw, id=row.pk)
