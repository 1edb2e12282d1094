"""``TaskWatch``: a listener for the server tasks that stored chats wait on (``manage.py mcp_listen
--tasks``).

    watch = TaskWatch(Reports(), rescan=5.0)
    watch.start()              # listens to the tasks paused chats wait on
    while running:
        watch.tick()           # every `rescan` seconds: newly paused chats' tasks are added
    watch.stop()

It reads the tool call rows paused on a task of this server (``ToolCall.task`` set, no result
yet, ``task_server`` equal to the server object's name), subscribes to their tasks with
[`MCP.listen(tasks=...)`][llm_mcp.MCP.listen], and for each change of one of them enqueues the
Celery job ``llm_mcp.tasks.check_tasks(chat_id)`` for every chat waiting on it; that job runs
``complete()``, which reads the task and resumes the turn once it ended. Rows are read again
every ``rescan`` seconds, and the subscription is replaced when the set of tasks changed; a
task that changed meanwhile is reported once subscribed (its stored status differs), so nothing
is missed between two reads.

When the server refuses to report on the tasks (one has expired, for instance), the refusal is
logged and ``check_tasks`` is enqueued once for each of their chats, so the expired task ends
its call with an error the model sees, instead of the chat waiting for ever. The same goes for
a task the server's listener drops while listening (the server forgot it, or answered in a way
that breaks the extension): at the next read, a task subscribed to and missing from
[`MCP.listened_tasks`][llm_mcp.MCP.listened_tasks] has its chats checked once, and is left out
of the subscription while its call stays paused; the other tasks are still listened to.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import llm_mcp

from .client.errors import ConnectionError, MCPError
from .client.logs import printable
from .client.server.listener import shown
from .client.task import Task
from .db.rows import tool_call_model
from .signals import guard_database, mcp_changed

__all__ = ["DEFAULT_RESCAN", "TaskWatch"]

log = logging.getLogger("llm_mcp.listen")

DEFAULT_RESCAN = 5.0
"""Seconds between two reads of the paused tool calls (new tasks to listen to)."""

MAX_MESSAGE = 120
"""Characters of a task's status message a log line shows."""


def enqueue_check(chat_id: Any) -> None:
    """Enqueue ``llm_mcp.tasks.check_tasks(chat_id)`` (the default of ``TaskWatch.enqueue``)."""
    from .tasks import check_tasks

    check_tasks.delay(chat_id)


