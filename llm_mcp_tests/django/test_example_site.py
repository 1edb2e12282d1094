"""The example site (example_project): a thin project around the app's chat pages.

Its agent (``DemoAgent``: the demo server, every call waiting for approval) on the app's views, its
override of ``llm_mcp/base.html``, and the behaviours its own chat pages used to prove, now proved on
the app's: POST-only, CSRF-protected forms, a decision made twice, unknown chats and calls, a failed
turn resumed, question forms validated on the server. Through Django's test client
(``@pytest.mark.django_db``); the real site in a real headless Chromium is tested in
``e2e/test_site_in_a_browser.py``.
"""

from __future__ import annotations

import json
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

import llm_mcp
from example_project import agents, providers
from example_project.providers import OFFLINE_REPLY
from llm_mcp import tasks
from llm_mcp.chat import Message as ChatMessage
from llm_mcp.chat import ToolCall as ChatToolCall
from llm_mcp.models import Chat, Message, ToolCall
from llm_mcp.testing.scripted_model import api_error, reply
from llm_mcp_tests.support.chat_ui import enqueued  # noqa: F401 (fixture)
from llm_mcp_tests.support.servers.asking_kit import _form
from llm_mcp_tests.support.servers.questions import ENVIRONMENT

pytestmark = [pytest.mark.db]


# --------------------------------------------------------------------------- helpers


def make_user(name: str = "ada"):
    return get_user_model().objects.create_user(name, password="pw")


def signed_in(account, **options) -> Client:
    client = Client(**options)
    client.force_login(account)
    return client


def offline_chat(owner) -> Chat:
    return agents.new_chat("offline", "offline", user=owner)


def pending_call(record: Chat, name: str = "echo", arguments: dict | None = None) -> ToolCall:
    assistant = Message.objects.create(chat=record, role="assistant", content="")
    return ToolCall.objects.create(message=assistant, tool_call_id=f"call_{name}_{assistant.pk}", name=name,
                                   arguments=arguments or {"message": "hi"}, approval="pending")


def question_call(record: Chat, question: llm_mcp.Question, name: str = "asks") -> ToolCall:
    assistant = Message.objects.create(chat=record, role="assistant", content="")
    return ToolCall.objects.create(message=assistant, tool_call_id="call_1", name=name, arguments={},
                                   pending_questions=[question.to_dict()], request_state="s")


def approve_url(record: Chat, call: ToolCall) -> str:
    return reverse("llm_mcp:chat_approve", args=[record.pk, call.pk])


def decline_url(record: Chat, call: ToolCall) -> str:
    return reverse("llm_mcp:chat_decline", args=[record.pk, call.pk])


def answer_url(record: Chat, call: ToolCall, key: str) -> str:
    return reverse("llm_mcp:chat_answer", args=[record.pk, call.tool_call_id, key])


def page_text(response) -> str:
    return response.content.decode()


# --------------------------------------------------------------------------- the thin project


@pytest.mark.django_db
def test_new_chat_is_an_agent_chat_with_the_demo_server_connected():
    """MCP-PERSIST-02: the app's New chat offers the site's DemoAgent (CHAT_AGENTS); the chat is the
    signed-in user's, a row of DemoAgent on the first configured model; loaded again by primary key,
    as a Celery job does, it has the demo server connected and requiring approval. A choice not
    offered creates nothing."""
    ada = make_user()
    client = signed_in(ada)
    form = page_text(client.get(reverse("llm_mcp:chat_new")))
    assert "DemoAgent" in form
    response = client.post(reverse("llm_mcp:chat_new"), {"agent": "0"})
    record = Chat.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("llm_mcp:chat_detail", args=[record.pk])
    first = agents.model_choices()[0]
    assert (record.agent_class, record.provider, record.model, record.user) == (
        "example_project.agents.DemoAgent", first["provider"], first["model"], ada)
    loaded = tasks.load_chat(record.pk)
    assert isinstance(loaded.mcp.demo, agents.SiteDemoServer) and loaded.mcp.demo.requires_approval is True
    assert client.post(reverse("llm_mcp:chat_new"), {"agent": "7"}).status_code == 302
    assert Chat.objects.count() == 1
    with pytest.raises(ValueError, match="'nope:nothing' is not a configured model"):
        agents.new_chat("nope", "nothing")
    offline = tasks.load_chat(offline_chat(ada).pk)
    assert isinstance(offline.chat.provider, providers.OfflineProvider)


