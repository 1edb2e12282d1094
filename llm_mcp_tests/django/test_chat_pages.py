"""The app's chat pages through Django's test client: login, the access hook, 404 for others, forms,
schema checks, question validation, the events and state endpoints (marker ``db``)."""

from __future__ import annotations

import json
import threading

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from django.urls import reverse

from llm_mcp import Question
from llm_mcp.models import Chat, ToolCall

from llm_mcp_tests.support.chat_ui import ADD_SCHEMA, DEPLOY_QUESTION, chat_rows, enqueued  # noqa: F401 (fixture)

pytestmark = [pytest.mark.db, pytest.mark.django_db]


def user(name: str, **extra):
    return get_user_model().objects.create_user(name, password="pw", **extra)


def signed_in(account) -> Client:
    client = Client()
    client.force_login(account)
    return client


def deploy_call() -> dict:
    question = Question("target", DEPLOY_QUESTION, server="ui")
    return {"tool_call_id": "call_deploy", "name": "deploy", "arguments": {"service": "web"},
            "pending_questions": [question.to_dict()]}


def test_anonymous_visitors_go_to_login_url():
    ada = user("ada")
    record = chat_rows(ada)
    for name, args in [("chat_list", []), ("chat_new", []), ("chat_detail", [record.pk]), ("chat_events", [record.pk]),
                       ("chat_state", [record.pk])]:
        response = Client().get(reverse(f"llm_mcp:{name}", args=args))
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=")
    response = Client().post(reverse("llm_mcp:chat_cancel", args=[record.pk]))
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert not Chat.objects.get(pk=record.pk).cancelled


def test_another_users_chat_is_404_on_every_view(enqueued):
    ada, bob = user("ada"), user("bob")
    record = chat_rows(ada, calls=[{"tool_call_id": "c1", "name": "add", "arguments": {"a": 1, "b": 2},
                                    "approval": "pending"}, deploy_call()])
    call = ToolCall.objects.get(tool_call_id="c1")
    client = signed_in(bob)
    gets = ["chat_detail", "chat_events", "chat_state"]
    posts = [("chat_send", [record.pk], {"text": "hi"}), ("chat_cancel", [record.pk], {}),
             ("chat_resume", [record.pk], {}), ("chat_approve", [record.pk, call.pk], {}),
             ("chat_decline", [record.pk, call.pk], {}),
             ("chat_answer", [record.pk, "call_deploy", "target"], {"reply": "decline"})]
    for name in gets:
        assert client.get(reverse(f"llm_mcp:{name}", args=[record.pk])).status_code == 404
    for name, args, data in posts:
        assert client.post(reverse(f"llm_mcp:{name}", args=args), data).status_code == 404, name
    call.refresh_from_db()
    assert call.approval == "pending" and not Chat.objects.get(pk=record.pk).cancelled and enqueued == []
    assert ToolCall.objects.get(tool_call_id="call_deploy").pending_questions[0]["response"] is None
    listing = client.get(reverse("llm_mcp:chat_list")).content.decode()
    assert reverse("llm_mcp:chat_detail", args=[record.pk]) not in listing


def test_staff_with_the_apps_permission_may_look_but_not_act_without_change():
    from django.contrib.auth.models import Permission

    ada = user("ada")
    staff = user("root", is_staff=True)
    record = chat_rows(ada, reply_text="hi")
    url = reverse("llm_mcp:chat_detail", args=[record.pk])
    assert signed_in(staff).get(url).status_code == 404  # staff without the permission
    staff.user_permissions.add(Permission.objects.get(codename="view_chat"))
    staff = get_user_model().objects.get(pk=staff.pk)
    assert signed_in(staff).get(url).status_code == 200
    assert signed_in(staff).post(reverse("llm_mcp:chat_cancel", args=[record.pk])).status_code == 404


def only_named_users(user, chat, action):
    return user.username == "carol" and action == "view"


