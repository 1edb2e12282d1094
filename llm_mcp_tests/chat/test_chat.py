"""Chats with MCP servers: connecting, collecting tools, approvals, errors, concurrency, cancel, agents.

Every test drives a real chat: the scripted model over loopback HTTP through the official
SDK, and real MCP test servers (the echo server over stdio and Streamable HTTP, the raw
HTTP server for failures).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

import llm_mcp
from llm_mcp.chat import ChatTool, Message
from llm_mcp.chat.chat import DECLINED
from llm_mcp.testing.scripted_model import reply, tool_call, turn

from llm_mcp_tests.support.chats import make_chat
from llm_mcp_tests.support.processes import echo_command
from llm_mcp_tests.support.servers.echo_server import FAIL_TEXT


class Echo(llm_mcp.MCP):
    command = echo_command()


def _error_text(result: dict[str, Any]) -> str:
    """A tool error's text as the model read it (the OpenAI format marks errors with "Error: ")."""
    assert result["is_error"] in (None, True)
    return result["content"].removeprefix("Error: ") if result["is_error"] is None else result["content"]


def _http_echo(url: str, **settings: Any) -> llm_mcp.MCP:
    return llm_mcp.mcp(url=url, **{"name": "echo", **settings})


# -- connecting servers ---------------------------------------------------------------------------


def test_with_mcp_mixes_instances_and_classes_and_chains(chat_on, model, echo_http_url):
    """MCP-CHAT-01: instances and classes together; the model's call reaches the server."""
    files = llm_mcp.mcp(url=echo_http_url, name="files", prefix="files")
    chat = chat_on([tool_call("echo", {"message": "from the model"}), reply("done")])
    assert chat.with_mcp(files, Echo) is chat
    answer = chat.ask("echo something")
    assert answer.content == "done"
    tool_message = chat.messages[2]
    assert (tool_message.role, tool_message.content, tool_message.is_error) == ("tool", "from the model", False)
    assert {"echo", "files_echo"} <= set(model.requests[0].tool_names)
    chat.with_mcp(None)


def test_building_a_chat_contacts_nothing(chat_on, tmp_path):
    """MCP-CHAT-02: with_mcp starts no process; the first contact is when the chat needs tools."""
    marker = tmp_path / "started"

    class Recorded(llm_mcp.MCP):
        name = "recorded"

        def command(self):
            marker.write_text("started")
            return echo_command()

    chat = chat_on([reply("hi")]).with_mcp(Recorded)
    server = chat.mcp.recorded
    assert not marker.exists() and server._client is None
    assert "echo" in [t.name for t in chat.tools]
    assert marker.read_text() == "started"
    chat.with_mcp(None)


def test_servers_are_read_by_name(chat_on, echo_http_url):
    """MCP-CHAT-03: chat.mcp.name and chat.mcp["name"]; a class shows as the instance the chat built."""
    files = _http_echo(echo_http_url, name="files")
    chat = chat_on().with_mcp(files, Echo)
    assert chat.mcp.files is files and chat.mcp["files"] is files
    assert isinstance(chat.mcp.echo, Echo) and chat.mcp["echo"] is chat.mcp.echo


def test_disconnecting_closes_only_what_the_chat_built(chat_on):
    """MCP-CHAT-04, MCP-CHAT-05, MCP-CHAT-07: with_mcp(None) disconnects all; servers the chat built
    from a class are closed (their process ends), instances passed in stay usable."""
    mine = llm_mcp.mcp(command=echo_command(), name="mine", prefix="mine")
    chat = chat_on().with_mcp(mine, Echo)
    built = chat.mcp.echo
    chat.tools  # both contacted: two processes run
    assert built.client.transport.running and mine.client.transport.running
    chat.with_mcp(None)
    assert len(chat.mcp) == 0
    assert not built.client.transport.running
    assert mine.client.transport.running
    assert mine.call("echo", message="still here").text == "still here"
    mine.close()