@pytest.mark.django_db
def test_site_urls_are_the_apps_and_its_own_pages():
    """The site has no chat views of its own: ``/`` redirects to the app's chat list, which sends an
    anonymous visitor to the site's login page; the Connections and Live tools pages remain."""
    response = Client().get("/")
    assert response.status_code == 302 and response["Location"] == reverse("llm_mcp:chat_list")
    listing = Client().get(reverse("llm_mcp:chat_list"))
    assert listing.status_code == 302 and listing["Location"].startswith(reverse("login") + "?next=")
    assert Client().get(reverse("connections")).status_code == 200
    assert Client().get(reverse("live_tools")).status_code == 200
    for gone in ("/chats/1/", "/chats/1/ask/", "/chats/1/call-tool/"):
        assert Client().get(gone).status_code == 404


@pytest.mark.django_db
def test_chat_list_and_chat_page_render_with_the_overridden_header():
    """The list shows the user's chat by its first message; the chat page shows the conversation, the
    pending call with its arguments and its approve/decline forms, inside the site's own header (its
    override of ``llm_mcp/base.html``: its pages and a log out button) and the app's stylesheet."""
    ada = make_user()
    record = offline_chat(ada)
    Message.objects.create(chat=record, role="user", content="Echo hi please")
    call = pending_call(record)
    client = signed_in(ada)
    listing = page_text(client.get("/", follow=True))
    assert "Echo hi please" in listing and reverse("llm_mcp:chat_detail", args=[record.pk]) in listing
    html = page_text(client.get(reverse("llm_mcp:chat_detail", args=[record.pk])))
    assert "Echo hi please" in html and call.tool_call_id in html and "&quot;message&quot;: &quot;hi&quot;" in html
    assert f'action="{approve_url(record, call)}"' in html and f'action="{decline_url(record, call)}"' in html
    header = html[html.index('<header class="llm-mcp-header">'):html.index("</header>")]
    assert "<strong>llm_mcp example</strong>" in header
    for name in ("connections", "live_tools", "logout", "admin:index"):
        assert f'"{reverse(name)}"' in header, name
    assert "llm_mcp/chat.css" in html  # the rest as the app has it


@pytest.mark.django_db
def test_unknown_chat_or_call_is_404(enqueued):
    """An unknown chat, a call of another chat, an unknown call, or a decision the URLs do not
    name, is a 404, not a 500, and decides nothing."""
    ada = make_user()
    record, other = offline_chat(ada), offline_chat(ada)
    call = pending_call(other)
    client = signed_in(ada)
    assert client.get(reverse("llm_mcp:chat_detail", args=[999_999])).status_code == 404
    assert client.post(reverse("llm_mcp:chat_send", args=[999_999]), {"text": "hi"}).status_code == 404
    assert client.post(reverse("llm_mcp:chat_approve", args=[999_999, call.pk])).status_code == 404
    assert client.post(approve_url(record, call)).status_code == 404  # a call of another chat
    assert client.post(reverse("llm_mcp:chat_approve", args=[other.pk, 999_999])).status_code == 404
    assert client.post(f"/mcp/chats/{other.pk}/calls/{call.pk}/maybe/").status_code == 404
    assert ToolCall.objects.get(pk=call.pk).approval == "pending" and enqueued == []


@pytest.mark.django_db
def test_actions_require_post(enqueued):
    """Approve, decline, send, answer, cancel and resume only take POST (405 otherwise); New chat's
    GET is its form and creates nothing."""
    ada = make_user()
    record = offline_chat(ada)
    call = pending_call(record)
    client = signed_in(ada)
    for url in (approve_url(record, call), decline_url(record, call), reverse("llm_mcp:chat_send", args=[record.pk]),
                reverse("llm_mcp:chat_cancel", args=[record.pk]), reverse("llm_mcp:chat_resume", args=[record.pk]),
                answer_url(record, call, "q")):
        assert client.get(url).status_code == 405, url
    assert client.get(reverse("llm_mcp:chat_new")).status_code == 200 and Chat.objects.count() == 1
    assert ToolCall.objects.get(pk=call.pk).approval == "pending" and enqueued == []
    assert not Chat.objects.get(pk=record.pk).cancelled


