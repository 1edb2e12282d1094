"""The example site (example_project: chat list, chat page, approvals, "Call a tool").

The views, through Django's test client (``@pytest.mark.django_db``): POST-only, CSRF-protected
forms, a decision made twice, unknown chats and calls. The real site in a real headless Chromium
is tested in ``e2e/test_site_in_a_browser.py``.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

import llm_mcp
from example_project import agents, providers
from example_project.providers import OFFLINE_REPLY
from llm_mcp import tasks
from llm_mcp.models import Chat, Message, ToolCall
from llm_mcp.testing.scripted_model import api_error, reply

from llm_mcp_tests.support.servers.asking_kit import _form


APPROVE, DECLINE = {"decision": "approve"}, {"decision": "decline"}


# --------------------------------------------------------------------------- views (test client)


@pytest.fixture
def enqueued(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, tuple]]:
    """The jobs the views enqueue (``ask_chat``/``resume_chat``), recorded instead of run."""
    jobs: list[tuple[str, tuple]] = []
    monkeypatch.setattr(tasks.ask_chat, "delay", lambda *args: jobs.append(("ask_chat", args)))
    monkeypatch.setattr(tasks.resume_chat, "delay", lambda *args: jobs.append(("resume_chat", args)))
    return jobs


def offline_chat() -> Chat:
    return agents.new_chat("offline", "offline")


def pending_call(record: Chat, name: str = "echo", arguments: dict | None = None) -> ToolCall:
    assistant = Message.objects.create(chat=record, role="assistant", content="")
    return ToolCall.objects.create(message=assistant, tool_call_id=f"call_{name}_{assistant.pk}", name=name,
                                   arguments=arguments or {"message": "hi"}, approval="pending")


def page_text(response) -> str:
    return response.content.decode()


@pytest.mark.django_db
def test_new_chat_is_an_agent_chat_with_the_demo_server_connected():
    """MCP-PERSIST-02: chats of the site are rows of DemoAgent (chat_class llm_mcp.models.Chat); the
    row loaded again by primary key, as a Celery job does, has the demo server connected and
    requiring approval, on the model chosen in the form."""
    response = Client().post(reverse("create_chat"), {"model": "offline:offline"})
    record = Chat.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("chat", args=[record.pk])
    assert (record.agent_class, record.provider, record.model) == ("example_project.agents.DemoAgent",
                                                                    "offline", "offline")
    loaded = tasks.load_chat(record.pk)
    assert isinstance(loaded.mcp.demo, agents.SiteDemoServer) and loaded.mcp.demo.requires_approval is True
    assert isinstance(loaded.chat.provider, providers.OfflineProvider)
    assert Client().post(reverse("create_chat"), {"model": "nope:nothing"}).status_code == 302
    assert Chat.objects.count() == 1


@pytest.mark.django_db
def test_chat_list_and_chat_page_render():
    """The list shows chats and the New chat form with the configured models; the chat page
    shows the conversation, the pending call with its arguments and buttons, and the tools."""
    record = offline_chat()
    Message.objects.create(chat=record, role="user", content="Echo hi please")
    call = pending_call(record)
    listing = page_text(Client().get("/"))
    assert "Echo hi please" in listing and 'value="offline:offline"' in listing and "1 waiting for approval" in listing
    html = page_text(Client().get(reverse("chat", args=[record.pk])))
    assert "Echo hi please" in html and call.tool_call_id in html and "&quot;message&quot;: &quot;hi&quot;" in html
    assert f'action="{reverse("decide", args=[record.pk, call.pk])}"' in html
    assert 'name="decision" value="approve"' in html and 'name="decision" value="decline"' in html
    for name in ("echo", "add", "now", "roll_dice"):
        assert f'data-tool="{name}"' in html


@pytest.mark.django_db
def test_unknown_chat_or_call_is_404(enqueued):
    """An unknown chat, or a call of another chat, is a 404 (an unknown decision a 400), not a 500."""
    record = offline_chat()
    other = offline_chat()
    call = pending_call(other)
    client = Client()
    assert client.get(reverse("chat", args=[999_999])).status_code == 404
    assert client.post(reverse("ask", args=[999_999]), {"text": "hi"}).status_code == 404
    assert client.post(reverse("decide", args=[999_999, call.pk]), APPROVE).status_code == 404
    assert client.post(reverse("decide", args=[record.pk, call.pk]), APPROVE).status_code == 404
    assert client.post(reverse("decide", args=[other.pk, 999_999]), APPROVE).status_code == 404
    assert client.post(reverse("decide", args=[other.pk, call.pk]), {"decision": "maybe"}).status_code == 400
    assert client.post(reverse("call_tool", args=[999_999]), {"tool": "echo"}).status_code == 404
    assert ToolCall.objects.get(pk=call.pk).approval == "pending" and enqueued == []


@pytest.mark.django_db
def test_actions_require_post(enqueued):
    """Approve, decline, ask, call-a-tool, cancel, resume and new chat only take POST (405 otherwise)."""
    record = offline_chat()
    call = pending_call(record)
    client = Client()
    for url in (reverse("decide", args=[record.pk, call.pk]),
                reverse("ask", args=[record.pk]), reverse("call_tool", args=[record.pk]),
                reverse("cancel", args=[record.pk]), reverse("resume", args=[record.pk]), reverse("create_chat")):
        assert client.get(url).status_code == 405, url
    assert ToolCall.objects.get(pk=call.pk).approval == "pending" and enqueued == []


@pytest.mark.django_db
def test_forms_are_csrf_protected(enqueued):
    """MCP-APPROVAL-05: a POST without the CSRF token is refused (403) and decides nothing; the
    page's forms carry the token, and with it the decision is saved on the ToolCall row and
    the chat is resumed by ``resume_chat``."""
    record = offline_chat()
    call = pending_call(record)
    client = Client(enforce_csrf_checks=True)
    approve = reverse("decide", args=[record.pk, call.pk])
    assert client.post(approve, APPROVE).status_code == 403
    assert client.post(reverse("ask", args=[record.pk]), {"text": "hi"}).status_code == 403
    assert client.post(reverse("create_chat"), {"model": "offline:offline"}).status_code == 403
    assert ToolCall.objects.get(pk=call.pk).approval == "pending" and enqueued == []
    html = page_text(client.get(reverse("chat", args=[record.pk])))
    assert html.count('name="csrfmiddlewaretoken"') >= 4
    token = client.cookies["csrftoken"].value
    response = client.post(approve, {**APPROVE, "csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert ToolCall.objects.get(pk=call.pk).approval == "approved"
    assert enqueued == [("resume_chat", (record.pk,))]


@pytest.mark.django_db
def test_deciding_twice_says_so(enqueued):
    """A call decided already (here, or by someone else meanwhile) is not decided again: the
    page says which decision stands, with no error page and no second job."""
    record = offline_chat()
    call = pending_call(record)
    client = Client()
    first = client.post(reverse("decide", args=[record.pk, call.pk]), APPROVE, follow=True)
    assert first.status_code == 200 and "Approved echo." in page_text(first)
    second = client.post(reverse("decide", args=[record.pk, call.pk]), DECLINE, follow=True)
    assert second.status_code == 200
    assert "already decided (approved); nothing changed" in page_text(second)
    assert ToolCall.objects.get(pk=call.pk).approval == "approved"
    assert enqueued == [("resume_chat", (record.pk,))]


@pytest.mark.django_db
def test_the_last_decision_resumes(enqueued):
    """With two calls waiting, the first decision resumes nothing; the second one does."""
    record = offline_chat()
    assistant = Message.objects.create(chat=record, role="assistant", content="")
    one, two = (ToolCall.objects.create(message=assistant, tool_call_id=f"call_{n}", name="echo",
                                        arguments={"message": n}, approval="pending") for n in ("a", "b"))
    client = Client()
    client.post(reverse("decide", args=[record.pk, one.pk]), DECLINE)
    assert enqueued == []
    client.post(reverse("decide", args=[record.pk, two.pk]), APPROVE)
    assert enqueued == [("resume_chat", (record.pk,))]


@pytest.mark.django_db
def test_ask_enqueues_and_refuses_while_calls_wait(enqueued):
    """The message box enqueues ``ask_chat(pk, text)``; while a call waits, it says to decide first."""
    record = offline_chat()
    client = Client()
    client.post(reverse("ask", args=[record.pk]), {"text": "  Add 2 and 40  "})
    assert enqueued == [("ask_chat", (record.pk, "Add 2 and 40"))]
    empty = client.post(reverse("ask", args=[record.pk]), {"text": "   "}, follow=True)
    assert "Write a message first." in page_text(empty)
    pending_call(record)
    blocked = client.post(reverse("ask", args=[record.pk]), {"text": "more"}, follow=True)
    assert blocked.status_code == 200 and "decide them" in page_text(blocked)
    assert len(enqueued) == 1


@pytest.mark.django_db
def test_call_a_tool_validates_and_records_a_pending_call(enqueued):
    """"Call a tool" takes a demo tool and a JSON object; it records an assistant tool call that
    waits for approval (no model involved), and refuses bad input with a message."""
    record = offline_chat()
    client = Client()
    url = reverse("call_tool", args=[record.pk])
    assert "no tool named" in page_text(client.post(url, {"tool": "rm_rf", "arguments": "{}"}, follow=True))
    assert "must be a JSON object" in page_text(client.post(url, {"tool": "echo", "arguments": "{nope"}, follow=True))
    assert "not list" in page_text(client.post(url, {"tool": "echo", "arguments": "[1]"}, follow=True))
    assert "NaN is not JSON" in page_text(client.post(url, {"tool": "add", "arguments": '{"a": NaN, "b": 1}'},
                                                      follow=True))
    assert "unpaired surrogate" in page_text(client.post(url, {"tool": "echo", "arguments": '{"message": "\\ud800"}'},
                                                         follow=True))
    assert "nested too deeply" in page_text(client.post(url, {"tool": "echo", "arguments": "[" * 5000 + "]" * 5000},
                                                        follow=True))
    assert ToolCall.objects.count() == 0 and not record.message_records.exists()  # nothing half-stored
    done = client.post(url, {"tool": "add", "arguments": '{"a": 1, "b": 2}'}, follow=True)
    assert done.status_code == 200 and "waits for your approval" in page_text(done)
    call = ToolCall.objects.get()
    assert (call.name, call.arguments, call.approval) == ("add", {"a": 1, "b": 2}, "pending")
    assert call.tool_call_id.startswith("manual_") and call.message.chat_id == record.pk
    again = client.post(url, {"tool": "echo", "arguments": "{}"}, follow=True)
    assert "decide them first" in page_text(again) and ToolCall.objects.count() == 1
    assert enqueued == []


@pytest.mark.django_db
def test_call_a_tool_then_approve_runs_it_in_process():
    """MCP-APPROVAL-02, MCP-APPROVAL-05, MCP-PERSIST-03: with jobs run in-process (no broker),
    approving a call recorded from the page runs it on the demo server: its result is the tool
    message under the call, and the offline provider closes the turn."""
    record = offline_chat()
    client = Client()
    client.post(reverse("call_tool", args=[record.pk]), {"tool": "echo", "arguments": '{"message": "pong 7"}'})
    call = ToolCall.objects.get()
    page = client.post(reverse("decide", args=[record.pk, call.pk]), APPROVE, follow=True)
    call.refresh_from_db()
    assert call.result is not None and call.result.content == "pong 7" and not call.result.is_error
    html = page_text(page)
    assert '<pre class="tool-result">pong 7</pre>' in html
    assert Message.objects.filter(chat=record).last().content == OFFLINE_REPLY
    decline = client.post(reverse("decide", args=[record.pk, call.pk]), DECLINE, follow=True)
    assert "already decided (approved)" in page_text(decline)


@pytest.mark.django_db
def test_a_failed_model_turn_is_a_message_and_can_be_resumed(model, settings):
    """A model error during a turn run in-process (eager jobs) shows on the page, not as an error
    page; the user's message stays, and Resume runs the turn again."""
    settings.EXAMPLE_MODELS = [{"provider": "openai", "model": "gpt-test"}]
    settings.LLM_MCP = {"PROVIDER_OPTIONS": {"openai": {"base_url": model.openai_base_url, "api_key": "k",
                                                        "max_retries": 0}}}
    model.add(api_error(400, "the scripted model refuses"), reply("Fine now."))
    record = agents.new_chat()
    client = Client()
    page = client.post(reverse("ask", args=[record.pk]), {"text": "Hello?"}, follow=True)
    html = page_text(page)
    assert page.status_code == 200 and "The model turn failed" in html and "the scripted model refuses" in html
    assert 'id="unfinished-notice"' in html and reverse("resume", args=[record.pk]) in html
    resumed = page_text(client.post(reverse("resume", args=[record.pk]), follow=True))
    assert "Fine now." in resumed and 'id="unfinished-notice"' not in resumed
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
    record = offline_chat()
    response = Client().post(reverse("cancel", args=[record.pk]), follow=True)
    assert response.status_code == 200 and "Cancelled" in page_text(response)
    assert Chat.objects.get(pk=record.pk).cancelled is True


