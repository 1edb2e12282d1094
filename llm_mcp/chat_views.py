"""The chat pages: class-based views a site includes with ``llm_mcp.urls`` and may subclass.

    # urls.py
    path("mcp/", include("llm_mcp.urls"))        # chats at /mcp/chats/, OAuth at /mcp/oauth/

    =====================  ==============================  ========================================
    URL name (llm_mcp:)    path under the include          view
    =====================  ==============================  ========================================
    chat_list              chats/                          `ChatListView` (the user's own chats)
    chat_new               chats/new/                      `ChatNewView` (GET form, POST creates)
    chat_detail            chats/<pk>/                     `ChatDetailView`
    chat_send              chats/<pk>/send/                `SendView` (POST; SSE when asked)
    chat_approve           chats/<pk>/calls/<id>/approve/  `DecideView` (POST)
    chat_decline           chats/<pk>/calls/<id>/decline/  `DecideView` (POST)
    chat_answer            chats/<pk>/questions/<call>/<key>/  `AnswerView` (POST)
    chat_cancel            chats/<pk>/cancel/              `CancelView` (POST)
    chat_resume            chats/<pk>/resume/              `ResumeView` (POST)
    chat_events            chats/<pk>/events/              `EventsView` (SSE: follows a running turn)
    chat_state             chats/<pk>/state.json           `StateView` (JSON: state and fingerprint)
    =====================  ==============================  ========================================

Every view sends an anonymous visitor to ``settings.LOGIN_URL`` and asks
``LLM_MCP["CHAT_ACCESS"]`` (`llm_mcp.access`) before it shows or changes a chat; a chat the
hook refuses answers 404. Turns run as Celery jobs (``llm_mcp.tasks``; in-process when
``CELERY_TASK_ALWAYS_EAGER``), except a message sent by the page's script with
``CHAT_RUN_TURNS = "request"``: that turn runs in the web process and its reply streams to the
page token by token (`SendView.stream`). Without JavaScript every form is a POST answered by a
redirect to the chat.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from django.apps import apps
from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.exceptions import ValidationError
from django.db.models import Count, OuterRef, Subquery
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.loader import render_to_string
from django.views import View
from django.views.generic import TemplateView

from . import conf, tasks
from .access import allowed
from .client.errors import CancelledError
from .conversation import Conversation
from .forms import QuestionForm
from .models import ToolCall

__all__ = ["AnswerView", "CancelView", "ChatDetailView", "ChatListView", "ChatNewView", "ChatView", "DecideView",
           "EventsView", "ResumeView", "SendView", "StateView", "conversation_html", "follow"]

log = logging.getLogger("llm_mcp.chat_views")

MAX_TEXT = 20_000
"""Characters a message from the page may have."""


def chat_model() -> Any:
    return apps.get_model(conf.chat_model_name())


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc)[:300] or 'no details'}"


class ChatView(LoginRequiredMixin, View):
    """Base of the chat views: login required, and `get_chat` through the access hook.

    Attributes:
        action: what the view does to a chat, asked of ``CHAT_ACCESS`` (``"view"``,
            ``"send"``, ``"decide"`` or ``"cancel"``).
    """

    action = "view"

    def get_queryset(self) -> Any:
        """The chats this view may look up (all of the chat model's; the hook decides)."""
        return chat_model()._default_manager.all()

    def get_chat(self) -> Any:
        """The chat of the URL's ``pk``; ``Http404`` when it does not exist or the hook refuses
        ``action`` to the user (whether it exists is not told)."""
        record = get_object_or_404(self.get_queryset(), pk=self.kwargs["pk"])
        if not allowed(self.request.user, record, self.action):
            raise Http404("No such chat")
        return record

    def to_chat(self, record: Any) -> HttpResponse:
        return redirect("llm_mcp:chat_detail", pk=record.pk)

    def enqueue(self, what: str, job: Any, *args: Any) -> bool:
        """Enqueue a Celery ``job`` (run in-process when jobs are eager); a failure (a model that
        cannot be reached, ...) becomes a message on the page, not an error page."""
        try:
            job.delay(*args)
        except Exception as exc:
            log.exception("%s failed for chat %s", what, args[0])
            messages.error(self.request, f"{what} failed: {_describe(exc)}")
            return False
        return True


def _title(content: str | None) -> str:
    text = " ".join((content or "").split())
    return text[:80] or "(no message yet)"


class ChatListView(ChatView, TemplateView):
    """The signed-in user's own chats, newest first (template ``llm_mcp/chat_list.html``:
    ``chats``, each with ``title`` and ``message_count``)."""

    template_name = "llm_mcp/chat_list.html"
    paginate_by = 100

    def get_list_queryset(self) -> Any:
        model = chat_model()
        if not any(f.name == "user" for f in model._meta.get_fields()):
            return model._default_manager.none()  # a swapped model without owners: nothing is "yours"
        first = (model._meta.get_field("message_records").related_model._default_manager
                 .filter(chat=OuterRef("pk"), role="user").order_by("id").values("content")[:1])
        return (model._default_manager.filter(user=self.request.user).order_by("-id")
                .annotate(message_count=Count("message_records"), first_message=Subquery(first)))

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        chats = list(self.get_list_queryset()[: self.paginate_by])
        for record in chats:
            record.title = _title(record.first_message)
        context["chats"] = chats
        return context


class ChatNewView(ChatView, TemplateView):
    """GET: a form offering the agents of ``CHAT_AGENTS`` (or a plain chat on ``CHAT_MODEL``);
    POST ``agent=<index>`` creates the chat, owned by the user, and redirects to it."""

    template_name = "llm_mcp/chat_new.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["agents"] = [{"index": i, "name": agent.__name__, "doc": (agent.__doc__ or "").strip().split("\n")[0],
                              "model": agent.model} for i, agent in enumerate(conf.chat_agents())]
        context["plain_model"] = conf.get("CHAT_MODEL")
        return context

    def create_chat(self, agent_index: str) -> Any:
        """The new chat (``ValueError`` naming the problem for a bad choice or setup)."""
        agents = conf.chat_agents()
        user = self.request.user
        if not agents:
            choice = conf.get("CHAT_MODEL")
            return chat_model()._default_manager.create(model=choice["model"], provider=choice["provider"],
                                                        user=user)
        index = int(agent_index) if agent_index.isdigit() else -1
        if not 0 <= index < len(agents):
            raise ValueError("choose one of the agents offered")
        agent = agents[index]
        inputs = [agent.inputs] if isinstance(agent.inputs, str) else list(agent.inputs or ())
        return agent.chat(owner=user, **({"user": user} if "user" in inputs else {}))

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            record = self.create_chat(request.POST.get("agent", "0"))
        except (ValueError, ValidationError) as exc:
            detail = "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items()) if isinstance(
                exc, ValidationError) and hasattr(exc, "message_dict") else str(exc)
            messages.error(request, f"The chat was not created: {detail}")
            return redirect("llm_mcp:chat_new")
        return self.to_chat(record)


