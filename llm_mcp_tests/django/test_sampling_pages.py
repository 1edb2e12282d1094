"""A held sampling request on the chat page and in the admin, through Django's test client (marker ``db``):
what the server asked is shown as text, long requests are cut with a count, Approve/Decline record the
answer on the ToolCall row without a resume job, and a server cannot dress a question up as a sampling
request. The browser flow is in ``e2e/test_sampling_in_a_browser.py``."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from llm_mcp import Question
from llm_mcp.client.server.sampling import approval_params
from llm_mcp.conversation import MAX_SAMPLING_CHARS, MAX_SAMPLING_MESSAGES
from llm_mcp.models import ToolCall

from llm_mcp_tests.support.chat_ui import chat_rows, enqueued  # noqa: F401 (fixture)

pytestmark = [pytest.mark.db, pytest.mark.django_db]

REQUEST = {"messages": [{"role": "user", "content": {"type": "text", "text": "Rate <script>x()</script> 1-5"}},
                        {"role": "assistant", "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"}}],
           "systemPrompt": "You grade answers.", "maxTokens": 12, "includeContext": "thisServer",
           "modelPreferences": {"hints": [{"name": "mini"}]}}


def held_sampling(request: dict, key: str = "held-s1") -> dict:
    question = Question("sampling", approval_params("grader", request), server="grader", held=True, kind="sampling")
    question.key = key
    return question.to_dict()


def page_of(client: Client, record) -> str:
    return client.get(reverse("llm_mcp:chat_detail", args=[record.pk])).content.decode()


def signed_in(name: str, **extra):
    account = get_user_model().objects.create_user(name, password="pw", **extra)
    client = Client()
    client.force_login(account)
    return account, client


def test_held_sampling_request_shows_what_the_server_asked_and_approve_records_it(enqueued):
    """the card names the server and shows maxTokens, the system prompt, each message (other
    content as [type]) as escaped text, the context asked for and the model hints; Approve records an accept on
    the ToolCall row and enqueues nothing (the call is still open in the worker)."""
    ada, client = signed_in("ada")
    record = chat_rows(ada, calls=[{"tool_call_id": "c1", "name": "grade", "pending_questions": [held_sampling(REQUEST)]}])
    page = page_of(client, record)
    assert "llm-mcp-sampling" in page and "grader</strong> asks to run a model completion" in page
    assert '<dd class="llm-mcp-sampling-max-tokens">12 tokens</dd>' in page
    assert '<dd class="llm-mcp-sampling-system">You grade answers.</dd>' in page
    assert "Rate &lt;script&gt;x()&lt;/script&gt; 1-5" in page and "<script>x()" not in page
    assert '<span class="llm-mcp-sampling-text">[image]</span>' in page and "AAAA" not in page
    assert "thisServer" in page and "mini" in page
    assert '<button type="submit" name="reply" value="answer">Approve</button>' in page
    client.post(reverse("llm_mcp:chat_answer", args=[record.pk, "c1", "held-s1"]), {"reply": "answer"})
    assert ToolCall.objects.get(tool_call_id="c1").pending_questions[0]["response"] == {"action": "accept",
                                                                                        "content": {}}
    assert enqueued == []


def test_a_huge_sampling_request_is_cut_with_what_was_left_out():
    """A server's request larger than the page shows: each text is cut at MAX_SAMPLING_CHARS and the messages at
    MAX_SAMPLING_MESSAGES, each cut saying how much was left out."""
    ada, client = signed_in("ada")
    huge = {"maxTokens": 5, "systemPrompt": "s" * (MAX_SAMPLING_CHARS + 7), "messages": [
        {"role": "user", "content": {"type": "text", "text": "m" * (MAX_SAMPLING_CHARS + 3)}}] * (MAX_SAMPLING_MESSAGES + 2)}
    record = chat_rows(ada, calls=[{"tool_call_id": "c1", "name": "grade", "pending_questions": [held_sampling(huge)]}])
    page = page_of(client, record)
    assert "[7 more characters not shown]" in page and "[3 more characters not shown]" in page
    assert page.count('class="llm-mcp-sampling-message role-') == MAX_SAMPLING_MESSAGES
    assert "2 more message(s) not shown." in page
    assert "s" * (MAX_SAMPLING_CHARS + 1) not in page


def test_a_server_question_cannot_pose_as_a_sampling_request():
    """An elicitation whose params carry a "sampling" key (the server's own words) stays an ordinary question:
    only the client marks a sampling approval (Question.kind), and a stored row without the mark is not one."""
    ada, client = signed_in("ada")
    posing = Question("q1", {"message": "Approve?", "requestedSchema": {"type": "object", "properties": {}},
                             "sampling": REQUEST}, server="evil")
    assert posing.sampling is None and Question.from_dict(posing.to_dict()).sampling is None
    record = chat_rows(ada, calls=[{"tool_call_id": "c1", "name": "evil", "pending_questions": [posing.to_dict()]}])
    page = page_of(client, record)
    assert "llm-mcp-sampling" not in page and "evil</strong> asks: Approve?" in page


def test_the_admin_shows_a_waiting_sampling_request():
    """The admin's tool call page lists each sampling request still waiting, as escaped text."""
    root, client = signed_in("root", is_staff=True, is_superuser=True)
    record = chat_rows(root, calls=[{"tool_call_id": "c1", "name": "grade",
                                     "pending_questions": [held_sampling(REQUEST)]}])
    call = ToolCall.objects.get(tool_call_id="c1")
    page = client.get(reverse("admin:llm_mcp_toolcall_change", args=[call.pk])).content.decode()
    assert '<dd class="llm-mcp-sampling-system">You grade answers.</dd>' in page
    assert "Rate &lt;script&gt;x()&lt;/script&gt; 1-5" in page and "<script>x()" not in page
    answered = held_sampling(REQUEST)
    answered["response"] = {"action": "decline"}
    call.pending_questions = [answered]
    call.save()
    page = client.get(reverse("admin:llm_mcp_toolcall_change", args=[call.pk])).content.decode()
    assert "llm-mcp-sampling-system" not in page
    assert record.pk