def test_a_server_under_a_taken_name_replaces_and_closes_the_old_one(chat_on):
    """MCP-CHAT-06: connecting another server under the same name replaces the old one and closes it."""
    chat = chat_on().with_mcp(Echo)
    old = chat.mcp.echo
    chat.tools
    assert old.client.transport.running
    newer = llm_mcp.mcp(command=echo_command(), name="echo")
    chat.with_mcp(newer)
    assert chat.mcp.echo is newer and not old.client.transport.running
    newer.close()


def test_two_tools_with_one_name_raise_naming_both_sources(chat_on, echo_http_url):
    """MCP-CHAT-08: the clash is found when the chat collects its tools, from servers or with_tools."""
    chat = chat_on().with_mcp(_http_echo(echo_http_url, name="one"), _http_echo(echo_http_url, name="two"))
    with pytest.raises(ValueError) as raised:
        chat.tools
    assert "'echo'" in str(raised.value) and "'one'" in str(raised.value) and "'two'" in str(raised.value)

    def echo(message: str) -> str:
        return message

    chat = chat_on().with_mcp(_http_echo(echo_http_url, name="one")).with_tools(echo)
    with pytest.raises(ValueError, match="with_tools"):
        chat.tools


def test_defer_true_hides_tools_until_the_model_searches(chat_on, model, echo_http_url):
    """MCP-CHAT-09, MCP-DEFER-02: with_mcp(defer=True) defers every tool; the search tool finds them."""
    chat = chat_on([tool_call("search_tools", {"query": "echo message unchanged"}),
                    tool_call("echo", {"message": "found it"}), reply("ok")])
    chat.with_mcp(_http_echo(echo_http_url), defer=True)
    chat.ask("echo please")
    first, second, third = model.requests
    assert first.tool_names == ["search_tools"]
    found = json.loads(second.tool_results[0]["content"])["tools"]
    assert found[0]["name"] == "echo" and found[0]["description"] == "Return the message unchanged."
    assert "echo" in second.tool_names and "add" not in second.tool_names
    assert third.tool_results[1]["content"] == "found it"


def test_mcp_calls_and_errors_appear_in_messages_like_native_ones(chat_on, echo_http_url):
    """MCP-CHAT-10, MCP-PERSIST-03 (in-memory part): calls, results and tool errors are messages."""

    def native(x: int) -> int:
        return x * 2

    chat = chat_on([turn(tool_calls=[tool_call("echo", {"message": "m"}), tool_call("fail", {}),
                                     tool_call("native", {"x": 21})]), reply("all done")])
    chat.with_mcp(_http_echo(echo_http_url)).with_tools(native)
    chat.ask("go")
    roles = [m.role for m in chat.messages]
    assert roles == ["user", "assistant", "tool", "tool", "tool", "assistant"]
    calls = chat.messages[1].tool_calls
    assert [(c.name, c.arguments) for c in calls] == [("echo", {"message": "m"}), ("fail", {}), ("native", {"x": 21})]
    results = {m.tool_call_id: m for m in chat.messages if m.role == "tool"}
    assert results[calls[0].id].content == "m" and not results[calls[0].id].is_error
    assert results[calls[1].id].is_error and results[calls[2].id].content == "42"
    assert calls[0].mcp_result["content"] == [{"type": "text", "text": "m"}]


def test_messages_round_trip_as_plain_data(chat_on, echo_http_url):
    """Messages and tool calls convert to JSON-friendly dicts and back, attachments included."""
    chat = chat_on([tool_call("image", {}), reply("a pixel")]).with_mcp(_http_echo(echo_http_url))
    chat.ask("show me")
    for message in chat.messages:
        data = json.loads(json.dumps(message.to_dict()))
        copy = Message.from_dict(data)
        assert copy.to_dict() == message.to_dict()
    image = chat.messages[2].attachments[0]
    assert image.kind == "image" and image.mime_type == "image/png" and image.content.startswith(b"\x89PNG")


# -- what the model is sent ------------------------------------------------------------------------


