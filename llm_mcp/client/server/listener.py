"""Listening for changes in the background: `Listener`, behind [`MCP.listen`][llm_mcp.MCP.listen].

One thread per listening server object holds the subscription open and runs the callbacks
(`Changes`) one at a time:

- 2026-07-28: one ``subscriptions/listen`` request whose response stream stays open
  (MCP 2026-07-28, "Subscriptions"). The first message,
  ``notifications/subscriptions/acknowledged``, carries what the server granted; anything asked
  for and missing from it was refused. The server ends a subscription with a result
  (``resultType: "complete"``) or ``notifications/cancelled``; we end it by closing the stream
  (HTTP) or sending ``notifications/cancelled`` (stdio).
- Older revisions: the session's GET event stream (Streamable HTTP), the shared pipe (stdio)
  or the event stream (HTTP+SSE), and ``resources/subscribe`` for each resource.
- Tasks (the Tasks extension, ``io.modelcontextprotocol/tasks``, draft "Task Status
  Notifications"): only on 2026-07-28, with ``taskIds`` in the listen filter; each
  ``notifications/tasks`` carries the whole task (its ``result`` once completed). Once
  subscribed, each task is checked with one ``tasks/get``, so a change made before the
  subscription is not missed.

Either way the transport's ``listen(message, version=..., on_message=...)`` carries it (see
``transports.base``). When the stream drops or the server ends the subscription, the thread
subscribes again after `FIRST_DELAY` seconds, doubling up to `MAX_DELAY` while the server
stays away, and treats everything listened to as changed once it is back.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import protocol
from ..cancel import CancelScope
from ..errors import CancelledError, MCPError, ServerTimeoutError, SessionExpiredError
from ..extensions import TASKS_EXTENSION
from ..logs import printable
from ..resource import Resource
from ..session import MODERN
from ..task import END_STATES, Task, check_again

if TYPE_CHECKING:
    from ..session import Client
    from .changes import Changes

__all__ = ["ACK", "FIRST_DELAY", "MAX_DELAY", "TASK_STATUS", "Listener", "Watched", "on_listener_thread",
           "resource_uris", "shown", "tasks_refused", "watched_tasks"]

log = logging.getLogger("llm_mcp.listen")

FIRST_DELAY = 1.0
"""Seconds before subscribing again after the stream dropped or the server ended it."""

MAX_DELAY = 60.0
"""Seconds: the longest wait between attempts while the server stays away (the wait doubles)."""

DEFAULT_CONFIRM = 60.0
"""Seconds ``listen`` waits for the server to confirm when the server sets no ``timeout``."""

STOP_WAIT = 5.0
"""Seconds ``close()`` waits for the listener thread to end."""

ACK = "notifications/subscriptions/acknowledged"

TASK_STATUS = "notifications/tasks"
"""A task's new state, sent on a ``subscriptions/listen`` stream that named its id."""

_FLAGS = (("tools", "toolsListChanged"), ("prompts", "promptsListChanged"), ("resources", "resourcesListChanged"))
"""The lists a server may announce changes to, and their field in a subscription filter."""

_LISTS = {"resourceSubscriptions": "", "taskIds": "task "}
"""The filter fields that list items (each granted one by one), and how a refused item is named."""


_here = threading.local()


def on_listener_thread() -> bool:
    """Whether the current thread is a listener's (change callbacks run guarded there)."""
    return getattr(_here, "listening", False)


class Watched:
    """A task listened to: what was last known of it (``status`` ``None`` when given by id).

    Attributes:
        id: the task's id.
        status: its last known status, ``None`` when unknown.
        status_message: its last known status message.
        tool_name: the server-side tool name, carried into each reported `Task`.
    """

    __slots__ = ("id", "status", "status_message", "tool_name")

    def __init__(self, task_id: str, status: str | None = None, status_message: str | None = None,
                 tool_name: str | None = None):
        self.id, self.status, self.status_message, self.tool_name = task_id, status, status_message, tool_name

    @property
    def ended(self) -> bool:
        """Whether the task is known to have ended (nothing more will be reported on it)."""
        return self.status in END_STATES


class _Ended(Exception):
    """Internal: the server ended the subscription with ``notifications/cancelled``."""