@override_settings(LLM_MCP={"CHAT_ACCESS": "llm_mcp_tests.django.test_chat_pages.only_named_users"})
def test_the_access_hook_decides_for_every_view():
    ada, carol = user("ada"), user("carol")
    record = chat_rows(ada, reply_text="hi")
    assert signed_in(ada).get(reverse("llm_mcp:chat_detail", args=[record.pk])).status_code == 404  # the owner too
    page = signed_in(carol).get(reverse("llm_mcp:chat_detail", args=[record.pk]))
    assert page.status_code == 200 and b'id="llm-mcp-composer"' not in page.content  # may view, not send
    assert signed_in(carol).post(reverse("llm_mcp:chat_send", args=[record.pk]), {"text": "x"}).status_code == 404


def test_new_chat_belongs_to_the_user_and_plain_chat_uses_chat_model():
    ada = user("ada")
    client = signed_in(ada)
    assert b"Start chat" in client.get(reverse("llm_mcp:chat_new")).content
    with override_settings(LLM_MCP={"CHAT_AGENTS": [], "CHAT_MODEL": {"provider": "openai", "model": "gpt-x"}}):
        response = client.post(reverse("llm_mcp:chat_new"))
    record = Chat.objects.get()
    assert response["Location"] == reverse("llm_mcp:chat_detail", args=[record.pk])
    assert (record.user, record.model, record.provider) == (ada, "gpt-x", "openai")


def test_new_chat_with_an_agent_sets_the_owner_from_its_user_input():
    ada = user("ada")
    with override_settings(LLM_MCP={"CHAT_AGENTS": ["llm_mcp_tests.support.chat_ui.ChatUIAgent"]}):
        signed_in(ada).post(reverse("llm_mcp:chat_new"), {"agent": "0"})
    record = Chat.objects.get()
    assert record.user == ada and record.agent_class.endswith("ChatUIAgent") and record.model == "gpt-test"
    assert record.agent_inputs == {"user": {"$model": ada._meta.label_lower, "pk": ada.pk}}


def test_send_without_javascript_enqueues_and_redirects(enqueued):
    ada = user("ada")
    record = chat_rows(ada, reply_text="hi")
    client = signed_in(ada)
    response = client.post(reverse("llm_mcp:chat_send", args=[record.pk]), {"text": "  next  "})
    assert response.status_code == 302 and enqueued == [("resume_chat", (record.pk,))]
    assert record.message_records.order_by("id").last().content == "next"  # saved before the job runs
    response = client.post(reverse("llm_mcp:chat_send", args=[record.pk]), {"text": ""}, follow=True)
    assert b"Write a message first." in response.content and len(enqueued) == 1
    assert client.get(reverse("llm_mcp:chat_send", args=[record.pk])).status_code == 405


def test_approval_card_says_what_is_wrong_and_decisions_go_through_the_model(enqueued, monkeypatch):
    """MCP-APPROVAL-05: the page lists what is wrong with the arguments (jsonschema against the tool's
    input schema); the decision is saved on the ToolCall row through ToolCall.approve(), once."""
    ada = user("ada")
    record = chat_rows(ada, calls=[{"tool_call_id": "c1", "name": "add", "arguments": {"a": "two"},
                                    "approval": "pending"}])
    monkeypatch.setattr("llm_mcp.conversation.tool_schemas", lambda record: {"add": ADD_SCHEMA})
    client = signed_in(ada)
    page = client.get(reverse("llm_mcp:chat_detail", args=[record.pk])).content.decode()
    assert "These arguments do not fit the tool's input schema" in page
    assert "a: &#x27;two&#x27; is not of type &#x27;number&#x27;" in page
    assert "(arguments): &#x27;b&#x27; is a required property" in page
    call = ToolCall.objects.get(tool_call_id="c1")
    client.post(reverse("llm_mcp:chat_approve", args=[record.pk, call.pk]))
    call.refresh_from_db()
    assert call.approval == "approved" and enqueued == [("resume_chat", (record.pk,))]
    again = client.post(reverse("llm_mcp:chat_decline", args=[record.pk, call.pk]), follow=True)
    assert b"already decided" in again.content
    call.refresh_from_db()
    assert call.approval == "approved" and len(enqueued) == 1