def test_case_c11_names_made_safe_and_mapped_back(chat_on, model, echo_http_url, raw_http):
    """Case C11: `files/read` reaches the model as a safe name; the server gets the original name."""
    chat = chat_on([tool_call("files_read", {"path": "a.txt"}), reply("read")])
    chat.with_mcp(_http_echo(echo_http_url))
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


def test_anthropic_chat_runs_tools_too(chat_on, model, echo_http_url):
    """The same chat on the Anthropic Messages API: tool results go back as tool_result blocks."""
    chat = chat_on([tool_call("fail", {}), reply("it failed")], provider="anthropic")
    chat.with_mcp(_http_echo(echo_http_url))
    assert chat.ask("try").content == "it failed"
    result = model.requests[1].tool_results[0]
    assert result["is_error"] is True and result["content"] == FAIL_TEXT


# -- tool choice -----------------------------------------------------------------------------------


def test_tool_choice_names_a_tool_or_raises(chat_on, model, echo_http_url):
    """A choice naming an offered tool is sent; one naming an unknown tool raises InvalidToolChoiceError."""
    chat = chat_on([tool_call("echo", {"message": "x"}), reply("ok")]).with_mcp(_http_echo(echo_http_url))
    chat.with_tools(choice="echo")
    chat.ask("go")
    assert model.requests[0].tool_choice == {"type": "function", "function": {"name": "echo"}}
    chat = chat_on().with_mcp(_http_echo(echo_http_url)).with_tools(choice="nope")
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


# -- approvals -------------------------------------------------------------------------------------


def test_approval_pauses_and_resumes(chat_on, model, echo_http_url):
    """MCP-APPROVAL-01: a call needing approval pauses the turn; approve() + complete() runs it."""
    server = _http_echo(echo_http_url, requires_approval=["add"])
    chat = chat_on([tool_call("add", {"a": 2, "b": 3}), reply("5")]).with_mcp(server)
    waiting = chat.ask("add 2 and 3")
    assert chat.waiting and waiting.tool_calls[0].approval == "pending"
    assert len(model.requests) == 1
    assert chat.complete() is waiting and chat.waiting and len(model.requests) == 1  # nothing decided yet
    [call] = chat.pending_approvals
    call.approve()
    assert chat.complete().content == "5"
    assert not chat.waiting and model.requests[1].tool_results[0]["content"] == '{"sum": 5}'


def test_declined_call_is_reported_to_the_model(chat_on, model, echo_http_url):
    """A declined call does not run; the model is told it was declined, and the turn goes on."""
    chat = chat_on([tool_call("echo", {"message": "x"}), reply("understood")])
    chat.with_mcp(_http_echo(echo_http_url, requires_approval=True))
    chat.ask("echo x")
    chat.pending_approvals[0].decline()
    assert chat.complete().content == "understood"
    assert model.requests[1].tool_results[0]["content"] == DECLINED
    with pytest.raises(ValueError, match="not waiting for approval"):
        chat.messages[1].tool_calls[0].approve()


def test_approval_decided_in_another_chat_object_over_the_same_store(model, echo_http_url):
    """Decisions are data: a second Chat over the same store (another process) resumes the turn."""
    server = _http_echo(echo_http_url, requires_approval=True)
    first = make_chat(model, [tool_call("echo", {"message": "later"}), reply("done")]).with_mcp(server)
    first.ask("echo later")
    stored = [Message.from_dict(m.to_dict()) for m in first.messages]  # what a database would hold
    from llm_mcp.chat import MemoryStore

    second = make_chat(model, store=MemoryStore(stored)).with_mcp(_http_echo(echo_http_url,
                                                                                requires_approval=True))
    assert second.waiting
    second.pending_approvals[0].approve()
    assert second.complete().content == "done"
    assert model.requests[1].tool_results[0]["content"] == "later"