class Listener:
    """The subscription of one server object, and the thread that holds it.

    Attributes:
        client: returns the server's protocol client.
        changes: what receives each change (drops caches, runs ``after_change``).
        name: returns the server's name.
        forked: called in a forked child before it listens: drops the connection the parent
            made (its sockets and pipes are the parent's), without closing it.
        resources: the URIs listened to.
        tasks: the tasks listened to, by id (`Watched`: what is known of each).
        delays: the waits before each new attempt so far (seconds), for the curious and the tests.
    """

    def __init__(self, client: Callable[[], Client], changes: Changes, name: Callable[[], str],
                 forked: Callable[[], None] = lambda: None):
        self.forked = forked
        self.client = client
        self.changes = changes
        self.name = name
        self.resources: list[str] = []
        self.tasks: dict[str, Watched] = {}
        self.delays: list[float] = []
        self._thread: threading.Thread | None = None
        self._scope = CancelScope()
        self._pid = os.getpid()
        self._lists: tuple[str, ...] = ()
        self._lock = threading.RLock()  # one start or stop at a time

    @property
    def running(self) -> bool:
        """Whether this process has a listener thread running."""
        return self._thread is not None and self._thread.is_alive() and self._pid == os.getpid()

    # -- starting and stopping --------------------------------------------------------------------

    def start(self, resources: list[str], tasks: list[Watched] | None = None) -> None:
        """Subscribe (replacing any subscription of this object) and return once the server
        confirmed; a server that announces nothing, and no resources or tasks: no thread, no
        subscription.

        Raises ``ConnectionError`` (unreachable), ``MCPError`` (refused, naming what)."""
        with self._lock:
            self._start(resources, list(tasks or ()))

    def _start(self, resources: list[str], tasks: list[Watched]) -> None:
        if self._pid != os.getpid():  # a forked child: nothing of the parent's connection is ours
            self._thread, self._pid = None, os.getpid()
            self.forked()
        self.stop()
        client = self.client()
        client.connect()
        dropped = [uri for uri in self.resources if uri not in resources]
        self.resources, self.tasks = [], {}
        if dropped and client.era != MODERN:  # the session outlives the listener: its subscriptions too
            self._unsubscribe(client, dropped)
        refusal = tasks_refused(client, self.name(), [task.id for task in tasks]) if tasks else None
        if refusal is not None:
            raise refusal
        lists = tuple(kind for kind, _ in _FLAGS
                      if protocol.as_object(client.capabilities.get(kind)).get("listChanged") is True)
        if not lists and not resources and not tasks:
            log.debug("MCP server %s announces no changes; nothing to listen to", self.name())
            return
        if resources and protocol.as_object(client.capabilities.get("resources")).get("subscribe") is not True:
            raise MCPError(f"MCP server {self.name()!r} does not send updates of resources (no resources.subscribe "
                           f"capability); refused: {', '.join(resources)}", server=self.name())
        self.resources, self._lists, self.delays = list(resources), lists, []
        self.tasks = {task.id: task for task in tasks}
        self._scope = CancelScope()
        confirmed = threading.Event()
        failure: list[BaseException] = []
        self._pid = os.getpid()
        self._thread = threading.Thread(target=self._run, args=(self._scope, confirmed, failure),
                                        name=f"mcp-listener-{self.name()}", daemon=True)
        self._thread.start()
        if not confirmed.wait(client.timeout or DEFAULT_CONFIRM):
            failure.append(ServerTimeoutError(f"MCP server {self.name()!r} did not confirm the subscription within "
                                              f"{client.timeout or DEFAULT_CONFIRM:g} s", server=self.name()))
        if failure:
            self.stop()
            raise failure[0]
        log.info("Listening to MCP server %s: %s", self.name(),
                 ", ".join((*lists, *self.resources, *(f"task {shown(i)}" for i in self.tasks))))

    def _unsubscribe(self, client: Client, uris: list[str]) -> None:
        """``resources/unsubscribe`` each of ``uris`` (handshake era), so their updates stop;
        a server that refuses is logged, not raised."""
        for uri in uris:
            try:
                client.request("resources/unsubscribe", {"uri": uri})
            except MCPError as exc:
                log.debug("MCP server %s: could not unsubscribe from %s (%s)", self.name(), uri, exc)

    def stop(self) -> None:
        """End the subscription and the thread (waits up to `STOP_WAIT` seconds). In a forked
        child, only forgets the parent's listener: its thread does not exist here."""
        with self._lock:
            thread, self._thread = self._thread, None
            if thread is None or self._pid != os.getpid():
                return
            self._scope.cancel("the listener was closed")
        if thread is not threading.current_thread():
            thread.join(STOP_WAIT)
            if thread.is_alive():
                log.warning("MCP server %s: the listener thread did not end within %g s", self.name(), STOP_WAIT)

    # -- the thread -----------------------------------------------------------------------------

    def _run(self, scope: CancelScope, confirmed: threading.Event, failure: list[BaseException]) -> None:
        delay, rounds = FIRST_DELAY, 0
        _here.listening = True
        with scope:
            while not scope.cancelled:
                acknowledged = threading.Event()
                try:
                    self._listen_once(acknowledged, again=rounds > 0, first=confirmed)
                    ended = True
                except CancelledError:
                    if scope.cancelled:
                        break
                    ended = True
                except _Ended:
                    ended = True
                except Exception as exc:  # noqa: BLE001 - a dropped stream is retried
                    ended = False
                    if not confirmed.is_set():
                        failure.append(exc)
                        confirmed.set()
                        return
                    log.warning("MCP server %s: listening stopped (%s: %s); subscribing again in %g s",
                                self.name(), type(exc).__name__, str(exc)[:200], delay)
                if ended and not confirmed.is_set():  # ended before confirming anything: it will not listen
                    failure.append(MCPError(f"MCP server {self.name()!r} ended the subscription without "
                                            "acknowledging it", server=self.name()))
                    confirmed.set()
                    return
                if ended:
                    log.info("MCP server %s ended the subscription; subscribing again", self.name())
                rounds += 1
                if acknowledged.is_set():
                    delay = FIRST_DELAY
                self.delays.append(delay)
                if scope.wait(delay):
                    break
                if not acknowledged.is_set():
                    delay = min(delay * 2, MAX_DELAY)
        confirmed.set()

    def _listen_once(self, acknowledged: threading.Event, *, again: bool, first: threading.Event) -> None:
        """One subscription, from subscribing until the stream ends (returns on a graceful end,
        raises when it drops)."""
        client = self.client()
        try:
            client.connect()
        except SessionExpiredError:
            client.era = None
            client.connect()
        if client.era == MODERN:
            self._modern(client, acknowledged, again, first)
            return
        try:
            self._handshake(client, acknowledged, again, first)
        except SessionExpiredError:  # the server forgot the session (restarted): handshake again next time
            client.era = None
            raise

    def _confirmed(self, acknowledged: threading.Event, again: bool, first: threading.Event) -> None:
        acknowledged.set()
        first.set()
        if again:
            self._everything_changed()
        elif self.tasks:  # a change made between creating a task and listening is not lost
            self._check_tasks(report_all=False)

    def _modern(self, client: Client, acknowledged: threading.Event, again: bool, first: threading.Event) -> None:
        wanted: dict[str, Any] = {field: True for kind, field in _FLAGS if kind in self._lists}
        if self.resources:
            wanted["resourceSubscriptions"] = list(self.resources)
        if self.tasks:
            wanted["taskIds"] = [task.id for task in self.tasks.values() if not task.ended or not again]
        message = protocol.request("subscriptions/listen",
                                   {"notifications": wanted, "_meta": client.meta})
        listen_id = message["id"]

        def on_message(item: dict[str, Any]) -> dict[str, Any] | None:
            method = item.get("method")
            params = protocol.as_object(item.get("params"))
            if method == ACK:
                granted = protocol.as_object(params.get("notifications"))
                if again and wanted.get("taskIds"):  # a task forgotten while away is dropped, not retried
                    self._drop_refused_tasks(wanted, granted)
                self._check_granted(wanted, granted)
                self._confirmed(acknowledged, again, first)
                return None
            if method == "notifications/cancelled" and params.get("requestId") == listen_id:
                raise _Ended()
            if method == TASK_STATUS:
                self._task_notified(params)
                return None
            return client.on_message(item)

        try:
            response = client.channel.listen(message, version=client.protocol_version, on_message=on_message)
        except _Ended:
            raise
        except BaseException:  # closed, refused or dropped: a stdio server is told it may stop sending
            client.cancel_request(listen_id, "the listener stopped")
            raise
        if response is not None and isinstance(response.get("error"), dict):
            raise client.error_for(response["error"], "subscriptions/listen")

    def _check_granted(self, wanted: dict[str, Any], granted: dict[str, Any]) -> None:
        refused = [field for field, value in wanted.items() if field not in _LISTS and
                   granted.get(field) is not True]
        for field, label in _LISTS.items():
            given = granted.get(field)
            given = {item for item in given if isinstance(item, str)} if isinstance(given, list) else set()
            refused += [f"{label}{shown(item)}" for item in wanted.get(field, ()) if item not in given]
        if refused:
            raise MCPError(f"MCP server {self.name()!r} will not send updates for: {', '.join(refused)}",
                           server=self.name())

    def _handshake(self, client: Client, acknowledged: threading.Event, again: bool,
                   first: threading.Event) -> None:
        for uri in self.resources:
            try:
                client.request("resources/subscribe", {"uri": uri})
            except MCPError as exc:
                if exc.code is None:
                    raise
                raise MCPError(f"MCP server {self.name()!r} will not send updates for {uri} ({exc})",
                               code=exc.code, server=self.name()) from None

        def on_message(item: dict[str, Any]) -> dict[str, Any] | None:
            return client.on_message(item)

        client.channel.listen(None, version=client.protocol_version, on_message=on_message,
                              on_open=lambda: self._confirmed(acknowledged, again, first))

    def _everything_changed(self) -> None:
        """After subscribing again: changes made while away were lost, so each list and each
        resource listened to counts as changed, and each unfinished task is checked and reported."""
        for kind in self._lists:
            self.changes.changed(kind)
        for uri in self.resources:
            self.changes.changed(self.changes.resource(uri))
        self._check_tasks(report_all=True)

    # -- tasks ----------------------------------------------------------------------------------

    def _check_tasks(self, *, report_all: bool) -> None:
        """One ``tasks/get`` for each unfinished task listened to; reports it (``after_change``)
        when ``report_all`` or when its status or message differs from what was known. A task the
        server no longer knows (``-32602``, expired) is logged and no longer listened to; a
        dropped connection is raised (the subscription is made again); an answer that breaks the
        extension (`TaskProtocolError`) is logged and the task no longer listened to."""
        for watched in [task for task in self.tasks.values() if not task.ended]:
            self._check(watched, report=report_all)

    def _check(self, watched: Watched, *, report: bool) -> None:
        """One ``tasks/get`` for ``watched``; reported when ``report`` or when it changed."""
        task = Task({"taskId": watched.id, "status": "working", "createdAt": "1970-01-01T00:00:00Z"},
                    server=self.changes.settings.owner, tool_name=watched.tool_name)  # refresh() reads it all
        try:
            task.refresh()
        except MCPError as exc:
            if check_again(exc):  # the connection dropped or the answer was lost: subscribe again
                raise
            log.warning("MCP server %s: task %s could not be checked (%s); no longer listened to",
                        self.name(), shown(watched.id), exc)
            self.tasks.pop(watched.id, None)
            return
        if report or (task.status, task.status_message) != (watched.status, watched.status_message):
            self._report(watched, task)

    def _task_notified(self, params: dict[str, Any]) -> None:
        """A ``notifications/tasks``: the task it carries, reported when listened to (news of
        another task is ignored; a malformed task is logged, and the task checked with
        ``tasks/get`` instead, so a completion sent without its result is not lost)."""
        watched = self.tasks.get(params.get("taskId")) if isinstance(params.get("taskId"), str) else None
        if watched is None:
            log.debug("MCP server %s sent news of a task not listened to", self.name())
            return
        data = {key: value for key, value in params.items() if key != "_meta"}
        try:
            task = Task(data, server=self.changes.settings.owner, tool_name=watched.tool_name)
        except MCPError as exc:
            log.warning("MCP server %s sent a malformed task notification (%s); checking the task instead",
                        self.name(), exc)
            self._check(watched, report=False)
            return
        self._report(watched, task)

    def _drop_refused_tasks(self, wanted: dict[str, Any], granted: dict[str, Any]) -> None:
        given = granted.get("taskIds") if isinstance(granted.get("taskIds"), list) else []
        for task_id in [i for i in wanted["taskIds"] if i not in given]:
            log.warning("MCP server %s no longer reports on task %s; no longer listened to", self.name(),
                        shown(task_id))
            self.tasks.pop(task_id, None)
            wanted["taskIds"].remove(task_id)

    def _report(self, watched: Watched, task: Task) -> None:
        watched.status, watched.status_message = task.status, task.status_message
        self.changes.changed(task)


