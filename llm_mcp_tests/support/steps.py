"""Steps of the cross-process tests, each run in its own process: ``python -m llm_mcp_tests.support.steps STEP ...``.

The database comes from the environment (``DJANGO_DB_PATH`` for an SQLite file, or
``DJANGO_DB_ENGINE=postgresql`` and ``DJANGO_DB_*``), the scripted model from
``LLM_MCP_TEST_BASE_URL``, and the Celery broker from ``CELERY_BROKER_URL``. Each step
prints one JSON line on stdout.

* ``start-chat TEXT``        a ``StepAgent`` chat asks TEXT (pauses when a call needs approval)
* ``crash-turn TEXT``        a ``CrashAgent`` chat asks TEXT; its ``crash`` tool kills the process,
                             its ``slow`` tool gives another process time to cancel
* ``task-chat URL TEXT``     a ``TaskAgent`` chat (the tasking kit server at URL); enqueues ``ask_chat`` with TEXT
* ``tasks CHAT``             the chat's tool call rows' task columns and results
* ``cancel CHAT``            ``cancel()`` the chat (sets its persisted flag)
* ``complete CHAT``          ``complete()`` the chat, as its agent sets it up
* ``approve CHAT CALL``      approve through the example site's view (Django's test client)
* ``dump CHAT``              the chat's messages and tool calls
* ``question-chat TEXT``     a ``QuestionAgent`` chat asks TEXT (its ``deploy`` call pauses on a question)
* ``answer CHAT VALUE``      answer the chat's first pending question through the Django model (no server)
* ``held-chat TARGET SECONDS TEXT``  an ``EverythingAgent`` chat (server-everything at TARGET, its
                             ``question_timeout`` SECONDS); enqueues ``ask_chat`` with TEXT
* ``pending CHAT``           the chat's pending questions (``to_dict()`` and ``tool_call_id``)
* ``answer-json CHAT JSON``  answer the first pending question with the JSON object's values (``null``: decline)
* ``resume CHAT``            enqueue ``resume_chat`` for the chat
* ``questions CHAT``         the chat's tool calls' ``pending_questions`` and ``request_state``
* ``write KEY JSON``         store credentials
* ``refresh KEY FILE``       the credential refresh race: refresh KEY unless another process did
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import llm_mcp
from llm_mcp.chat import ChatTool

from llm_mcp_tests.support.processes import ECHO_SERVER, PYTHON, REPO_ROOT


def options() -> dict[str, Any]:
    return {"base_url": os.environ.get("LLM_MCP_TEST_BASE_URL", "http://127.0.0.1:9/v1"), "api_key": "test-key"}


class ApprovedEcho(llm_mcp.MCP):
    """The echo test server; every tool waits for approval."""

    name = "echo"
    command = [PYTHON, ECHO_SERVER]
    requires_approval = True


class StepAgent(llm_mcp.Agent):
    chat_class = "llm_mcp.models.Chat"
    model = "gpt-test"
    provider_options = options()
    mcp = [ApprovedEcho]


class Count(ChatTool):
    """Appends its ``label`` to the file named by ``LLM_MCP_TEST_RUNS`` (a side effect to count)."""

    name = "count"
    description = "Count a run."
    parameters = {"type": "object", "properties": {"label": {"type": "string"}}, "required": ["label"]}

    def execute(self, label: str) -> str:
        with open(os.environ["LLM_MCP_TEST_RUNS"], "a") as runs:
            runs.write(label + "\n")
        return f"counted {label}"


class Crash(ChatTool):
    """Kills its process the first time (no cleanup of any kind), answers the next time."""

    name = "crash"
    description = "Crash once."
    parameters = {"type": "object", "properties": {}}

    def execute(self) -> str:
        marker = Path(os.environ["LLM_MCP_TEST_RUNS"] + ".crashed")
        if not marker.exists():
            marker.write_text("crashed")
            os._exit(9)
        return "survived"


class Slow(ChatTool):
    """Writes ``FILE.started`` and then takes a second and a half."""

    name = "slow"
    description = "Take a while."
    parameters = {"type": "object", "properties": {}}

    def execute(self) -> str:
        Path(os.environ["LLM_MCP_TEST_RUNS"] + ".started").write_text("started")
        time.sleep(1.5)
        return "slow done"


class CrashAgent(llm_mcp.Agent):
    chat_class = "llm_mcp.models.Chat"
    model = "gpt-test"
    provider_options = options()
    tools = [Count(), Crash(), Slow()]


class Questions(llm_mcp.MCP):
    """The questions test server (2026-07-28, stdio), recording its requests to ``LLM_MCP_TEST_RUNS.questions.jsonl``."""

    name = "questions"
    command = "server_command"
    directory = str(REPO_ROOT)
    env = {"PYTHONPATH": str(REPO_ROOT)}

    def server_command(self) -> list[str]:
        return [PYTHON, "-m", "llm_mcp_tests.support.servers.questions", "--era", "modern", "--context",
                f"record={os.environ['LLM_MCP_TEST_RUNS']}.questions.jsonl"]


class QuestionAgent(llm_mcp.Agent):
    chat_class = "llm_mcp.models.Chat"
    model = "gpt-test"
    provider_options = options()
    mcp = [Questions]


class EverythingAgent(llm_mcp.Agent):
    """A chat with the npm ``server-everything``: ``target`` is its URL, or its argv as JSON (stdio)."""

    chat_class = "llm_mcp.models.Chat"
    model = "gpt-test"
    provider_options = options()
    inputs = ["target", "question_timeout"]
    mcp = "everything"

    def everything(self) -> list[llm_mcp.MCP]:
        where = {"url": self.target} if self.target.startswith("http") else {"command": json.loads(self.target)}
        return [llm_mcp.mcp(name="everything", question_timeout=float(self.question_timeout), **where)]


def dump(chat_id: Any) -> dict[str, Any]:
    from llm_mcp.models import Message, ToolCall

    messages = [{"role": m.role, "content": m.content, "is_error": m.is_error}
                for m in Message.objects.filter(chat_id=chat_id).order_by("id")]
    calls = [{"id": c.tool_call_id, "name": c.name, "approval": c.approval,
              "result": c.result.content if c.result else None}
             for c in ToolCall.objects.filter(message__chat_id=chat_id).select_related("result").order_by("id")]
    tool_messages = Message.objects.filter(chat_id=chat_id, role="tool").count()
    return {"messages": messages, "calls": calls, "tool_messages": tool_messages}


def refresh(key: str, log_file: str) -> dict[str, Any]:
    """Refresh ``key`` (a rotating refresh token) unless another process already did."""
    from llm_mcp.models import Credential

    store = Credential.objects
    with store.synchronize(key):
        data = store.read(key) or {}
        if data.get("refresh_token") == "rt-1":  # still the old token: spend it, once
            time.sleep(0.5)  # a slow token endpoint: the other process arrives meanwhile
            with open(log_file, "a") as log:
                log.write(f"{os.getpid()}\n")
            store.write(key, {"access_token": "at-2", "refresh_token": "rt-2"})
            return {"refreshed": True}
    return {"refreshed": False, "token": (store.read(key) or {}).get("access_token")}


def main(argv: list[str]) -> int:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")
    django.setup()
    step, *args = argv
    out: dict[str, Any]
    if step == "start-chat":
        record = StepAgent.chat()
        reply = record.ask(args[0])
        out = {"chat": record.pk, "waiting": record.waiting, "calls": [c.id for c in reply.tool_calls]}
    elif step == "crash-turn":
        record = CrashAgent.chat()
        print(json.dumps({"chat": record.pk}), flush=True)
        try:
            record.ask(args[0])
        except llm_mcp.CancelledError as exc:
            out = {"chat": record.pk, "cancelled": str(exc)}
        else:
            out = {"chat": record.pk, "survived": True}
    elif step == "task-chat":
        from llm_mcp.tasks import ask_chat
        from llm_mcp_tests.support.task_agents import TaskAgent

        record = TaskAgent.chat(url=args[0])
        ask_chat.delay(record.pk, args[1])
        out = {"chat": record.pk}
    elif step == "tasks":
        from llm_mcp.models import ToolCall as ToolCallRow

        out = {"calls": [{"id": c.tool_call_id, "task_id": c.task_id, "task_status": c.task_status,
                          "task_status_message": c.task_status_message, "has_task": c.task is not None,
                          "result": c.result.content if c.result else None}
                         for c in ToolCallRow.objects.filter(message__chat_id=args[0]).select_related("result")
                         .order_by("id")]}
    elif step == "cancel":
        from llm_mcp.models import Chat

        Chat.objects.get(pk=args[0]).cancel()
        out = {"cancelled": args[0]}
    elif step == "complete":
        from llm_mcp.models import Chat

        record = Chat.objects.get(pk=args[0])
        out = {"content": record.complete().content}
    elif step == "approve":
        out = approve_through_view(args[0], args[1])
    elif step == "dump":
        out = dump(args[0])
    elif step == "question-chat":
        record = QuestionAgent.chat()
        reply = record.ask(args[0])
        out = {"chat": record.pk, "waiting": record.waiting, "calls": [c.id for c in reply.tool_calls],
               "questions": [q.to_dict() for q in record.pending_questions]}
    elif step == "answer":
        from llm_mcp.models import Chat

        record = Chat.objects.get(pk=args[0])
        question = record.pending_questions[0]
        question.answer(args[1])
        out = {"answered": question.key, "waiting": Chat.objects.get(pk=args[0]).waiting}
    elif step == "held-chat":
        from llm_mcp.tasks import ask_chat

        record = EverythingAgent.chat(target=args[0], question_timeout=args[1])
        ask_chat.delay(record.pk, args[2])
        out = {"chat": record.pk}
    elif step == "pending":
        from llm_mcp.models import Chat

        out = {"questions": [dict(q.to_dict(), tool_call_id=q.tool_call_id)
                             for q in Chat.objects.get(pk=args[0]).pending_questions]}
    elif step == "answer-json":
        from llm_mcp.models import Chat

        question = Chat.objects.get(pk=args[0]).pending_questions[0]
        values = json.loads(args[1])
        question.decline() if values is None else question.answer(**values)
        out = {"answered": question.key, "held": question.held}
    elif step == "resume":
        from llm_mcp.tasks import resume_chat

        resume_chat.delay(args[0])
        out = {"enqueued": args[0]}
    elif step == "questions":
        from llm_mcp.models import ToolCall

        out = {"calls": [{"id": c.tool_call_id, "pending_questions": c.pending_questions,
                          "request_state": c.request_state, "waiting": c.waiting}
                         for c in ToolCall.objects.filter(message__chat_id=args[0]).order_by("id")]}
    elif step == "refresh":
        out = refresh(args[0], args[1])
    elif step == "write":
        from llm_mcp.models import Credential

        Credential.objects.write(args[0], json.loads(args[1]))
        out = {"written": args[0]}
    else:
        raise SystemExit(f"unknown step {step!r}")
    print(json.dumps(out), flush=True)
    return 0


def approve_through_view(chat_id: Any, call_id: str) -> dict[str, Any]:
    """POST the chat page's approve form (the app's ``llm_mcp:chat_approve``), as a browser of the
    chat's owner would (CSRF checks on; a staff user with the app's permissions when it has none)."""
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from llm_mcp.models import Chat, ToolCall

    call = ToolCall.objects.get(tool_call_id=call_id, message__chat_id=chat_id)
    owner = Chat.objects.get(pk=chat_id).user
    if owner is None:
        owner, _ = get_user_model().objects.get_or_create(username="steps-admin",
                                                           defaults={"is_staff": True, "is_superuser": True})
    client = Client(enforce_csrf_checks=True, HTTP_HOST="127.0.0.1")
    client.force_login(owner)
    page = client.get(reverse("llm_mcp:chat_detail", args=[chat_id]))
    token = page.cookies["csrftoken"].value
    response = client.post(reverse("llm_mcp:chat_approve", args=[chat_id, call.pk]), {"csrfmiddlewaretoken": token})
    return {"status": response.status_code, "approval": ToolCall.objects.get(pk=call.pk).approval}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
