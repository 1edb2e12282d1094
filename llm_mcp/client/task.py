"""``Task``: a tool call the server runs on its own time (the Tasks extension,
``io.modelcontextprotocol/tasks``; ``modelcontextprotocol/ext-tasks`` draft, SEP-2663).

    class Reports(llm_mcp.MCP):
        url = "https://reports.example/mcp"
        extensions = ["tasks"]

    task = Reports().tool("build_report").call(year=2026)   # a Task when the server made one
    task.status, task.status_message, task.poll_interval     # "working", "collecting", 0.5
    task.refresh()                                           # one tasks/get
    task.wait().result                                       # polls until it ends: a Result
    task.cancel()                                            # tasks/cancel (it may still complete)

A server decides per call whether to answer with a task; only a client that declared the
extension ever gets one. ``server.call(...)`` and ``server.tool_name(...)`` wait for the task
and return its ``Result``.
"""

from __future__ import annotations

import math
import time
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from .errors import CancelledError, ConfigurationError, MCPError, TaskProtocolError, is_outage
from .logs import printable
from .protocol import as_object
from .result import Result

if TYPE_CHECKING:
    from .server.base import MCP

__all__ = ["END_STATES", "MAX_POLL_INTERVAL", "STATUSES", "Task", "check_again", "poll_seconds"]


STATUSES = ("working", "input_required", "completed", "failed", "cancelled")
"""The statuses a task can have."""

END_STATES = ("completed", "failed", "cancelled")
"""The statuses a task never leaves."""

MIN_POLL_INTERVAL = 0.01
"""Seconds ``wait`` sleeps at least between two checks (a server sending 0 is not hammered)."""

DEFAULT_POLL_INTERVAL = 1.0
"""Seconds ``wait`` sleeps between checks when the server sends no ``pollIntervalMs``."""

MAX_POLL_INTERVAL = 86_400.0
"""Seconds between checks at most (one day): a larger ``pollIntervalMs`` (any JSON number may
come, 10**400 included) is read as this, so waits and scheduled checks never overflow."""


