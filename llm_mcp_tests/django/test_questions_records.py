"""Questions on chat records: saved on the ToolCall row, answered without the server (marker ``db``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import llm_mcp
from llm_mcp.models import Chat as ChatRecord, ToolCall as ToolCallRow
from llm_mcp.testing.scripted_model import reply, tool_call

from llm_mcp_tests.support.chats import MODEL
from llm_mcp_tests.support.processes import PYTHON, REPO_ROOT
from llm_mcp_tests.support.servers.questions import DEPLOY_STATE

pytestmark = [pytest.mark.db, pytest.mark.django_db(transaction=True)]


def questions_server(record: Path) -> llm_mcp.MCP:
    return llm_mcp.mcp(command=[PYTHON, "-m", "llm_mcp_tests.support.servers.questions", "--era", "modern", "--context",
                                f"record={record}"], name="questions", directory=str(REPO_ROOT),
                       env={"PYTHONPATH": str(REPO_ROOT)})


def test_quest_22_record_pauses_saves_and_resumes(model, tmp_path):
    """MCP-QUEST-22, MCP-QUEST-13, MCP-QUEST-17: the paused call's questions and requestState are saved on the
    ToolCall row; record.pending_questions[0].answer() writes the row (no server contacted); a stale copy of
    the question cannot answer it again; a fresh record's complete() resumes the call."""
    log = tmp_path / "received.jsonl"
    model.add(tool_call("deploy", {"branch": "b"}, id="call_1"), reply("done"))
    record = ChatRecord.objects.create(model=MODEL, provider="openai")
    record.provider_options = {"base_url": model.openai_base_url, "api_key": "test-key"}
    record.with_mcp(questions_server(log)).ask("deploy")
    row = ToolCallRow.objects.get(tool_call_id="call_1")
    assert row.waiting and row.request_state == DEPLOY_STATE and [q["key"] for q in row.pending_questions] == ["env"]

    fresh = ChatRecord.objects.get(pk=record.pk)
    assert fresh.waiting
    [question] = fresh.pending_questions
    [stale] = ChatRecord.objects.get(pk=record.pk).pending_questions
    assert isinstance(question, llm_mcp.Question) and question.fields[0].choices == ["staging", "production"]
    with pytest.raises(ValueError, match="does not offer"):
        question.answer("moon")
    question.answer("production")
    row.refresh_from_db()
    assert row.pending_questions[0]["response"] == {"action": "accept", "content": {"environment": "production"}}
    assert not row.waiting and not fresh.waiting and fresh.pending_questions == []
    with pytest.raises(ValueError, match="answered elsewhere"):
        stale.decline()
    assert len(log.read_text().splitlines()) == 1  # answering contacted no server

    resumed = ChatRecord.objects.get(pk=record.pk)
    resumed.provider_options = record.provider_options
    assert resumed.with_mcp(questions_server(log)).complete().content == "done"
    retry = json.loads(log.read_text().splitlines()[-1])
    assert retry["state"] == DEPLOY_STATE and retry["responses"]["env"]["content"] == {"environment": "production"}
    row.refresh_from_db()
    assert row.pending_questions == [] and row.request_state is None and row.result.content == "deployed b to production"


@pytest.fixture
def enqueued(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    from llm_mcp import tasks

    jobs: list[tuple] = []
    monkeypatch.setattr(tasks.resume_chat, "delay", lambda *args: jobs.append(args))
    return jobs


def test_quest_22_example_site_answers_and_declines_questions(enqueued):
    """MCP-QUEST-22, MCP-QUEST-09, MCP-QUEST-17: the example site's chat page (the app's) shows a paused call's
    questions (message, server, choices, the URL in full); its form saves an answer on the row (an answer the
    question cannot take is refused and changes nothing); once none is open, resume_chat is enqueued."""
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from example_project import agents
    from llm_mcp.models import Message as MessageRow

    from llm_mcp_tests.support.servers.questions import ENVIRONMENT

    owner = get_user_model().objects.create_user("quest22")
    record = agents.new_chat("offline", "offline", user=owner)
    assistant = MessageRow.objects.create(chat=record, role="assistant", content="")
    request = {"method": "tools/call", "params": {"name": "deploy", "arguments": {}}}
    form = llm_mcp.Question("env", {"message": "Which environment?", "requestedSchema": ENVIRONMENT},
                            server="deploys", request=request)
    link = llm_mcp.Question("login", {"mode": "url", "message": "Connect", "url": "https://example.com/c?x=1&y=2"},
                            server="deploys", request=request)
    call = ToolCallRow.objects.create(message=assistant, tool_call_id="call_1", name="deploy", arguments={},
                                      pending_questions=[form.to_dict(), link.to_dict()], request_state="s")
    client = Client()
    client.force_login(owner)
    html = client.get(reverse("llm_mcp:chat_detail", args=[record.pk])).content.decode()
    assert "Which environment?" in html and "<strong>deploys</strong>" in html
    assert '<option value="production">' in html and 'href="https://example.com/c?x=1&amp;y=2"' in html
    refused = client.post(reverse("llm_mcp:chat_send", args=[record.pk]), {"text": "more"}, follow=True)
    assert "settle them first" in refused.content.decode() and enqueued == []  # new messages wait

    answer = reverse("llm_mcp:chat_answer", args=[record.pk, "call_1", "env"])
    client.post(answer, {"reply": "answer", "q-environment": "moon"})
    call.refresh_from_db()
    assert call.pending_questions[0]["response"] is None and enqueued == []
    client.post(answer, {"reply": "answer", "q-environment": "production"})
    call.refresh_from_db()
    assert call.pending_questions[0]["response"] == {"action": "accept", "content": {"environment": "production"}}
    assert enqueued == []  # the URL question is still open
    client.post(reverse("llm_mcp:chat_answer", args=[record.pk, "call_1", "login"]), {"reply": "decline"})
    call.refresh_from_db()
    assert call.pending_questions[1]["response"] == {"action": "decline"} and not call.waiting
    assert enqueued == [(record.pk,)]
    assert client.post(answer, {"reply": "maybe"}).status_code == 400