class ChatDetailView(ChatView, TemplateView):
    """The conversation (template ``llm_mcp/chat_detail.html``; context ``chat``,
    ``conversation`` (a `Conversation`), ``can_send``, ``can_decide``, ``can_cancel``)."""

    template_name = "llm_mcp/chat_detail.html"
    question_forms: dict[tuple[str, str], QuestionForm] | None = None

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        record = self.get_chat()
        user = self.request.user
        context.update(chat=record, conversation=Conversation.of(record, forms=self.question_forms),
                       can_send=allowed(user, record, "send"), can_decide=allowed(user, record, "decide"),
                       can_cancel=allowed(user, record, "cancel"), max_text=MAX_TEXT)
        return context


def conversation_html(request: HttpRequest, record: Any, view: Conversation) -> str:
    """The conversation part of the chat page (template ``llm_mcp/includes/conversation.html``),
    as the events send it to the page."""
    user = request.user
    return render_to_string("llm_mcp/includes/conversation.html", {
        "chat": record, "conversation": view, "can_decide": allowed(user, record, "decide"),
        "can_cancel": allowed(user, record, "cancel"), "can_send": allowed(user, record, "send")}, request=request)


FOLLOW_GRACE = 30.0
"""Seconds a follower waits for an unfinished turn to start running (a job waiting for a worker)."""