def poll_seconds(value: Any) -> float | None:
    """A ``pollIntervalMs`` (milliseconds) as seconds, at most `MAX_POLL_INTERVAL`; ``None``
    when it is not a finite number of zero or more."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return min(value, MAX_POLL_INTERVAL * 1000) / 1000


def check_again(exc: MCPError) -> bool:
    """Whether a check of a task that raised ``exc`` is tried again later, the call staying
    paused: the server is down, or its answer was lost (an error without a JSON-RPC code).
    A JSON-RPC error (``-32602``: the task is unknown) or a `TaskProtocolError` (the answer
    breaks the extension) ends the call instead: asking again would get the same."""
    return is_outage(exc) or (exc.code is None and not isinstance(exc, TaskProtocolError))


def _moment(value: Any, what: str, server: str) -> datetime:
    if not isinstance(value, str):
        raise TaskProtocolError(f"MCP server {server!r} sent a task without a valid {what}: {value!r}", server=server)
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise TaskProtocolError(f"MCP server {server!r} sent a task with a malformed {what}: {printable(value[:60])!r}",
                       server=server) from None
    if moment.tzinfo is None:  # ISO 8601 without an offset: read as UTC
        moment = moment.replace(tzinfo=timezone.utc)
    try:
        return moment.astimezone(timezone.utc)
    except OverflowError:  # 0001-01-01T00:00+01:00 is before the first UTC moment a datetime holds
        raise TaskProtocolError(f"MCP server {server!r} sent a task with {what} out of range: {printable(value[:60])!r}",
                       server=server) from None


class Task:
    """A task a server created for a ``tools/call`` (Tasks extension, "Task" and "tasks/get").

    Attributes:
        id: the server's ``taskId``.
        status: ``"working"``, ``"input_required"``, ``"completed"``, ``"failed"`` or ``"cancelled"``.
        status_message: the server's ``statusMessage`` (``None`` when it sent none).
        poll_interval: seconds between checks the server asks for (``pollIntervalMs`` / 1000),
            ``None`` when absent.
        created_at: when the task was created, a timezone-aware UTC ``datetime``.
        updated_at: when its state last changed (``lastUpdatedAt``), aware UTC.
        expires_at: ``created_at + ttlMs``, after which the server may forget it; ``None`` for a null TTL.
        result: the tool's [`Result`][llm_mcp.Result] once ``completed`` and checked (``tasks/get``),
            ``None`` before.
        error: the JSON-RPC error object of a ``failed`` task, else ``None``.
        input_requests: an ``input_required`` task's ``inputRequests`` (key -> server request, the
            shape of Multi Round-Trip Requests), ``{}`` in other states; answer with `update`.
        server: the [`MCP`][llm_mcp.MCP] server to check it with (``None`` once pickled: set it again,
            or rebuild with ``Task.from_dict(data, server=...)``).
        server_name, tool_name: the server's name and the server-side tool name, kept when stored.

    A task pickles (without its server) and ``to_dict()``/``from_dict()`` store and rebuild it.
    """

    def __init__(self, data: dict[str, Any], *, server: MCP | None = None, server_name: str | None = None,
                 tool_name: str | None = None) -> None:
        self.server = server
        self.server_name = server_name if server_name is not None else getattr(server, "name", None)
        self.tool_name = tool_name
        self._read(data, detailed=data.get("resultType") != "task")

    def _read(self, data: dict[str, Any], *, detailed: bool = True) -> None:
        name = str(self.server_name)
        data = as_object(data)
        task_id, status = data.get("taskId"), data.get("status")
        if not isinstance(task_id, str) or not task_id:
            raise TaskProtocolError(f"MCP server {name!r} sent a task without a taskId", server=name)
        if status not in STATUSES:
            raise TaskProtocolError(f"MCP server {name!r} sent task {task_id!r} with an unknown status {status!r}", server=name)
        ttl, poll = data.get("ttlMs"), data.get("pollIntervalMs")
        for label, value in (("ttlMs", ttl), ("pollIntervalMs", poll)):
            if value is not None and poll_seconds(value) is None:  # NaN, infinities, negatives, non-numbers
                raise TaskProtocolError(f"MCP server {name!r} sent task {task_id!r} with an invalid {label}: {value!r}",
                               server=name)
        self.id = task_id
        self.status: str = status
        message = data.get("statusMessage")
        self.status_message: str | None = message if isinstance(message, str) else None
        self.poll_interval: float | None = poll_seconds(poll)
        self.created_at = _moment(data.get("createdAt"), "createdAt", name)
        self.updated_at = _moment(data.get("lastUpdatedAt", data.get("createdAt")), "lastUpdatedAt", name)
        self.ttl_ms = ttl
        try:
            self.expires_at = self.created_at + timedelta(milliseconds=ttl) if ttl is not None else None
        except OverflowError:  # a TTL beyond the calendar: it never expires
            self.expires_at = None
        raw_result = data.get("result")
        self.result: Result | None = None
        # A CreateTaskResult carries no result (even when the task ended already): tasks/get does.
        self._unread = status == "completed" and not isinstance(raw_result, dict) and not detailed
        if status == "completed" and not self._unread:
            if not isinstance(raw_result, dict):
                raise TaskProtocolError(f"MCP server {name!r} reported task {task_id!r} completed without its result",
                               server=name)
            self.result = Result(raw_result, tool_name=self.tool_name)
        error = data.get("error")
        self.error: dict[str, Any] | None = error if status == "failed" and isinstance(error, dict) else None
        requests = data.get("inputRequests")
        if status == "input_required" and detailed and not isinstance(requests, dict):
            raise TaskProtocolError(f"MCP server {name!r} reported task {task_id!r} input_required without its "
                                    f"inputRequests (an object by key)", server=name)
        self.input_requests: dict[str, Any] = dict(requests) if status == "input_required" and \
            isinstance(requests, dict) else {}
        self._data = dict(data)

    # -- predicates ----------------------------------------------------------------------------

    @property
    def complete(self) -> bool:
        """Whether the task has ended (``completed``, ``failed`` or ``cancelled``)."""
        return self.status in END_STATES

    @property
    def succeeded(self) -> bool:
        """Whether the task completed (its tool result may still be a tool error: ``result.is_error``)."""
        return self.status == "completed"

    @property
    def failed(self) -> bool:
        """Whether the task failed (a JSON-RPC error: ``error``)."""
        return self.status == "failed"

    @property
    def cancelled(self) -> bool:
        """Whether the task was cancelled."""
        return self.status == "cancelled"

    # -- talking to the server -----------------------------------------------------------------

    def _server(self) -> MCP:
        if self.server is None:
            raise ConfigurationError(f"task {self.id!r} has no server to check it with: set task.server, or "
                                     f"rebuild it with Task.from_dict(data, server=...)", server=self.server_name)
        return self.server

    def _request(self, method: str, **params: Any) -> dict[str, Any]:
        server = self._server()
        return server.connection.client.request(method, {"taskId": self.id, **params})

    def refresh(self) -> Task:
        """Fetch the task's current state with one ``tasks/get``; returns the task. The status
        message goes to the server's ``after_progress`` (and a chat's ``after_tool_progress``).

        Raises ``MCPError`` (``code -32602`` for a task the server no longer knows, e.g. expired),
        ``ConnectionError`` while the server is down (never skipped, never turned into a tool
        error), ``ConfigurationError`` for a task without its server."""
        answer = self._request("tasks/get")
        answer.setdefault("taskId", self.id)
        if answer.get("taskId") != self.id:
            raise TaskProtocolError(f"MCP server {self.server_name!r} answered tasks/get for {self.id!r} with task "
                           f"{str(answer.get('taskId'))[:80]!r}", server=self.server_name)
        self._read(answer)
        self._report()
        return self

    def _report(self) -> None:
        """Give this check's status message to whoever listens to the server's progress: its
        ``after_progress`` and the chat making the call (``after_tool_progress``), as a
        [`Progress`][llm_mcp.Progress] whose ``value`` is the seconds since the task was created
        (tasks send no ``notifications/progress``: the status message is what there is)."""
        listener = self.server.progress_listener() if self.server is not None else None
        if listener is None:
            return
        elapsed = max((datetime.now(timezone.utc) - self.created_at).total_seconds(), 0.0)
        params: dict[str, Any] = {"progress": elapsed}
        if self.status_message is not None:
            params["message"] = self.status_message
        listener(params)

    def wait(self, timeout: float | None = None) -> Task:
        """Check the task (``refresh``) every ``poll_interval`` seconds (1 s when the server gives
        none) until it ends; returns the task, so ``task.wait().result`` works.

        ``timeout``: seconds to wait at most, by default the server's ``timeout`` setting.
        Raises ``ServerTimeoutError`` when it has not ended by then (the task goes on; ``cancel``
        stops it), and what ``refresh`` raises."""
        from .errors import ServerTimeoutError

        limit = float(timeout) if timeout is not None else self._server().connection.timeout()
        deadline = time.monotonic() + limit
        while not self.complete or self._unread:
            pause = max(self.poll_interval if self.poll_interval is not None else DEFAULT_POLL_INTERVAL,
                        MIN_POLL_INTERVAL)
            left = deadline - time.monotonic()
            if left <= 0:
                raise ServerTimeoutError(f"task {self.id!r} of MCP server {self.server_name!r} was still "
                                         f"{self.status} after {limit:g} s", server=self.server_name)
            if not self._unread:
                time.sleep(min(pause, left))
            self.refresh()
        return self

    def outcome(self, timeout: float | None = None) -> Result:
        """``wait`` for the task and return its ``Result``. Raises ``MCPError`` (the server's
        ``code``) when it failed, ``CancelledError`` when it was cancelled."""
        self.wait(timeout)
        if self.failed:
            error = self.error or {}
            code = error.get("code") if isinstance(error.get("code"), int) else None
            raise MCPError(f"task {self.id!r} of MCP server {self.server_name!r} failed with error {code}: "
                           f"{printable(str(error.get('message', ''))[:500])}", code=code, data=error.get("data"),
                           server=self.server_name)
        if self.cancelled:
            raise CancelledError(f"task {self.id!r} of MCP server {self.server_name!r} was cancelled",
                                 server=self.server_name)
        assert self.result is not None  # completed: _read insists on a result
        return self.result

    def update(self, input_responses: dict[str, Any]) -> Task:
        """Answer an ``input_required`` task's questions with one ``tasks/update``
        (``inputResponses``: key -> the response, e.g. ``{"action": "accept", "content": {...}}``);
        returns the task (its state is unchanged until the next `refresh`: the server
        acknowledges at once and goes on in its own time). Raises what ``refresh`` raises."""
        if not isinstance(input_responses, dict) or not input_responses:
            raise ValueError("update() takes a non-empty dict of input responses by key")
        self._request("tasks/update", inputResponses=input_responses)
        return self

    def cancel(self) -> Task:
        """Send ``tasks/cancel`` at once; returns the task. Cancelling is cooperative: the task
        may still end ``completed`` (``refresh`` tells). Raises what ``refresh`` raises."""
        self._request("tasks/cancel")
        return self

    # -- storing -------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The task as stored: the server's last answer plus ``server`` and ``tool`` names."""
        return {**self._data, "server": self.server_name, "tool": self.tool_name}

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, server: MCP | None = None) -> Task:
        """Rebuild a task from ``to_dict()``; pass the ``server`` to check it with."""
        data = dict(data)
        server_name, tool_name = data.pop("server", None), data.pop("tool", None)
        return cls(data, server=server, server_name=server_name if server is None else server.name,
                   tool_name=tool_name)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Task.from_dict, (self.to_dict(),))

    def __repr__(self) -> str:
        return f"<Task id={self.id!r} status={self.status!r} server={self.server_name!r}>"
