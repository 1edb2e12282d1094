"""Resources and prompts in chats (MCP-RES-06, MCP-PROMPT-04): what the model receives.

Real parts: the library kit server over HTTP (both eras) and stdio, and the scripted model
through the official OpenAI and Anthropic SDKs; each test reads the JSON the model got.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import llm_mcp
from llm_mcp.testing.scripted_model import ScriptedModel, reply, tool_call

from llm_mcp_tests.support.encoding import b64
from llm_mcp_tests.support.servers import library

LIBRARY = "llm_mcp_tests.support.servers.library"
GUIDE_PART = "[resource guide (text/markdown)]\n" + library.GUIDE_TEXT
DIFF = "def add(a, b):\n    return a - b\n"
REVIEW_TURNS = [
    ("user", f"Please review this Ruby code:\n{DIFF}"),
    ("assistant", "I will review the Ruby code. What matters most to you?"),
    ("user", "Correctness first, then readability."),
    ("assistant", "Understood: correctness, then readability."),
]


@pytest.fixture(scope="module", params=["modern", "handshake"])
def server(request: pytest.FixtureRequest, mcp_test_server: Callable[..., Any]) -> Iterator[llm_mcp.MCP]:
    running = mcp_test_server(LIBRARY, transport="http", era=request.param)
    with running.mcp(timeout=20, name="library") as connected:
        yield connected


def resource(server: llm_mcp.MCP, name: str) -> llm_mcp.Resource:
    return next(r for r in server.resources if r.name == name)


# -- resources as attachments ------------------------------------------------------------------


def test_a_resource_is_an_attachment(server, chat_on, model: ScriptedModel) -> None:
    """MCP-RES-06: chat.ask("Summarize this", with_=resource) sends the text resource as text."""
    guide = server.refresh_resources()[0]
    chat = chat_on([reply("Borrow three, return in two weeks.")])
    assert chat.ask("Summarize this", with_=guide).content == "Borrow three, return in two weeks."
    assert model.requests[0].messages == [{"role": "user", "content": [
        {"type": "text", "text": "Summarize this"}, {"type": "text", "text": GUIDE_PART}]}]
    stored = chat.messages[0].attachments[0]
    assert (stored.kind, stored.uri, stored.name, stored.content) == ("resource", guide.uri, "guide",
                                                                      library.GUIDE_TEXT)


def test_files_and_resources_mixed_reach_openai_in_their_forms(server, chat_on, model: ScriptedModel,
                                                               tmp_path: Path) -> None:
    """MCP-RES-06: a list mixing a file and resources: text as text, an image as an image, a PDF as
    a file, audio as audio, other bytes as a line naming them."""
    notes = tmp_path / "notes.txt"
    notes.write_text("bring a pencil", encoding="utf-8")
    chat = chat_on([reply("seen")])
    chat.ask("Look", with_=[notes, *(resource(server, n) for n in ("logo", "report", "recording", "archive"))])
    parts = model.requests[0].messages[0]["content"]
    assert parts == [
        {"type": "text", "text": "Look"},
        {"type": "text", "text": "[resource notes.txt (text/plain)]\nbring a pencil"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(library.PNG_BYTES)}},
        {"type": "file", "file": {"filename": "report",
                                  "file_data": "data:application/pdf;base64," + b64(library.PDF_BYTES)}},
        {"type": "input_audio", "input_audio": {"data": b64(library.WAV_BYTES), "format": "wav"}},
        {"type": "text", "text": "[attachment not included: resource \"archive\" <file:///library/archive.bin> "
                                 f"(application/octet-stream) {len(library.ARCHIVE_BYTES)} bytes]"},
    ]


def test_resources_reach_anthropic_in_its_forms(server, chat_on, model: ScriptedModel) -> None:
    """MCP-RES-06: on Anthropic, an image resource is an image block, a PDF a document, text a text block."""
    chat = chat_on([reply("ok")], provider="anthropic")
    chat.ask("Read these", with_=[resource(server, "logo"), resource(server, "report"), resource(server, "guide")])
    content = model.requests[0].messages[0]["content"]
    assert content == [
        {"type": "text", "text": "Read these"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(library.PNG_BYTES)}},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                        "data": b64(library.PDF_BYTES)}, "title": "report"},
        {"type": "text", "text": GUIDE_PART},
    ]


def test_an_unknown_resource_fails_the_ask_before_anything_is_stored(server, chat_on, model) -> None:
    """MCP-RES-11: attaching a resource the server does not have raises its MCPError; nothing is stored."""
    chat = chat_on([reply("never")])
    gone = llm_mcp.Resource(server, {"uri": "library://gone", "name": "gone"})
    with pytest.raises(llm_mcp.MCPError) as caught:
        chat.ask("Read it", with_=gone)
    assert caught.value.code in (-32602, -32002) and chat.messages == [] and model.requests == []


# -- prompts in chats ------------------------------------------------------------------------


def test_ask_with_a_prompt_adds_every_turn_before_the_model_answers(server, chat_on, model) -> None:
    """MCP-PROMPT-04: chat.ask(prompt) appends all turns, assistant ones included, then the model
    answers (even though the prompt ends with an assistant turn)."""
    review = server.prompt("code_review", code=DIFF, language="Ruby")
    chat = chat_on([reply("It subtracts instead of adding.")])
    answer = chat.ask(review)
    assert answer.content == "It subtracts instead of adding."
    assert model.requests[0].messages == [{"role": role, "content": text} for role, text in REVIEW_TURNS]
    assert [(m.role, m.content) for m in chat.messages] == [*REVIEW_TURNS, ("assistant", answer.content)]


def test_prompt_turns_with_media_reach_the_model(server, chat_on, model) -> None:
    """MCP-PROMPT-04: a prompt's image and embedded resource go as attachments of their user turns;
    an assistant turn's link becomes a line naming it; with_ joins the last user turn."""
    chat = chat_on([reply("A red pixel.")])
    chat.ask(server.prompt("show_and_tell"), with_=resource(server, "logo"))
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(library.PNG_BYTES)}}
    assert model.requests[0].messages == [
        {"role": "user", "content": [image]},
        {"role": "user", "content": [{"type": "text", "text": "[resource file:///library/guide.md (text/markdown)]\n"
                                                              + library.GUIDE_TEXT}]},
        {"role": "assistant", "content": "[attachment not included: resource_link \"report\" "
                                         "<file:///library/report.pdf> (application/pdf)]"},
        {"role": "user", "content": [{"type": "text", "text": "What do you see?"}, image]},
    ]


