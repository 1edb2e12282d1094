"""A conversation with a model that can call tools: `Chat`.

    chat = llm_mcp.chat(model="gpt-4.1-mini", provider="openai").with_mcp(Linear(user=user))
    chat.ask("Which open issues mention the flaky login spec?").content
    chat.messages                             # every turn, tool calls and results included

A turn runs until the model answers without calling tools, or until a call needs a
person (approval) and the chat *waits*: ``complete()`` picks the turn up again, in this
process or another, since everything it needs is in the store.
"""

from __future__ import annotations

import copy
import functools
import json
import logging
import mimetypes
import os
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Protocol, runtime_checkable

from ..client import offload
from ..client.asking import MAX_INPUT_REQUESTS, Resume
from ..client.cancel import CancelScope
from ..client.context import CallContext
from ..client.errors import CancelledError, InputRequiredError, MCPError, TurnLimitError
from ..client.progress import Progress, ProgressFilter
from ..client.prompt import Prompt
from ..client.question import Question
from ..client.result import Attachment, Result, sniff_mime_type
from ..client.server import MCP, Servers
from ..client.task import Task
from ..client.tool import Tool
from .messages import MAX_ATTACHMENT_BYTES, Message, ToolCall, attachment_text, binary_described, capped
from .providers import ModelRequest, Provider, get_provider
from .store import MemoryStore, Store, is_waiting, pending_approvals, pending_questions, unanswered
from .task_calls import PausedTasks, task_calls
from .toolbox import Toolbox, Unavailable
from .tools import ToolSearch, as_tool

__all__ = ["Attachable", "Chat", "new_chat", "prompt_turns", "settle_call_ids"]

log = logging.getLogger("llm_mcp.chat")

MAX_STEPS = 25
"""Model requests one turn may make, by default, before the chat stops it (a model calling tools forever)."""

MAX_RESULT_CHARS = 100_000
"""Characters of one tool result the model gets, by default; the rest is cut with a note."""

NOT_RUN = "This call did not run: the turn stopped before it finished."

DECLINED = "The user declined this tool call; it did not run."
CANCELLED = "The call was cancelled before it finished."

HOLD_FIRST_POLL = 0.05
"""Seconds before a chat holding a question open first reads the store for its answer."""

HOLD_MAX_POLL = 1.0
"""The longest pause between two reads of a held question (the pause doubles up to it), so the
wait costs at most about one query a second, and an answer is seen within a second."""


