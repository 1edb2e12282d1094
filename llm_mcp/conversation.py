"""A saved chat as the chat page shows it: messages, tool call cards, questions, and its state.

    view = Conversation.of(record)
    view.state            # "idle", "running", "waiting", "cancelled" or "unfinished"
    view.entries          # [{"row", "html", "calls": [...]}, ...]
    view.fingerprint      # changes whenever anything the page shows changes

Built from the rows on each request (nothing rendered is stored). A tool call's card carries
its arguments (checked against the tool's input schema while it waits for approval), its open
questions (from ``record.pending_questions``: questions that belong to no call of the page are
listed on their own) and its result: text, structured content, media and attachments, an error
and whether the call may have partly run.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from django.urls import reverse

from . import conf
from .client.shaping import PARTLY_RUN
from .forms import QuestionForm, argument_problems
from .rendering import attachment_views, markdown_html, structured_html

__all__ = ["Conversation", "tool_schemas"]

log = logging.getLogger("llm_mcp.conversation")

_problems: OrderedDict[tuple[Any, Any], list[str]] = OrderedDict()
_problems_lock = threading.Lock()
MAX_REMEMBERED = 1000
"""Schema checks remembered per process (a call's arguments never change, so one check is enough)."""

MAX_SHOWN = 20_000
"""Characters of a call's arguments, a result's text or its raw JSON the page shows; the rest is
left out with a note saying how much (the rows keep everything: the admin shows it whole)."""


def shown(text: str) -> str:
    """``text`` cut to `MAX_SHOWN` characters, with a note of how many more there are."""
    if len(text) <= MAX_SHOWN:
        return text
    return f"{text[:MAX_SHOWN]}\n… ({len(text) - MAX_SHOWN:,} more characters not shown)"


def tool_schemas(record: Any) -> dict[str, dict[str, Any]]:
    """``{tool name: input schema}`` of the tools the chat offers its model (lists the servers'
    tools; closes what it opened). Raises what listing raises."""
    try:
        return {tool.name: tool.params_schema for tool in record.chat.tools}
    finally:
        record.close()


def _problems_for(record: Any, calls: list[Any]) -> dict[Any, list[str] | str]:
    """What is wrong with the arguments of each waiting call: a list of problems, or a text
    saying why they could not be checked."""
    found: dict[Any, list[str] | str] = {}
    missing = []
    with _problems_lock:
        for call in calls:
            if (record.pk, call.pk) in _problems:
                found[call.pk] = _problems[(record.pk, call.pk)]
            else:
                missing.append(call)
    if not missing:
        return found
    try:
        schemas = tool_schemas(record)
    except Exception as exc:  # a server that is down: say so, approve at your own judgement
        log.warning("the tools of chat %s could not be listed to check arguments: %s", record.pk, type(exc).__name__)
        for call in missing:
            found[call.pk] = f"the tool's schema could not be read ({type(exc).__name__}), so the arguments were not checked"
        return found
    with _problems_lock:
        for call in missing:
            schema = schemas.get(call.name)
            if schema is None:
                found[call.pk] = f"this chat offers no tool named {call.name!r}, so the arguments were not checked"
                continue
            found[call.pk] = _problems[(record.pk, call.pk)] = argument_problems(call.arguments, schema)
            while len(_problems) > MAX_REMEMBERED:
                _problems.popitem(last=False)
    return found


def _listed(problems: list[str] | str | None) -> list[str]:
    return problems if isinstance(problems, list) else []


def _app_view(call: Any, row: Any, raw: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the page needs to render the MCP App of a result (``None`` for a tool without one)."""
    if raw is None or not getattr(call, "ui_uri", None):
        return None
    origin = conf.get("APPS_SANDBOX_ORIGIN")
    return {"message": row.pk, "sandbox_origin": origin.rstrip("/") if origin else "",
            "sandbox_url": origin.rstrip("/") + reverse("llm_mcp:app_sandbox") if origin else ""}


def _result_view(call: Any, row: Any) -> dict[str, Any]:
    raw = call.mcp_result if isinstance(call.mcp_result, dict) else None
    structured = raw.get("structuredContent") if raw is not None else None
    text = row.content or ""
    if structured is not None and text.strip() == json.dumps(structured, ensure_ascii=False):
        text = ""  # the text is only the structured content again: shown once, as a table
    return {
        "row": row, "text": shown(text), "is_error": row.is_error,
        "partly_run": row.is_error and PARTLY_RUN.strip() in text,
        "structured": structured_html(structured) if structured is not None else "",
        "raw_json": shown(json.dumps(raw if raw is not None else {"content": row.content}, indent=2,
                                     ensure_ascii=False)),
        "attachments": attachment_views(row.attachments),
        "app": _app_view(call, row, raw),
    }


def _question_view(question: Any, forms: dict[tuple[str, str], QuestionForm]) -> dict[str, Any]:
    view: dict[str, Any] = {"question": question, "host": "", "web_url": False, "form": None}
    if question.is_url:
        view["web_url"] = question.web_url
        try:
            view["host"] = urlsplit(question.url or "").hostname or ""
        except ValueError:
            view["host"] = ""
    else:
        view["form"] = forms.get((question.tool_call_id, question.key)) or QuestionForm(question)
    view["unsupported"] = question.unsupported if not question.is_url else None
    return view


def _task_view(call: Any) -> dict[str, Any]:
    """What the page shows of the server task a call waits on (its row's ``task_*`` columns)."""
    return {"id": call.task_id, "status": call.task_status.replace("_", " ") or "unknown",
            "message": call.task_status_message, "server": call.task_server,
            "poll_interval": call.task_poll_interval, "expires_at": call.task_expires_at}


@dataclass
class Conversation:
    """The page's view of one chat (see the module).

    ``state``: ``"waiting"`` (a call waits for a person), ``"tasks"`` (calls wait only on server
    tasks, which a job or a listener checks), ``"running"`` (a turn holds the chat's
    turn lock, here or in a worker), ``"cancelled"``, ``"unfinished"`` (the conversation does not
    end with an answer and no turn runs: one failed, or a job waits for a worker; Resume runs it)
    or ``"idle"``."""

    record: Any
    entries: list[dict[str, Any]] = field(default_factory=list)
    other_questions: list[dict[str, Any]] = field(default_factory=list)
    state: str = "idle"
    waiting_calls: int = 0
    task_calls: int = 0
    fingerprint: str = ""

    @classmethod
    def of(cls, record: Any, *, forms: dict[tuple[str, str], QuestionForm] | None = None,
           check_arguments: bool = True) -> Conversation:
        """Read ``record``'s rows (a few queries). ``forms``: bound question forms to show
        instead of blank ones (a refused answer, with its errors), by ``(tool_call_id, key)``."""
        forms = forms or {}
        record.refresh_from_db(fields=["cancelled"])
        rows = list(record.message_records.order_by("id").prefetch_related("tool_calls__result"))
        questions = record.pending_questions
        by_call: dict[str, list[Any]] = {}
        for question in questions:
            by_call.setdefault(question.tool_call_id, []).append(question)
        pending = [call for row in rows if row.role == "assistant" for call in row.tool_calls.all()
                   if call.approval == "pending" and call.result_id is None]
        problems = _problems_for(record, pending) if pending and check_arguments else {}
        shown_results: set[Any] = set()
        shown_calls: set[str] = set()
        view = cls(record)
        marks: list[Any] = [record.cancelled]
        for row in rows:
            calls = []
            if row.role == "assistant":
                for call in row.tool_calls.all():
                    if call.result_id is not None:
                        shown_results.add(call.result_id)
                    shown_calls.add(call.tool_call_id)
                    open_questions = by_call.get(call.tool_call_id, []) if call.result_id is None else []
                    waiting = call.result_id is None and (call.approval == "pending" or bool(open_questions))
                    on_task = call.result_id is None and call.task is not None
                    view.waiting_calls += waiting
                    view.task_calls += on_task and not waiting
                    calls.append({
                        "row": call, "waiting": waiting, "task": _task_view(call) if on_task else None,
                        "arguments": shown(json.dumps(call.arguments, indent=2, ensure_ascii=False)),
                        "problems": _listed(problems.get(call.pk)),
                        "unchecked": problems.get(call.pk) if isinstance(problems.get(call.pk), str) else "",
                        "questions": [_question_view(q, forms) for q in open_questions],
                        "result": _result_view(call, call.result) if call.result is not None else None,
                    })
                    marks.append((call.pk, call.approval, call.result_id, json.dumps(call.pending_questions,
                                                                                     sort_keys=True),
                                  call.task_status, call.task_status_message))
            marks.append((row.pk, len(row.content)))
            html = markdown_html(row.content) if row.role == "assistant" else ""
            view.entries.append({"row": row, "html": html, "calls": calls,
                                 "attachments": attachment_views(row.attachments)})
        view.entries = [e for e in view.entries if not (e["row"].role == "tool" and e["row"].pk in shown_results)
                        and e["row"].role != "system"]
        view.other_questions = [_question_view(q, forms) for q in questions if q.tool_call_id not in shown_calls]
        last = rows[-1] if rows else None
        unfinished = last is not None and (last.role != "assistant" or any(
            call.result_id is None for call in last.tool_calls.all()))
        if view.waiting_calls or view.other_questions:
            view.state = "waiting"
        elif view.task_calls:
            view.state = "tasks"
        elif unfinished:
            view.state = ("cancelled" if record.cancelled else
                          "running" if record.store.lock.busy else "unfinished")
        marks.append(view.state)
        view.fingerprint = hashlib.sha256(repr(marks).encode()).hexdigest()[:16]
        return view