@pytest.mark.slow
@pytest.mark.db
@pytest.mark.django_db(transaction=True)
def test_site_form_refuses_nan_format_and_forged_posts(monkeypatch):
    """MCP-QUEST-17, MCP-QUEST-22: the example site's question form refuses "nan" for a number (float() takes
    it; the JSON column and the server could not), a text not of the field's format, and "1.5" for an integer
    (with a message naming the field), leaving the question open; a POST without the CSRF token, or naming a call of another chat, changes nothing."""
    from django.test import Client
    from django.urls import reverse

    from example_project import agents
    from llm_mcp import tasks
    from llm_mcp.models import Message as MessageRow
    from llm_mcp.models import ToolCall as ToolCallRow

    jobs: list[tuple] = []
    monkeypatch.setattr(tasks.resume_chat, "delay", lambda *args: jobs.append(args))  # resumed elsewhere
    record, other = agents.new_chat("offline", "offline"), agents.new_chat("offline", "offline")
    assistant = MessageRow.objects.create(chat=record, role="assistant", content="")
    schema = _form(ratio={"type": "number", "maximum": 10}, day={"type": "string", "format": "date"},
                   count={"type": "integer"})
    question = llm_mcp.Question("q", {"message": "Numbers?", "requestedSchema": schema}, server="s",
                                request={"method": "tools/call", "params": {"name": "asks", "arguments": {}}})
    call = ToolCallRow.objects.create(message=assistant, tool_call_id="call_1", name="asks", arguments={},
                                      pending_questions=[question.to_dict()], request_state="s")
    url = reverse("answer_question", args=[record.pk, call.pk, "q"])
    assert Client(enforce_csrf_checks=True).post(url, {"action": "decline"}).status_code == 403
    client = Client()
    assert client.post(reverse("answer_question", args=[other.pk, call.pk, "q"]), {"action": "decline"}).status_code \
        == 404
    for bad in ({"field-ratio": "nan"}, {"field-ratio": "1e999"}, {"field-ratio": "2", "field-day": "tomorrow"}):
        page = client.post(url, {"action": "answer", **bad}, follow=True)
        assert "does not fit the question" in page.content.decode()
        call.refresh_from_db()
        assert call.pending_questions[0]["response"] is None and jobs == []
    page = client.post(url, {"action": "answer", "field-ratio": "2", "field-count": "1.5"}, follow=True)
    assert "field &#x27;count&#x27; takes an integer, not &#x27;1.5&#x27;" in page.content.decode()  # not int()'s words
    client.post(url, {"action": "answer", "field-ratio": "2", "field-day": "2026-11-30"})
    call.refresh_from_db()
    assert call.pending_questions[0]["response"] == {"action": "accept", "content": {"ratio": 2.0, "day": "2026-11-30"}}
    assert jobs == [(record.pk,)]


