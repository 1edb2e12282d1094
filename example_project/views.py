"""Views of the example site: a chat list and a chat page with tool calls and approvals.

    /                                   chats, and a "New chat" form
    /chats/<pk>/                        the conversation: messages, tool calls, their results
    /chats/<pk>/ask/                    POST: the user's message   -> llm_mcp.tasks.ask_chat
    /chats/<pk>/calls/<id>/             POST decision=approve|decline: decide a call -> resume_chat
    /chats/<pk>/calls/<id>/questions/<key>/  POST action=answer|decline (+ field-NAME values): answer a
                                        server's question -> resume_chat once none is left open
    /chats/<pk>/call-tool/              POST: record a demo tool call by hand (no model needed)
    /chats/<pk>/cancel/                 POST: cancel the running turn
    /chats/<pk>/resume/                 POST: run a turn that did not finish again -> resume_chat
    /connections/                       servers that need the user's authorization: Connect/Disconnect
                                        (llm_mcp's views under /mcp/oauth/), and their tools once connected
    /live-tools/                        the demo server's tools as the Procfile's listener last heard them;
                                        POST: ask the shared demo server to learn a tool (``learn_shout``)

Turns run as Celery jobs: in this process when ``CELERY_BROKER_URL`` is unset (the settings
make jobs eager), else in a worker, while the chat page refreshes itself until the turn ends.
"""

from __future__ import annotations

import json
import logging
import uuid
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.db import transaction
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from llm_mcp import Question, tasks
from llm_mcp import conf as llm_mcp_conf
from llm_mcp.chat import Message as ChatMessage
from llm_mcp.chat import ToolCall as ChatToolCall
from llm_mcp.chat.messages import loads_object
from llm_mcp.models import Chat, ToolCall
from llm_mcp.views import build_server

from . import demo
from .agents import demo_tools, model_choices, new_chat

__all__ = ["answer_question", "ask", "call_tool", "cancel", "chat_list", "chat_page", "connections", "create_chat",
           "decide", "live_tools", "resume"]

log = logging.getLogger("example_project")

MAX_TEXT = 20_000

MANUAL = "(this page)"
"""The ``model`` of the assistant messages that "Call a tool" records: a value the provider's
API sets, never the model's own output, so a model cannot pass its calls off as the user's."""


def _chat_or_404(pk: int) -> Chat:
    return get_object_or_404(Chat, pk=pk)


def _to_chat(record: Chat) -> HttpResponse:
    return redirect("chat", pk=record.pk)


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text[:500]}"


def _enqueue(request: HttpRequest, what: str, job: Any, *args: Any) -> None:
    """Enqueue ``job`` (run in-process when jobs are eager); a failure becomes a message on the
    page instead of an error page (a model that cannot be reached, a bad key, ...)."""
    try:
        job.delay(*args)
    except Exception as exc:
        log.exception("%s failed for chat %s", what, args[0])
        messages.error(request, f"{what} failed: {_describe(exc)}")


# -- the chat list --------------------------------------------------------------------------

@require_GET
def chat_list(request: HttpRequest) -> HttpResponse:
    chats = (Chat.objects.order_by("-id")
             .annotate(message_count=Count("message_records", distinct=True),
                       pending_count=Count("message_records__tool_calls",
                                           filter=Q(message_records__tool_calls__approval="pending",
                                                    message_records__tool_calls__result__isnull=True),
                                           distinct=True))[:100])
    rows = []
    for chat in chats:
        first = chat.message_records.filter(role="user").order_by("id").values_list("content", flat=True).first()
        rows.append({"chat": chat, "title": (first or "").strip()[:80] or "(no message yet)"})
    return render(request, "example_project/chat_list.html", {
        "rows": rows,
        "choices": [{"value": f"{c['provider']}:{c['model']}", **c} for c in model_choices()],
        "offline_only": all(c["provider"] == "offline" for c in model_choices()),
    })


