"""Progress a server reports while it works on a request: [`Progress`][llm_mcp.Progress].

    class Deploys(llm_mcp.MCP):
        url = "https://deploys.example.com/mcp"
        after_progress = lambda self, progress: print(progress.fraction, progress.message)  # fraction: None without a total

The client asks for progress (a ``progressToken`` in the request's ``_meta``) only when
someone listens: the server's ``after_progress``, or a chat's ``after_tool_progress``.
Each ``notifications/progress`` for the request becomes a [`Progress`][llm_mcp.Progress]; one whose
value is not above the previous one is dropped, so listeners see values that only grow.
Spec: MCP 2026-07-28, "Utilities" > "Progress".
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from . import context

__all__ = ["Progress", "ProgressFilter", "listening", "tool_listener"]

log = logging.getLogger("llm_mcp.client")


@dataclass(frozen=True)
class Progress:
    """One progress report of a server for one request.

        progress = Progress(value=30, total=120, message="Copying files")
        progress.fraction          # 0.25
        Progress(value=3).fraction  # None: the server gave no total

    Attributes:
        value: how much is done, in the server's unit (never lower than the last report's).
        total: how much there is in all, or ``None`` when the server does not know.
        message: what the server is doing, or ``None``.
    """

    value: float
    total: float | None = None
    message: str | None = None

    @property
    def fraction(self) -> float | None:
        """``value / total`` (``0.25`` for a quarter), or ``None`` without a (positive) total."""
        if self.total is None or self.total <= 0:
            return None
        return self.value / self.total

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Progress | None:
        """The progress a ``notifications/progress`` params dict reports; ``None`` when its
        ``progress`` is not a finite number a float holds (such a notification is ignored)."""
        value = _number(params.get("progress"))
        if value is None:
            return None
        message = params.get("message")
        return cls(value=value, total=_number(params.get("total")),
                   message=message if isinstance(message, str) else None)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an integer no float holds (JSON allows any number of digits)
        return None
    return value if finite else None


class ProgressFilter:
    """Turns one request's progress notifications into [`Progress`][llm_mcp.Progress] objects for listeners,
    dropping any whose value is not above the last one delivered.

        deliver = ProgressFilter([print])
        deliver({"progressToken": "t", "progress": 1, "total": 4})   # prints Progress(value=1, total=4, ...)
        deliver({"progressToken": "t", "progress": 1})               # dropped: not above 1

    A listener that raises is logged (with its exception) and does not stop the request
    or the other listeners.

    Attributes:
        listeners: callables taking a [`Progress`][llm_mcp.Progress], called in order.
        last: the value delivered last, or ``None``.
    """

    def __init__(self, listeners: list[Callable[[Progress], Any]]):
        self.listeners = list(listeners)
        self.last: float | None = None
        self._lock = threading.Lock()  # stdio may deliver from the thread reading for everyone

    def __call__(self, params: dict[str, Any]) -> None:
        progress = Progress.from_params(params)
        if progress is not None:
            self.deliver(progress)

    def deliver(self, progress: Progress) -> None:
        """Give ``progress`` to every listener, unless its value is not above the last delivered."""
        with self._lock:
            if self.last is not None and progress.value <= self.last:
                return
            self.last = progress.value
        for listener in self.listeners:
            try:
                listener(progress)
            except Exception:  # a listener's bug must not break the call
                log.exception("a progress listener failed")


def tool_listener() -> Callable[[Progress], Any] | None:
    """Who listens to the progress of tool calls made here (a chat's ``after_tool_progress``:
    the current call context's ``on_progress``), or ``None``."""
    current = context.current()
    return current.on_progress if current is not None else None


@contextlib.contextmanager
def listening(listener: Callable[[Progress], Any] | None) -> Iterator[None]:
    """Send the progress of tool calls made inside the block (this thread) to ``listener``.

        with listening(lambda progress: print(progress.message)):
            server.call("deploy")     # asks for progress, since someone listens
    """
    with context.with_changes(on_progress=listener).active():
        yield
