"""The async twins' engine: a blocking call run from a coroutine without blocking the event loop.

    result = await in_thread(server.call, "search", q="x")            # network work: a thread of its own
    result = await cancellable(server.call, "search", q="x")          # same, and a cancelled task cancels the call
    await on_orm(question.answer, "staging")                          # database work: Django's rule

Django's convention for async code (asgiref's ``sync_to_async``) runs blocking code in a thread.
Its default, ``thread_sensitive=True``, runs everything in one thread per request, which is what
the ORM needs and what `on_orm` does. Network work (MCP requests, model requests) goes to
`in_thread`: ``thread_sensitive=False`` on an executor of its own with up to `MAX_THREADS`
threads, so twenty views awaiting slow tool calls wait side by side, not in a queue (the
event loop's default executor has ``min(32, CPUs + 4)`` threads: six on a two-core machine).

When the awaiting task is cancelled, ``on_cancel`` runs (a chat's ``cancel()``, a call's
`CancelScope`), the thread is waited for so the work stops where it stops in the blocking API (a
chat's turn stores its calls' results), and ``asyncio.CancelledError`` is raised.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from .cancel import CancelScope
from .errors import CancelledError

__all__ = ["MAX_THREADS", "cancellable", "in_thread", "on_orm", "turn"]

T = TypeVar("T")

MAX_THREADS = 64
"""Threads the async twins' network work may use at once in a process (more calls wait for one)."""

_executor: ThreadPoolExecutor | None = None
_guard = threading.Lock()


def executor() -> ThreadPoolExecutor:
    """The executor of the async twins' network work (made on first use, `MAX_THREADS` threads)."""
    global _executor
    with _guard:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=MAX_THREADS, thread_name_prefix="llm-mcp-async")
        return _executor


async def in_thread(func: Callable[..., T], /, *args: Any, on_cancel: Callable[[], Any] | None = None,
                    **kwargs: Any) -> T:
    """``func(*args, **kwargs)`` in a thread of `executor` (``sync_to_async(thread_sensitive=False)``).

    When the awaiting task is cancelled, ``on_cancel()`` runs, the thread's work is waited for
    (its own exception, a ``CancelledError`` of ours most likely, is dropped) and
    ``asyncio.CancelledError`` is raised. Any other exception of ``func`` comes out as it is."""
    import asyncio  # imported when first used (asyncio loads ssl): `import llm_mcp.client` stays light

    from asgiref.sync import sync_to_async

    work = asyncio.ensure_future(sync_to_async(func, thread_sensitive=False, executor=executor())(*args, **kwargs))
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        if on_cancel is not None:
            on_cancel()
        try:
            await work
        except BaseException:
            pass
        raise


async def cancellable(func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """`in_thread`, inside a `CancelScope` that the awaiting task's cancellation cancels (the
    server is told, as for `CancelScope.cancel`)."""
    scope = CancelScope()

    def run() -> T:
        with scope:
            return func(*args, **kwargs)

    return await in_thread(run, on_cancel=lambda: scope.cancel("the awaiting task was cancelled"))


async def turn(lock: AbstractContextManager[Any], func: Callable[..., T], /, *args: Any, cancel: Callable[[], Any],
               wrap: Callable[[Callable[..., T]], Callable[..., T]] | None = None, **kwargs: Any) -> T:
    """`in_thread` for one turn of a chat (``aask``/``acomplete``): ``func`` runs holding ``lock``
    (the chat's re-entrant turn lock, which ``func`` takes again), wrapped by ``wrap`` if given.

    Turns of one chat run one at a time, so the awaiting task may be cancelled while its turn
    still waits for another to end. Then the turn is dropped (it never starts) and ``cancel``
    (the chat's ``cancel()``, which stops whichever turn runs) is not called: the other turn
    goes on. Once the turn holds the lock, a cancellation calls ``cancel`` in a thread of
    `executor` (a saved chat's ``cancel()`` does database work, which Django refuses in the event
    loop) and waits for the turn to stop, as `in_thread` does. Raises ``asyncio.CancelledError``
    when the task is cancelled."""
    guard = threading.Lock()
    state = {"started": False, "dropped": False}

    def run(*args: Any, **kwargs: Any) -> T:
        with lock:
            with guard:
                if state["dropped"]:
                    raise CancelledError("the awaiting task was cancelled before its turn began")
                state["started"] = True
            return func(*args, **kwargs)

    def on_cancel() -> None:
        with guard:
            state["dropped"] = True
            started = state["started"]
        if started:  # in a thread: a saved chat's cancel() writes its row, which Django refuses in the event loop
            executor().submit(cancel)

    return await in_thread(wrap(run) if wrap is not None else run, *args, on_cancel=on_cancel, **kwargs)


async def on_orm(func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``func(*args, **kwargs)`` where Django wants database work from async code:
    ``sync_to_async(thread_sensitive=True)`` (the request's own thread)."""
    from asgiref.sync import sync_to_async

    return await sync_to_async(func, thread_sensitive=True)(*args, **kwargs)