@require_POST
def create_chat(request: HttpRequest) -> HttpResponse:
    provider, _, model = request.POST.get("model", "").partition(":")
    try:
        record = new_chat(provider, model) if provider else new_chat()
    except ValueError as exc:
        messages.error(request, str(exc))
        return redirect("chat_list")
    return _to_chat(record)


# -- the chat page --------------------------------------------------------------------------

@require_GET
def chat_page(request: HttpRequest, pk: int) -> HttpResponse:
    record = _chat_or_404(pk)
    rows = list(record.message_records.order_by("id").prefetch_related("tool_calls__result"))
    entries: list[dict[str, Any]] = []
    shown_results: set[int] = set()
    pending = 0
    for row in rows:
        calls = []
        if row.role == "assistant":
            for call in row.tool_calls.all():
                if call.result_id is not None:
                    shown_results.add(call.result_id)
                waiting = call.approval == "pending" and call.result_id is None
                questions = _open_questions(call) if call.result_id is None else []
                pending += waiting or bool(questions)
                calls.append({"row": call, "arguments": json.dumps(call.arguments, indent=2, ensure_ascii=False),
                              "waiting": waiting, "manual": row.model == MANUAL, "questions": questions})
        entries.append({"row": row, "calls": calls})
    entries = [e for e in entries if not (e["row"].role == "tool" and e["row"].pk in shown_results)]
    last = rows[-1] if rows else None
    # the turn has not finished: the conversation does not end with an answer, and no call
    # waits for a person. A worker may be running it (the page refreshes itself), or it failed
    # (the page offers to resume it).
    unfinished = last is not None and not pending and (
        last.role != "assistant" or any(c.result_id is None for c in last.tool_calls.all()))
    eager = bool(getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False))
    tools, tools_error = [], ""
    try:
        tools = demo_tools()
    except Exception as exc:
        tools_error = _describe(exc)
    return render(request, "example_project/chat.html", {
        "chat": record, "entries": entries, "pending": pending, "unfinished": unfinished,
        "refresh": unfinished and not eager and not record.cancelled, "blocked": _blocking(record),
        "tools": [{"tool": t, "example": json.dumps(t.example, ensure_ascii=False)} for t in tools],
        "tools_error": tools_error, "offline": record.provider == "offline",
        "server_name": "demo",
    })


@require_POST
def ask(request: HttpRequest, pk: int) -> HttpResponse:
    record = _chat_or_404(pk)
    text = request.POST.get("text", "").strip()
    if not text:
        messages.error(request, "Write a message first.")
    elif len(text) > MAX_TEXT:
        messages.error(request, f"That message is too long (at most {MAX_TEXT} characters).")
    elif _blocking(record):
        messages.error(request, "Some tool calls wait for your decision, or were approved and have not run "
                                "yet: decide them (or resume the chat) first.")
    else:
        _enqueue(request, "The model turn", tasks.ask_chat, record.pk, text)
    return _to_chat(record)


@require_POST
def decide(request: HttpRequest, pk: int, call_pk: int) -> HttpResponse:
    """Approve or decline one call (``decision`` = ``approve`` or ``decline``; MCP-APPROVAL-05:
    the decision is saved on its ToolCall row); the last decision of a turn resumes the chat.
    Deciding a call that is already decided says so and changes nothing."""
    record = _chat_or_404(pk)
    call = get_object_or_404(ToolCall, pk=call_pk, message__chat_id=record.pk)
    decision = request.POST.get("decision", "")
    if decision not in ("approve", "decline"):
        return HttpResponseBadRequest("decision must be approve or decline")
    try:
        call.approve() if decision == "approve" else call.decline()
    except ValueError:
        state = call.approval or "not waiting for approval"
        messages.warning(request, f"The call {call.name} was already decided ({state}); nothing changed.")
        return _to_chat(record)
    messages.success(request, f"{'Approved' if decision == 'approve' else 'Declined'} {call.name}.")
    if not _undecided(record):  # the last decision resumes the turn
        _enqueue(request, "Resuming the chat", tasks.resume_chat, record.pk)
    return _to_chat(record)


