"""Kit tools that run as tasks: the server side of the Tasks extension
(``io.modelcontextprotocol/tasks``, ``modelcontextprotocol/ext-tasks`` draft, SEP-2663).

    class Report(Tool):
        name = "report"
        task = "optional"             # a task when the client declared the extension, else a plain call
        # task = "required"           # -32021 to a client that did not declare it
        task_poll_interval_ms = 50    # pollIntervalMs in every answer (None: left out)
        task_ttl_ms = 60_000          # ttlMs (None: kept until the server stops)

        def call(self):
            self.task_status("collecting")        # the task's statusMessage (a no-op outside a task)
            self.cancellable(lambda: self.sleep(0.2))   # tasks/cancel stops it: the task ends "cancelled"
            return self.respond_with(content=self.text_content(text="done"))

Only 2026-07-28 requests get tasks (older revisions run the call as before). The tool runs
in its own thread after the ``CreateTaskResult`` is sent; ``tasks/get`` reports ``working``
(with the last status message), then ``completed`` with the tool's result (a tool error is
``completed`` too), ``failed`` with a JSON-RPC error when the tool raised, or ``cancelled``
when a ``tasks/cancel`` stopped it. An unknown or expired task id is ``-32602``; a client that
did not declare the extension gets ``-32021``; over HTTP the ``Mcp-Name`` header must carry the
task id. A tool that asks (``self.ask``) turns its task ``input_required``: ``tasks/get`` lists
the question in ``inputRequests`` until a ``tasks/update`` answers it (``inputResponses``), then
the tool runs again with the answers, as a Multi Round-Trip retry would. A
``subscriptions/listen`` naming task ids gets ``notifications/tasks`` for each change
(``llm_mcp.testing.subscriptions``).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from datetime import datetime, timezone
from typing import Any, Callable

from .runtime import CallChannel, InvalidResult, ToolCancelled

__all__ = ["TASKS_EXTENSION", "KitTask", "TaskFailed", "TaskStore", "declared_tasks"]


class TaskFailed(InvalidResult):
    """Raise it in a task tool's ``call()`` to end the task ``failed`` (a JSON-RPC ``-32603``
    error); outside a task the call is answered with that error."""

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The Tasks extension's identifier."""

TASK_MODES = (None, "optional", "required")
"""A kit tool's ``task`` setting: never a task, a task when declared, only as a task."""


def declared_tasks(client_capabilities: dict[str, Any]) -> bool:
    """Whether a request's client capabilities declare the Tasks extension."""
    extensions = client_capabilities.get("extensions") if isinstance(client_capabilities, dict) else None
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, timezone.utc).isoformat().replace("+00:00", "Z")


class KitTask:
    """One task of a kit server: its state, the tool's channel, and the thread running it."""

    def __init__(self, channel: CallChannel, *, ttl_ms: int | None, poll_interval_ms: int | None) -> None:
        self.id = uuid.uuid4().hex
        self.channel = channel
        self.status = "working"
        self.status_message: str | None = None
        self.created = self.updated = time.time()
        self.ttl_ms, self.poll_interval_ms = ttl_ms, poll_interval_ms
        self.result: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        self.cancel_requested = False
        self.done = threading.Event()
        self.on_change: Callable[[KitTask], None] = lambda task: None
        """Called (in the thread that made it, holding no lock) after each change of status or
        status message."""
        self.input_requests: dict[str, Any] = {}
        self.updates: list[dict[str, Any]] = []  # every tasks/update's inputResponses, in order (for tests)
        self._answered = threading.Condition()

    def ask(self, input_requests: dict[str, Any]) -> dict[str, Any]:
        """Turn ``input_required`` with ``input_requests`` and block until a ``tasks/update`` answers
        every one of them (or the task is cancelled: ``ToolCancelled``); returns the responses."""
        with self._answered:
            self.input_requests = dict(input_requests)
            self.status, self.updated = "input_required", time.time()
        self.on_change(self)  # outside the lock: a listener's send waits for the event loop, which updates
        with self._answered:
            while True:
                if self.cancel_requested:
                    raise ToolCancelled("the task was cancelled while it waited for input")
                answers = {}
                for update in self.updates:
                    answers.update({k: v for k, v in update.items() if k in self.input_requests})
                if set(answers) >= set(self.input_requests):
                    self.input_requests = {}
                    self.status, self.updated = "working", time.time()
                    break
                self._answered.wait(0.05)
        self.on_change(self)
        return answers

    def update(self, input_responses: dict[str, Any]) -> None:
        """``tasks/update``: record the responses (unknown or answered keys are ignored by ``ask``)."""
        with self._answered:
            self.updates.append(dict(input_responses))
            self._answered.notify_all()

    @property
    def expired(self) -> bool:
        return self.ttl_ms is not None and time.time() > self.created + self.ttl_ms / 1000

    def set_status(self, message: str) -> None:
        if self.status == "working" and str(message) != self.status_message:
            self.status_message, self.updated = str(message), time.time()
            self.on_change(self)

    def finish(self, status: str, *, result: dict[str, Any] | None = None, error: dict[str, Any] | None = None,
               message: str | None = None) -> None:
        self.status, self.result, self.error, self.updated = status, result, error, time.time()
        if message is not None:
            self.status_message = message
        self.done.set()
        self.on_change(self)

    def wire(self, result_type: str) -> dict[str, Any]:
        """The task on the wire: a ``CreateTaskResult`` (``"task"``) or a ``DetailedTask`` (``"complete"``)."""
        answer: dict[str, Any] = {"resultType": result_type, "taskId": self.id, "status": self.status,
                                  "createdAt": _iso(self.created), "lastUpdatedAt": _iso(self.updated),
                                  "ttlMs": self.ttl_ms}
        if self.status_message is not None:
            answer["statusMessage"] = self.status_message
        if self.poll_interval_ms is not None:
            answer["pollIntervalMs"] = self.poll_interval_ms
        if result_type == "complete" and self.status == "completed" and self.result is not None:
            answer["result"] = self.result
        if result_type == "complete" and self.status == "failed" and self.error is not None:
            answer["error"] = self.error
        if result_type == "complete" and self.status == "input_required":
            answer["inputRequests"] = dict(self.input_requests)
        return answer


