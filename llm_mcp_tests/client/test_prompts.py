"""Prompts and completions (MCP-PROMPT), against the library kit server in both eras and transports.

The chats that use prompts and resources are in ``chat/test_resources_in_chats.py``; the npm
reference server's prompts in ``e2e/test_reference_servers.py``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import llm_mcp
from llm_mcp.client.prompt import PromptArgument

from llm_mcp_tests.support.scripted import result, server_of
from llm_mcp_tests.support.servers import library


LIBRARY = "llm_mcp_tests.support.servers.library"
COMBOS = [("stdio", "modern"), ("stdio", "handshake"), ("http", "modern"), ("http", "handshake")]
DIFF = "def add(a, b):\n    return a - b\n"


@pytest.fixture(scope="module", params=COMBOS, ids=[f"{t}-{e}" for t, e in COMBOS])
def server(request: pytest.FixtureRequest, mcp_test_server: Callable[..., Any]) -> Iterator[llm_mcp.MCP]:
    transport, era = request.param
    running = mcp_test_server(LIBRARY, transport=transport, era=era)
    with running.mcp(timeout=20, name="library") as connected:
        yield connected


def test_prompts_have_names_and_argument_names(server: llm_mcp.MCP) -> None:
    """MCP-PROMPT-01: every page of prompts/list, as Prompt objects with a name and the argument
    names; the full argument descriptions are there too."""
    assert "nextCursor" in server.client.request("prompts/list", {})
    prompts = server.refresh_prompts()
    assert all(isinstance(p, llm_mcp.Prompt) for p in prompts)
    assert [(p.name, p.arguments) for p in prompts] == [
        ("code_review", ["code", "language"]), ("show_and_tell", []), ("greeting", []), ("story", [])]
    review = prompts[0]
    assert (review.title, review.description) == ("Code review", "Review a piece of code.")
    assert review.argument_definitions == [
        llm_mcp.PromptArgument("code", None, "The code to review", True),
        llm_mcp.PromptArgument("language", "Language", "Its programming language", True),
    ]
    assert not review.filled


def test_prompt_sends_prompts_get_with_the_arguments(server: llm_mcp.MCP) -> None:
    """MCP-PROMPT-02: server.prompt(name, **arguments) sends prompts/get with them; the filled-in
    prompt is returned."""
    review = server.prompt("code_review", code=DIFF, language="Ruby")
    assert isinstance(review, llm_mcp.Prompt) and review.filled
    assert (review.name, review.values, review.description) == (
        "code_review", {"code": DIFF, "language": "Ruby"}, "Review a piece of code.")
    assert review.messages[0].content == f"Please review this Ruby code:\n{DIFF}"
    listed = server.prompts[0].fill(code="x = 1", language="python")
    assert listed.messages[0].content == "Please review this python code:\nx = 1"


def test_prompt_refusals(server: llm_mcp.MCP) -> None:
    """MCP-PROMPT-02: a missing required argument or an unknown prompt is the server's -32602;
    an argument that is not a string is refused before sending."""
    with pytest.raises(llm_mcp.MCPError) as caught:
        server.prompt("code_review", code=DIFF)
    assert caught.value.code == -32602
    with pytest.raises(llm_mcp.MCPError) as caught:
        server.prompt("no_such_prompt")
    assert caught.value.code == -32602
    with pytest.raises(TypeError, match="'code' must be a string"):
        server.prompt("code_review", code=42, language="python")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs code, language"):
        _ = server.refresh_prompts()[0].messages


def test_messages_are_the_turns_in_order(server: llm_mcp.MCP) -> None:
    """MCP-PROMPT-03: messages lists every turn with its role and content, assistant turns included;
    images and embedded resources are attachments, a link is never fetched."""
    review = server.prompt("code_review", code=DIFF, language="Ruby")
    assert [(m.role, m.content) for m in review.messages] == [
        ("user", f"Please review this Ruby code:\n{DIFF}"),
        ("assistant", "I will review the Ruby code. What matters most to you?"),
        ("user", "Correctness first, then readability."),
        ("assistant", "Understood: correctness, then readability."),
    ]
    image, embedded, link, question = server.prompt("show_and_tell").messages
    assert (image.role, image.content) == ("user", "")
    assert [(a.kind, a.mime_type, a.content) for a in image.attachments] == [("image", "image/png", library.PNG_BYTES)]
    assert [(a.kind, a.uri, a.content) for a in embedded.attachments] == [
        ("resource", "file:///library/guide.md", library.GUIDE_TEXT)]
    assert link.role == "assistant"
    assert [(a.kind, a.uri, a.content) for a in link.attachments] == [
        ("resource_link", "file:///library/report.pdf", None)]
    assert (question.role, question.content, question.attachments) == ("user", "What do you see?", [])
    assert base64.b64decode(image.raw["content"]["data"]) == library.PNG_BYTES


def test_a_listed_prompt_without_required_arguments_fetches_its_messages_once(server: llm_mcp.MCP) -> None:
    """MCP-PROMPT-03: a listed prompt that needs no argument reads its messages on first use."""
    greeting = server.refresh_prompts()[2]
    assert not greeting.filled
    assert [(m.role, m.content) for m in greeting.messages] == [("user", "Hello, library!")]
    assert greeting.filled


def test_prompt_suggest(server: llm_mcp.MCP) -> None:
    """MCP-PROMPT-05: suggest(argument=partial) sends completion/complete and returns the strings."""
    review = server.prompts[0]
    assert review.suggest(language="ru") == ["ruby", "rust"]
    assert review.suggest(language="") == library.LANGUAGES
    assert review.suggest(language="zz") == []


def test_suggest_refuses_bad_input(server: llm_mcp.MCP) -> None:
    """MCP-PROMPT-05: no keyword, an argument the prompt lacks, or a non-string value raise."""
    review = server.prompts[0]
    with pytest.raises(ValueError, match="takes the argument to complete"):
        review.suggest()
    with pytest.raises(ValueError, match="no argument 'langauge'"):
        review.suggest(langauge="ru")
    with pytest.raises(TypeError, match="must be a string"):
        review.suggest(language=3)  # type: ignore[arg-type]


def test_template_suggest_with_context(server: llm_mcp.MCP) -> None:
    """MCP-PROMPT-06 (and -05's context): a template variable is completed the same way; further
    keywords are sent as context.arguments."""
    files, books = server.resource_templates
    assert files.suggest(path="app/mo") == ["app/models/user.rb", "app/models/book.rb"]
    assert books.suggest(genre="f") == ["fantasy", "fiction"]
    assert books.suggest(title="", genre="science") == ["Cosmos", "The Selfish Gene"]
    assert books.suggest(title="the", genre="fantasy") == ["The Hobbit"]
    assert books.suggest(title="the") == ["The Hobbit", "The Selfish Gene"]  # no context: every genre


def test_suggestions_are_strings_and_at_most_100(scripted):
    """completion/complete answers at most 100 values (MCP "Completion": maximum 100 items per
    response): the first 100 strings of a longer answer are kept; values that are not strings are left out."""
    def complete(request):
        value = request["params"]["argument"]["value"]
        values = [f"v{i}" for i in range(500)] if value == "many" else ["ok", 5, None, {"x": 1}, "fine"]
        return result(request, {"completion": {"values": values, "hasMore": True}})
    prompts = [{"name": "p", "arguments": [{"name": "a"}]}]
    server = scripted(server_of({"prompts/list": lambda r: result(r, {"prompts": prompts}),
                                 "completion/complete": complete}))
    with llm_mcp.mcp(url=server.url) as client:
        prompt = client.prompts[0]
        assert prompt.suggest(a="many") == [f"v{i}" for i in range(100)]
        assert prompt.suggest(a="mixed") == ["ok", "fine"]


def test_a_prompt_listed_with_ill_typed_arguments_does_not_break_the_listing(scripted, caplog):
    """prompts/list entries whose ``arguments`` is not a list (a number, an object) are listed with
    no arguments, and argument entries that are not objects with a string name are left out:
    the other prompts are still there, with no stray TypeError."""
    prompts = [{"name": "number", "arguments": 5}, {"name": "object", "arguments": {"name": "a"}},
               {"name": "mixed", "arguments": [{"name": "a", "required": True}, "x", {"name": 3}, None]}]
    server = scripted(server_of({"prompts/list": lambda r: result(r, {"prompts": prompts})}))
    with llm_mcp.mcp(url=server.url) as client:
        assert [(p.name, p.arguments) for p in client.prompts] == [("number", []), ("object", []), ("mixed", ["a"])]
        assert client.prompts[2].argument_definitions == [PromptArgument("a", None, None, True)]


def test_arguments_and_variables_named_self_are_keywords_like_any_other(scripted):
    """A prompt argument or template variable named ``self`` (any name is valid MCP) can be given
    to ``fill``, ``suggest``, ``expand`` and ``read``."""
    prompts = [{"name": "p", "arguments": [{"name": "self"}, {"name": "other"}]}]
    templates = [{"uriTemplate": "x:/{self}", "name": "t"}]

    def get(request):
        text = json.dumps(request["params"]["arguments"], sort_keys=True)
        return result(request, {"messages": [{"role": "user", "content": {"type": "text", "text": text}}]})

    def complete(request):
        params = request["params"]
        return result(request, {"completion": {"values": [params["argument"]["name"] + "=" + params["argument"]["value"]]}})

    def read(request):
        return result(request, {"contents": [{"uri": request["params"]["uri"], "text": "read"}]})

    server = scripted(server_of({"prompts/list": lambda r: result(r, {"prompts": prompts}), "prompts/get": get,
                                 "completion/complete": complete, "resources/read": read,
                                 "resources/templates/list": lambda r: result(r, {"resourceTemplates": templates})}))
    with llm_mcp.mcp(url=server.url) as client:
        prompt = client.prompts[0]
        assert prompt.fill(self="me", other="you").messages[0].content == '{"other": "you", "self": "me"}'
        assert prompt.suggest(self="m", other="you") == ["self=m"]
        template = client.resource_templates[0]
        assert template.expand(self="a b") == "x:/a%20b"
        assert template.read(self="me").uri == "x:/me"
        assert template.suggest(self="m") == ["self=m"]