def test_python_tool_can_require_approval(chat_on):
    class Delete(ChatTool):
        description = "Delete everything"
        requires_approval = True
        ran = False

        def execute(self) -> str:
            type(self).ran = True
            return "deleted"

    chat = chat_on([tool_call("delete", {}), reply("ok")]).with_tools(Delete)
    chat.ask("delete")
    assert chat.waiting and not Delete.ran


# -- errors go back to the model ------------------------------------------------------------------


def test_case_c14_tool_error_reaches_the_model_and_the_turn_goes_on(chat_on, model, echo_http_url):
    """Case C14, MCP-WRAP-03 (without wrap): isError results reach the model as errors."""
    chat = chat_on([tool_call("fail", {}), reply("sorry")]).with_mcp(_http_echo(echo_http_url))
    assert chat.ask("try").content == "sorry"
    assert chat.messages[2].is_error and chat.messages[2].content == FAIL_TEXT
    assert _error_text(model.requests[1].tool_results[0]) == FAIL_TEXT


def test_case_c15_timeout_still_records_a_result(chat_on, model):
    """Case C15: a call that times out gets an error result; the next request is valid."""
    server = llm_mcp.mcp(command=echo_command(), name="echo", timeout=1)
    chat = chat_on([tool_call("sleep", {"seconds": 30}), reply("too slow")]).with_mcp(server)
    assert chat.ask("sleep").content == "too slow"
    result = {"content": _error_text(model.requests[1].tool_results[0])}
    assert "did not answer tools/call within 1 s" in result["content"]
    assert "may have partly run" in result["content"]  # sleep is not read-only
    assert [m.role for m in chat.messages] == ["user", "assistant", "tool", "assistant"]
    server.close()


@pytest.mark.parametrize("case, expected", [
    ("err500_call", "HTTP 500"),
    ("rate429_call", "429"),
])
def test_server_failures_become_tool_errors(chat_on, model, raw_http, case, expected):
    """MCP-TOOLERR-01, MCP-DOWN-10: 5xx and 429 on tools/call give the model a tool error naming the server."""
    server = llm_mcp.mcp(url=raw_http.url(case, era="modern"), name="raw")
    chat = chat_on([tool_call("echo", {"message": "x"}), reply("failed")]).with_mcp(server)
    assert chat.ask("go").content == "failed"
    text = _error_text(model.requests[1].tool_results[0])
    assert text.startswith("The MCP server 'raw' failed to run echo:") and expected in text
    assert ("may have partly run" in text) == (case == "err500_call")


def test_json_rpc_error_becomes_a_tool_error(chat_on, model, echo_http_url):
    """MCP-TOOLERR-01: a JSON-RPC error answer (unknown tool) is a tool error; the turn goes on."""
    server = _http_echo(echo_http_url)
    ghost = llm_mcp.Tool(server, {"name": "ghost"})
    chat = chat_on([tool_call("ghost", {}), reply("no ghost")]).with_tools(ghost)
    assert chat.ask("boo").content == "no ghost"
    text = model.requests[1].tool_results[0]["content"]
    assert "failed to run ghost" in text and "Unknown tool: ghost" in text


def test_broken_stream_says_the_call_may_have_partly_run(chat_on, model, raw_http):
    """MCP-DOWN-11: a call that broke off part-way, on a tool with effects, warns the model."""
    server = llm_mcp.mcp(url=raw_http.url("broken_stream3_call", era="modern"), name="raw")
    chat = chat_on([tool_call("echo", {"message": "x"}), reply("hmm")]).with_mcp(server)
    chat.ask("go")
    text = model.requests[1].tool_results[0]["content"]
    assert "may have partly run" in text


@pytest.mark.parametrize("case, error", [
    ("auth401_call", llm_mcp.UnauthorizedError),
    ("auth403_call", llm_mcp.InsufficientScopeError),
])
def test_refusals_raise_out_of_chats(chat_on, raw_http, case, error):
    """MCP-DOWN-20: 401 and 403 raise out of the chat; they are not tool errors."""
    server = llm_mcp.mcp(url=raw_http.url(case, era="modern"), name="raw")
    chat = chat_on([tool_call("echo", {"message": "x"}), reply("never")]).with_mcp(server)
    with pytest.raises(error):
        chat.ask("go")