@pytest.mark.slow
@pytest.mark.db
@pytest.mark.django_db(transaction=True)
def test_site_form_multi_select(monkeypatch):
    """MCP-QUEST-02, MCP-QUEST-22: a multi-select field (an array of choices) shows as a multiple select with its
    defaults selected, not a text box holding the list's repr; picking two choices answers with both."""
    from django.test import Client
    from django.urls import reverse

    from example_project import agents
    from llm_mcp import tasks
    from llm_mcp.models import Message as MessageRow
    from llm_mcp.models import ToolCall as ToolCallRow

    monkeypatch.setattr(tasks.resume_chat, "delay", lambda *args: None)
    record = agents.new_chat("offline", "offline")
    assistant = MessageRow.objects.create(chat=record, role="assistant", content="")
    schema = _form(tags={"type": "array", "items": {"type": "string", "enum": ["bug", "ui", "docs"]},
                         "default": ["ui"]})
    question = llm_mcp.Question("q", {"message": "Labels?", "requestedSchema": schema}, server="s",
                                request={"method": "tools/call", "params": {"name": "asks", "arguments": {}}})
    call = ToolCallRow.objects.create(message=assistant, tool_call_id="call_1", name="asks", arguments={},
                                      pending_questions=[question.to_dict()], request_state="s")
    client = Client()
    html = client.get(reverse("chat", args=[record.pk])).content.decode()
    assert '<select name="field-tags" multiple>' in html
    assert '<option value="ui" selected>' in html and '<option value="bug">' in html
    client.post(reverse("answer_question", args=[record.pk, call.pk, "q"]),
                {"action": "answer", "field-tags": ["bug", "docs"]})
    call.refresh_from_db()
    assert call.pending_questions[0]["response"] == {"action": "accept", "content": {"tags": ["bug", "docs"]}}


