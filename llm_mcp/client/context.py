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
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from .asking import Resume
    from .cancel import CancelScope
    from .progress import Progress

__all__ = ["CallContext", "current", "for_call", "held_seconds", "leave", "with_changes"]

_current: contextvars.ContextVar[CallContext | None] = contextvars.ContextVar("llm_mcp_call_context", default=None)


@dataclass(slots=True)
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

    cancel: CancelScope | None = None
    resume: Resume | None = None
    on_progress: Callable[[Progress], Any] | None = None
    call: bool = True
    hold: Callable[[Any, float], dict[str, Any]] | None = None
    sample: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] | None = None
    held_seconds: float = field(default=0.0, repr=False, compare=False)
    memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    went_down: set[str] = field(default_factory=set, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def remember(self, key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()`` the first time ``key`` is asked for in this call, the same value after.

        An exception from ``compute`` propagates and nothing is remembered. Outside a call
        context (`call` false) nothing is remembered: ``compute()`` runs each time."""
        if not self.call:
            return compute()
        with self._lock:
            if key in self.memo:
                return self.memo[key]
        value = compute()
        with self._lock:
            return self.memo.setdefault(key, value)

    def count(self, key: Any) -> int:
        """Count one more ``key`` in this call and return how many there have been (1 the first
        time): how a collaborator bounds what a server may ask for during one call."""
        with self._lock:
            counted = self.memo[("count", key)] = self.memo.get(("count", key), 0) + 1
        return counted

    def but(self, **changes: Any) -> CallContext:
        """A copy with ``changes`` (``cancel``, ``resume``, ``on_progress``, ``call``, ``hold``), nothing
        remembered and no outage recorded."""
        return replace(self, memo={}, went_down=set(), held_seconds=0.0, _lock=threading.Lock(), **changes)

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        """Count the block's time as held for a person (`held_seconds`): a request waiting on it
        gets that much longer before its deadline."""
        started = time.monotonic()
        try:
            yield
        finally:
            with self._lock:
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


def leave(token: contextvars.Token[CallContext | None]) -> None:
    """End what `CallContext.enter` began."""
    _current.reset(token)


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
    if context is None:
        return CallContext()
    return context if context.call else context.but(call=True)
