"""Tool calls paused on a server task (the Tasks extension, ``io.modelcontextprotocol/tasks``):
`PausedTasks`, the chat's collaborator that checks them, answers their questions and cancels them.

    chat.ask("Build the yearly report")      # the server answers tools/call with a task: the turn pauses
    chat.waiting, chat.pending_tasks          # True, [<Task id=... status='working'>]
    chat.complete()                           # one tasks/get per task; the turn goes on once all are done

A paused call keeps its task on the call (``ToolCall.task``, ``Task.to_dict()``), so a chat in
another process (a Celery job after a deploy) checks it with the server of the same name.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ..client.errors import ConfigurationError, MCPError
from ..client.asking import MAX_INPUT_REQUESTS
from ..client.question import Question, from_input_request, open_questions
from ..client.server import Servers
from ..client.task import Task, check_again
from .messages import Message, ToolCall
from .store import Store, unanswered

__all__ = ["PausedTasks", "task_calls"]

log = logging.getLogger("llm_mcp.chat")

SENT = "sent"
"""The key a task question's stored dict gets once its answer went out with ``tasks/update``."""


def task_calls(store: Store) -> tuple[Message | None, list[ToolCall]]:
    """The last assistant message and those of its unanswered calls that wait on a server task."""
    assistant, calls = unanswered(store.messages())
    return assistant, [call for call in calls if call.task is not None]


class Checked:
    """What one check of a paused call found: ``output`` to give the model (a ``Result`` or
    ``{"error": ...}``) once the task ended, and ``error`` to raise after (a failed task)."""

    def __init__(self, output: Any = None, error: MCPError | None = None, ended: bool = False) -> None:
        self.output, self.error, self.ended = output, error, ended