def _one_or_many(value: Any, single: tuple[type, ...], argument: str, what: str) -> list[Any]:
    """``value`` as a list: one item of the ``single`` types, ``None`` (none) or an iterable;
    ``TypeError`` for anything else (bytes and dicts included), naming ``listen(argument=...)``."""
    if isinstance(value, single):
        return [value]
    if value is None:
        return []
    if isinstance(value, (bytes, bytearray, dict)) or not hasattr(value, "__iter__"):
        raise TypeError(f"listen({argument}=...) takes {what} (one, or a list of them), not {type(value).__name__}")
    return list(value)


def resource_uris(resources: Any) -> list[str]:
    """The URIs of ``resources`` (a URI string or `Resource` object, or an iterable of them).
    Raises ``TypeError`` for anything else, ``ValueError`` for an empty string or one that is not
    an absolute URI (RFC 3986 section 3: ``scheme:...``, no spaces or control characters)."""
    uris: list[str] = []
    for item in _one_or_many(resources, (str, Resource), "resources", "URI strings or Resource objects"):
        uri = item.uri if isinstance(item, Resource) else item
        if not isinstance(uri, str):
            raise TypeError(f"listen(resources=...) takes URI strings or Resource objects, not {type(item).__name__}")
        if not uri:
            raise ValueError("listen(resources=...): an empty string is not a URI")
        if not _URI.match(uri):
            raise ValueError(f"listen(resources=...): {repr(uri)[:200]} is not a URI (scheme:..., no spaces "
                             "or control characters)")
        if uri not in uris:
            uris.append(uri)
    return uris


