"""Chat records asked with an MCP prompt or a resource (MCP-PROMPT-04, MCP-RES-06), on a real database."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

import llm_mcp
from llm_mcp.models import Chat as ChatRecord, Message as MessageRow
from llm_mcp.testing.scripted_model import reply

from llm_mcp_tests.support.records import record_on
from llm_mcp_tests.support.servers import library

pytestmark = [pytest.mark.db, pytest.mark.django_db(transaction=True)]

DIFF = "print(1 + 1)\n"


@pytest.fixture(scope="module")
def server(mcp_test_server: Callable[..., Any]) -> Iterator[llm_mcp.MCP]:
    running = mcp_test_server("llm_mcp_tests.support.servers.library", transport="http", era="modern")
    with running.mcp(timeout=20, name="library") as connected:
        yield connected


def test_a_record_stores_each_prompt_turn_as_a_row(server, model) -> None:
    """MCP-PROMPT-04: ChatRecord.ask(prompt) stores every turn (assistant ones too), then the answer."""
    record = record_on(model, reply("Looks fine."))
    answer = record.ask(server.prompt("code_review", code=DIFF, language="python"))
    assert answer.content == "Looks fine."
    assert list(MessageRow.objects.filter(chat=record).order_by("id").values_list("role", "content")) == [
        ("user", f"Please review this python code:\n{DIFF}"),
        ("assistant", "I will review the python code. What matters most to you?"),
        ("user", "Correctness first, then readability."),
        ("assistant", "Understood: correctness, then readability."),
        ("assistant", "Looks fine."),
    ]
    assert [m["role"] for m in model.requests[0].messages] == ["user", "assistant", "user", "assistant"]


def test_a_prompt_asked_twice_with_a_key_is_stored_once(server, model) -> None:
    """MCP-PROMPT-04: the idempotency key works for prompts (it goes on the first user turn)."""
    record = record_on(model, reply("Once."))
    prompt = server.prompt("code_review", code=DIFF, language="python")
    record.ask(prompt, key="review-1")
    fresh = ChatRecord.objects.get(pk=record.pk)
    fresh.provider_options = record.provider_options
    assert fresh.ask(prompt, key="review-1").content == "Once."
    assert MessageRow.objects.filter(chat=record).count() == 5 and len(model.requests) == 1
    other = server.prompt("code_review", code="other", language="python")
    with pytest.raises(ValueError, match="with another text"):
        fresh.ask(other, key="review-1")


def test_a_resource_attachment_is_stored_and_read_back(server, model) -> None:
    """MCP-RES-06: a resource attached to a record's message is kept in the row and reloaded as it was."""
    record = record_on(model, reply("A pixel."))
    logo = next(r for r in server.resources if r.name == "logo")
    record.ask("What is it?", with_=logo)
    loaded = ChatRecord.objects.get(pk=record.pk).messages[0].attachments[0]
    assert (loaded.kind, loaded.mime_type, loaded.uri, loaded.content) == (
        "image", "image/png", "file:///library/logo.png", library.PNG_BYTES)


def test_the_key_goes_on_the_first_user_turn_even_after_an_assistant_turn(server, model) -> None:
    """MCP-PROMPT-04: a prompt that opens with the assistant's turn still keys its user turn."""
    record = record_on(model, reply("The dragon read every book."))
    record.ask(server.prompt("story"), key="story-1")
    assert list(MessageRow.objects.filter(chat=record).order_by("id").values_list("role", "key")) == [
        ("assistant", None), ("user", "story-1"), ("assistant", None)]
    assert record.ask(server.prompt("story"), key="story-1").content == "The dragon read every book."
    assert len(model.requests) == 1