class TaskStore:
    """The tasks of one kit server, by id (thread-safe). ``cancels`` lists the task ids of the
    ``tasks/cancel`` requests received, ``checks`` those of the ``tasks/get`` requests (for tests)."""

    def __init__(self) -> None:
        self._tasks: dict[str, KitTask] = {}
        self._lock = threading.Lock()
        self.cancels: list[str] = []
        self.checks: list[str] = []
        self._watchers: dict[object, Callable[[str, dict[str, Any]], None]] = {}

    def watch(self, watcher: Callable[[str, dict[str, Any]], None]) -> Callable[[], None]:
        """Call ``watcher(task_id, task)`` after each change of a task (``task`` as ``tasks/get``
        answers it, without ``resultType``), in the thread that changed it; returns the callable
        that stops it. A watcher that raises is logged and skipped."""
        key = object()
        self._watchers[key] = watcher
        return lambda: self._watchers.pop(key, None)

    def _changed(self, task: KitTask) -> None:
        wire = task.wire("complete")
        del wire["resultType"]
        for watcher in list(self._watchers.values()):
            try:
                watcher(task.id, wire)
            except Exception:  # one broken stream must not stop the task or the others
                logging.getLogger("llm_mcp.testing").exception("a task watcher failed")

    def start(self, run: Callable[[], dict[str, Any]], channel: CallChannel, *, ttl_ms: int | None,
              poll_interval_ms: int | None, owner: str, refuse: Callable[[str], Exception]) -> dict[str, Any]:
        """Create a task, run ``run`` (the tool's call) in a thread of its own, and return the
        ``CreateTaskResult`` (the task as created: ``working``)."""
        task = KitTask(channel, ttl_ms=ttl_ms, poll_interval_ms=poll_interval_ms)
        task.on_change = self._changed
        channel.task = task
        with self._lock:
            self._tasks[task.id] = task

        def work() -> None:
            try:
                result = run()
                while isinstance(result, dict) and isinstance(result.get("inputRequests"), dict):
                    answers = task.ask(result["inputRequests"])  # input_required until tasks/update answers
                    channel.input_responses.update(answers)
                    channel.request_state = result.get("requestState")
                    result = run()
            except ToolCancelled:
                task.finish("cancelled", message="cancelled by the client")
            except TaskFailed as exc:
                task.finish("failed", error={"code": -32603, "message": str(exc).removeprefix(f"{owner}: ")})
            except Exception as exc:  # the tool raised: the task failed with a JSON-RPC error
                logging.getLogger("llm_mcp.testing").warning("%s failed as a task: %s", owner, exc)
                error = refuse(f"{owner} failed: {type(exc).__name__}: {exc}")
                task.finish("failed", error={"code": getattr(error, "code", -32603),
                                             "message": getattr(error, "message", str(error))})
            else:
                task.finish("completed", result=result)

        created = task.wire("task")
        threading.Thread(target=work, name=f"kit-task-{task.id[:8]}", daemon=True).start()
        return created

    def get(self, task_id: Any) -> KitTask | None:
        """The task with ``task_id``, or ``None`` when unknown or expired (then forgotten)."""
        with self._lock:
            task = self._tasks.get(task_id) if isinstance(task_id, str) else None
            if task is not None and task.expired:
                del self._tasks[task_id]
                return None
            return task

    def forget(self, task_id: str) -> bool:
        """Forget the task with ``task_id`` at once, as when its ``ttlMs`` has passed: ``tasks/get``
        and ``subscriptions/listen`` no longer know it (its tool call still runs, unheard).
        Returns whether it was known (for tests of clients that must cope with a forgotten task)."""
        with self._lock:
            return self._tasks.pop(task_id, None) is not None

    def cancel(self, task: KitTask) -> None:
        """``tasks/cancel``: the tool's cancellable work stops; a task already ended stays as it is."""
        self.cancels.append(task.id)
        with task._answered:
            task.cancel_requested = True
            task._answered.notify_all()
        task.channel.cancel()

    def __len__(self) -> int:
        return len(self._tasks)
