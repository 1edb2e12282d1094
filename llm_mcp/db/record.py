"""`ChatRecord`: what makes a chat row behave like `llm_mcp.Chat` (mixed into
``llm_mcp.models.AbstractChat``).

    record = Chat.objects.create(model="gpt-4.1-mini")
    record.with_mcp(Linear(user=user)).ask("Which issues are open?")
    Chat.objects.get(pk=record.pk).complete()     # later, in another process
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from typing import Any

from django.db import connections, router, transaction

from .. import conf
from ..chat import Agent
from ..chat import Chat as LiveChat
from ..chat.messages import Message, ToolCall
from ..chat.store import is_waiting, pending_approvals, pending_questions
from ..client import offload
from ..client.prompt import Prompt
from .agents import agent_path, decode_inputs, encode_inputs
from .store import DatabaseStore

__all__ = ["ChatRecord"]

log = logging.getLogger("llm_mcp.records")


class ChatRecord:
    """What makes a chat row behave like `llm_mcp.Chat` (mixed into ``AbstractChat``).

        record.with_mcp(Files).ask("What is in README.md?")
        record.waiting, record.pending_approvals, record.pending_questions
        record.cancel()            # sets the persisted flag; the running turn stops

    The live chat behind a record (`chat`) is built on first use: from the agent that
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
        """The `DatabaseStore` over this record's rows (one per instance).

        Raises ``ValueError`` for a chat that is not saved yet."""
        store = self.__dict__.get("_store")
        if store is None:
            if self.pk is None:
                raise ValueError(f"save the {type(self).__name__} first: its messages are rows that point at it")
            store = self.__dict__["_store"] = DatabaseStore(self)  # type: ignore[arg-type]
        return store

    @property
    def chat(self) -> LiveChat:
        """The `llm_mcp.Chat` over this record's rows (built once per instance)."""
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
        the name is not an `llm_mcp.Agent` subclass (a row is data: it never names
        just any callable to run)."""
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
        """Connect MCP servers (see `llm_mcp.Chat.with_mcp`); returns the record."""
        self.chat.with_mcp(*servers, defer=defer)
        return self

    def with_tools(self, *tools: Any, choice: str | None = None, replace: bool = False) -> ChatRecord:
        """Add Python tools (see `llm_mcp.Chat.with_tools`); returns the record."""
        self.chat.with_tools(*tools, choice=choice, replace=replace)
        return self

    def with_instructions(self, text: str, *, replace: bool = False) -> ChatRecord:
        """Add system instructions (see `llm_mcp.Chat.with_instructions`); returns the record."""
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
        """The conversation as `llm_mcp.chat.Message` objects, read fresh."""
        return self.store.messages()

    def ask(self, text: str | Prompt, *, with_: Any = None, stream: Callable[[str], None] | None = None,
            key: str | None = None) -> Message:
        """Add a user message and run the turn (see `llm_mcp.Chat.ask`).

        ``text`` may be an MCP `llm_mcp.Prompt`: each of its turns is stored as a
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
        """Run or resume the turn (see `llm_mcp.Chat.complete`)."""
        chat = self.chat
        if not self.agent_class and not list(chat.mcp) and not chat.given_tools:
            def warn(open_calls: int) -> None:  # told by the turn's first read of the history: no query of its own
                log.warning("chat %s has no agent and no tools in this process: its %d open tool call(s) will be "
                            "answered that the tool does not exist (tools added with with_mcp/with_tools in "
                            "another process are not here; use an agent with chat_class)", self.pk, open_calls)

            self.store.on_open_calls = warn
        try:
            return chat.complete(stream=stream)
        finally:
            self.store.on_open_calls = None

    async def aask(self, text: str | Prompt, *, with_: Any = None, stream: Callable[[str], None] | None = None,
                   key: str | None = None) -> Message:
        """The async twin of `ask`, for async views: the turn (its database, model and MCP work)
        runs in a thread of its own (``llm_mcp.client.offload``), whose database connections
        are closed when it ends. Cancelling the awaiting task cancels the turn (`cancel`) and
        raises ``asyncio.CancelledError``; a turn still waiting for another turn of this chat (in
        any process) to end is dropped instead, and the running turn goes on."""
        return await offload.turn(self.store.lock, self.ask, text, with_=with_, stream=stream, key=key,
                                  cancel=_closing(self.cancel), wrap=_closing)

    async def acomplete(self, *, stream: Callable[[str], None] | None = None) -> Message:
        """The async twin of `complete` (see `aask`)."""
        return await offload.turn(self.store.lock, self.complete, stream=stream, cancel=_closing(self.cancel),
                                  wrap=_closing)

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
        """The open `llm_mcp.Question` objects of paused calls; ``answer()``/``decline()``
        saves to the tool call row and contacts no server (``resume_chat`` or ``complete()``
        sends the answers)."""
        return pending_questions(self.store)

    @property
    def pending_tasks(self) -> list[Any]:
        """The [`Task`][llm_mcp.Task] objects of the calls paused on server tasks (see
        `llm_mcp.Chat.pending_tasks`), each with the chat's server of its name (the agent's
        servers, built here); ``complete()`` or the ``check_tasks`` job checks them."""
        return self.chat.pending_tasks

    def after_tool_progress(self, callback: Callable[[ToolCall, Any], Any]) -> ChatRecord:
        """Call ``callback(tool_call, progress)`` for each progress report of a tool call run in
        this process (see `llm_mcp.Chat.after_tool_progress`); returns the record."""
        self.chat.after_tool_progress(callback)
        return self

    def cancel(self) -> None:
        """Set the persisted cancel flag: a turn running anywhere stops at its next check, and a
        server call it waits on stops at the next event the server streams.
        (A paused chat has no running turn: the next ``complete()`` starts a new one, except
        for calls paused on server tasks: it sends ``tasks/cancel`` for them and raises
        ``llm_mcp.CancelledError``.)"""
        live = self.__dict__.get("_live_chat")
        if live is not None:
            live.cancel()
        else:
            self.store.set_cancelled(True)

    def close(self) -> None:
        """Close the servers the chat built from classes (see `llm_mcp.Chat.close`); a
        job calls it when it is done, so no stdio process outlives it."""
        live = self.__dict__.get("_live_chat")
        if live is not None:
            live.close()

    # -- agents -----------------------------------------------------------------------------

    @classmethod
    def for_agent(cls, agent: Agent, *, owner: Any = None) -> ChatRecord:
        """A new row for ``agent`` (what ``Agent.chat()`` returns when ``chat_class`` names
        this model). The chat is set up at once, so a bad declaration raises here and saves
        nothing; no server is contacted.

        The row's ``user`` (when the model has that field) is ``owner``, else the agent's
        ``user`` input when it is an instance of ``AUTH_USER_MODEL``. Raises ``TypeError`` for
        an ``owner`` that is not a saved user, or given to a model without a ``user`` field."""
        owner = _owner_for(cls, agent, owner)
        path = agent_path(type(agent))
        if "<locals>" in path or path.startswith("__main__."):
            log.warning("%s is defined where no other process can import it (%s): its chats cannot be resumed "
                        "by a job", type(agent).__qualname__, path)
        provider = agent.provider if isinstance(agent.provider, str) else getattr(agent.provider, "name", "")
        with transaction.atomic(using=router.db_for_write(cls)):
            record = cls._default_manager.create(  # type: ignore[attr-defined]
                model=agent.model, provider=provider or "openai", agent_class=path,
                agent_inputs=encode_inputs(agent), **({"user": owner} if owner is not None else {}))
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


def _owner_for(model: Any, agent: Agent, owner: Any) -> Any:
    """The user a new row of ``model`` for ``agent`` belongs to (see `ChatRecord.for_agent`)."""
    from django.contrib.auth import get_user_model

    has_field = any(field.name == "user" for field in model._meta.get_fields())
    user_model = get_user_model()
    if owner is not None:
        if not has_field:
            raise TypeError(f"{model.__name__} has no user field: a chat of it cannot have an owner")
        if not isinstance(owner, user_model) or owner.pk is None:
            raise TypeError(f"a chat's owner must be a saved {user_model.__name__}, not {type(owner).__name__}")
        return owner
    candidate = getattr(agent, "user", None) if "user" in _input_names(agent) else None
    if has_field and isinstance(candidate, user_model) and candidate.pk is not None:
        return candidate
    return None


def _input_names(agent: Agent) -> list[str]:
    return [agent.inputs] if isinstance(agent.inputs, str) else list(agent.inputs or ())
def _closing(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` closing the database connections of the thread it ran in (a thread of the async
    twins' executor, which Django's request signals never clean)."""
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        finally:
            connections.close_all()
    return run
