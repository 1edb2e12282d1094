"""The chat pages' test agent and site: `ChatUIAgent` (the chat-ui kit server, scripted model via
``OPENAI_BASE_URL``) and `chat_ui_settings`'s settings module for ``start_site``.

    site = start_site(DJANGO_SETTINGS_MODULE=SETTINGS, OPENAI_BASE_URL=model.openai_base_url, ...)
    create_user(site, "ada")                    # a user who can sign in with PASSWORD
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

import llm_mcp

from llm_mcp_tests.support.processes import REPO_ROOT

SETTINGS = "llm_mcp_tests.support.chat_ui_settings"
PASSWORD = "correct horse battery staple"


class ChatUIServer(llm_mcp.MCP):
    name = "ui"
    command = [sys.executable, "-m", "llm_mcp_tests.support.servers.chat_ui"]
    directory = str(REPO_ROOT)
    env = {"PYTHONPATH": str(REPO_ROOT)}
    timeout = 30
    requires_approval = ["add", "chart", "sampling"]
    sampling = True  # summarize's sampling request runs on the chat's model once a person approves it


class ChatUIAgent(llm_mcp.Agent):
    """An assistant with the chat-ui test tools."""

    chat_class = "llm_mcp.models.Chat"
    model = "gpt-test"
    provider = "openai"
    inputs = ["user"]
    mcp = [ChatUIServer]


class SkillsUIServer(llm_mcp.MCP):
    """The skills kit server (``support/servers/skills.py``) over stdio on 2026-07-28."""

    name = "docs"
    command = [sys.executable, "-m", "llm_mcp_tests.support.servers.skills", "--era", "modern"]
    directory = str(REPO_ROOT)
    env = {"PYTHONPATH": str(REPO_ROOT)}
    timeout = 30
    extensions = "skills"


class SkillsUIAgent(llm_mcp.Agent):
    """An assistant with the skills kit server's skills (``SKILLS_SETTINGS`` offers only it)."""

    chat_class = "llm_mcp.models.Chat"
    model = "gpt-test"
    provider = "openai"
    inputs = ["user"]
    mcp = [SkillsUIServer]


SKILLS_SETTINGS = "llm_mcp_tests.support.chat_ui_skills_settings"


def create_user(site, username: str, *, staff: bool = False, superuser: bool = False) -> None:
    """Create ``username`` (password `PASSWORD`) in the site's database, with ``manage.py shell``
    (``superuser``: staff with every permission, for the admin)."""
    code = (f"from django.contrib.auth import get_user_model; get_user_model().objects.create_user("
            f"{username!r}, password={PASSWORD!r}, is_staff={staff or superuser!r}, is_superuser={superuser!r})")
    subprocess.run([sys.executable, str(REPO_ROOT / "manage.py"), "shell", "-c", code], env=site.env, cwd=REPO_ROOT,
                   check=True, capture_output=True, timeout=60)


DEPLOY_QUESTION = {"message": "Where should the service go?", "requestedSchema": {
    "type": "object", "required": ["environment"], "properties": {
        "environment": {"type": "string", "title": "Environment", "enum": ["staging", "production"]},
        "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 5, "default": 1}}}}
"""The form question the chat-ui server's ``deploy`` asks (as ``elicitation/create`` params)."""

ADD_SCHEMA = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}


def chat_rows(user, *, calls=(), reply_text: str | None = None, tool_results=(), user_text: str = "hello",
              model: str = "gpt-test", provider: str = "openai"):
    """A saved ``llm_mcp.models.Chat`` of ``user`` with rows made directly (no model, no server): the user's
    message, an assistant message asking ``calls`` (dicts of ToolCall fields), the ``tool_results``
    (``(call index, Message fields)``) and a final assistant ``reply_text``."""
    from llm_mcp.models import Chat, Message, ToolCall

    record = Chat.objects.create(model=model, provider=provider, user=user)
    Message.objects.create(chat=record, role="user", content=user_text)
    rows = []
    if calls:
        asking = Message.objects.create(chat=record, role="assistant", content="")
        rows = [ToolCall.objects.create(message=asking, **fields) for fields in calls]
    for index, fields in tool_results:
        result = Message.objects.create(chat=record, role="tool", **fields)
        rows[index].result = result
        rows[index].save(update_fields=["result"])
    if reply_text is not None:
        Message.objects.create(chat=record, role="assistant", content=reply_text)
    return record


@pytest.fixture
def enqueued(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, tuple]]]:
    """The jobs views enqueue (``ask_chat``/``resume_chat``), recorded instead of run."""
    from llm_mcp import tasks

    jobs: list[tuple[str, tuple]] = []
    monkeypatch.setattr(tasks.ask_chat, "delay", lambda *args: jobs.append(("ask_chat", args)))
    monkeypatch.setattr(tasks.resume_chat, "delay", lambda *args: jobs.append(("resume_chat", args)))
    yield jobs


def start_worker(env: dict[str, str], log_path) -> subprocess.Popen:
    """A Celery worker (``celery -A example_project worker``, solo pool) with ``env``, once it is ready.
    The caller terminates it."""
    import time

    log = open(log_path, "w")  # noqa: SIM115 - the process holds it; closed with the test's tmp dir
    proc = subprocess.Popen([sys.executable, "-m", "celery", "-A", "example_project", "worker", "--pool", "solo",
                             "--without-gossip", "--without-mingle", "--without-heartbeat", "--loglevel", "INFO"],
                            cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while "ready" not in log_path.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"the worker did not start:\n{log_path.read_text()[-3000:]}")
        time.sleep(0.1)
    return proc


def sign_in(page, site, username: str) -> None:
    """Sign ``username`` in on the chat pages of ``site`` (Playwright ``page``): anonymous, the list sends to login."""
    from playwright.sync_api import expect

    page.goto(site.url + "/mcp/chats/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/mcp/chats/"))  # anonymous -> LOGIN_URL
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(r"/mcp/chats/$"))


def send(page, text: str, *, wait: bool = True) -> None:
    """Send ``text`` from the composer; ``wait``: until the turn's events have ended."""
    from playwright.sync_api import expect

    page.get_by_label("Message", exact=True).fill(text)
    page.get_by_role("button", name="Send").click()
    if wait:
        expect(page.locator("#llm-mcp-composer[data-busy]")).to_have_count(0, timeout=30_000)
