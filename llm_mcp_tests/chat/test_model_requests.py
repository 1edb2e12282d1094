"""What the model is sent: tool names made safe and mapped back (case C11), schemas filled minimally
(C12), tools visible only to apps left out, tools providers would refuse left out, instructions,
streaming, attachments, tool choice (forced for the first request of a turn), tool search, long results
cut (search results not), parameters the chat sets, the turn limit.

Real chats: the scripted model through the official SDKs, the echo server over Streamable HTTP, kit
servers where a shape is needed.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

import llm_mcp
from llm_mcp.testing.scripted_model import reply, tool_call, turn

from llm_mcp_tests.support.chats import http_echo
from llm_mcp_tests.support.servers.echo_server import FAIL_TEXT


def test_case_c11_names_made_safe_and_mapped_back(chat_on, model, echo_http_url, raw_http):
    """Case C11: `files/read` reaches the model as a safe name; the server gets the original name."""
    chat = chat_on([tool_call("files_read", {"path": "a.txt"}), reply("read")])
    chat.with_mcp(http_echo(echo_http_url))
    chat.ask("read a.txt")
    assert "files_read" in model.requests[0].tool_names
    assert all(len(n) <= 64 and n.replace("_", "a").replace("-", "a").isalnum() for n in model.requests[0].tool_names)
    assert model.requests[1].tool_results[0]["content"] == "contents of a.txt"


def test_case_c11_long_and_clashing_names_stay_unique():
    """Case C11: a 90-character name and names that only differ in unsafe characters."""
    from llm_mcp.chat.schemas import wire_name

    long = "x" * 90
    safe = wire_name(long)
    assert len(safe) == 64 and safe == wire_name(long)
    first = wire_name("db.query")
    second = wire_name("db/query", {first})
    assert first == "db_query" and second != first and second.startswith("db_query_") and len(second) <= 64


def test_case_c12_schemas_filled_minimally():
    """Case C12: array without items and object without properties get them; nothing else changes."""
    from llm_mcp.chat.schemas import fill_schema

    schema = {"type": "object", "properties": {"tags": {"type": "array", "description": "d"}}, "required": ["tags"]}
    assert fill_schema(schema) == {"type": "object", "required": ["tags"],
                                   "properties": {"tags": {"type": "array", "description": "d", "items": {}}}}
    assert fill_schema({"type": "object"}) == {"type": "object", "properties": {}}
    nested = {"type": "object", "properties": {"m": {"anyOf": [{"type": "object"}, {"type": "string"}]}}}
    assert fill_schema(nested)["properties"]["m"]["anyOf"] == [{"type": "object", "properties": {}},
                                                               {"type": "string"}]
    assert schema == {"type": "object", "properties": {"tags": {"type": "array", "description": "d"}},
                      "required": ["tags"]}  # the input is not changed


def test_tool_visible_only_to_apps_is_never_offered(chat_on, model, mcp_test_server):
    """Tools whose MCP App visibility leaves out "model" are not offered (MCP-TOOL-08 in chats)."""
    running = mcp_test_server("llm_mcp_tests.support.servers.seed_tools", era="modern")
    server = llm_mcp.mcp(url=running.url, name="seed")
    assert server.tool("app_only").visibility == ["app"]
    assert server.tool("app_widget").visibility == ["model", "app"]
    chat = chat_on([reply("ok")]).with_mcp(server)
    chat.ask("hi")
    assert "app_only" not in model.requests[0].tool_names and "app_widget" in model.requests[0].tool_names
    assert server.app_only().text == "app only"  # still callable from Python
    server.close()


def test_instructions_and_streaming(chat_on, model):
    """with_instructions reaches the model as system text; stream receives the text as it comes."""
    chunks: list[str] = []
    chat = chat_on([reply("Hello there, streaming world")]).with_instructions("Be brief.")
    answer = chat.ask("hi", stream=chunks.append)
    assert answer.content == "Hello there, streaming world" and "".join(chunks) == answer.content
    assert len(chunks) > 1 and model.requests[0].stream and model.requests[0].system == "Be brief."


def test_attachments_from_a_path(chat_on, model, tmp_path: Path):
    """ask(with_=path) sends the file in the provider's form."""
    png = tmp_path / "pixel.png"
    from llm_mcp_tests.support.servers.echo_server import PNG_BYTES

    png.write_bytes(PNG_BYTES)
    chat = chat_on([reply("a pixel")])
    chat.ask("what is this?", with_=png)
    assert chat.messages[0].attachments[0].mime_type == "image/png"
    parts = model.requests[0].messages[-1]["content"]
    assert any(p.get("type") == "image_url" for p in parts)