@pytest.mark.django_db
def test_forms_are_csrf_protected(enqueued):
    """MCP-APPROVAL-05: a POST without the CSRF token is refused (403) and changes nothing; the page's
    forms carry the token, and with it the decision is saved on the ToolCall row and the chat is
    resumed by ``resume_chat``."""
    ada = make_user()
    record = offline_chat(ada)
    call = pending_call(record)
    client = signed_in(ada, enforce_csrf_checks=True)
    assert client.post(approve_url(record, call)).status_code == 403
    assert client.post(reverse("llm_mcp:chat_send", args=[record.pk]), {"text": "hi"}).status_code == 403
    assert client.post(reverse("llm_mcp:chat_new"), {"agent": "0"}).status_code == 403
    assert client.post(reverse("llm_mcp:chat_cancel", args=[record.pk])).status_code == 403
    assert ToolCall.objects.get(pk=call.pk).approval == "pending" and enqueued == []
    assert Chat.objects.count() == 1 and not Chat.objects.get(pk=record.pk).cancelled
    html = page_text(client.get(reverse("llm_mcp:chat_detail", args=[record.pk])))
    assert html.count('name="csrfmiddlewaretoken"') >= 4  # approve, decline, the composer, log out
    token = client.cookies["csrftoken"].value
    response = client.post(approve_url(record, call), {"csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert ToolCall.objects.get(pk=call.pk).approval == "approved"
    assert enqueued == [("resume_chat", (record.pk,))]


@pytest.mark.django_db
def test_deciding_twice_says_so(enqueued):
    """A call decided already (here, or by someone else meanwhile) is not decided again: the page
    says which decision stands, with no error page and no second job."""
    ada = make_user()
    record = offline_chat(ada)
    call = pending_call(record)
    client = signed_in(ada)
    first = client.post(approve_url(record, call), follow=True)
    assert first.status_code == 200 and "Approved echo." in page_text(first)
    second = client.post(decline_url(record, call), follow=True)
    assert second.status_code == 200
    assert "already decided (approved); nothing changed" in page_text(second)
    assert ToolCall.objects.get(pk=call.pk).approval == "approved"
    assert enqueued == [("resume_chat", (record.pk,))]


@pytest.mark.django_db
def test_the_last_decision_resumes(enqueued):
    """With two calls waiting, the first decision resumes nothing; the second one does."""
    ada = make_user()
    record = offline_chat(ada)
    assistant = Message.objects.create(chat=record, role="assistant", content="")
    one, two = (ToolCall.objects.create(message=assistant, tool_call_id=f"call_{n}", name="echo",
                                        arguments={"message": n}, approval="pending") for n in ("a", "b"))
    client = signed_in(ada)
    client.post(decline_url(record, one))
    assert enqueued == []
    client.post(approve_url(record, two))
    assert enqueued == [("resume_chat", (record.pk,))]


@pytest.mark.django_db
def test_send_saves_enqueues_and_refuses_while_calls_wait(enqueued):
    """The message box (without JavaScript) saves the message and enqueues the turn; an empty one is
    refused; while a call waits, it says to settle the calls first and enqueues nothing."""
    ada = make_user()
    record = offline_chat(ada)
    client = signed_in(ada)
    url = reverse("llm_mcp:chat_send", args=[record.pk])
    client.post(url, {"text": "  Add 2 and 40  "})
    assert enqueued == [("resume_chat", (record.pk,))]
    assert record.message_records.order_by("id").last().content == "Add 2 and 40"
    assert "Write a message first." in page_text(client.post(url, {"text": "   "}, follow=True))
    pending_call(record)
    blocked = client.post(url, {"text": "more"}, follow=True)
    assert blocked.status_code == 200 and "settle them first" in page_text(blocked)
    assert len(enqueued) == 1 and not record.message_records.filter(content="more").exists()


@pytest.mark.django_db
def test_approve_runs_the_demo_tool_in_process():
    """MCP-APPROVAL-02, MCP-APPROVAL-05, MCP-PERSIST-03: with jobs run in-process (no broker),
    approving a waiting call of the demo server's ``echo`` on the app's page runs it: its result is
    the tool message under the call, shown on the page, and the offline provider closes the turn."""
    ada = make_user()
    record = offline_chat(ada)
    store = record.store
    with store.lock:
        store.add(ChatMessage("user", "Call echo with pong 7"))
        store.add(ChatMessage("assistant", "", tool_calls=[ChatToolCall(
            id=f"call_{uuid.uuid4().hex}", name="echo", arguments={"message": "pong 7"}, approval="pending")]))
    call = ToolCall.objects.get()
    client = signed_in(ada)
    page = client.post(approve_url(record, call), follow=True)
    call.refresh_from_db()
    assert call.result is not None and call.result.content == "pong 7" and not call.result.is_error
    assert '<pre class="llm-mcp-result-text">pong 7</pre>' in page_text(page)
    assert Message.objects.filter(chat=record).last().content == OFFLINE_REPLY
    again = client.post(decline_url(record, call), follow=True)
    assert "already decided (approved)" in page_text(again)


@pytest.mark.django_db
def test_a_failed_model_turn_is_a_message_and_can_be_resumed(model, settings):
    """A model error during a turn run in-process (eager jobs) shows on the page, not as an error
    page; the user's message stays, and Resume runs the turn again."""
    settings.EXAMPLE_MODELS = [{"provider": "openai", "model": "gpt-test"}]
    settings.LLM_MCP = {**settings.LLM_MCP, "PROVIDER_OPTIONS": {"openai": {
        "base_url": model.openai_base_url, "api_key": "k", "max_retries": 0}}}
    model.add(api_error(400, "the scripted model refuses"), reply("Fine now."))
    ada = make_user()
    record = agents.new_chat(user=ada)
    client = signed_in(ada)
    page = client.post(reverse("llm_mcp:chat_send", args=[record.pk]), {"text": "Hello?"}, follow=True)
    html = page_text(page)
    assert page.status_code == 200 and "The model turn failed" in html and "the scripted model refuses" in html
    assert 'data-state="unfinished"' in html and reverse("llm_mcp:chat_resume", args=[record.pk]) in html
    resumed = page_text(client.post(reverse("llm_mcp:chat_resume", args=[record.pk]), follow=True))
    assert "Fine now." in resumed and 'data-state="unfinished"' not in resumed
    assert list(Message.objects.filter(chat=record).values_list("role", "content")) == [
        ("user", "Hello?"), ("assistant", "Fine now.")]


def test_offline_provider_answers_without_tools():
    """The offline provider is a real Provider: a fixed answer, never a tool call."""
    from llm_mcp.chat.providers import ModelRequest, ToolSpec, get_provider

    provider = get_provider("offline", base_url="ignored")
    request = ModelRequest(model="offline", messages=[], tools=[ToolSpec("echo", "", {"type": "object"})])
    answer = provider.complete(request)
    assert (answer.role, answer.content, answer.tool_calls) == ("assistant", OFFLINE_REPLY, [])


@pytest.mark.django_db
def test_cancel_sets_the_flag():
    ada = make_user()
    record = offline_chat(ada)
    response = signed_in(ada).post(reverse("llm_mcp:chat_cancel", args=[record.pk]), follow=True)
    assert response.status_code == 200 and "Cancelled" in page_text(response)
    assert Chat.objects.get(pk=record.pk).cancelled is True


# --------------------------------------------------------------------------- question forms


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_site_form_refuses_nan_format_and_forged_posts(enqueued):
    """MCP-QUEST-17, MCP-QUEST-22: the question form refuses "nan" and "1e999" for a number (float()
    takes them; the JSON column and the server could not), a text not of the field's format, and "1.5"
    for an integer (on that field), leaving the question open; a POST without the CSRF token, or naming
    a call of another chat, changes nothing."""
    ada = make_user()
    record, other = offline_chat(ada), offline_chat(ada)
    schema = _form(ratio={"type": "number", "maximum": 10}, day={"type": "string", "format": "date"},
                   count={"type": "integer"})
    question = llm_mcp.Question("q", {"message": "Numbers?", "requestedSchema": schema}, server="s",
                                request={"method": "tools/call", "params": {"name": "asks", "arguments": {}}})
    call = question_call(record, question)
    url = answer_url(record, call, "q")
    assert signed_in(ada, enforce_csrf_checks=True).post(url, {"reply": "decline"}).status_code == 403
    client = signed_in(ada)
    forged = reverse("llm_mcp:chat_answer", args=[other.pk, call.tool_call_id, "q"])
    assert client.post(forged, {"reply": "decline"}, follow=True).status_code == 200  # not open on that chat
    for bad in ({"q-ratio": "nan"}, {"q-ratio": "1e999"}, {"q-ratio": "2", "q-day": "tomorrow"}):
        page = client.post(url, {"reply": "answer", **bad})
        assert page.status_code == 400 and 'class="errorlist' in page_text(page), bad
        call.refresh_from_db()
        assert call.pending_questions[0]["response"] is None and enqueued == []
    page = client.post(url, {"reply": "answer", "q-ratio": "2", "q-count": "1.5"})
    html = page_text(page)
    field = html[html.index('name="q-count"'):]
    assert page.status_code == 400 and "Enter a whole number." in field[:field.index("</div>")]  # on that field
    client.post(url, {"reply": "answer", "q-ratio": "2", "q-day": "2026-11-30"})
    call.refresh_from_db()
    assert call.pending_questions[0]["response"] == {"action": "accept", "content": {"ratio": 2.0, "day": "2026-11-30"}}
    assert enqueued == [("resume_chat", (record.pk,))]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_site_form_multi_select(enqueued):
    """MCP-QUEST-02, MCP-QUEST-22: a multi-select field (an array of choices) shows as a set of checkboxes
    with its defaults checked, not a text box holding the list's repr; picking two answers with both."""
    ada = make_user()
    record = offline_chat(ada)
    schema = _form(tags={"type": "array", "items": {"type": "string", "enum": ["bug", "ui", "docs"]},
                         "default": ["ui"]})
    question = llm_mcp.Question("q", {"message": "Labels?", "requestedSchema": schema}, server="s",
                                request={"method": "tools/call", "params": {"name": "asks", "arguments": {}}})
    call = question_call(record, question)
    client = signed_in(ada)
    html = page_text(client.get(reverse("llm_mcp:chat_detail", args=[record.pk])))
    boxes = {value: checked for value, checked in
             ((part.split('value="')[1].split('"')[0], " checked" in part.split(">")[0])
              for part in html.split('<input type="checkbox" name="q-tags"')[1:])}
    assert boxes == {"bug": False, "ui": True, "docs": False}
    client.post(answer_url(record, call, "q"), {"reply": "answer", "q-tags": ["bug", "docs"]})
    call.refresh_from_db()
    assert call.pending_questions[0]["response"] == {"action": "accept", "content": {"tags": ["bug", "docs"]}}


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_site_form_choice_without_default_is_not_preselected(enqueued):
    """MCP-QUEST-07, MCP-QUEST-17: a choice field without a default starts on an empty option, so pressing
    Answer without choosing is refused (required) instead of sending the first choice the user never picked."""
    ada = make_user()
    record = offline_chat(ada)
    question = llm_mcp.Question("env", {"message": "Which environment?", "requestedSchema": ENVIRONMENT},
                                server="deploys", request={"method": "tools/call", "params": {"name": "deploy"}})
    call = question_call(record, question, "deploy")
    client = signed_in(ada)
    html = page_text(client.get(reverse("llm_mcp:chat_detail", args=[record.pk])))
    select = html[html.index('<select name="q-environment"'):]
    select = select[:select.index("</select>")]
    assert '<option value="" selected>' in select and '<option value="staging">' in select  # nothing picked
    page = client.post(answer_url(record, call, "env"), {"reply": "answer", "q-environment": ""})
    assert page.status_code == 400 and "This field is required" in page_text(page)
    call.refresh_from_db()
    assert call.pending_questions[0]["response"] is None and enqueued == []


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("key", ["step/1", "a?b#c", "100%", " "])
def test_site_question_keys_chosen_by_the_server(enqueued, key):
    """MCP-QUEST-22: the question's key is the server's choice (any string); the chat page still shows, and its
    form still answers the right question, when the key holds a slash, ?, # or %."""
    ada = make_user()
    record = offline_chat(ada)
    question = llm_mcp.Question(key, {"message": "Which environment?", "requestedSchema": ENVIRONMENT},
                                server="deploys", request={"method": "tools/call", "params": {"name": "deploy"}})
    call = question_call(record, question, "deploy")
    client = signed_in(ada)
    page = client.get(reverse("llm_mcp:chat_detail", args=[record.pk]))
    assert page.status_code == 200 and "Which environment?" in page_text(page)
    action = page_text(page).split('class="llm-mcp-question-form"')[0].rsplit('action="', 1)[1].split('"')[0]
    client.post(action.replace("&amp;", "&"), {"reply": "answer", "q-environment": "production"})
    call.refresh_from_db()
    assert call.pending_questions[0]["response"] == {"action": "accept", "content": {"environment": "production"}}
    assert json.dumps(call.pending_questions[0]["key"]) == json.dumps(key)


@pytest.mark.django_db
def test_site_held_question_answered_without_a_resume_job(enqueued):
    """MCP-QUEST-16: a held question (a handshake-era server's, its call still open in the worker) shows on the
    chat page like any other; answering it saves the answer and enqueues no resume_chat, since the waiting call
    sends it itself."""
    ada = make_user()
    record = offline_chat(ada)
    question = llm_mcp.Question("held-1", {"message": "Which environment?", "requestedSchema": ENVIRONMENT},
                                server="deploys", held=True)
    call = question_call(record, question, "deploy")
    client = signed_in(ada)
    html = page_text(client.get(reverse("llm_mcp:chat_detail", args=[record.pk])))
    assert "Which environment?" in html and 'name="q-environment"' in html
    client.post(answer_url(record, call, "held-1"), {"reply": "answer", "q-environment": "staging"})
    call.refresh_from_db()
    assert call.pending_questions[0]["response"] == {"action": "accept", "content": {"environment": "staging"}}
    assert call.pending_questions[0]["held"] is True and enqueued == []


def test_the_files_beside_the_example_sqlite_database_are_ignored_by_git(tmp_path, monkeypatch):
    """The example settings put SQLite in WAL mode: while the site runs (``make run``), the
    database has its ``-wal`` and ``-shm`` files beside it. Every file that an open database
    in the settings' mode has beside it in the repository (the default ``DJANGO_DB_PATH``) is
    ignored by git, as the database itself is. The settings are read as ``make run`` reads them
    (SQLite), also when this suite runs on PostgreSQL."""
    import importlib.util
    import shutil
    import sqlite3
    import subprocess
    from pathlib import Path

    from example_project import settings as site_settings

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    monkeypatch.delenv("DJANGO_DB_ENGINE", raising=False)
    spec = importlib.util.spec_from_file_location("example_settings_as_run", site_settings.__file__)
    assert spec is not None and spec.loader is not None
    as_run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(as_run)
    assert as_run.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"
    options = as_run.DATABASES["default"].get("OPTIONS", {})
    database = tmp_path / "db.sqlite3"
    connection = sqlite3.connect(database)
    try:
        if options.get("init_command"):
            connection.execute(options["init_command"])
        connection.execute("CREATE TABLE t (x)")
        connection.commit()
        names = sorted(path.name for path in tmp_path.iterdir())
    finally:
        connection.close()
    assert names[0] == "db.sqlite3" and len(names) == 3  # the -wal and -shm files in WAL mode
    default = Path(site_settings.BASE_DIR) / "db.sqlite3"
    relative = [str(default.with_name(name).relative_to(site_settings.BASE_DIR)) for name in names]
    checked = subprocess.run(["git", "check-ignore", "--no-index", *relative], cwd=site_settings.BASE_DIR,
                             capture_output=True, text=True)
    assert sorted(checked.stdout.split()) == relative