def test_question_form_is_validated_on_the_server(enqueued):
    """MCP-QUEST-22, MCP-QUEST-04, MCP-QUEST-07, MCP-QUEST-17: a form from Question.fields (choices, default);
    a value out of range or a choice not offered is refused on the server with the reason and nothing saved;
    a good answer is recorded on the ToolCall row (no server contacted) and resume_chat is enqueued."""
    ada = user("ada")
    record = chat_rows(ada, calls=[deploy_call()])
    client = signed_in(ada)
    url = reverse("llm_mcp:chat_answer", args=[record.pk, "call_deploy", "target"])
    page = client.get(reverse("llm_mcp:chat_detail", args=[record.pk])).content.decode()
    assert 'name="q-environment"' in page and 'name="q-replicas"' in page and 'value="1"' in page
    assert '<option value="" selected>---</option>' in page  # no default: nothing chosen for the user
    refused = client.post(url, {"reply": "answer", "q-environment": "production", "q-replicas": "9"})
    assert refused.status_code == 400
    assert "takes a number between 1 and 5, not 9" in refused.content.decode()
    assert ToolCall.objects.get(tool_call_id="call_deploy").pending_questions[0]["response"] is None
    refused = client.post(url, {"reply": "answer", "q-environment": "moon"})
    assert refused.status_code == 400 and "Select a valid choice" in refused.content.decode()
    assert enqueued == []
    client.post(url, {"reply": "answer", "q-environment": "production", "q-replicas": "3"})
    stored = ToolCall.objects.get(tool_call_id="call_deploy").pending_questions[0]["response"]
    assert stored == {"action": "accept", "content": {"environment": "production", "replicas": 3}}
    assert enqueued == [("resume_chat", (record.pk,))]


def test_url_question_shows_the_host_and_links_only_http():
    """MCP-QUEST-09, MCP-QUEST-10: a URL question shows its host and links only an http(s) address."""
    ada = user("ada")
    good = Question("signin", {"mode": "url", "message": "Sign in", "url": "https://auth.example.test/d?c=1",
                               "elicitationId": "e1"}, server="ui")
    bad = Question("evil", {"mode": "url", "message": "Click", "url": "javascript:alert(1)", "elicitationId": "e2"},
                   server="ui")
    record = chat_rows(ada, calls=[{"tool_call_id": "c1", "name": "login", "pending_questions": [good.to_dict()]},
                                   {"tool_call_id": "c2", "name": "evil", "pending_questions": [bad.to_dict()]}])
    page = signed_in(ada).get(reverse("llm_mcp:chat_detail", args=[record.pk])).content.decode()
    assert '<strong class="llm-mcp-host">auth.example.test</strong>' in page
    assert 'href="https://auth.example.test/d?c=1"' in page
    assert 'href="javascript:' not in page and "not an http(s) web page" in page


def test_state_endpoint_says_whether_a_turn_runs():
    """A conversation that does not end with an answer is "running" while a turn holds the chat's turn
    lock, and "unfinished" (a failed turn, or a job not started) when none does."""
    ada = user("ada")
    record = chat_rows(ada)  # the last message is the user's
    done = chat_rows(ada, reply_text="**done**")
    client = signed_in(ada)
    url = reverse("llm_mcp:chat_state", args=[record.pk])
    assert client.get(url).json() == {"state": "unfinished", "fingerprint": client.get(url).json()["fingerprint"],
                                      "waiting_calls": 0, "task_calls": 0}
    lock, held, done_event = Chat.objects.get(pk=record.pk).store.lock, threading.Event(), threading.Event()

    def turn():  # a turn in another thread (its own database session, as a worker has)
        from django.db import connections

        with lock:
            held.set()
            done_event.wait(30)
        connections.close_all()

    runner = threading.Thread(target=turn)
    runner.start()
    try:
        assert held.wait(30)
        assert client.get(url).json()["state"] == "running"
    finally:
        done_event.set()
        runner.join()
    assert client.get(url).json()["state"] == "unfinished"
    page = client.get(reverse("llm_mcp:chat_detail", args=[record.pk])).content.decode()
    assert "Not finished" in page and reverse("llm_mcp:chat_resume", args=[record.pk]) in page
    assert client.get(reverse("llm_mcp:chat_state", args=[done.pk])).json()["state"] == "idle"