class Chat:
    """A conversation with one model, and the tools it may call.

        chat = Chat("gpt-4.1-mini", provider="openai").with_tools(roll_dice)
        reply = chat.ask("Roll a die")
        reply.content, chat.messages

    Attributes:
        model: the model id sent to the provider.
        provider: the `llm_mcp.chat.providers.Provider` that calls it.
        store: where the conversation lives (`MemoryStore` unless given).
        concurrency: how many tool calls of one model turn may run at once (1: one by one).
        params: extra provider parameters (``temperature``, ``max_tokens``, ...).
        max_steps: model requests one turn may make before `llm_mcp.TurnLimitError`.
        max_result_chars: characters of a tool result the model gets (``None``: no limit).
    """

    RESERVED_PARAMS = ("model", "messages", "stream", "tools", "tool_choice", "system", "stream_options")
    """``params`` keys the chat and its provider set themselves."""

    def __init__(self, model: str, provider: Provider | str | None = None, *, store: Store | None = None,
                 concurrency: int = 1, params: dict[str, Any] | None = None, max_steps: int = MAX_STEPS,
                 max_result_chars: int | None = MAX_RESULT_CHARS, **provider_options: Any):
        if not isinstance(model, str) or not model:
            raise TypeError(f"model must be a non-empty string, not {model!r}")
        for name, value in (("concurrency", concurrency), ("max_steps", max_steps)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        if max_result_chars is not None and (not isinstance(max_result_chars, int) or max_result_chars < 1):
            raise ValueError(f"max_result_chars must be a positive integer or None, not {max_result_chars!r}")
        if store is not None and not isinstance(store, Store):
            raise TypeError(f"store must subclass llm_mcp.chat.Store, not {type(store).__name__}")
        if params is not None and not isinstance(params, dict):
            raise TypeError(f"params must be a dict, not {type(params).__name__}")
        reserved = sorted(set(params or ()) & set(self.RESERVED_PARAMS))
        if reserved:
            raise ValueError(f"params may not set {reserved}: the chat sets them (model= and stream= are "
                             "arguments of their own)")
        self.model = model
        self.provider = get_provider(provider or "openai", **provider_options)
        self.store: Store = store if store is not None else MemoryStore()
        self.concurrency = concurrency
        self.max_steps = max_steps
        self.max_result_chars = max_result_chars
        self._describe_binary = False  # the API refused an attachment: describe them from now on
        self.params = dict(params or {})
        self._turn_lock = self.store.lock
        self._instructions: list[str] = []
        self._tools: list[Any] = []
        self._choice: str | None = None
        self._servers = Servers()
        self._owned: set[int] = set()
        self._deferred_servers: set[str] = set()
        self._scope = self._new_scope()
        self._tool_progress: list[Callable[[ToolCall, Progress], Any]] = []
        self._listed: set[str] = set()  # servers whose tools this chat listed (kept while others see them down)
        self._answer_prompt = False  # ask(prompt) whose last turn is the assistant's: the model answers still
        self._tasks = PausedTasks(self.store, lambda: self._servers)  # calls paused on server tasks

    # -- setting up ---------------------------------------------------------------------------

    def with_instructions(self, text: str, *, replace: bool = False) -> Chat:
        """Add system instructions (``replace=True`` drops the earlier ones); returns the chat."""
        if not isinstance(text, str):
            raise TypeError(f"instructions must be a string, not {type(text).__name__}")
        if replace:
            self._instructions = []
        self._instructions.append(text)
        return self

    def with_tools(self, *tools: Any, choice: str | None = None, replace: bool = False) -> Chat:
        """Offer tools: ``ChatTool`` classes or instances, plain functions, or MCP tools.

        ``choice`` is ``"auto"``, ``"required"``, ``"none"``, or the name of a tool the model
        must call; it is checked against the tools when the chat next asks the model
        (`llm_mcp.InvalidToolChoiceError` when it names a tool the chat cannot offer).
        ``with_tools(None)`` or ``replace=True`` drops the tools given before. Returns the chat.
        An MCP tool whose App ``visibility`` lacks ``"model"`` is never offered (MCP Apps: only
        its App calls it); it is left out, with a debug log line.
        """
        if replace or tools == (None,):
            self._tools = []
            self._choice = None
            tools = tuple(t for t in tools if t is not None)
        for tool in tools:
            visibility = tool.visibility if isinstance(tool, Tool) else None
            if visibility is not None and "model" not in visibility:
                log.debug("with_tools: %s is not offered to the model: its MCP App visibility is %s",
                          tool.server_name, visibility)
                continue
            self._tools.append(as_tool(tool))
        if choice is not None:
            self._choice = choice
        return self

    def with_mcp(self, *servers: MCP | type[MCP] | None, defer: bool = False) -> Chat:
        """Connect MCP servers (instances or classes); ``with_mcp(None)`` disconnects them all.

        Nothing is contacted here: a server is first contacted when the chat needs its tools.
        A class is instantiated by the chat, and closed when it is disconnected or replaced by
        another server of the same name; instances you pass stay open. ``defer=True`` defers
        every tool of these servers (the model finds them with tool search). Returns the chat.
        """
        if servers == (None,):
            for server in list(self._servers):
                self._disconnect(server)
            self._servers = Servers()
            return self
        built: list[tuple[Any, MCP]] = []
        for given in servers:
            if given is None:
                raise ValueError("with_mcp(None) disconnects every server; it cannot be mixed with servers")
            if not (isinstance(given, MCP) or isinstance(given, type) and issubclass(given, MCP)):
                raise TypeError(f"with_mcp() takes llm_mcp.MCP instances or subclasses, not {given!r}")
            built.append((given, given() if isinstance(given, type) else given))
        names = [server.name for _, server in built]
        clashes = sorted({name for name in names if names.count(name) > 1})
        if clashes:
            for given, server in built:
                if isinstance(given, type):
                    server.close()
            raise ValueError(f"with_mcp() got two servers named {clashes[0]!r}; give one of them its own name=")
        for given, server in built:
            if server.name in self._servers and self._servers[server.name] is not server:
                self._disconnect(self._servers[server.name])
                self._servers.discard(server.name)
            if isinstance(given, type):
                self._owned.add(id(server))
            self._servers.add(server)
            if defer:
                self._deferred_servers.add(server.name)
            server.hold_questions()  # a handshake-era server's questions reach this chat's pending_questions
        return self

    def close(self) -> None:
        """Close the servers this chat built from classes (stdio processes stop, HTTP sessions
        end); they stay connected and open again when the chat next needs them. Servers passed
        as instances are left alone. ``with chat:`` closes on exit."""
        for server in self._servers:
            if id(server) in self._owned:
                server.close()

    def __enter__(self) -> Chat:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _disconnect(self, server: MCP) -> None:
        self._deferred_servers.discard(server.name)
        if id(server) in self._owned:
            self._owned.discard(id(server))
            server.close()

    @property
    def mcp(self) -> Servers:
        """The connected servers by name: ``chat.mcp.linear``, ``chat.mcp["files"]``."""
        return self._servers

    @property
    def messages(self) -> list[Message]:
        """The conversation, oldest first."""
        return self.store.messages()

    @property
    def tools(self) -> list[Any]:
        """The tools the model is offered now (contacts the MCP servers the first time)."""
        return list(self._toolbox().offered.values())

    def resolve_tool(self, name: str) -> Any:
        """The tool a model's call names (its offered name or its own), as the chat would run it
        now (contacts the servers the first time); ``None`` when no available tool has the name."""
        tool = self._toolbox().resolve(name)
        return None if tool is None or isinstance(tool, Unavailable) else tool

    @property
    def given_tools(self) -> list[Any]:
        """The tools given with `with_tools`, as tool objects (a copy;
        the servers' tools are not in it). Contacts no server."""
        return list(self._tools)

    # -- the conversation ---------------------------------------------------------------------

    def ask(self, text: str | Prompt, *, with_: Any = None, stream: Callable[[str], None] | None = None) -> Message:
        """Send a user message and run the turn; returns the last message.

        ``text`` is the user's text, or an MCP `llm_mcp.Prompt` (``server.prompt(...)``):
        all of its turns, assistant ones included, are added before the model answers (it
        answers even when the prompt ends with an assistant turn).
        ``with_`` takes attachments: a path, bytes, an ``Attachment``, a
        `llm_mcp.Resource`, or a list of them (with a prompt, they join its last
        user turn). ``stream`` receives the model's text as it arrives. The returned message
        is the model's answer, or, when the chat is `waiting`, the assistant message
        whose tool calls wait. Raises `llm_mcp.CancelledError` when `cancel`
        stopped the turn, `llm_mcp.MCPError` when a prompt's server refuses, and the
        provider's errors as its SDK raises them.
        """
        if isinstance(text, Prompt):
            turns = prompt_turns(text, self._capped(_attachments(with_)))
        elif not isinstance(text, str):
            raise TypeError(f"ask() takes the user's text as a string (or an MCP Prompt), not {type(text).__name__}")
        else:
            turns = None
        with self._turn_lock:
            _, open_calls = unanswered(self.messages)
            if any(call.waiting or call.approval == "approved" or call.pending_questions for call in open_calls):
                on_tasks = any(call.task is not None for call in open_calls)
                if on_tasks and self.store.cancelled:
                    raise ValueError("the chat was cancelled while calls wait on server tasks: complete() cancels "
                                     "them (tasks/cancel) and raises CancelledError; then ask() again")
                raise ValueError("the chat has tool calls waiting for a decision or approved but not run yet: "
                                 "decide each of chat.pending_approvals, answer chat.pending_questions, then "
                                 "complete()" + ("; calls wait on server tasks (chat.pending_tasks): complete() "
                                                 "checks them, cancel() then complete() stops them"
                                                 if on_tasks else ""))
            for call in open_calls:  # a turn stopped by an exception: settle its calls before moving on
                declined = call.approval == "declined"
                self.store.add(Message("tool", DECLINED if declined else NOT_RUN, tool_call_id=call.id,
                                       is_error=not declined))
            if turns is None:
                self.store.add(Message("user", text, attachments=self._capped(_attachments(with_))))
                return self.complete(stream=stream)
            for turn in turns:
                self.store.add(turn)
            self._answer_prompt = turns[-1].role == "assistant"  # the model answers after it all the same
            try:
                return self.complete(stream=stream)
            finally:
                self._answer_prompt = False

    def complete(self, *, stream: Callable[[str], None] | None = None) -> Message:
        """Run (or resume) the turn: decided tool calls run, declined ones are reported to the
        model, and the model is asked again until it answers without tools or a call waits.

        Calls paused on a server task (`pending_tasks`) are checked once each (one
        ``tasks/get``, no sleeping): the turn goes on when all of them ended, else ``complete()``
        returns with the chat still `waiting`. Answers to a task's questions go out first
        (``tasks/update``). After `cancel` (or with the store's cancel flag set) the paused
        tasks are cancelled (``tasks/cancel``) and `llm_mcp.CancelledError` is raised.

        Turns of one chat run one at a time (a second ``complete()`` waits, then finds nothing
        left to do). Raises `llm_mcp.TurnLimitError` when the model is asked
        ``max_steps`` times in one turn and still calls tools; the calls it asked for by then
        have their results, so ``complete()`` may carry on. Raises `llm_mcp.MCPError` when a
        task failed (its call got its one result, an error the model sees next), and what a
        check raises while a task's server is down (the call stays paused).
        """
        with self._turn_lock:
            cancelled, first = self.store.cancelled_and_messages()  # one read where the store can
            if cancelled or self._scope.cancelled:
                first = None  # read again after the paused tasks' cancel and the flag's reset
                assistant, paused = task_calls(self.store)
                if paused:  # a cancel made before this turn: the paused tasks are cancelled
                    self._tasks.cancel(assistant, paused, CANCELLED)
                self.store.set_cancelled(False)
                self._scope = self._new_scope()
                if paused:
                    raise CancelledError(f"the chat was cancelled: tasks/cancel was sent for {len(paused)} paused "
                                         "tool call(s)")
            requests = 0
            box: Toolbox | None = None  # the last model request's tools: its calls run with them
            flag_read = True  # the persisted flag was just read above: the first step need not read it again
            while True:
                if flag_read:
                    flag_read = False
                    if self._scope.cancelled:
                        raise CancelledError("the chat was cancelled")
                else:
                    self._check_cancelled()
                if first is not None:
                    messages, first = first, None  # read with the flag, just now
                else:
                    messages = self.messages  # one read per step (a database store reads fresh)
                if not messages:
                    raise ValueError("the chat has no messages yet: ask() something first")
                assistant, open_calls = unanswered(messages)
                if open_calls:
                    if not self._run_calls(assistant, open_calls, box):
                        return assistant
                    box = None
                    continue
                last = messages[-1]
                prompted = requests == 0 and self._answer_prompt and not last.tool_calls
                if last.role == "assistant" and not prompted:
                    return last
                if requests == self.max_steps:
                    raise TurnLimitError(f"the model was asked {requests} times in this turn and still calls "
                                         "tools; the turn was stopped (complete() carries on, max_steps sets "
                                         "the limit)")
                requests += 1
                box = self._toolbox(messages)
                reply = self._ask_model(stream, messages, box, first=last.role == "user" or prompted)
                if not reply.tool_calls:
                    return reply

    async def aask(self, text: str | Prompt, *, with_: Any = None, stream: Callable[[str], None] | None = None) -> Message:
        """The async twin of `ask`, for async views: the turn runs in a thread of its own
        (``llm_mcp.client.offload``: model and MCP requests block a thread, never the event
        loop, and concurrent turns run side by side). Cancelling the awaiting task cancels the
        turn (as `cancel` does; its calls get their results) and raises ``asyncio.CancelledError``;
        a turn still waiting for another turn of this chat to end is dropped instead, and the
        running turn goes on (``llm_mcp.client.offload.turn``).
        ``stream`` is called in that thread."""
        return await offload.turn(self._turn_lock, self.ask, text, with_=with_, stream=stream, cancel=self.cancel)

    async def acomplete(self, *, stream: Callable[[str], None] | None = None) -> Message:
        """The async twin of `complete` (see `aask`)."""
        return await offload.turn(self._turn_lock, self.complete, stream=stream, cancel=self.cancel)

    @property
    def waiting(self) -> bool:
        """Whether the turn waits for a person (a pending approval, an open question) or a server task."""
        return is_waiting(self.store)

    @property
    def pending_tasks(self) -> list[Task]:
        """The [`Task`][llm_mcp.Task] objects of the tool calls paused on a server task (Tasks
        extension), each with its server (``server.listen(tasks=chat.pending_tasks)``);
        ``complete()`` checks them. ``[]`` after `cancel`: the next ``complete()`` cancels them."""
        return self._tasks.pending()

    @property
    def pending_questions(self) -> list[Question]:
        """The questions servers asked during paused tool calls that nobody answered yet; their
        ``answer()``/``decline()`` save the answer, and ``complete()`` resumes the call once
        all of its questions are answered."""
        return pending_questions(self.store)

    @property
    def pending_approvals(self) -> list[ToolCall]:
        """The tool calls that wait for ``approve()`` or ``decline()``."""
        return pending_approvals(self.store)

    def cancel(self) -> None:
        """Stop the running turn: calls in flight are cancelled (MCP servers are told), and the
        turn raises `llm_mcp.CancelledError`. Safe from another thread. Calls paused on
        server tasks leave `pending_tasks` at once; the next ``complete()`` sends
        ``tasks/cancel`` for each and raises `llm_mcp.CancelledError`."""
        self.store.set_cancelled(True)
        self._scope.cancel("cancelled by the user")

    def _new_scope(self) -> CancelScope:
        """The scope of a turn: `cancel` cancels it, and so does the store's persisted flag,
        read at each event a server streams (the flag another process sets on a saved chat)."""
        scope = CancelScope()
        scope.watch(lambda: self.store.cancelled, "cancelled by the user")
        return scope

    def after_tool_progress(self, callback: Callable[[ToolCall, Progress], Any]) -> Chat:
        """Call ``callback(tool_call, progress)`` for each progress report of a tool call; returns the chat.

            chat.after_tool_progress(lambda call, progress: print(call.name, progress.message))

        MCP tool calls ask their server for progress while a callback is registered
        (`llm_mcp.Progress`: ``value`` only grows; ``total``, ``message``,
        ``fraction``); Python tools report theirs with `ChatTool.report_progress`.
        Callbacks run in the thread running the call (a worker thread when calls run
        concurrently); one that raises is logged and the call goes on.
        """
        if not callable(callback):
            raise TypeError(f"after_tool_progress() takes a callable, not {type(callback).__name__}")
        self._tool_progress.append(callback)
        return self

    def _progress_listener(self, call: ToolCall) -> Callable[[Progress], None] | None:
        """One call's progress to every ``after_tool_progress`` callback; values only grow, whoever reports them."""
        if not self._tool_progress:
            return None
        return ProgressFilter([functools.partial(callback, call) for callback in self._tool_progress]).deliver

    def _check_cancelled(self) -> None:
        if self.store.cancelled and not self._scope.cancelled:
            self._scope.cancel("cancelled by the user")
        if self._scope.cancelled:
            raise CancelledError("the chat was cancelled")

    # -- asking the model ---------------------------------------------------------------------

    def _ask_model(self, stream: Callable[[str], None] | None, messages: list[Message], box: Toolbox, *,
                   first: bool) -> Message:
        instructions = list(self._instructions)
        if box.unavailable:
            instructions.append("The tools of these MCP servers are unavailable right now: "
                                f"{', '.join(box.unavailable)}. Tell the user if they need them.")
        choice = box.check_choice(self._choice) if first else None  # forcing a tool again would never end
        request = ModelRequest(model=self.model, messages=[m for m in messages if m.role != "system"],
                               instructions=instructions, tools=box.specs, choice=choice, params=self.params)
        relay = None
        if stream is not None:
            def relay(text: str) -> None:
                self._check_cancelled()  # a cancel stops a streamed answer at the next piece
                stream(text)
        reply = self._complete_once_more_if_refused(request, relay)
        reply.model = reply.model or self.model
        settle_call_ids(reply, messages)
        self._check_cancelled()
        return self.store.add(reply)

    def _capped(self, attachments: list[Attachment]) -> list[Attachment]:
        """Attachments a user sends, within the chat's limits (as tool results' are)."""
        return [capped(a, max_chars=self.max_result_chars) for a in attachments]

    def _complete_once_more_if_refused(self, request: ModelRequest, relay: Callable[[str], None] | None) -> Message:
        """``provider.complete(request)``; when the API refuses a request that carries binary
        attachments (an image it rejects), once more with them described as text, and so from
        then on in this chat: a part in the history the API refuses does not break the chat."""
        if self._describe_binary:
            request.messages = binary_described(request.messages)
        try:
            return self.provider.complete(request, on_text=relay)
        except Exception as exc:
            described = binary_described(request.messages)
            if described == request.messages or not self.provider.refused_request(exc):
                raise
            log.warning("the model API refused a request with attachments (%s); sending it again with them "
                        "described as text", type(exc).__name__)
            request.messages = described
            reply = self.provider.complete(request, on_text=relay)
            self._describe_binary = True
            return reply

    def _toolbox(self, messages: list[Message] | None = None) -> Toolbox:
        return Toolbox(self._servers, self._tools, listed=self._listed, deferred_servers=self._deferred_servers,
                       history=(lambda: self.messages) if messages is None else (lambda: messages), owner=self)

    # -- running tool calls -------------------------------------------------------------------

    def _run_calls(self, assistant: Message, calls: list[ToolCall], offered: Toolbox | None = None) -> bool:
        """Run what can run; ``False`` when a call still waits for a person.

        ``offered`` is the toolbox of the model request that asked for the calls: they run with
        its tools when every server listed them. Otherwise (a turn resumed, a server that was
        unavailable, since listing it again may work now) the tools are gathered afresh.
        Each result is stored as soon as its call finishes (and the call's ``mcp_result`` with
        it), so a process that dies mid-batch re-runs only the calls that were in flight."""
        settled, failed = self._check_tasks(assistant, calls)
        calls = [call for call in calls if call.id not in settled]
        box = offered if offered is not None and not offered.unavailable else self._toolbox()
        runnable: list[tuple[ToolCall, Any]] = []
        for call in calls:
            tool = box.resolve(call.name)
            if call.approval is None and tool is not None and not isinstance(tool, Unavailable) and \
                    box.requires_approval(tool):
                call.approval = "pending"
                self.store.save_call(assistant, call)  # visible to other processes before anything runs
            if call.approval == "declined":
                self.store.add(Message("tool", DECLINED, tool_call_id=call.id))
            elif call.approval in (None, "approved") and not call.waiting:
                runnable.append((call, tool))
        failure: BaseException | None = None
        finished: set[str] = set()

        def record(call: ToolCall, reply: Message | None) -> None:
            finished.add(call.id)
            if reply is None:  # paused on a server's questions: they are saved on the call
                self.store.save_call(assistant, call)
                return
            resumed = call.pending_questions or call.request_state is not None
            if resumed:
                call.pending_questions, call.request_state = [], None
            reply.parent_tool_call = call
            self.store.add(reply)
            if call.mcp_result is not None or resumed:
                self.store.save_call(assistant, call)

        if self.concurrency > 1 and len(runnable) > 1:
            with ThreadPoolExecutor(max_workers=min(self.concurrency, len(runnable)),
                                    thread_name_prefix="llm-mcp-tool") as pool:
                futures = {pool.submit(self._execute, call, tool, assistant): call for call, tool in runnable}
                for future in as_completed(futures):  # stored here, in this thread, as each one ends
                    try:
                        record(futures[future], future.result())
                    except BaseException as exc:  # noqa: BLE001 - raised below, after the others are stored
                        failure = failure or exc
        else:
            for call, tool in runnable:
                try:
                    record(call, self._execute(call, tool, assistant))
                except BaseException as exc:  # noqa: BLE001 - stop here; what ran is stored already
                    failure = exc
                    break
        if failure is not None:
            if isinstance(failure, CancelledError):
                for call, _ in runnable:  # what was cancelled, or never started, gets a result
                    if call.id not in finished:
                        self.store.add(Message("tool", CANCELLED, tool_call_id=call.id, is_error=True))
            raise failure
        if failed is not None:
            raise failed
        return not any(call.waiting for call in calls)

    def _check_tasks(self, assistant: Message, calls: list[ToolCall]) -> tuple[set[str], MCPError | None]:
        """Check each call paused on a task once; an ended task's output becomes the call's
        result. Returns the ids of those calls, and the error of a failed task (raised once the
        other calls ran)."""
        failed, settled = None, set()
        for call in [call for call in calls if call.task is not None]:
            context = CallContext(cancel=self._scope, on_progress=self._progress_listener(call))
            with context.active():  # the check's status message reaches after_tool_progress
                checked = self._tasks.check(assistant, call)
            if checked.ended:
                reply = _tool_message(call, checked.output, self.max_result_chars)
                call.pending_questions, call.request_state = [], None
                reply.parent_tool_call = call
                self.store.add(reply)
                self.store.save_call(assistant, call)
                settled.add(call.id)
                failed = failed or checked.error
        return settled, failed

    def _execute(self, call: ToolCall, tool: Any, assistant: Message | None = None) -> Message | None:
        if tool is None:
            return Message("tool", f"There is no tool named {call.name!r}.", tool_call_id=call.id, is_error=True)
        if isinstance(tool, Unavailable):
            return Message("tool", tool.text, tool_call_id=call.id, is_error=True)
        if "_raw_arguments" in call.arguments:
            return Message("tool", f"The arguments for {call.name} were not a JSON object: "
                           f"{str(call.arguments['_raw_arguments'])[:200]}", tool_call_id=call.id, is_error=True)
        self._check_cancelled()
        server = tool.server
        resume = Resume.from_stored(call.pending_questions, call.request_state) if call.pending_questions else None
        notes: list[str] = []  # what the model is told besides the result (questions nobody answered in time)
        hold = functools.partial(self._hold_question, assistant, call, notes) if assistant is not None else None
        context = CallContext(cancel=self._scope, resume=resume, on_progress=self._progress_listener(call),
                              hold=hold, sample=self._sample)
        try:
            with context.active():  # the call's state; its headers and its outage check are evaluated once
                output = tool.call(**call.arguments)  # call(self, /, **arguments): any key is fine
                if isinstance(output, Task):  # the server runs it as a task: the call pauses
                    self._tasks.pause(call, output)
                    return None
            if isinstance(server, MCP) and server.name in context.went_down:
                self._listed.discard(server.name)  # it failed here: this chat leaves it out too
        except InputRequiredError as exc:
            if not exc.requests:
                output = {"error": f"The MCP server needs input this chat cannot give: {exc}"}
            else:  # the call pauses until the questions are answered; complete() resumes it
                call.pending_questions = [question.to_dict() for question in exc.questions]
                call.request_state = exc.request_state
                return None
        limit = None if isinstance(tool, ToolSearch) else self.max_result_chars  # its result is parsed again
        message = _tool_message(call, output, limit)
        if notes:
            message.content = "\n".join([*notes, message.content])
        return message

    def _sample(self, params: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
        """Answer a server's ``sampling/createMessage`` with a model (the call context's ``sample``).

        The chat's provider and model unless ``options`` (the ``sampling`` setting's dict) names
        others (``provider``, ``model``, ``options`` for the provider); ``modelPreferences.hints``
        pick the first of ``options["models"]`` whose id contains a hint. The server's messages
        (text; other content as ``[type]``) and ``systemPrompt`` make the request, with the
        chat's user and assistant text first only when the server asked for context and
        ``options["history"]`` allows it; never the chat's tools. ``maxTokens`` becomes
        ``max_tokens``, a number ``temperature`` is passed on. Returns the ``CreateMessageResult``."""
        from ..client.server.sampling import content_text

        provider = get_provider(options["provider"], **(options.get("options") or {})) \
            if options.get("provider") else self.provider
        preferences = params.get("modelPreferences")  # advisory: junk is ignored, not an error
        hints = preferences.get("hints") if isinstance(preferences, dict) else None
        hints = [h["name"] for h in hints if isinstance(h, dict) and isinstance(h.get("name"), str)] \
            if isinstance(hints, list) else []
        listed = options.get("models") or []
        chosen = next((m for hint in hints for m in listed if hint in m), None)
        model = chosen or options.get("model") or (listed[0] if listed else "") or \
            (self.model if not options.get("provider") else "")
        if not model:
            raise ValueError("sampling names a provider but no model: add 'model' (or 'models') to the setting")
        history: list[Message] = []
        if params.get("includeContext") in ("thisServer", "allServers") and options.get("history"):
            history = [Message(m.role, m.content) for m in self.messages if m.role in ("user", "assistant") and
                       m.content]
        asked = [Message("assistant" if m.get("role") == "assistant" else "user", content_text(m.get("content")))
                 for m in params["messages"] if isinstance(m, dict)]
        extra: dict[str, Any] = {"max_tokens": params["maxTokens"]}
        if isinstance(params.get("temperature"), (int, float)) and not isinstance(params["temperature"], bool):
            extra["temperature"] = params["temperature"]
        system = params.get("systemPrompt")
        request = ModelRequest(model=model, messages=history + asked, params=extra,
                               instructions=[system] if isinstance(system, str) and system else [])
        reply = provider.complete(request, on_text=None)
        return {"role": "assistant", "content": {"type": "text", "text": reply.content or ""},
                "model": reply.model or model, "stopReason": "endTurn"}

    def _hold_question(self, assistant: Message, call: ToolCall, notes: list[str], question: Question,
                       seconds: float) -> dict[str, Any]:
        """Hold a handshake-era server's question open during ``call`` (the call context's ``hold``).

        The question is saved on the call, where `pending_questions` shows it (``held``), and
        the store is read with a growing pause (`HOLD_FIRST_POLL` to `HOLD_MAX_POLL`
        seconds, one `Store.held_answer` read each, no transaction held) until someone
        answers, the chat is cancelled (`llm_mcp.CancelledError` at once: the call stops),
        or ``seconds`` pass: then the question is declined, and the model is told why next to
        the tool's result. Returns the ``ElicitResult`` dict to send the server."""
        if len(call.pending_questions) >= MAX_INPUT_REQUESTS:
            log.warning("tool call %s (%s): %s asked more than %d questions in one call; declined", call.id, call.name,
                        question.server, MAX_INPUT_REQUESTS)
            return {"action": "decline"}
        question.key = f"held-{uuid.uuid4().hex[:12]}"
        question.held = True
        call.pending_questions = [*call.pending_questions, question.to_dict()]
        self.store.save_call(assistant, call)
        log.info("tool call %s (%s): %s asked a question; waiting up to %g s for an answer", call.id, call.name,
                 question.server, seconds)
        deadline = time.monotonic() + seconds
        pause = HOLD_FIRST_POLL
        while True:
            response, cancelled = self.store.held_answer(assistant, call, question.key)
            if response is None and cancelled and not self._scope.cancelled:
                self._scope.cancel("cancelled by the user")
            if response is None and self._scope.cancelled:
                raise CancelledError(f"the chat was cancelled while {question.server}'s question waited for an answer",
                                     server=question.server)
            if response is None and time.monotonic() >= deadline:
                question.response, question._save = None, functools.partial(self.store.save_question, assistant, call)
                try:
                    question.decline()
                except ValueError:
                    continue  # answered meanwhile, elsewhere: read that answer
                notes.append(f"[{question.server} asked: {question.message[:200]!r}; nobody answered within "
                             f"{seconds:g} s, so the question was declined.]")
                log.info("tool call %s (%s): the question of %s got no answer within %g s: declined", call.id,
                         call.name, question.server, seconds)
                response = {"action": "decline"}
            if response is not None:
                question.response = response
                call.pending_questions = [question.to_dict() if isinstance(q, dict) and q.get("key") == question.key
                                          else q for q in call.pending_questions]
                log.info("tool call %s (%s): the question of %s was answered (%s)", call.id, call.name,
                         question.server, response.get("action"))
                return copy.deepcopy(response)
            self._scope.wait(min(pause, max(deadline - time.monotonic(), 0.0)))
            pause = min(pause * 2, HOLD_MAX_POLL)

    def __repr__(self) -> str:
        return f"<Chat model={self.model!r} messages={len(self.messages)}>"


def _tool_message(call: ToolCall, output: Any, limit: int | None = None) -> Message:
    """The tool message that gives the model a call's output (text cut at ``limit`` characters,
    attachments within the same limit, see `llm_mcp.chat.messages.capped`)."""
    message = _output_message(call, output)
    message.attachments = [capped(a, max_chars=limit) for a in message.attachments]
    if limit is not None and len(message.content) > limit:
        cut = len(message.content) - limit
        message.content = message.content[:limit] + f"\n[... {cut} more characters cut: the result was too long]"
    return message


def _output_message(call: ToolCall, output: Any) -> Message:
    call.mcp_result, call.ui_uri = None, None  # a call that raised keeps no result (MCP-APPS-06)
    if isinstance(output, Result):
        call.mcp_result, call.ui_uri = output.to_dict(), output.ui_uri
        content = output.text
        if not content and output.structured is not None:
            content = json.dumps(output.structured, ensure_ascii=False)
        return Message("tool", content, attachments=list(output.attachments), tool_call_id=call.id,
                       is_error=output.is_error)
    if isinstance(output, dict) and set(output) == {"error"}:
        return Message("tool", str(output["error"]), tool_call_id=call.id, is_error=True)
    if isinstance(output, Message):
        output.tool_call_id = call.id
        return output
    if output is None:
        content = ""
    elif isinstance(output, str):
        content = output
    else:
        content = json.dumps(output, ensure_ascii=False, default=str)
    return Message("tool", content, tool_call_id=call.id)


@runtime_checkable
class Attachable(Protocol):
    """What ``ask(with_=...)`` reads an attachment from, besides paths, bytes and `Attachment`
    objects: an MCP `llm_mcp.Resource`, or any object with this method."""

    def as_attachment(self) -> Attachment:
        """The content as an `Attachment` (a resource reads itself now, contacting its server)."""
        ...


def _attachments(value: Any) -> list[Attachment]:
    """What ``ask(with_=...)`` takes, as attachments: paths, bytes, ``Attachment`` objects,
    objects with ``as_attachment()`` (an MCP ``Resource``, read now), or a list of them."""
    if value is None:
        return []
    items: Iterable[Any] = value if isinstance(value, (list, tuple)) else [value]
    found = []
    for item in items:
        if isinstance(item, Attachment):
            found.append(item)
        elif isinstance(item, Attachable):
            found.append(item.as_attachment())
        elif isinstance(item, bytes):
            found.append(_from_bytes(item, sniff_mime_type(item), None))
        elif isinstance(item, (str, os.PathLike)):
            path = os.fspath(item)
            with open(path, "rb") as handle:  # a binary file is read only up to the limit (/dev/zero ends)
                data = handle.read(MAX_ATTACHMENT_BYTES + 1)
                mime = mimetypes.guess_type(path)[0] or sniff_mime_type(data)
                if len(data) > MAX_ATTACHMENT_BYTES and not _is_text_type(mime):
                    size = os.fstat(handle.fileno()).st_size or None  # a pipe or a device has none
                    found.append(Attachment(_kind_of(mime), mime, None, name=os.path.basename(path),
                                            raw={"size": size, "dropped": "too large"}))
                    continue
                data += handle.read()
            found.append(_from_bytes(data, mime, os.path.basename(path)))
        else:
            raise TypeError(f"cannot attach {type(item).__name__}: give a path, bytes or an Attachment")
    return found


def _is_text_type(mime: str) -> bool:
    return mime.split("/")[0] == "text" or mime in ("application/json", "application/xml")


def _kind_of(mime: str) -> str:
    kind = mime.split("/")[0]
    return kind if kind in ("image", "audio") else "resource"


def _from_bytes(data: bytes, mime: str, name: str | None) -> Attachment:
    if _is_text_type(mime):
        return Attachment("resource", mime, data.decode("utf-8", errors="replace"), name=name)
    return Attachment(_kind_of(mime), mime, data, name=name)


def prompt_turns(prompt: Prompt, attachments: list[Attachment] | None = None) -> list[Message]:
    """An MCP prompt's turns as chat messages (fetched now if the prompt was only listed).

    User turns keep their attachments (``attachments`` join the last user turn); an
    assistant turn carries its attachments as text, since the APIs take none on assistant
    turns. Raises ``ValueError`` for a prompt without messages, or ``attachments`` with a
    prompt that has no user turn.
    """
    turns: list[Message] = []
    for turn in prompt.messages:
        if turn.role == "user":
            turns.append(Message("user", turn.content, attachments=list(turn.attachments)))
        else:
            lines = [turn.content] if turn.content else []
            lines += [attachment_text(a) for a in turn.attachments]
            turns.append(Message("assistant", "\n".join(lines)))
    if not turns:
        raise ValueError(f"prompt {prompt.name!r} has no messages to ask with")
    if attachments:
        last_user = next((t for t in reversed(turns) if t.role == "user"), None)
        if last_user is None:
            raise ValueError(f"prompt {prompt.name!r} has no user turn to attach files to")
        last_user.attachments.extend(attachments)
    return turns


MAX_CALL_ID = 200
"""Characters of a tool call id the chat keeps as the provider sent it."""


def settle_call_ids(reply: Message, history: list[Message]) -> None:
    """Give every call of ``reply`` an id that is non-empty, at most `MAX_CALL_ID`
    characters, and not used earlier in the conversation or twice in the reply, so each call
    gets exactly one result. A provider's own ids are kept when they qualify (they always do
    for OpenAI's and Anthropic's APIs); others are replaced (``call_<random>``), and the
    history sent back to the model carries the replacement."""
    taken = {call.id for message in history if message.role == "assistant" for call in message.tool_calls}
    for call in reply.tool_calls:
        if not call.id or len(call.id) > MAX_CALL_ID or call.id in taken:
            replacement = f"call_{uuid.uuid4().hex[:24]}"
            log.info("tool call id %.40r of %s is empty, too long or taken: using %s", call.id, call.name, replacement)
            call.id = replacement
        taken.add(call.id)


def new_chat(model: str, provider: Provider | str | None = None, **options: Any) -> Chat:
    """``llm_mcp.chat(model=..., provider=...)``: a new `Chat` (see its arguments)."""
    return Chat(model, provider, **options)