def follow(request: HttpRequest, record: Any, emit: Any, stopped: threading.Event, *, until: threading.Event | None,
           interval: float = 0.3, idle_timeout: float = 600.0) -> None:
    """Emit a ``conversation`` event (``{"html", "state", "fingerprint"}``) each time the chat's
    rows change, until ``until`` is set (a turn this process runs), else until the chat is
    neither running, unfinished nor waiting on server tasks (an unfinished one is given
    `FOLLOW_GRACE` seconds to start),
    the client is gone, or nothing changed for ``idle_timeout`` seconds."""
    seen = request.GET.get("since", "")
    started = changed_at = time.monotonic()
    while not stopped.is_set():
        view = Conversation.of(record, check_arguments=True)
        if view.fingerprint != seen:
            seen, changed_at = view.fingerprint, time.monotonic()
            emit("conversation", {"html": conversation_html(request, record, view), "state": view.state,
                                  "fingerprint": view.fingerprint})
        if until is None and view.state not in ("running", "unfinished", "tasks"):  # tasks: a job checks them
            return
        if until is None and view.state == "unfinished" and time.monotonic() - started > FOLLOW_GRACE:
            emit("idle", {"state": view.state})
            return
        if until is not None and until.is_set():
            return
        if time.monotonic() - changed_at > idle_timeout:
            emit("idle", {"state": view.state})
            return
        (until or stopped).wait(interval)


class SendView(ChatView):
    """POST ``text``: the user's message. A POST that accepts ``text/event-stream`` (the page's
    script) gets the turn as server-sent events (`stream`); any other gets a redirect to the chat
    after saving the message and enqueuing ``tasks.resume_chat``. A message is refused while calls
    wait for a decision, or while a turn of the chat runs."""

    action = "send"
    http_method_names = ["post"]

    def refusal(self, record: Any, text: str) -> str:
        """Why ``text`` cannot be sent now (``""`` when it can)."""
        if not text:
            return "Write a message first."
        if len(text) > MAX_TEXT:
            return f"That message is too long (at most {MAX_TEXT} characters)."
        if ToolCall.objects.filter(message__chat_id=record.pk, result__isnull=True).exists():
            return "Some tool calls wait for a decision or an answer, or have not run yet: settle them first."
        if record.store.lock.busy:
            return "A turn of this chat is running: wait for its answer, or cancel it."
        return ""

    def add_message(self, record: Any, text: str) -> None:
        """Save the user's message now (the page shows it at once); a job then runs the turn."""
        from .chat.messages import Message as ChatMessage

        with record.store.lock:
            record.store.add(ChatMessage("user", text))

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        record = self.get_chat()
        text = request.POST.get("text", "").strip()
        wants_events = "text/event-stream" in request.headers.get("Accept", "")
        refusal = self.refusal(record, text)
        if refusal:
            if wants_events:
                return JsonResponse({"error": refusal}, status=409)
            messages.error(request, refusal)
            return self.to_chat(record)
        if wants_events:
            if conf.get("CHAT_RUN_TURNS") != "request":
                self.add_message(record, text)
            return self.stream(record, text)
        self.add_message(record, text)
        self.enqueue("The model turn", tasks.resume_chat, record.pk)
        return self.to_chat(record)

    def stream(self, record: Any, text: str) -> HttpResponse:
        """The turn as events: ``token`` (a piece of the reply's text), ``conversation`` (the
        re-rendered conversation whenever a row changes: the user's message, tool calls as they
        are made, their results), ``failed`` / ``cancelled``, then ``done``. With
        ``CHAT_RUN_TURNS = "celery"`` the turn is a job and the events follow its rows."""
        from .streaming import EventStream, event_response

        request = self.request
        in_request = conf.get("CHAT_RUN_TURNS") == "request"

        def produce(emit: Any, stopped: threading.Event) -> None:
            if not in_request:
                tasks.resume_chat.delay(record.pk)  # the message is saved: the job runs the turn
                follow(request, record, emit, stopped, until=None)
                emit("done", {})
                return
            finished = threading.Event()
            watcher = threading.Thread(target=_watch, args=(request, record, emit, stopped, finished), daemon=True)
            watcher.start()
            try:
                record.ask(text, stream=lambda piece: emit("token", piece))
            except CancelledError:
                emit("cancelled", {})
            except Exception as exc:
                log.exception("the turn of chat %s failed", record.pk)
                emit("failed", {"error": _describe(exc)})
            finally:
                record.close()
                finished.set()
                watcher.join()
            view = Conversation.of(record)
            emit("conversation", {"html": conversation_html(request, record, view), "state": view.state,
                                  "fingerprint": view.fingerprint})
            emit("done", {"state": view.state})

        return event_response(request, EventStream(produce))


def _watch(request: HttpRequest, record: Any, emit: Any, stopped: threading.Event, finished: threading.Event) -> None:
    from django.db import connections

    try:
        follow(request, type(record)._default_manager.get(pk=record.pk), emit, stopped, until=finished)
    except Exception:
        log.exception("following chat %s failed", record.pk)
    finally:
        connections.close_all()


