"""Helpers of the listening tests: a thread-safe record of the changes a server object heard."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

import llm_mcp

__all__ = ["Heard", "wait_until"]


def wait_until(predicate: Callable[[], Any], timeout: float = 15.0, step: float = 0.02) -> bool:
    """Poll ``predicate`` until it is true (``True``) or ``timeout`` seconds pass (``False``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return bool(predicate())


class Heard:
    """An ``after_change`` callable recording ``(change, thread name)``; ``names`` gives each
    change as the log does (a list's name, a resource's URI)."""

    def __init__(self, also: Callable[[Any, Any], None] | None = None):
        self.changes: list[Any] = []
        self.threads: list[str] = []
        self.also = also
        self._lock = threading.Lock()

    def __call__(self, server: Any, change: Any) -> None:
        with self._lock:
            self.changes.append(change)
            self.threads.append(threading.current_thread().name)
        if self.also is not None:
            self.also(server, change)

    @property
    def names(self) -> list[str]:
        with self._lock:
            return [c.uri if isinstance(c, llm_mcp.Resource) else str(c) for c in self.changes]

    def wait_for(self, *names: str, timeout: float = 15.0) -> bool:
        """Wait until every name in ``names`` was heard (at least once)."""
        return wait_until(lambda: all(name in self.names for name in names), timeout)

    def clear(self) -> None:
        with self._lock:
            self.changes.clear()
            self.threads.clear()