def test_multi_select_and_boolean_questions_keep_their_types(enqueued):
    """MCP-QUEST-04, MCP-QUEST-06: an array field with choices is a set of checkboxes, a boolean a checkbox,
    a number a number; the answer sent is typed (a list of the choices' own values, True, 2.5)."""
    ada = user("ada")
    question = Question("opts", {"message": "Options?", "requestedSchema": {"type": "object", "properties": {
        "regions": {"type": "array", "items": {"type": "string", "enum": ["eu", "us", "ap"]}, "minItems": 1},
        "sizes": {"type": "array", "items": {"anyOf": [{"const": 1, "title": "one"}, {"const": 2, "title": "two"}]}},
        "dry_run": {"type": "boolean", "default": False},
        "ratio": {"type": "number"}}, "required": ["regions"]}}, server="ui")
    record = chat_rows(ada, calls=[{"tool_call_id": "c1", "name": "opts", "pending_questions": [question.to_dict()]}])
    client = signed_in(ada)
    page = client.get(reverse("llm_mcp:chat_detail", args=[record.pk])).content.decode()
    assert page.count('type="checkbox" name="q-regions"') == 3 and 'type="checkbox" name="q-dry_run"' in page
    url = reverse("llm_mcp:chat_answer", args=[record.pk, "c1", "opts"])
    refused = client.post(url, {"reply": "answer", "q-ratio": "2.5"})
    assert refused.status_code == 400 and "This field is required" in refused.content.decode()
    client.post(url, {"reply": "answer", "q-regions": ["eu", "ap"], "q-sizes": ["2"], "q-dry_run": "on",
                      "q-ratio": "2.5"})
    stored = ToolCall.objects.get(tool_call_id="c1").pending_questions[0]["response"]
    assert stored == {"action": "accept", "content": {"regions": ["eu", "ap"], "sizes": [2], "dry_run": True,
                                                      "ratio": 2.5}}


def test_huge_arguments_and_results_are_shown_cut_with_how_much_was_left_out():
    """A call whose arguments (or result) run to megabytes does not make every view of the page, and every
    event of a followed turn, megabytes: each block shows its first MAX_SHOWN characters and says how many
    more there are; the rows keep everything."""
    from llm_mcp.conversation import MAX_SHOWN

    ada = user("ada")
    blob = "x" * 400_000
    record = chat_rows(ada, calls=[{"tool_call_id": "c1", "name": "echo", "arguments": {"blob": blob},
                                    "approval": "pending"},
                                   {"tool_call_id": "c2", "name": "echo", "arguments": {}, "approval": "approved"}],
                       tool_results=[(1, {"content": "y" * 300_000})])
    page = signed_in(ada).get(reverse("llm_mcp:chat_detail", args=[record.pk]))
    html = page.content.decode()
    arguments = json.dumps({"blob": blob}, indent=2)
    assert page.status_code == 200 and len(page.content) < 8 * MAX_SHOWN
    assert f"{len(arguments) - MAX_SHOWN:,} more characters not shown" in html
    assert f"{300_000 - MAX_SHOWN:,} more characters not shown" in html
    assert ToolCall.objects.get(tool_call_id="c1").arguments == {"blob": blob}  # stored whole
