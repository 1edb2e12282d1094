"""A call's context: what one tool call carries besides its arguments.

    context = CallContext(cancel=scope, resume=resume, on_progress=listener)
    with context.active():                 # what a chat does around one tool call
        tool.call(**arguments)

One `CallContext` holds the per-call state that used to travel in three context
variables: the cancel scope ([`CancelScope`][llm_mcp.CancelScope]), the paused request being resumed
(`Resume`) and the listener of the tool's progress. ``MCP.run``
reads the active context once, when the call starts, and passes it explicitly from there on
(the question rounds, the session's request, the outage check); below it nothing looks it up
except the transports' cancel check (``current_scope``).

The public ``with`` forms build on it and keep working: ``with CancelScope():``,
``with resuming(resume):`` and ``with listening(listener):`` each activate a copy of the
current context with their part replaced.

A context also remembers, for the one call, values that are evaluated once per call (a
server's headers, where its outage backoff is kept): see `CallContext.remember`.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from .asking import Resume
    from .cancel import CancelScope
    from .progress import Progress

__all__ = ["CallContext", "current", "enter", "for_call", "held_seconds", "leave", "with_changes"]

_current: contextvars.ContextVar[CallContext | None] = contextvars.ContextVar("llm_mcp_call_context", default=None)


_lock = threading.Lock()
"""Guards every context's `memo`, `went_down` and `held_seconds`: what it guards is a dict
lookup or an addition, and a lock per context cost an allocation on every call."""

class CallContext:
    """The state of one call, passed along its path.

    Attributes:
        cancel: the scope that cancels the call (``None``: nobody can).
        resume: the paused request this call goes on with (its answered questions), or ``None``.
        on_progress: who listens to the tool's progress (a chat's ``after_tool_progress``), or ``None``.
        call: whether this context stands for one call (a chat's tool call, one ``MCP.run``):
            only then are values remembered. The contexts the ``with`` forms open may hold many
            calls, and ``MCP.run`` opens a call context of its own inside them.
        memo: values evaluated once for this call, by key (see `remember`).
        hold: who holds a handshake-era server's question open for a person (a chat sets it):
            ``hold(question, seconds)`` saves the screened `llm_mcp.Question` where the chat
            shows it, waits up to ``seconds`` for an answer recorded anywhere, and returns the
            ``ElicitResult`` dict to send; ``None``: such questions follow the server's callback,
            else are declined at once.
        sample: who answers a server's sampling request with a model (a chat sets it):
            ``sample(params, options)`` takes the ``sampling/createMessage`` params and the
            ``sampling`` setting's dict (``{}`` for ``True``) and returns the ``CreateMessageResult``.
        held_seconds: seconds this call spent holding questions open for a person (`holding`);
            the transports add them to a request's deadline (see `held_seconds`), so the wait
            does not count against the server's ``timeout``.
        went_down: names of the servers whose outage this call recorded
            (`llm_mcp.client.outages.record`): a chat leaves them out of its next requests.
    """

    # A plain class with slots rather than a dataclass: one is made per call, and its generated
    # __init__ (ten fields, a dict, a set and a lock) cost twice this one. ``memo`` and
    # ``went_down`` are made on first use (most calls use neither).
    __slots__ = ("_memo", "_went_down", "call", "cancel", "held_seconds", "hold", "on_progress", "resume", "sample")

    def __init__(self, cancel: CancelScope | None = None, resume: Resume | None = None,
                 on_progress: Callable[[Progress], Any] | None = None, call: bool = True,
                 hold: Callable[[Any, float], dict[str, Any]] | None = None,
                 sample: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] | None = None,
                 held_seconds: float = 0.0):
        self.cancel, self.resume, self.on_progress = cancel, resume, on_progress
        self.call, self.hold, self.sample = call, hold, sample
        self.held_seconds = held_seconds

    @property
    def memo(self) -> dict[Any, Any]:
        """Values evaluated once for this call, by key (see `remember`)."""
        try:
            return self._memo
        except AttributeError:  # the first use
            return self._made("_memo", dict)

    @property
    def went_down(self) -> set[str]:
        """Names of the servers whose outage this call recorded."""
        try:
            return self._went_down
        except AttributeError:  # the first use
            return self._made("_went_down", set)

    def _made(self, slot: str, make: Callable[[], Any]) -> Any:
        """The value of ``slot``, made now if no thread of this call made it meanwhile."""
        with _lock:
            try:
                return getattr(self, slot)
            except AttributeError:
                setattr(self, slot, make())
                return getattr(self, slot)

    def __repr__(self) -> str:
        return (f"CallContext(cancel={self.cancel!r}, resume={self.resume!r}, on_progress={self.on_progress!r}, "
                f"call={self.call!r}, hold={self.hold!r}, sample={self.sample!r})")

    def remember(self, key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()`` the first time ``key`` is asked for in this call, the same value after.

        An exception from ``compute`` propagates and nothing is remembered. Outside a call
        context (`call` false) nothing is remembered: ``compute()`` runs each time."""
        if not self.call:
            return compute()
        memo = self.memo  # read before taking the lock: the first use takes it too
        with _lock:
            if key in memo:
                return memo[key]
        value = compute()
        with _lock:
            return memo.setdefault(key, value)

    def count(self, key: Any) -> int:
        """Count one more ``key`` in this call and return how many there have been (1 the first
        time): how a collaborator bounds what a server may ask for during one call."""
        memo = self.memo
        with _lock:
            counted = memo[("count", key)] = memo.get(("count", key), 0) + 1
        return counted

    def but(self, **changes: Any) -> CallContext:
        """A copy with ``changes`` (``cancel``, ``resume``, ``on_progress``, ``call``, ``hold``), nothing
        remembered and no outage recorded."""
        fields = {"cancel": self.cancel, "resume": self.resume, "on_progress": self.on_progress, "call": self.call,
                  "hold": self.hold, "sample": self.sample}
        return CallContext(**{**fields, **changes})

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        """Count the block's time as held for a person (`held_seconds`): a request waiting on it
        gets that much longer before its deadline."""
        started = time.monotonic()
        try:
            yield
        finally:
            with _lock:
                self.held_seconds += time.monotonic() - started

    @contextlib.contextmanager
    def active(self) -> Iterator[CallContext]:
        """Make this the context of calls made inside the block (this thread and context)."""
        token = _current.set(self)
        try:
            yield self
        finally:
            _current.reset(token)

    def enter(self) -> contextvars.Token[CallContext | None]:
        """Make this the current context until `leave` with the token (for ``__enter__``/``__exit__`` pairs)."""
        return _current.set(self)


enter = _current.set
"""``enter(context)``: what `CallContext.enter` does, as the context variable's own method (no
Python frame: ``MCP.run`` enters a context on every call). Returns the token for `leave`."""

leave = _current.reset
"""``leave(token)``: end what `CallContext.enter` (or `enter`) began."""


def held_seconds() -> float:
    """Seconds the current call spent holding questions open (``0.0`` outside a call): what a
    transport adds to a request's deadline."""
    context = _current.get()
    return context.held_seconds if context is not None else 0.0


def current() -> CallContext | None:
    """The context of the call going on here, or ``None`` outside any."""
    return _current.get()


def with_changes(**changes: Any) -> CallContext:
    """The current context (or an empty one) with ``changes``: what ``with resuming(...)`` and
    ``with listening(...)`` activate."""
    return (_current.get() or CallContext(call=False)).but(call=False, **changes)


def for_call() -> CallContext:
    """The context a call starts with: the current one when it stands for one call (a chat's
    tool call), else a call context of its own that keeps the current cancel scope, resume and
    listener."""
    context = _current.get()
    return CallContext() if context is None else context if context.call else context.but(call=True)