def test_direct_calls_still_raise(raw_http):
    """MCP-DOWN-19: calling the server directly raises the underlying error."""
    server = llm_mcp.mcp(url=raw_http.url("err500_call", era="modern"), name="raw")
    with pytest.raises(llm_mcp.ConnectionError) as raised:
        server.echo(message="x")
    assert raised.value.status == 500


def test_python_tool_exception_becomes_a_tool_error(chat_on, model):
    def divide(a: int, b: int) -> float:
        return a / b

    chat = chat_on([tool_call("divide", {"a": 1, "b": 0}), reply("cannot")]).with_tools(divide)
    assert chat.ask("1/0").content == "cannot"
    assert _error_text(model.requests[1].tool_results[0]) == "ZeroDivisionError: division by zero"


def test_unknown_tool_and_bad_arguments_get_results(chat_on, model, echo_http_url):
    """Every tool call gets a result: an unknown name and arguments that are not JSON included."""
    chat = chat_on([turn(tool_calls=[tool_call("nope", {}), tool_call("echo", {"message": "ok"})]),
                    reply("done")]).with_mcp(_http_echo(echo_http_url))
    chat.ask("go")
    results = model.requests[1].tool_results
    assert _error_text(results[0]) == "There is no tool named 'nope'." and results[1]["content"] == "ok"


def test_down_server_is_left_out_with_a_line_for_the_model(chat_on, model, echo_http_url, raw_http, caplog):
    """MCP-DOWN-01, MCP-DOWN-02, MCP-DOWN-03, MCP-DOWN-05: tools of a down server are left out, a
    warning names it and its status, the model is told in a line that never joins messages."""
    down = llm_mcp.mcp(url=raw_http.url("err500"), name="flaky")
    chat = chat_on([reply("flaky is down")]).with_mcp(down, _http_echo(echo_http_url))
    with caplog.at_level("WARNING", logger="llm_mcp.chat"):
        chat.ask("hello")
    request = model.requests[0]
    assert "echo" in request.tool_names
    assert "flaky" in request.system and "unavailable" in request.system
    assert all("unavailable" not in m.content for m in chat.messages)
    assert any("flaky" in r.getMessage() and "500" in r.getMessage() for r in caplog.records)


# -- concurrency and cancellation ------------------------------------------------------------------


def _barrier_tools(parties: int) -> list[Any]:
    barrier = threading.Barrier(parties, timeout=10)

    def make(index: int) -> Any:
        def wait() -> str:
            barrier.wait()  # only passes when all calls run at the same time
            return f"passed {index}"
        wait.__name__ = f"wait_{index}"
        return wait

    return [make(i) for i in range(parties)]


def test_tool_calls_run_concurrently_when_allowed(chat_on, model):
    """concurrency=3: three calls of one turn run at once (a barrier only they can pass together)."""
    tools = _barrier_tools(3)
    chat = chat_on([turn(tool_calls=[tool_call(f"wait_{i}", {}) for i in range(3)]), reply("all passed")],
                   concurrency=3).with_tools(*tools)
    chat.ask("go")
    results = {r["tool_call_id"]: r["content"] for r in model.requests[1].tool_results}
    calls = chat.messages[1].tool_calls
    assert {results[call.id] for call in calls} == {"passed 0", "passed 1", "passed 2"}
    assert all(results[call.id] == f"passed {call.name[-1]}" for call in calls)  # each result with its call


def test_concurrency_is_off_by_default():
    chat = llm_mcp.chat("m", "openai", api_key="x")
    assert chat.concurrency == 1
    with pytest.raises(ValueError, match="concurrency"):
        llm_mcp.chat("m", "openai", api_key="x", concurrency=0)


# -- agents ----------------------------------------------------------------------------------------