def test_a_path_that_never_ends_is_read_only_up_to_the_attachment_limit(chat_on, model, tmp_path: Path):
    """ask(with_="/dev/zero"), or a pipe: the file was read to its end (never, here) before the 5 MiB
    limit dropped its bytes. Now at most MAX_ATTACHMENT_BYTES + 1 are read and the model is told."""
    import os
    import threading

    from llm_mcp.chat.messages import MAX_ATTACHMENT_BYTES

    fifo = tmp_path / "stream.bin"
    os.mkfifo(fifo)
    finish = threading.Event()

    def write() -> None:
        try:
            with open(fifo, "wb") as out:
                out.write(b"\0" * (MAX_ATTACHMENT_BYTES + 4096))
                out.flush()
                finish.wait(30)  # the stream stays open: no end of file until then
        except BrokenPipeError:  # the reader stopped reading: what a bounded read does
            pass

    threading.Thread(target=write, daemon=True).start()
    chat = chat_on([reply("too big")])
    asked = threading.Thread(target=chat.ask, args=("what is this?",), kwargs={"with_": fifo}, daemon=True)
    asked.start()
    asked.join(20)
    finish.set()
    assert not asked.is_alive(), "ask() waited for the end of an endless file"
    [attachment] = chat.messages[0].attachments
    assert attachment.content is None and attachment.raw["dropped"] == "too large"
    texts = [part.get("text") for part in model.requests[0].messages[-1]["content"]]
    assert texts == ["what is this?", '[attachment not included: resource "stream.bin" (application/octet-stream)]']


def test_anthropic_chat_runs_tools_too(chat_on, model, echo_http_url):
    """The same chat on the Anthropic Messages API: tool results go back as tool_result blocks."""
    chat = chat_on([tool_call("fail", {}), reply("it failed")], provider="anthropic")
    chat.with_mcp(http_echo(echo_http_url))
    assert chat.ask("try").content == "it failed"
    result = model.requests[1].tool_results[0]
    assert result["is_error"] is True and result["content"] == FAIL_TEXT


def test_tool_choice_names_a_tool_or_raises(chat_on, model, echo_http_url):
    """A choice naming an offered tool is sent; one naming an unknown tool raises InvalidToolChoiceError."""
    chat = chat_on([tool_call("echo", {"message": "x"}), reply("ok")]).with_mcp(http_echo(echo_http_url))
    chat.with_tools(choice="echo")
    chat.ask("go")
    assert model.requests[0].tool_choice == {"type": "function", "function": {"name": "echo"}}
    chat = chat_on().with_mcp(http_echo(echo_http_url)).with_tools(choice="nope")
    with pytest.raises(llm_mcp.InvalidToolChoiceError, match="'nope'"):
        chat.ask("go")


def test_choice_of_a_down_servers_tool_raises(chat_on, raw_http):
    """MCP-DOWN-16, MCP-DOWN-17: a choice naming a tool of a down server, or "required" with no tools left."""
    down = llm_mcp.mcp(url=raw_http.url("err500"), name="down")
    with pytest.raises(llm_mcp.InvalidToolChoiceError, match="'echo'.*down"):
        chat_on().with_mcp(down).with_tools(choice="echo").ask("go")
    with pytest.raises(llm_mcp.InvalidToolChoiceError, match="required"):
        chat_on().with_mcp(llm_mcp.mcp(url=raw_http.url("err500"), name="down")).with_tools(
            choice="required").ask("go")


LONG_NAME = "lookup_" + "x" * 83  # 90 characters


