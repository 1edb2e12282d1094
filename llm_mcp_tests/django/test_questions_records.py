"""Questions on chat records: saved on the ToolCall row, answered without the server (marker ``db``)."""

from __future__ import annotations

import json
import threading
import time
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


def handshake_questions_server(record: Path, **options) -> llm_mcp.MCP:
    return llm_mcp.mcp(command=[PYTHON, "-m", "llm_mcp_tests.support.servers.questions", "--era", "handshake",
                                "--context", f"record={record}"], name="questions", directory=str(REPO_ROOT),
                       env={"PYTHONPATH": str(REPO_ROOT)}, **options)


def held_record(model) -> ChatRecord:
    record = ChatRecord.objects.create(model=MODEL, provider="openai")
    record.provider_options = {"base_url": model.openai_base_url, "api_key": "test-key"}
    return record


def test_held_question_on_the_row_answered_through_another_record(model, tmp_path):
    """MCP-QUEST-16, MCP-QUEST-22: during the call, the handshake-era question is on the ToolCall row (held);
    another thread answers it through its own copy of the record (its own connection, no server contacted),
    the running call sends the answer and finishes; the row's questions are cleared with the result."""
    log = tmp_path / "received.jsonl"
    model.add(tool_call("deploy", {"branch": "b"}, id="call_h1"), reply("done"))
    record = held_record(model)
    seen: list[dict] = []

    def person() -> None:
        from django.db import connection

        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                row = ToolCallRow.objects.filter(tool_call_id="call_h1").values_list("pending_questions", flat=True).first()
                if row:
                    seen.append(dict(row[0]))
                    [question] = ChatRecord.objects.get(pk=record.pk).pending_questions
                    question.answer("staging")
                    return
                time.sleep(0.05)
        except Exception as exc:  # noqa: BLE001 - reported by the test below
            seen.append({"error": repr(exc)})
        finally:
            connection.close()

    thread = threading.Thread(target=person)
    thread.start()
    assert record.with_mcp(handshake_questions_server(log)).ask("deploy").content == "done"
    thread.join()
    [question] = seen
    assert question["held"] is True and question["response"] is None and question["params"]["message"] == \
        "Which environment?"
    row = ToolCallRow.objects.get(tool_call_id="call_h1")
    assert row.pending_questions == [] and row.result.content == "deployed b to staging"
    assert json.loads(log.read_text().splitlines()[-1])["responses"] == {
        "env": {"action": "accept", "content": {"environment": "staging"}}}


def polls_within(seconds: float) -> int:
    """Reads of a held question's wait over ``seconds``, from the chat's pause schedule: one at once, then
    one after each pause (HOLD_FIRST_POLL doubling up to HOLD_MAX_POLL), and the last at the deadline."""
    from llm_mcp.chat.chat import HOLD_FIRST_POLL, HOLD_MAX_POLL

    reads, elapsed, pause = 1, 0.0, HOLD_FIRST_POLL
    while elapsed < seconds:
        elapsed += min(pause, seconds - elapsed)
        reads += 1
        pause = min(pause * 2, HOLD_MAX_POLL)
    return reads


def test_held_question_wait_queries_counted_and_bounded(model, tmp_path):
    """MCP-QUEST-16: the wait for an answer polls the database with a growing pause, one query a read (the
    question's response and the chat's cancel flag together), no transaction: over a 3 s question_timeout
    it makes at most the schedule's reads, then declines and tells the model."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    log = tmp_path / "received.jsonl"
    model.add(tool_call("deploy", {"branch": "b"}, id="call_h2"), reply("done"))
    record = held_record(model).with_mcp(handshake_questions_server(log, question_timeout=3))
    with CaptureQueriesContext(connection) as captured:
        assert record.ask("deploy").content == "done"
    sql = [q["sql"] for q in captured.captured_queries]
    reads = [i for i, text in enumerate(sql)
             if text.startswith("SELECT") and "pending_questions" in text and '"cancelled"' in text]
    assert 3 <= len(reads) <= polls_within(3.0), len(reads)
    assert reads == list(range(reads[0], reads[-1] + 1))  # nothing else meanwhile: no transaction, no write
    assert model.requests[1].tool_results[0]["content"].startswith(
        "[questions asked: 'Which environment?'; nobody answered within 3 s, so the question was declined.]")


def test_question_aanswer_and_adecline_save_on_the_row(model, tmp_path):
    """``Question.aanswer``/``adecline`` from a coroutine record the answer on the ToolCall row as
    ``answer``/``decline`` do (Django's sync_to_async); the record then resumes with it."""
    import asyncio

    log = tmp_path / "received.jsonl"
    model.add(tool_call("deploy", {"branch": "b"}, id="call_a"), reply("done"))
    record = held_record(model).with_mcp(questions_server(log))
    record.ask("deploy")
    [question] = ChatRecord.objects.get(pk=record.pk).pending_questions
    [stale] = ChatRecord.objects.get(pk=record.pk).pending_questions

    async def run() -> None:
        await question.aanswer("staging")
        with pytest.raises(ValueError, match="answered elsewhere"):
            await stale.adecline()

    asyncio.run(run())
    row = ToolCallRow.objects.get(tool_call_id="call_a")
    assert row.pending_questions[0]["response"] == {"action": "accept", "content": {"environment": "staging"}}
    assert record.complete().content == "done"