@pytest.mark.slow
@pytest.mark.db
@pytest.mark.django_db(transaction=True)
def test_site_form_choice_without_default_is_not_preselected(monkeypatch):
    """MCP-QUEST-07, MCP-QUEST-17: a choice field without a default starts on an empty option, so pressing
    Answer without choosing is refused (required) instead of sending the first choice the user never picked."""
    from django.test import Client
    from django.urls import reverse

    from example_project import agents
    from llm_mcp import tasks
    from llm_mcp.models import Message as MessageRow
    from llm_mcp.models import ToolCall as ToolCallRow

    from llm_mcp_tests.support.servers.questions import ENVIRONMENT

    monkeypatch.setattr(tasks.resume_chat, "delay", lambda *args: None)
    record = agents.new_chat("offline", "offline")
    assistant = MessageRow.objects.create(chat=record, role="assistant", content="")
    question = llm_mcp.Question("env", {"message": "Which environment?", "requestedSchema": ENVIRONMENT},
                                server="deploys", request={"method": "tools/call", "params": {"name": "deploy"}})
    call = ToolCallRow.objects.create(message=assistant, tool_call_id="call_1", name="deploy", arguments={},
                                      pending_questions=[question.to_dict()], request_state="s")
    client = Client()
    html = client.get(reverse("chat", args=[record.pk])).content.decode()
    select = html[html.index('<select name="field-environment">'):]
    select = select[:select.index("</select>")]
    assert '<option value="" selected>' in select and '<option value="staging">' in select  # nothing picked
    page = client.post(reverse("answer_question", args=[record.pk, call.pk, "env"]),
                       {"action": "answer", "field-environment": ""}, follow=True)
    assert "is required" in page.content.decode()
    call.refresh_from_db()
    assert call.pending_questions[0]["response"] is None