def _odd_server() -> Any:
    from llm_mcp.testing import Server, Tool

    def named(tool_name: str, schema: dict[str, Any]) -> type:
        class Odd(Tool):
            name = tool_name
            description = f"The tool {tool_name}"
            input_schema = schema

            def call(self) -> Any:
                return f"{self.name} got {json.dumps(self.arguments, sort_keys=True)}"
        return Odd

    return Server("odd", tools=[
        named("db.query", {"type": "object", "properties": {"tags": {"type": "array"}}}),
        named("db/query", {"type": "object"}),
        named(LONG_NAME, {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}),
    ])


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_cases_c11_c12_with_a_real_server(chat_on, model, provider):
    """Cases C11 and C12 end to end: safe unique names, schemas filled minimally, calls mapped back."""
    from llm_mcp.chat.schemas import wire_name
    from llm_mcp.testing import running_server

    with running_server(_odd_server()) as running:
        server = llm_mcp.mcp(url=running.url, name="odd")
        first = wire_name("db.query")
        second = wire_name("db/query", {first})
        long = wire_name(LONG_NAME, {first, second})
        chat = chat_on([turn(tool_calls=[tool_call(first, {"tags": ["a"]}), tool_call(second, {}),
                                         tool_call(long, {"q": "z"})]), reply("ok")], provider=provider)
        chat.with_mcp(server).ask("query")
        sent = {t["name"]: t["parameters"] for t in model.requests[0].tools}
        assert list(sent) == [first, second, long]
        assert all(len(name) <= 64 for name in sent) and len({first, second, long}) == 3
        assert sent[first] == {"type": "object", "properties": {"tags": {"type": "array", "items": {}}}}
        assert sent[second] == {"type": "object", "properties": {}}
        assert sent[long] == {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
        results = [r["content"] for r in model.requests[1].tool_results]
        assert results == ['db.query got {"tags": ["a"]}', "db/query got {}", f'{LONG_NAME} got {{"q": "z"}}']
        server.close()


def test_turn_limit_counts_model_requests_and_keeps_history_valid(chat_on, model):
    def ping() -> str:
        return "pong"

    chat = chat_on([tool_call("ping", {})] * 4 + [reply("finally")], max_steps=3).with_tools(ping)
    with pytest.raises(llm_mcp.TurnLimitError, match="3 times"):
        chat.ask("go")
    assert len(model.requests) == 3
    assert chat.messages[-1].role == "tool"  # every call the model asked for has its result
    model.add()  # the script still holds a tool call and the final reply
    chat.max_steps = 10
    assert chat.complete().content == "finally"


def test_a_forced_choice_applies_to_the_first_request_of_a_turn(chat_on, model, echo_http_url):
    chat = chat_on([tool_call("echo", {"message": "x"}), reply("done"), reply("second turn")])
    chat.with_mcp(http_echo(echo_http_url)).with_tools(choice="echo")
    chat.ask("go")
    chat.ask("again")
    assert [r.tool_choice for r in model.requests] == [{"type": "function", "function": {"name": "echo"}}, None,
                                                       {"type": "function", "function": {"name": "echo"}}]


def test_tools_providers_would_refuse_are_left_out(chat_on, model, caplog):
    from llm_mcp.testing import Server, Tool, running_server

    class Good(Tool):
        name = "good"

        def call(self) -> str:
            return "fine"

    with running_server(Server("odd", tools=[Good])) as running:
        server = llm_mcp.mcp(url=running.url, name="odd")
        server.tools
        for bad in ({"name": "arr", "inputSchema": {"type": "array"}},
                    {"name": "props", "inputSchema": {"type": "object", "properties": ["a"]}},
                    {"name": "req", "inputSchema": {"type": "object", "required": "a"}}):
            server.catalog.listed_tools.append(llm_mcp.Tool(server, bad))
        chat = chat_on([reply("ok")]).with_mcp(server)
        with caplog.at_level(logging.WARNING, logger="llm_mcp.chat"):
            chat.ask("hi")
        assert model.requests[0].tool_names == ["good"]
        assert {"arr", "props", "req"} <= {r.getMessage().split("'")[1] for r in caplog.records}
        server.close()


def test_tool_search_still_works_when_its_name_is_taken(chat_on, model, echo_http_url):
    def search_tools(query: str) -> str:
        return "my own search"

    chat = chat_on().with_mcp(http_echo(echo_http_url, defer=["add"])).with_tools(search_tools)
    assert [t.name for t in chat.tools].count("search_tools") == 2  # the user's, and the built-in one
    from llm_mcp.chat.schemas import wire_name

    renamed = wire_name("search_tools", {"search_tools"})
    model.add(tool_call(renamed, {"query": "add integers"}), tool_call("add", {"a": 1, "b": 1}), reply("2"))
    chat.ask("add")
    assert "add" in model.requests[1].tool_names
    assert model.requests[2].tool_results[-1]["content"] == '{"sum": 2}'


def test_long_results_are_cut_for_the_model(chat_on, model):
    def big() -> str:
        return "x" * 500

    chat = chat_on([tool_call("big", {}), reply("ok")], max_result_chars=100).with_tools(big)
    chat.ask("go")
    content = model.requests[1].tool_results[0]["content"]
    assert content.startswith("x" * 100) and content.endswith("[... 400 more characters cut: the result was too long]")


def test_search_results_are_not_cut(chat_on, model, echo_http_url):
    chat = chat_on([tool_call("search_tools", {"query": "add integers return message image"}),
                    reply("ok")], max_result_chars=50).with_mcp(http_echo(echo_http_url, defer=True))
    chat.ask("find")
    assert {"add", "echo", "image"} <= set(model.requests[1].tool_names)


def test_params_the_chat_sets_are_refused():
    with pytest.raises(ValueError, match="stream"):
        llm_mcp.chat("m", "openai", api_key="k", params={"stream": True})
    with pytest.raises(ValueError, match="model"):
        llm_mcp.chat("m", "openai", api_key="k", params={"model": "other"})