def test_a_listed_prompt_is_fetched_when_asked(server, chat_on, model) -> None:
    """MCP-PROMPT-04: a listed prompt without required arguments is filled at ask()."""
    chat = chat_on([reply("Hello!")])
    chat.ask(server.refresh_prompts()[2])
    assert model.requests[0].messages == [{"role": "user", "content": "Hello, library!"}]


def test_tools_still_run_after_a_prompt(server, chat_on, model) -> None:
    """MCP-PROMPT-04: the turn a prompt starts goes on like any other (tool calls, then an answer)."""
    chat = chat_on([tool_call("read_log", {}, id="call_1"), reply("Logged.")]).with_mcp(server)
    assert chat.ask(server.prompt("code_review", code=DIFF, language="Ruby")).content == "Logged."
    assert len(model.requests) == 2 and model.requests[1].messages[-1]["role"] == "tool"
    assert isinstance(json.loads(model.requests[1].messages[-1]["content"]), list)


def test_prompt_turns_reach_anthropic_in_order(server, chat_on, model) -> None:
    """MCP-PROMPT-04: the same turns on the Anthropic Messages API."""
    chat = chat_on([reply("Noted.")], provider="anthropic")
    chat.ask(server.prompt("code_review", code=DIFF, language="Ruby"))
    assert model.requests[0].messages == [{"role": role, "content": [{"type": "text", "text": text}]}
                                          if role == "assistant" else {"role": role, "content": text}
                                          for role, text in REVIEW_TURNS]


def test_ask_refuses_other_objects(chat_on) -> None:
    """ask() takes text or a Prompt; anything else is a TypeError naming it."""
    with pytest.raises(TypeError, match="or an MCP Prompt"):
        chat_on().ask(42)  # type: ignore[arg-type]