_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[^\s\x00-\x1f\x7f]*\Z")
"""An absolute URI as far as listening needs: a scheme, a colon, no whitespace or control characters."""


def shown(task_id: str) -> str:
    """A task id as messages and log lines show it: control characters escaped (ids come from
    servers), at most `MAX_SHOWN_ID` characters."""
    return printable(task_id if len(task_id) <= MAX_SHOWN_ID else task_id[:MAX_SHOWN_ID] + "...")


MAX_SHOWN_ID = 200
"""Characters of a task id a message shows."""


def tasks_refused(client: Client, server_name: str, ids: list[str]) -> MCPError | None:
    """Why a connected server cannot report on tasks at all, as the ``MCPError`` to raise
    (naming ``ids``), or ``None`` when it can: a revision older than 2026-07-28 (Tasks need
    ``subscriptions/listen``), or no Tasks extension in the server's capabilities."""
    named = f"; refused: {', '.join(shown(i) for i in ids)}" if ids else ""
    if client.era != MODERN:
        return MCPError(f"MCP server {server_name!r} speaks {client.protocol_version}, older than 2026-07-28, and "
                        f"never reports on tasks{named}", server=server_name)
    extensions = protocol.as_object(client.capabilities.get("extensions"))
    if not isinstance(extensions.get(TASKS_EXTENSION), dict):
        return MCPError(f"MCP server {server_name!r} does not declare the {TASKS_EXTENSION} extension, so it "
                        f"reports on no task{named}", server=server_name)
    return None


def watched_tasks(tasks: Any, server_name: str) -> list[Watched]:
    """What ``listen(tasks=...)`` was given, as `Watched` tasks: `Task` objects (their status is
    what is known; a task of another server, by ``server_name``, is left out, so one list such as
    ``chat.pending_tasks`` can be given to each server) or task id strings, one or a list.
    Raises ``TypeError`` for anything else, ``ValueError`` for an empty id."""
    watched: dict[str, Watched] = {}
    for item in _one_or_many(tasks, (str, Task), "tasks", "Task objects or task id strings"):
        if isinstance(item, Task):
            if item.server_name is not None and item.server_name != server_name:
                continue
            entry = Watched(item.id, item.status, item.status_message, item.tool_name)
        elif isinstance(item, str):
            if not item or not item.strip():
                raise ValueError("listen(tasks=...): an empty string is not a task id")
            entry = Watched(item)
        else:
            raise TypeError(f"listen(tasks=...) takes Task objects or task id strings, not {type(item).__name__}")
        watched.setdefault(entry.id, entry)
    return list(watched.values())