class DecideView(ChatView):
    """POST: approve or decline one call (``decision`` from the URL), through
    ``ToolCall.approve()``/``decline()``; the last decision of a turn enqueues ``resume_chat``."""

    action = "decide"
    http_method_names = ["post"]
    decision = "approve"

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        record = self.get_chat()
        call = get_object_or_404(ToolCall, pk=kwargs["call"], message__chat_id=record.pk)
        try:
            call.approve() if self.decision == "approve" else call.decline()
        except ValueError:
            messages.warning(request, f"The call {call.name} was already decided ({call.approval or 'no approval'}); "
                                      "nothing changed.")
            return self.to_chat(record)
        messages.success(request, f"{'Approved' if self.decision == 'approve' else 'Declined'} {call.name}.")
        if not _undecided(record) and not record.pending_questions:
            self.enqueue("Resuming the chat", tasks.resume_chat, record.pk)
        return self.to_chat(record)


def _undecided(record: Any) -> bool:
    return ToolCall.objects.filter(message__chat_id=record.pk, result__isnull=True, approval="pending").exists()


class AnswerView(ChatDetailView):
    """POST ``reply=answer`` (with the form's fields) or ``reply=decline``: one open question
    of ``record.pending_questions`` (by its call's id and key). A refused answer shows the page
    again with the form's errors (status 400); once nothing is left open, ``resume_chat`` (not
    for a held question: its call still waits in the worker and goes on by itself)."""

    action = "decide"
    http_method_names = ["post"]

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        record = self.get_chat()
        what = request.POST.get("reply", "")
        if what not in ("answer", "decline"):
            return HttpResponseBadRequest("reply must be answer or decline")
        question = next((q for q in record.pending_questions  # "-": a question of no tool call
                         if (q.tool_call_id or "-") == kwargs["call"] and q.key == kwargs["key"]), None)
        if question is None:
            messages.warning(request, "That question is no longer open; nothing changed.")
            return self.to_chat(record)
        try:
            if what == "decline":
                question.decline()
            else:
                form = QuestionForm(question, data=request.POST)
                if not form.is_valid():
                    self.question_forms = {(question.tool_call_id, question.key): form}
                    return self.render_to_response(self.get_context_data(), status=400)
                form.answer()
        except ValueError as exc:  # answered meanwhile, in another tab or process
            messages.warning(request, f"That question could not be answered: {exc}")
            return self.to_chat(record)
        messages.success(request, f"{'Declined' if what == 'decline' else 'Answered'}: {question.message[:80]}")
        # a held question's call is still open in the worker and sends the answer itself
        if not question.held and not record.pending_questions and not _undecided(record):
            self.enqueue("Resuming the chat", tasks.resume_chat, record.pk)
        return self.to_chat(record)


class CancelView(ChatView):
    """POST: cancel the chat's running turn (``record.cancel()``: a persisted flag the turn reads
    at its next step); calls waiting for a decision keep waiting."""

    action = "cancel"
    http_method_names = ["post"]

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        record = self.get_chat()
        record.cancel()
        messages.info(request, "Cancelled: a running turn stops at its next step.")
        return self.to_chat(record)


class ResumeView(ChatView):
    """POST: run the chat's turn again (``tasks.resume_chat``): after a failure or a cancel."""

    action = "send"
    http_method_names = ["post"]

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        record = self.get_chat()
        self.enqueue("Resuming the chat", tasks.resume_chat, record.pk)
        return self.to_chat(record)


class EventsView(ChatView):
    """GET: server-sent events following the chat while a turn runs elsewhere (a Celery job):
    a ``conversation`` event per change (``?since=<fingerprint>`` skips the state the page
    has), then ``end``."""

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        from .streaming import EventStream, event_response

        record = self.get_chat()

        def produce(emit: Any, stopped: threading.Event) -> None:
            follow(request, record, emit, stopped, until=None)
            emit("end", {})

        return event_response(request, EventStream(produce))


class StateView(ChatView):
    """GET: ``{"state", "fingerprint", "waiting_calls", "task_calls"}`` of the chat, for a page that
    polls instead of listening to events."""

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        view = Conversation.of(self.get_chat(), check_arguments=False)
        return JsonResponse({"state": view.state, "fingerprint": view.fingerprint,
                             "waiting_calls": view.waiting_calls, "task_calls": view.task_calls})

