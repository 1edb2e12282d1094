"""Shared pieces of the chat tests: a scripted model, and chats that talk to it through the real SDKs."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

import llm_mcp
from llm_mcp.testing.scripted_model import ScriptedModel

MODEL = "gpt-test"


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    """A started scripted model with an empty script: tests ``model.add(...)`` their turns."""
    with ScriptedModel() as scripted:
        yield scripted


def make_chat(model: ScriptedModel, script: Sequence[Any] = (), *, provider: str = "openai",
              **options: Any) -> llm_mcp.Chat:
    """A chat on ``model`` through the real SDK of ``provider``, with ``script`` queued."""
    model.add(*script)
    base_url = model.openai_base_url if provider == "openai" else model.anthropic_base_url
    return llm_mcp.chat(MODEL, provider, base_url=base_url, api_key="test-key", **options)


@pytest.fixture
def chat_on(model: ScriptedModel) -> Callable[..., llm_mcp.Chat]:
    """``chat_on(script, provider="openai", **options)``: a chat on this test's scripted model."""
    def make(script: Sequence[Any] = (), **options: Any) -> llm_mcp.Chat:
        return make_chat(model, script, **options)
    return make


@pytest.fixture
def heard_outages() -> Iterator[list[tuple[str, str, int | None]]]:
    """The outages reported to ``llm_mcp.client.outages.listeners`` during the test."""
    from llm_mcp.client import outages

    events: list[tuple[str, str, int | None]] = []

    def listen(*event: Any) -> None:
        events.append(event)

    outages.listeners.append(listen)
    yield events
    outages.listeners.remove(listen)


def http_echo(url: str, **settings: Any) -> llm_mcp.MCP:
    """A server object named ``echo`` for the echo server at ``url`` (``settings`` override)."""
    return llm_mcp.mcp(url=url, **{"name": "echo", **settings})


def tool_result_text(result: dict[str, Any]) -> str:
    """A tool result's text as the model read it (the OpenAI format marks errors with "Error: ")."""
    return result["content"].removeprefix("Error: ") if result["is_error"] is None else result["content"]


def error_text(result: dict[str, Any]) -> str:
    """``tool_result_text`` of a result that is a tool error (``is_error`` None in OpenAI's format, or True)."""
    assert result["is_error"] in (None, True)
    return tool_result_text(result)


def answer_when_asked(chat: Any, answer: Callable[[llm_mcp.Question], Any], seconds: float = 30.0) -> Any:
    """Start a thread that waits (up to ``seconds``) for ``chat`` to show a pending question, then
    runs ``answer(question)`` on it, as a person's request would; ``thread.seen`` holds the question.
    Join the returned thread."""
    import threading
    import time

    def run() -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            questions = chat.pending_questions
            if questions:
                thread.seen.append(questions[0])
                answer(questions[0])
                return
            time.sleep(0.05)

    thread = threading.Thread(target=run, daemon=True)
    thread.seen = []  # type: ignore[attr-defined]
    thread.start()
    return thread