def _open_questions(call: ToolCall) -> list[dict[str, Any]]:
    """The call's unanswered questions, with what the page needs to show a field."""
    found = []
    for data in call.pending_questions or []:
        if isinstance(data, dict) and data.get("response") is None:
            try:
                question = Question.from_dict(data)
            except ValueError:
                continue
            found.append({"question": question, "fields": [
                {"field": f, "input": ("multiple" if f.type == "array" else "select") if f.choices is not None else
                 {"boolean": "checkbox", "integer": "number", "number": "number"}.get(f.type, "text")}
                for f in question.fields]})
    return found


def _form_value(field: Any, request: HttpRequest) -> Any:
    """A field's value from the question form, in the field's type (``ValueError`` when it is not)."""
    name = f"field-{field.name}"
    if field.type == "boolean":
        return name in request.POST
    if field.type == "array":
        return request.POST.getlist(name)
    text = request.POST.get(name, "")
    if text == "":
        return None
    try:
        if field.type == "integer":
            return int(text)
        if field.type == "number":
            return float(text)
    except ValueError:
        raise ValueError(f"field {field.name!r} takes a{'n integer' if field.type == 'integer' else ' number'}, "
                         f"not {text[:60]!r}") from None
    return text


@require_POST
def answer_question(request: HttpRequest, pk: int, call_pk: int, key: str) -> HttpResponse:
    """Answer (``action=answer``, with ``field-NAME`` values) or decline one question a server asked
    during a call (MCP-QUEST-22: saved on the ToolCall row, no server contacted); once no
    question is left open, ``resume_chat`` sends the answers."""
    record = _chat_or_404(pk)
    call = get_object_or_404(ToolCall, pk=call_pk, message__chat_id=record.pk)
    action = request.POST.get("action", "")
    if action not in ("answer", "decline"):
        return HttpResponseBadRequest("action must be answer or decline")
    question = next((q for q in record.pending_questions
                     if q.tool_call_id == call.tool_call_id and q.key == key), None)
    if question is None:
        messages.warning(request, "That question is no longer open; nothing changed.")
        return _to_chat(record)
    try:
        if action == "decline":
            question.decline()
        elif question.is_url:
            question.answer()
        else:
            values = {f.name: _form_value(f, request) for f in question.fields}
            question.answer(**{name: value for name, value in values.items() if value is not None})
    except ValueError as exc:
        messages.error(request, f"That answer does not fit the question: {exc}")
        return _to_chat(record)
    messages.success(request, f"{'Declined' if action == 'decline' else 'Answered'}: {question.message[:80]}")
    if not question.held and not record.pending_questions and not _undecided(record):
        _enqueue(request, "Resuming the chat", tasks.resume_chat, record.pk)  # a held question's call goes on by itself
    return _to_chat(record)


@require_POST
def call_tool(request: HttpRequest, pk: int) -> HttpResponse:
    """Record a call of a demo tool, as if the model had asked for it, waiting for approval;
    approving it runs it (no model key needed)."""
    record = _chat_or_404(pk)
    name = request.POST.get("tool", "")
    try:
        known = {tool.name for tool in demo_tools()}
    except Exception as exc:
        messages.error(request, f"The demo server's tools could not be listed: {_describe(exc)}")
        return _to_chat(record)
    if name not in known:
        messages.error(request, f"The demo server has no tool named {name!r}.")
        return _to_chat(record)
    try:
        arguments = loads_object(request.POST.get("arguments", "").strip() or "{}")
    except ValueError as exc:
        messages.error(request, f"The arguments must be a JSON object, such as {{\"message\": \"hi\"}}: {exc}")
        return _to_chat(record)
    if _unanswered(record):
        messages.error(request, "Some tool calls of this chat have no result yet: decide them first.")
        return _to_chat(record)
    store = record.store  # the chat's rows, without building its chat (its agent, its provider)
    with store.lock, transaction.atomic():  # no turn of this chat runs meanwhile; both rows or neither
        store.add(ChatMessage("user", f"(from the page) Call the tool {name} with "
                                      f"{json.dumps(arguments, ensure_ascii=False)}"))
        store.add(ChatMessage("assistant", "", model=MANUAL, tool_calls=[ChatToolCall(
            id=f"manual_{uuid.uuid4().hex}", name=name, arguments=arguments, approval="pending")]))
    messages.success(request, f"The call of {name} waits for your approval.")
    return _to_chat(record)