@pytest.mark.slow
@pytest.mark.db
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("key", ["step/1", "a?b#c", "100%", " "])
def test_site_question_keys_chosen_by_the_server(monkeypatch, key):
    """MCP-QUEST-22: the question's key is the server's choice (any string); the chat page still shows, and its
    form still answers the right question, when the key holds a slash, ?, # or %."""
    from django.test import Client
    from django.urls import reverse

    from example_project import agents
    from llm_mcp import tasks
    from llm_mcp.models import Message as MessageRow
    from llm_mcp.models import ToolCall as ToolCallRow

    from llm_mcp_tests.support.servers.questions import ENVIRONMENT

    monkeypatch.setattr(tasks.resume_chat, "delay", lambda *args: None)
    record = agents.new_chat("offline", "offline")
    assistant = MessageRow.objects.create(chat=record, role="assistant", content="")
    question = llm_mcp.Question(key, {"message": "Which environment?", "requestedSchema": ENVIRONMENT},
                                server="deploys", request={"method": "tools/call", "params": {"name": "deploy"}})
    call = ToolCallRow.objects.create(message=assistant, tool_call_id="call_1", name="deploy", arguments={},
                                      pending_questions=[question.to_dict()], request_state="s")
    client = Client()
    page = client.get(reverse("chat", args=[record.pk]))
    assert page.status_code == 200 and "Which environment?" in page.content.decode()
    client.post(reverse("answer_question", args=[record.pk, call.pk, key]),
                {"action": "answer", "field-environment": "production"})
    call.refresh_from_db()
    assert call.pending_questions[0]["response"] == {"action": "accept", "content": {"environment": "production"}}


@pytest.mark.django_db
def test_site_held_question_answered_without_a_resume_job(enqueued):
    """MCP-QUEST-16: a held question (a handshake-era server's, its call still open in the worker) shows on the
    chat page like any other; answering it saves the answer and enqueues no resume_chat, since the waiting call
    sends it itself."""
    from llm_mcp_tests.support.servers.questions import ENVIRONMENT

    record = offline_chat()
    assistant = Message.objects.create(chat=record, role="assistant", content="")
    question = llm_mcp.Question("held-1", {"message": "Which environment?", "requestedSchema": ENVIRONMENT},
                                server="deploys", held=True)
    call = ToolCall.objects.create(message=assistant, tool_call_id="call_h", name="deploy", arguments={},
                                   pending_questions=[question.to_dict()])
    client = Client()
    html = page_text(client.get(reverse("chat", args=[record.pk])))
    assert "Which environment?" in html and 'name="field-environment"' in html
    client.post(reverse("answer_question", args=[record.pk, call.pk, "held-1"]),
                {"action": "answer", "field-environment": "staging"})
    call.refresh_from_db()
    assert call.pending_questions[0]["response"] == {"action": "accept", "content": {"environment": "staging"}}
    assert call.pending_questions[0]["held"] is True and enqueued == []
