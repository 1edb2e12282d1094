"""A chat paused on a server's question, answered and resumed across processes (MCP-QUEST-22).

One process asks and pauses, another records the answer through the Django model (contacting no
server), and a real Celery worker on a throwaway Redis resumes the call: the server then receives
the answer in ``inputResponses`` and its ``requestState`` unchanged. Runs on SQLite files, and on
PostgreSQL in ``make test`` (marker ``db``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_mcp.testing.scripted_model import reply, tool_call

from llm_mcp_tests.support.servers.questions import DEPLOY_STATE
from llm_mcp_tests.support.workers import step, wait_for_answer

pytestmark = [pytest.mark.db, pytest.mark.slow]


def received(env: dict[str, str]) -> list[dict]:
    path = Path(env["LLM_MCP_TEST_RUNS"] + ".questions.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines() if line] if path.exists() else []


def test_quest_22_question_answered_in_a_view_process_resumed_by_a_celery_job(worker, model):  # noqa: F811
    """MCP-QUEST-22, MCP-QUEST-11: the question persists on the ToolCall row; answering it from another
    process saves the answer and contacts no server; a Celery ``resume_chat`` job sends the answer with
    the unchanged requestState and a new JSON-RPC id, and the turn finishes."""
    env = worker
    model.add(tool_call("deploy", {"branch": "release"}, id="call_q1"), reply("Deployed to staging."))
    started = step(env, "question-chat", "Deploy the release branch").json
    assert started["waiting"] is True and started["calls"] == ["call_q1"]
    [question] = started["questions"]
    assert question["key"] == "env" and question["params"]["message"] == "Which environment?"
    chat_id = str(started["chat"])
    [stored] = step(env, "questions", chat_id).json["calls"]
    assert stored["request_state"] == DEPLOY_STATE and stored["waiting"] is True
    assert [q["response"] for q in stored["pending_questions"]] == [None]
    assert len(received(env)) == 1

    answered = step(env, "answer", chat_id, "staging").json
    assert answered == {"answered": "env", "waiting": False}
    [stored] = step(env, "questions", chat_id).json["calls"]
    assert stored["pending_questions"][0]["response"] == {"action": "accept", "content": {"environment": "staging"}}
    assert len(received(env)) == 1  # answering contacted no server
    assert len(model.requests) == 1

    step(env, "resume", chat_id)
    state = wait_for_answer(env, chat_id)
    assert [(m["role"], m["content"]) for m in state["messages"]] == [
        ("user", "Deploy the release branch"), ("assistant", ""), ("tool", "deployed release to staging"),
        ("assistant", "Deployed to staging.")]
    first, retry = received(env)
    assert retry["state"] == DEPLOY_STATE
    assert retry["responses"] == {"env": {"action": "accept", "content": {"environment": "staging"}}}
    assert retry["id"] != first["id"]
    [stored] = step(env, "questions", chat_id).json["calls"]
    assert stored == {"id": "call_q1", "pending_questions": [], "request_state": None, "waiting": False}
    assert model.requests[1].tool_results[0]["content"] == "deployed release to staging"