@require_POST
def cancel(request: HttpRequest, pk: int) -> HttpResponse:
    record = _chat_or_404(pk)
    record.cancel()  # sets the persisted flag; builds no chat, needs no provider
    messages.info(request, "Cancelled: a running turn stops at its next step. Calls waiting for "
                           "approval keep waiting.")
    return _to_chat(record)


@require_POST
def resume(request: HttpRequest, pk: int) -> HttpResponse:
    """Run the chat's turn again (``complete()``): after a failed model request, a stopped
    worker, or a cancel. Nothing happens when there is nothing left to do."""
    record = _chat_or_404(pk)
    _enqueue(request, "Resuming the chat", tasks.resume_chat, record.pk)
    return _to_chat(record)


def _unanswered(record: Chat) -> bool:
    """Whether a call of the chat has no result yet (waiting, or approved but not run)."""
    return ToolCall.objects.filter(message__chat_id=record.pk, result__isnull=True).exists()


def _blocking(record: Chat) -> bool:
    """Whether a call waits for a decision or answers, or was approved (or answered) and has not
    run: the chat takes no new message until they are settled."""
    open_calls = ToolCall.objects.filter(message__chat_id=record.pk, result__isnull=True)
    return open_calls.filter(approval__in=["pending", "approved"]).exists() or any(
        questions for questions in open_calls.values_list("pending_questions", flat=True))


def _undecided(record: Chat) -> bool:
    return ToolCall.objects.filter(message__chat_id=record.pk, result__isnull=True, approval="pending").exists()




# -- connections (OAuth) ---------------------------------------------------------------------

@require_GET
def connections(request: HttpRequest) -> HttpResponse:
    """The servers of ``LLM_MCP["OAUTH_SERVERS"]``: for a signed-in user, whether each is
    connected (``authorized``), a Connect or Disconnect button, and a connected server's tools."""
    rows = []
    for name in llm_mcp_conf.get("OAUTH_SERVERS"):
        row: dict[str, Any] = {"name": name, "authorized": False, "tools": [], "error": ""}
        if request.user.is_authenticated:
            server = build_server(name, request)
            try:
                row["authorized"] = server.authorized
                if row["authorized"]:
                    row["tools"] = [tool.name for tool in server.tools]
            except Exception as exc:  # the server is down, or the grant was revoked there
                log.warning("listing the tools of %s failed: %s", name, type(exc).__name__)
                row["error"] = _describe(exc)
            finally:
                server.close()
        rows.append(row)
    return render(request, "example_project/connections.html", {"rows": rows})


def live_tools(request: HttpRequest) -> HttpResponse:
    """The shared demo server's tools as the listener (``manage.py mcp_listen
    example_project.demo.LiveDemoServer``) last heard them; POST asks the server to learn
    ``shout``, which it announces, so the list here grows once the listener heard it."""
    if request.method == "POST":
        server = demo.LiveDemoServer()
        try:
            server.call("learn_shout")
            messages.success(request, "The demo server learnt to shout; the listener hears it and this page shows it.")
        except Exception as exc:  # the demo process is not running
            messages.error(request, f"The demo server could not be reached: {_describe(exc)}")
        finally:
            server.close()
        return redirect("live_tools")
    heard = demo.live_tools()
    return render(request, "example_project/live_tools.html", {
        "heard": heard, "url": settings.EXAMPLE_DEMO_MCP_URL,
        "at": datetime.fromtimestamp(heard["at"], UTC) if heard else None})