class TaskWatch:
    """Keeps ``server`` listening to the tasks that paused chats wait on, and has each chat
    checked when one of its tasks changes.

    Args:
        server: the server object (an [`MCP`][llm_mcp.MCP] declaring ``extensions = ["tasks"]``).
            Its name must be the one the chats used: it selects the rows.
        resources: resource URIs to listen to as well (``mcp_listen --resource``).
        rescan: seconds between two reads of the rows (`DEFAULT_RESCAN`).
        enqueue: called with a chat's primary key for each change of a task it waits on
            (default: ``check_tasks.delay``).

    Attributes:
        listened: the ids of the tasks subscribed to.
    """

    def __init__(self, server: llm_mcp.MCP, *, resources: list[str] | None = None, rescan: float = DEFAULT_RESCAN,
                 enqueue: Callable[[Any], None] = enqueue_check) -> None:
        self.server, self.resources, self.rescan, self.enqueue = server, list(resources or ()), rescan, enqueue
        self.listened: frozenset[str] = frozenset()
        self._refused: frozenset[str] | None = None
        self._dropped: set[str] = set()
        self._next = 0.0
        self._uid = f"llm_mcp.task_watch.{id(self)}"

    # -- what the database says -------------------------------------------------------------------

    def _rows(self) -> Any:
        return tool_call_model().objects.filter(result__isnull=True, task__isnull=False,
                                                task_server=self.server.name)

    def pending(self) -> list[Task]:
        """The tasks paused tool calls of this server wait on (one per task id)."""
        tasks: dict[str, Task] = {}
        for stored in self._rows().values_list("task", flat=True):
            try:
                task = Task.from_dict(stored)
            except (MCPError, TypeError, ValueError) as exc:
                log.warning("MCP server %s: a stored task cannot be read (%s); skipped", self.server.name, exc)
                continue
            tasks.setdefault(task.id, task)
        return list(tasks.values())

    def chats_waiting_on(self, task_id: str) -> list[Any]:
        """The primary keys of the chats with a tool call paused on ``task_id``."""
        return sorted(set(self._rows().filter(task_id=task_id).values_list("message__chat_id", flat=True)))

    # -- listening ----------------------------------------------------------------------------------

    def start(self) -> None:
        """Receive this server's changes (``mcp_changed``) and subscribe to the pending tasks."""
        mcp_changed.connect(self._changed, weak=False, dispatch_uid=self._uid)
        self.tick(force=True)

    def stop(self) -> None:
        """Stop receiving changes (the caller closes the server, which ends the subscription)."""
        mcp_changed.disconnect(dispatch_uid=self._uid)

    def tick(self, *, force: bool = False) -> None:
        """Read the rows again when `rescan` seconds have passed (or ``force``), have the chats of
        each task the listener dropped since checked once, and subscribe again when the tasks
        changed. Never raises for the server: a failure is logged and
        tried again at the next read. Stale database connections are closed before and after,
        as around a listener's callbacks."""
        now = time.monotonic()
        if not force and now < self._next:
            return
        self._next = now + self.rescan
        guard_database(self._read_and_listen)

    def _read_and_listen(self) -> None:
        self._check_dropped()
        tasks = self.pending()
        self._dropped &= {task.id for task in tasks}  # a dropped task whose call has ended is forgotten
        tasks = [task for task in tasks if task.id not in self._dropped]
        ids = frozenset(task.id for task in tasks)
        if ids == self.listened and self.server.listening:
            return
        try:
            self.server.listen(resources=self.resources, tasks=tasks)
        except ConnectionError as exc:
            self.listened = frozenset()
            log.warning("MCP server %s cannot be reached (%s); trying again in %g s", self.server.name, exc,
                        self.rescan)
            return
        except MCPError as exc:
            self.listened = frozenset()
            log.warning("MCP server %s will not report on the paused tasks (%s); their chats are checked "
                        "instead", self.server.name, exc)
            if ids != self._refused:  # once per set: each chat's check settles its task (or tries again)
                self._refused = ids
                for task in tasks:
                    self._check_chats(task.id, "could not be listened to")
            return
        self.listened, self._refused = ids, None
        if ids:
            log.info("MCP server %s: listening to %d paused task(s)", self.server.name, len(ids))

    def _check_dropped(self) -> None:
        """The tasks the server's listener dropped since the last read (the server forgot them, or
        answered in a way that breaks the extension): each chat waiting on one is checked once,
        and the task is left out of the subscription while its call stays paused."""
        if not self.server.listening:
            return
        dropped = self.listened - self.server.listened_tasks
        if not dropped:
            return
        self.listened -= dropped
        self._dropped |= dropped
        for task_id in sorted(dropped):
            self._check_chats(task_id, "is no longer reported on by the server")

    def _changed(self, sender: Any, server: Any = None, change: Any = None, **_: Any) -> None:
        if server is self.server and isinstance(change, Task):
            message = f" ({printable(change.status_message[:MAX_MESSAGE])})" if change.status_message else ""
            self._check_chats(change.id, f"is {change.status}{message}")

    def _check_chats(self, task_id: str, what: str) -> None:
        for chat_id in self.chats_waiting_on(task_id):
            log.info("MCP server %s: task %s %s; checking chat %s", self.server.name, shown(task_id), what, chat_id)
            try:
                self.enqueue(chat_id)
            except Exception:  # a broker that is down must not end the listener
                log.exception("MCP server %s: could not enqueue the check of chat %s", self.server.name, chat_id)
