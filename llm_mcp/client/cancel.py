"""Cancelling requests in flight from another thread: [`CancelScope`][llm_mcp.CancelScope].

    scope = CancelScope()
    with scope:                       # requests made here can be cancelled
        server.call("slow_report")    # another thread: scope.cancel() -> CancelledError here

While a scope is active (per thread and context: it is the ``cancel`` of the current
`CallContext`, which a chat passes along its calls), the client
checks it before each request and lets transports register how to interrupt one:
stdio stops waiting and sends ``notifications/cancelled``; Streamable HTTP shuts the
response stream's socket, which is the cancellation on 2026-07-28 servers, and sends
``notifications/cancelled`` to older ones (MCP 2026-07-28, "Cancellation").

A cancellation made where this process cannot see it (a flag in a database row, set by
another process) is noticed through [`CancelScope.watch`][llm_mcp.CancelScope.watch]: the client polls the
watched checks at each event a server streams, so no thread is needed to wait for it.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable

from . import context
from .errors import CancelledError

__all__ = ["CancelScope", "current_scope"]

log = logging.getLogger("llm_mcp.client")

POLL_INTERVAL = 0.05
"""Seconds: the watched checks of a scope run at most this often, however fast a server streams events."""

def current_scope() -> CancelScope | None:
    """The scope requests made here belong to (the current call context's), or ``None``."""
    current = context.current()
    return current.cancel if current is not None else None


class CancelScope:
    """A cancellation signal that many requests, in many threads, can share.

    Attributes:
        reason: why it was cancelled (``None`` until then).
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: dict[int, Callable[[], None]] = {}
        self._next = 0
        self._local = threading.local()  # per thread: the tokens to restore on exit
        self._watches: list[tuple[Callable[[], bool], str]] = []
        self._polled = float("-inf")  # when the watched checks last ran (time.monotonic)
        self.reason: str | None = None

    @property
    def cancelled(self) -> bool:
        """Whether [`cancel`][llm_mcp.CancelScope.cancel] was called."""
        return self._event.is_set()

    def cancel(self, reason: str = "cancelled") -> None:
        """Cancel every request in the scope, now and later; safe to call from any thread, twice."""
        with self._lock:
            if self._event.is_set():
                return
            self.reason = reason
            self._event.set()
            callbacks, self._callbacks = list(self._callbacks.values()), {}
        for callback in callbacks:
            try:
                callback()
            except Exception as exc:  # noqa: BLE001 - interrupting is best effort
                log.debug("cancel callback failed: %s", type(exc).__name__)

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run ``callback`` when the scope is cancelled (at once if it already is).

        Returns a function that unregisters it."""
        with self._lock:
            if not self._event.is_set():
                key = self._next
                self._next += 1
                self._callbacks[key] = callback
                return lambda: self._callbacks.pop(key, None) and None
        callback()
        return lambda: None

    def check(self) -> None:
        """Raise [`CancelledError`][llm_mcp.client.errors.CancelledError] when cancelled."""
        if self._event.is_set():
            raise CancelledError(f"cancelled: {self.reason}")

    def watch(self, check: Callable[[], bool], reason: str = "cancelled") -> None:
        """Also cancel when ``check()`` returns true, looked at by [`poll`][llm_mcp.CancelScope.poll].

            scope.watch(lambda: Chat.objects.filter(pk=pk, cancelled=True).exists())
        """
        self._watches.append((check, reason))

    def poll(self) -> None:
        """Run the watched checks (see [`watch`][llm_mcp.CancelScope.watch]), cancel when one is true, then [`check`][llm_mcp.CancelScope.check].

        Called at each event a server streams; the checks run at most every
        `POLL_INTERVAL` seconds for the scope (a database read each, for a saved chat).
        Raises [`CancelledError`][llm_mcp.client.errors.CancelledError] when cancelled. A check that raises is logged
        and counts as false."""
        now = time.monotonic()
        if not self._event.is_set() and self._watches and now - self._polled >= POLL_INTERVAL:
            self._polled = now
            for check, reason in list(self._watches):
                try:
                    stop = check()
                except Exception as exc:  # noqa: BLE001 - a failing check must not end the call
                    log.debug("cancel check failed: %s", type(exc).__name__)
                    continue
                if stop:
                    self.cancel(reason)
                    break
        self.check()

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; ``True`` as soon as the scope is cancelled."""
        return self._event.wait(seconds)

    def __enter__(self) -> CancelScope:
        tokens = self._local.__dict__.setdefault("tokens", [])
        tokens.append(context.with_changes(cancel=self).enter())
        return self

    def __exit__(self, *exc: Any) -> None:
        context.leave(self._local.tokens.pop())
