"""Celery jobs that run and resume persisted chats (``pip install django-llm-mcp[celery]``).

    from llm_mcp.tasks import ask_chat, check_tasks, resume_chat
    ask_chat.delay(record.pk, "Triage the new reports")    # a turn in the background
    resume_chat.delay(record.pk)                           # after a person approved a call or answered questions
    check_tasks.delay(record.pk)                           # check the server tasks it waits on (a listener does)

All take the chat's primary key and are safe to run twice: ``resume_chat`` on a chat with
nothing left to do returns at once (no model request), and ``ask_chat`` adds its user message
once per job (its Celery task id is the message's idempotency key). A chat that pauses
(approval, questions) ends the job; whoever records the decision enqueues ``resume_chat``.
A chat that pauses on server tasks (Tasks extension) schedules ``check_tasks``, which runs
``complete()`` (one ``tasks/get`` per task) and schedules itself again after the smallest
``pollIntervalMs`` among them, or ``LLM_MCP["TASK_POLL_INTERVAL"]`` seconds (5) when none says,
until no task is left.

The chat is loaded from ``LLM_MCP_CHAT_MODEL``; a chat created by an agent (``chat_class``)
is set up by that agent again, servers included, in the worker.
"""

from __future__ import annotations

import logging
from typing import Any

from datetime import datetime, timedelta, timezone

from celery import shared_task
from django.apps import apps
from django.core.exceptions import ObjectDoesNotExist

from . import conf
from .chat.messages import ToolCall
from .chat.store import unanswered
from .client.errors import CancelledError, MCPError
from .client.task import check_again, poll_seconds

__all__ = ["ask_chat", "check_tasks", "next_check", "resume_chat"]

EARLY = 0.5
"""Seconds a ``check_tasks`` run may come before the scheduled check and still be that check
(a run earlier than that is an extra one: it checks, and leaves the schedule to the chain)."""

log = logging.getLogger("llm_mcp.tasks")


def load_chat(chat_id: Any) -> Any:
    """The chat record ``chat_id`` (raises the model's ``DoesNotExist``)."""
    return apps.get_model(conf.chat_model_name())._default_manager.get(pk=chat_id)


def next_check(calls: list[ToolCall]) -> float | None:
    """Seconds until the server tasks of ``calls`` (a chat's unanswered calls) should be checked
    again, or ``None`` when none waits on a task: the smallest ``pollIntervalMs`` (milliseconds,
    as the server sends it) among them, else ``LLM_MCP["TASK_POLL_INTERVAL"]``."""
    intervals = []
    for call in calls:
        if call.task is None:
            continue
        poll = call.task.get("pollIntervalMs") if isinstance(call.task, dict) else None
        seconds = poll_seconds(poll)  # at most a day, whatever the server sent
        intervals.append(seconds if seconds else float(conf.get("TASK_POLL_INTERVAL")))
    return min(intervals) if intervals else None


@shared_task(bind=True, name="llm_mcp.resume_chat")
def resume_chat(self: Any, chat_id: Any) -> str:
    """Resume a paused chat (``complete()``). Returns ``"done"``, ``"waiting"`` (a person must
    decide), ``"polling"`` (it waits on server tasks: ``check_tasks`` is scheduled) or ``"empty"``
    (a chat without messages: nothing to do)."""
    record = load_chat(chat_id)
    if not record.message_records.exists():
        return "empty"
    try:
        record.complete()
        return _after_turn(self, record)
    finally:
        record.close()


@shared_task(bind=True, name="llm_mcp.ask_chat")
def ask_chat(self: Any, chat_id: Any, text: str, key: str | None = None) -> str:
    """Add ``text`` as the user's message and run the turn; the message is added once per
    ``key`` (default: this job's Celery task id, so a redelivered job does not ask twice)."""
    record = load_chat(chat_id)
    try:
        record.ask(text, key=key or self.request.id)
        return _after_turn(self, record)
    finally:
        record.close()