class PausedTasks:
    """The paused task calls of one chat.

    Attributes:
        store: the chat's store.
        servers: the chat's servers, by name (a stored task is checked with the server of its name).
    """

    def __init__(self, store: Store, servers: Callable[[], Servers]) -> None:
        self.store = store
        self._servers = servers
        self._live: dict[str, Task] = {}  # tasks this process received, by call id (their server at hand)

    def pause(self, call: ToolCall, task: Task) -> None:
        """Pause ``call`` on ``task`` (the turn that receives the task does not check it)."""
        call.task = task.to_dict()
        self._live[call.id] = task
        log.info("tool call %s (%s): the server runs it as task %s (%s); the turn pauses", call.id, call.name,
                 task.id, task.status)

    def task_of(self, call: ToolCall, *, strict: bool = True) -> Task:
        """The `Task` of a paused call, with its server: the one received in this process, else
        rebuilt from the stored data with the chat's server of that name. Raises
        ``ConfigurationError`` (``strict``) when the chat has no such server."""
        assert call.task is not None
        live = self._live.get(call.id)
        if live is not None and live.id == call.task.get("taskId"):
            return live
        name = call.task.get("server")
        servers = self._servers()
        server = servers[name] if isinstance(name, str) and name in servers else None
        if server is None and strict:
            raise ConfigurationError(f"tool call {call.id} ({call.name}) waits on task {call.task.get('taskId')!r} "
                                     f"of MCP server {name!r}, which this chat is not connected to; connect it "
                                     "(with_mcp, or the chat's agent) to check the task", server=name)
        task = Task.from_dict(call.task, server=server)
        if server is not None:
            self._live[call.id] = task
        return task

    def pending(self) -> list[Task]:
        """The tasks of the paused calls, oldest call first; ``[]`` once the chat is cancelled
        (the next ``complete()`` cancels them)."""
        _, calls = task_calls(self.store)
        if not calls or self.store.cancelled:
            return []
        return [self.task_of(call, strict=False) for call in calls]

    def check(self, assistant: Message, call: ToolCall) -> Checked:
        """Check ``call``'s task once: answers its questions got since (``tasks/update``), then one
        ``tasks/get``. A task still going is saved on the call (with new questions, deduplicated
        by key); one that ended clears it. Raises what the check raises when the server cannot
        be asked (it is down): the call and its task stay as they were."""
        task = self.task_of(call)
        self._send_answers(task, call)
        try:
            task.refresh()
        except MCPError as exc:
            if check_again(exc):
                raise  # the server is down or the answer was lost: check again next time
            return self._ended(call, Checked({"error": f"The task of this call could not be checked: {exc}"},
                                             error=exc, ended=True))
        log.info("tool call %s (%s): task %s is %s%s", call.id, call.name, task.id, task.status,
                 f" ({task.status_message})" if task.status_message else "")
        if task.succeeded:
            return self._ended(call, Checked(task.result, ended=True))
        if task.failed:
            error = task.error or {}
            code = error.get("code") if isinstance(error.get("code"), int) else None
            exc = MCPError(f"task {task.id!r} of MCP server {task.server_name!r} ({call.name}) failed with error "
                           f"{code}: {str(error.get('message', ''))[:500]}", code=code, data=error.get("data"),
                           server=task.server_name)
            return self._ended(call, Checked({"error": f"The task failed: {str(error.get('message', ''))[:500]}"},
                                             error=exc, ended=True))
        if task.cancelled:
            return self._ended(call, Checked({"error": "The server cancelled the task of this call: "
                                              f"{task.status_message or 'no reason given'}"}, ended=True))
        call.task = task.to_dict()
        if task.status == "input_required":
            if len(task.input_requests) > MAX_INPUT_REQUESTS:
                exc = MCPError(f"MCP server {task.server_name!r} asked {len(task.input_requests)} questions at once "
                               f"in task {task.id!r} (at most {MAX_INPUT_REQUESTS}); the call was stopped",
                               server=task.server_name)
                self._cancel_quietly(task, call)
                return self._ended(call, Checked({"error": str(exc)}, error=exc, ended=True))
            self._add_questions(task, call)
            self._send_answers(task, call)
        self.store.save_call(assistant, call)
        return Checked()

    def cancel(self, assistant: Message, calls: list[ToolCall], text: str) -> None:
        """Send ``tasks/cancel`` for each call's task, and give each call its one result
        (``text``). A server that cannot be told is logged: its task may run on."""
        for call in calls:
            try:
                task = self.task_of(call)
            except MCPError as exc:
                log.warning("tool call %s (%s): its task cannot be cancelled: %s", call.id, call.name, exc)
            else:
                self._cancel_quietly(task, call)
            self._live.pop(call.id, None)
            call.task, call.pending_questions = None, []
            self.store.save_call(assistant, call)
            self.store.add(Message("tool", text, tool_call_id=call.id, is_error=True))

    # -- the parts -------------------------------------------------------------------------------

    @staticmethod
    def _cancel_quietly(task: Task, call: ToolCall) -> None:
        try:
            task.cancel()
        except Exception as exc:  # noqa: BLE001 - the call is settled all the same
            log.warning("tool call %s (%s): tasks/cancel for task %s failed (%s: %s); the task may run on",
                        call.id, call.name, task.id, type(exc).__name__, exc)

    def _ended(self, call: ToolCall, checked: Checked) -> Checked:
        self._live.pop(call.id, None)
        call.task = None
        return checked

    def _add_questions(self, task: Task, call: ToolCall) -> None:
        """Add the questions of ``task.input_requests`` not asked before (by key) to the call,
        each screened by the server (``before_input_request``, kinds it does not accept)."""
        asked = {q.get("key") for q in call.pending_questions if isinstance(q, dict)}
        added = []
        for key, request in task.input_requests.items():
            if str(key) in asked:
                continue
            question = from_input_request(str(key), request, server=str(task.server_name),
                                          original={"method": "tasks/update", "params": {"taskId": task.id}})
            if question is None:  # not elicitation: nothing a person can answer
                log.warning("task %s of %s asked for %r, which a chat cannot answer: declined", task.id,
                            task.server_name, request.get("method") if isinstance(request, dict) else request)
                question = Question(str(key), {}, server=str(task.server_name), response={"action": "decline"})
            elif task.server is not None:
                task.server.screen_question(question)
            added.append(question.to_dict())
        if added:
            call.pending_questions = [*call.pending_questions, *added]

    def _send_answers(self, task: Task, call: ToolCall) -> None:
        """One ``tasks/update`` with the answers not sent yet, once no question of the call is open."""
        if open_questions(call.pending_questions):
            return
        stored = [q for q in call.pending_questions if isinstance(q, dict)]
        unsent = [q for q in stored if not q.get(SENT)]
        if not unsent:
            return
        task.update({q["key"]: q["response"] for q in unsent})
        call.pending_questions = [dict(q, **{SENT: True}) if isinstance(q, dict) else q for q in call.pending_questions]