def test_agent_builds_chats_with_servers_and_inputs(model, tmp_path):
    """MCP-AGENT-01, MCP-AGENT-02, MCP-DOWN-15: mcp is evaluated per chat with the inputs; nothing is contacted."""
    marker = tmp_path / "started"
    base_url = model.openai_base_url

    class Files(llm_mcp.MCP):
        def command(self):
            marker.write_text("started")
            return echo_command()

    class TriageAgent(llm_mcp.Agent):
        model = "gpt-test"
        provider = "openai"
        provider_options = {"base_url": base_url, "api_key": "k"}
        inputs = ["user"]
        instructions = "Triage incoming bug reports."

        def mcp(self):
            return [llm_mcp.mcp(command=echo_command(), name=f"echo_{self.user}", prefix=self.user), Files]

    chat = TriageAgent.chat(user="ann")
    assert [s.name for s in chat.mcp] == ["echo_ann", "files"] and not marker.exists()
    model.add(tool_call("ann_echo", {"message": "triaged"}), reply("done"))
    assert chat.ask("Triage the new reports").content == "done"
    assert model.requests[0].system == "Triage incoming bug reports."
    assert model.requests[1].tool_results[0]["content"] == "triaged"
    other = TriageAgent.chat(user="bob")
    assert other.mcp["echo_bob"] is not chat.mcp["echo_ann"]
    with pytest.raises(TypeError, match="inputs"):
        TriageAgent.chat(group="x")
    for server in [*chat.mcp, *other.mcp]:
        server.close()


# -- odd names and schemas from a real server (cases C11, C12) --------------------------------------


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


def test_ask_while_waiting_is_refused(chat_on, echo_http_url):
    chat = chat_on([tool_call("echo", {"message": "x"})]).with_mcp(_http_echo(echo_http_url, requires_approval=True))
    chat.ask("echo")
    with pytest.raises(ValueError, match="pending_approvals"):
        chat.ask("something else")


def test_a_turn_stopped_by_an_exception_resumes_without_rerunning_calls(chat_on, model):
    """What ran before the exception is saved; complete() runs only what is left."""
    runs = {"first": 0, "second": 0}
    state = {"fail": True}

    class First(ChatTool):
        def execute(self) -> str:
            runs["first"] += 1
            return "first ran"

    class Second(ChatTool):
        rescue_from = {RuntimeError: "stop"}

        def execute(self) -> str:
            runs["second"] += 1
            if state["fail"]:
                raise RuntimeError("flaky")
            return "second ran"

        def stop(self, error: Exception) -> str:
            raise error

    chat = chat_on([turn(tool_calls=[tool_call("first", {}), tool_call("second", {})]), reply("both ran")])
    chat.with_tools(First, Second)
    with pytest.raises(RuntimeError, match="flaky"):
        chat.ask("run both")
    assert [m.content for m in chat.messages if m.role == "tool"] == ["first ran"]
    state["fail"] = False
    assert chat.complete().content == "both ran"
    assert runs == {"first": 1, "second": 2}
    assert [r["content"] for r in model.requests[1].tool_results] == ["first ran", "second ran"]


def test_agent_declarations_are_checked_when_the_class_is_made():
    with pytest.raises(ValueError, match="'model' cannot be an input name"):
        class Shadowing(llm_mcp.Agent):
            model = "m"
            inputs = ["model"]

    def roll_dice(sides: int = 6) -> int:
        return 4

    with pytest.raises(TypeError, match="tools must be a list"):
        class BareFunction(llm_mcp.Agent):
            model = "m"
            tools = roll_dice

    with pytest.raises(TypeError, match="model must be a string"):
        class ComputedModel(llm_mcp.Agent):
            model = lambda self: "gpt"

    class ListInstructions(llm_mcp.Agent):
        model = "m"
        provider_options = {"api_key": "k"}
        instructions = ["a", "b"]

    with pytest.raises(TypeError, match="instructions must be a string"):
        ListInstructions.chat()