@shared_task(bind=True, name="llm_mcp.check_tasks")
def check_tasks(self: Any, chat_id: Any) -> str:
    """Check the server tasks chat ``chat_id`` waits on: ``complete()`` (one ``tasks/get`` per
    task; the turn goes on once all ended), then schedule itself again with
    ``apply_async(countdown=...)`` after the smallest poll interval (``LLM_MCP["TASK_POLL_INTERVAL"]``,
    5 s, when no task gives one) while a task is left.

    Safe to run twice, and to enqueue on every task change (what a listener does): runs hold
    the chat's turn lock one at a time, and a run that comes before the scheduled check checks
    without scheduling another (the schedule is the tool call rows' ``task_next_check``).
    A check that fails because a server is down is logged and tried again after
    ``TASK_POLL_INTERVAL`` seconds at least (the call stays paused). A failed task (``complete()`` raised ``MCPError``, the call
    has its error result) lets the model answer at once. Returns ``"done"`` (nothing waits on
    a task), ``"polling"`` (scheduled again), ``"listening"`` (not scheduled: with
    ``LLM_MCP["TASK_CHECKS"] = "listen"`` a ``mcp_listen --tasks`` process enqueues it when a
    task changes), ``"checked"`` (an extra run: the scheduled one
    comes), ``"waiting"`` (a person must act; jobs eager), ``"failed"`` or ``"cancelled"``;
    ``"done"`` too for a chat deleted since the run was scheduled."""
    try:
        record = load_chat(chat_id)
    except ObjectDoesNotExist:  # deleted while its tasks ran: nothing is left to check
        log.info("chat %s is gone: no task to check", chat_id)
        return "done"
    try:
        with record.store.lock:
            if not _task_rows(record).exists():
                return "done"
            chained = _scheduled(record)
            try:
                record.complete()
            except CancelledError:
                log.info("chat %s was cancelled: its paused tasks were cancelled", record.pk)
                return "cancelled"
            except MCPError as exc:
                if check_again(exc):
                    log.warning("chat %s: checking its tasks failed (%s: %s); trying again later", record.pk,
                                type(exc).__name__, exc)
                    return "checked" if chained else _schedule(self, record, at_least=float(conf.get("TASK_POLL_INTERVAL")))
                log.warning("chat %s: a task failed (%s); the model is told", record.pk, exc)
                record.complete()
                _after_turn(self, record)
                return "failed"
            if chained:
                return "checked" if _task_rows(record).exists() else "done"
            return _after_turn(self, record)
    finally:
        record.close()


def _task_rows(record: Any) -> Any:
    """The chat's tool call rows paused on a server task."""
    from .db.rows import tool_call_model

    return tool_call_model().objects.filter(message__chat_id=record.pk, result__isnull=True, task__isnull=False)


def _scheduled(record: Any) -> bool:
    """Whether a ``check_tasks`` run is scheduled for later than now (plus `EARLY`)."""
    later = datetime.now(timezone.utc) + timedelta(seconds=EARLY)
    return _task_rows(record).filter(task_next_check__gt=later).exists()


def _schedule(job: Any, record: Any, *, at_least: float = 0.0) -> str:
    """Schedule ``check_tasks`` for ``record`` after its tasks' poll interval, unless one is
    scheduled already; ``"done"`` when no task is left, ``"waiting"`` when jobs run eagerly
    (a countdown would not wait). ``at_least``: seconds to wait at least (a server that is down
    is not asked every few milliseconds)."""
    delay = next_check(unanswered(record.store.messages())[1])
    if delay is None:
        return "done"
    delay = max(delay, at_least)
    if conf.get("TASK_CHECKS") == "listen":  # mcp_listen --tasks enqueues check_tasks on each change
        log.info("chat %s waits on server tasks: the task listener has it checked", record.pk)
        return "listening"
    if _scheduled(record):
        return "polling"
    if job.request.is_eager:
        log.info("chat %s waits on server tasks; jobs run eagerly, so check_tasks is not scheduled", record.pk)
        return "waiting"
    _task_rows(record).update(task_next_check=datetime.now(timezone.utc) + timedelta(seconds=delay))
    check_tasks.apply_async(args=(record.pk,), countdown=delay)
    log.info("chat %s waits on server tasks: checking again in %.1f s", record.pk, delay)
    return "polling"


def _after_turn(task: Any, record: Any) -> str:
    calls = unanswered(record.store.messages())[1]  # one read serves both questions
    delay = next_check(calls)
    if delay is None and calls and not any(call.waiting for call in calls):
        # A call's task ended between the turn and this read (its task cleared in another
        # process): nothing would wake the chat again, so its calls run now, in this job.
        record.complete()
        calls = unanswered(record.store.messages())[1]
        delay = next_check(calls)
    if delay is None:
        return "waiting" if any(call.waiting for call in calls) else "done"
    return _schedule(task, record)
