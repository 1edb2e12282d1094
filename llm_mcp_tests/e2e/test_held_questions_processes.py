"""A handshake-era server's question held open while a Celery worker runs a persisted chat's call
(MCP-QUEST-16, MCP-QUEST-22): the npm ``server-everything`` over stdio and over Streamable HTTP.

The worker runs ``ask_chat``; the model calls ``trigger-elicitation-request``; the server sends
``elicitation/create`` on the call's stream and the chat saves the question on the ``ToolCall`` row,
where another process reads ``pending_questions`` and answers (or declines) through the model. The
worker's call then finishes with the server's own report of what it received. The same with a
timeout (``question_timeout``) and a cancel while the question waits, and with a sampling request
(``trigger-sampling-request``) held for approval, approved or declined from another process.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from llm_mcp.testing.scripted_model import reply, tool_call
from llm_mcp_tests.support.workers import step, wait_for_answer

pytestmark = [pytest.mark.db, pytest.mark.slow]

TOOL = "trigger-elicitation-request"


@pytest.fixture(params=["stdio", "http"])
def target(request: pytest.FixtureRequest) -> str:
    """Where the worker finds server-everything: its argv as JSON (stdio) or its URL."""
    if request.param == "stdio":
        return json.dumps(request.getfixturevalue("everything_stdio_command"))
    return request.getfixturevalue("everything_http_url")


def wait_for_question(env: dict[str, str], chat_id: str, seconds: float = 45) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        questions = step(env, "pending", chat_id).json["questions"]
        if questions:
            return questions[0]
        assert time.monotonic() < deadline, Path(env["WORKER_LOG"]).read_text()
        time.sleep(0.2)


def start(env: dict[str, str], target: str, seconds: float) -> str:
    return str(step(env, "held-chat", target, str(seconds), "Ask me for my details").json["chat"])


def test_held_question_answered_from_another_process(worker, model, target):
    """MCP-QUEST-16, MCP-QUEST-22: the question shows in pending_questions (held, on the running call's row);
    another process answers it through the model; the worker's call finishes and the server reports the
    very values it received."""
    env = worker
    model.add(tool_call(TOOL, {}, id="call_e1"), reply("Thanks, Ada."))
    chat_id = start(env, target, 120)
    question = wait_for_question(env, chat_id)
    assert question["held"] is True and question["tool_call_id"] == "call_e1"
    assert question["server"] == "everything" and question["request"] is None
    assert question["params"]["message"] == "Please provide inputs for the following fields:"
    answered = step(env, "answer-json", chat_id, json.dumps({"name": "Ada Lovelace", "integer": 7})).json
    assert answered == {"answered": question["key"], "held": True}
    state = wait_for_answer(env, chat_id)
    assert [m["role"] for m in state["messages"]] == ["user", "assistant", "tool", "assistant"]
    text = state["messages"][2]["content"]
    raw = json.loads(text.split("Raw result: ", 1)[1])  # what the server received, as it reports it
    assert raw["action"] == "accept"
    assert raw["content"]["name"] == "Ada Lovelace" and raw["content"]["integer"] == 7
    assert raw["content"]["firstLine"] == "It was a dark and stormy night."  # left out: the field's default
    assert "- Name: Ada Lovelace" in text
    assert step(env, "pending", chat_id).json["questions"] == []
    [call] = step(env, "questions", chat_id).json["calls"]
    assert call["pending_questions"] == [] and call["waiting"] is False
    assert model.requests[1].tool_results[0]["content"] == text


def test_held_question_declined_from_another_process(worker, model, target):
    """MCP-QUEST-16: a decline recorded by another process reaches the server, which reports it."""
    env = worker
    model.add(tool_call(TOOL, {}, id="call_e2"), reply("Understood."))
    chat_id = start(env, target, 120)
    wait_for_question(env, chat_id)
    step(env, "answer-json", chat_id, "null")
    text = wait_for_answer(env, chat_id)["messages"][2]["content"]
    assert json.loads(text.split("Raw result: ", 1)[1]) == {"action": "decline"}
    assert "declined to provide" in text


def test_held_question_times_out(worker, model, target):
    """MCP-QUEST-16: nobody answers within question_timeout: declined, and the model's tool result says why."""
    env = worker
    model.add(tool_call(TOOL, {}, id="call_e3"), reply("No answer then."))
    chat_id = start(env, target, 2)
    text = wait_for_answer(env, chat_id)["messages"][2]["content"]
    assert text.startswith("[everything asked: 'Please provide inputs for the following fields:'; nobody "
                           "answered within 2 s, so the question was declined.]")
    assert json.loads(text.split("Raw result: ", 1)[1]) == {"action": "decline"}


def test_held_question_chat_cancelled_while_waiting(worker, model, target):
    """MCP-QUEST-16: cancelling the chat (its persisted flag, from another process) stops the held call long
    before question_timeout; the call gets its cancelled result and no model request follows."""
    env = worker
    model.add(tool_call(TOOL, {}, id="call_e4"), reply("never sent"))
    chat_id = start(env, target, 300)
    wait_for_question(env, chat_id)
    step(env, "cancel", chat_id)
    deadline = time.monotonic() + 60
    while True:
        state = step(env, "dump", chat_id).json
        if state["tool_messages"]:
            break
        assert time.monotonic() < deadline, Path(env["WORKER_LOG"]).read_text()
        time.sleep(0.3)
    # the cancelled result, not the decline note question_timeout (300 s) would have added: the wait stopped on
    # the cancel (the deadline above only keeps a hung worker from hanging the test)
    assert state["messages"][-1] == {"role": "tool", "content": "The call was cancelled before it finished.",
                                     "is_error": True}
    assert len(model.requests) == 1


SAMPLING_TOOL = "trigger-sampling-request"


def start_sampling(env: dict[str, str], target: str) -> str:
    return str(step(env, "sampling-chat", target, "120", "Ask the server to sample").json["chat"])


def test_held_sampling_request_approved_from_another_process(worker, model, target):
    """server-everything's sampling request, during a worker's call, waits on the ToolCall row as a sampling
    approval (kind "sampling", the request as sent); another process approves it; the worker's call runs it on
    the chat's model and the server reports the completion it received."""
    env = worker
    model.add(tool_call(SAMPLING_TOOL, {"prompt": "Name a colour", "maxTokens": 25}, id="call_s1"), reply("Teal."),
              reply("The server heard Teal."))
    chat_id = start_sampling(env, target)
    question = wait_for_question(env, chat_id)
    assert question["held"] is True and question["kind"] == "sampling" and question["tool_call_id"] == "call_s1"
    assert question["params"]["sampling"]["maxTokens"] == 25
    assert question["params"]["sampling"]["messages"][0]["content"]["text"].endswith("Name a colour")
    assert len(model.requests) == 1  # nothing sampled before the approval
    assert step(env, "answer-json", chat_id, "{}").json == {"answered": question["key"], "held": True}
    state = wait_for_answer(env, chat_id)
    assert state["messages"][-1]["content"] == "The server heard Teal."
    sampled = json.loads(state["messages"][2]["content"].split("LLM sampling result: ", 1)[1])
    assert sampled["content"] == {"type": "text", "text": "Teal."} and sampled["model"] == "gpt-test"
    assert model.requests[1].body["max_tokens"] == 25 and model.requests[1].tools == []


def test_held_sampling_request_declined_from_another_process(worker, model, target):
    """Declined from another process: the model is never asked for the completion; the server gets the refusal
    and its tool reports an error, which the chat's model reads."""
    env = worker
    model.add(tool_call(SAMPLING_TOOL, {"prompt": "Name a colour", "maxTokens": 25}, id="call_s2"),
              reply("It was refused."))
    chat_id = start_sampling(env, target)
    question = wait_for_question(env, chat_id)
    assert question["kind"] == "sampling"
    step(env, "answer-json", chat_id, "null")
    state = wait_for_answer(env, chat_id)
    assert state["messages"][-1]["content"] == "It was refused."
    assert "did not approve the sampling request" in state["messages"][2]["content"]
    assert len(model.requests) == 2  # the tool call's turn and the answer: no completion for the server
