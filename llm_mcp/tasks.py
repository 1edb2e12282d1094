"""Celery jobs that run and resume persisted chats (``pip install django-llm-mcp[celery]``).

    from llm_mcp.tasks import ask_chat, resume_chat
    ask_chat.delay(record.pk, "Triage the new reports")    # a turn in the background
    resume_chat.delay(record.pk)                           # after a person approved a call or answered questions

Both take the chat's primary key and are safe to run twice: ``resume_chat`` on a chat with
nothing left to do returns at once (no model request), and ``ask_chat`` adds its user message
once per job (its Celery task id is the message's idempotency key). A chat that pauses
(approval, questions) ends the job; whoever records the decision enqueues ``resume_chat``.
A chat that waits on server tasks re-enqueues itself after the smallest ``pollInterval``
among them, or ``LLM_MCP["TASK_POLL_INTERVAL"]`` seconds (5) when none says.

The chat is loaded from ``LLM_MCP_CHAT_MODEL``; a chat created by an agent (``chat_class``)
is set up by that agent again, servers included, in the worker.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from django.apps import apps

from . import conf
from .chat.messages import ToolCall
from .chat.store import unanswered

__all__ = ["ask_chat", "next_check", "resume_chat"]

log = logging.getLogger("llm_mcp.tasks")


def load_chat(chat_id: Any) -> Any:
    """The chat record ``chat_id`` (raises the model's ``DoesNotExist``)."""
    return apps.get_model(conf.chat_model_name())._default_manager.get(pk=chat_id)


def next_check(calls: list[ToolCall]) -> float | None:
    """Seconds until the server tasks of ``calls`` (a chat's unanswered calls) should be checked
    again, or ``None`` when none waits on a task: the smallest ``pollInterval`` (milliseconds,
    as the server sends it) among them, else ``LLM_MCP["TASK_POLL_INTERVAL"]``."""
    intervals = []
    for call in calls:
        if call.task is None:
            continue
        poll = call.task.get("pollInterval") if isinstance(call.task, dict) else None
        intervals.append(poll / 1000 if isinstance(poll, (int, float)) and poll > 0
                         else float(conf.get("TASK_POLL_INTERVAL")))
    return min(intervals) if intervals else None


@shared_task(bind=True, name="llm_mcp.resume_chat")
def resume_chat(self: Any, chat_id: Any) -> str:
    """Resume a paused chat (``complete()``). Returns ``"done"``, ``"waiting"`` (a person must
    decide), ``"polling"`` (re-enqueued to check the chat's server tasks again) or ``"empty"``
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
    if task.request.is_eager:  # run in-process (CELERY_TASK_ALWAYS_EAGER): a countdown would not wait
        log.info("chat %s waits on server tasks; jobs run eagerly, so resume_chat is not re-enqueued", record.pk)
        return "waiting"
    resume_chat.apply_async(args=(record.pk,), countdown=delay)
    log.info("chat %s waits on server tasks: checking again in %.1f s", record.pk, delay)
    return "polling"
