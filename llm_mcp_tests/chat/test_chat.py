"""Chats with MCP servers: connecting servers, collecting tools, messages, concurrency, bad input.

Approvals and resumes are in ``test_approvals.py``, what the model is sent in ``test_model_requests.py``,
tool errors in ``test_tool_errors.py``, cancellation in ``test_cancellation.py``, agents in ``test_agents.py``.

Every test drives a real chat: the scripted model over loopback HTTP through the official
SDK, and real MCP test servers (the echo server over stdio and Streamable HTTP, the raw
HTTP server for failures).
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

import llm_mcp
from llm_mcp.chat import Message
from llm_mcp.testing.scripted_model import reply, tool_call, turn

from llm_mcp_tests.support.chats import http_echo
from llm_mcp_tests.support.processes import echo_command


class Echo(llm_mcp.MCP):
    command = echo_command()


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
    assert not marker.exists() and not server.connection.built
    assert "echo" in [t.name for t in chat.tools]
    assert marker.read_text() == "started"
    chat.with_mcp(None)


def test_servers_are_read_by_name(chat_on, echo_http_url):
    """MCP-CHAT-03: chat.mcp.name and chat.mcp["name"]; a class shows as the instance the chat built."""
    files = http_echo(echo_http_url, name="files")
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
    chat = chat_on().with_mcp(http_echo(echo_http_url, name="one"), http_echo(echo_http_url, name="two"))
    with pytest.raises(ValueError) as raised:
        chat.tools
    assert "'echo'" in str(raised.value) and "'one'" in str(raised.value) and "'two'" in str(raised.value)

    def echo(message: str) -> str:
        return message

    chat = chat_on().with_mcp(http_echo(echo_http_url, name="one")).with_tools(echo)
    with pytest.raises(ValueError, match="with_tools"):
        chat.tools


def test_defer_true_hides_tools_until_the_model_searches(chat_on, model, echo_http_url):
    """MCP-CHAT-09, MCP-DEFER-02: with_mcp(defer=True) defers every tool; the search tool finds them."""
    chat = chat_on([tool_call("search_tools", {"query": "echo message unchanged"}),
                    tool_call("echo", {"message": "found it"}), reply("ok")])
    chat.with_mcp(http_echo(echo_http_url), defer=True)
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
    chat.with_mcp(http_echo(echo_http_url)).with_tools(native)
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
    chat = chat_on([tool_call("image", {}), reply("a pixel")]).with_mcp(http_echo(echo_http_url))
    chat.ask("show me")
    for message in chat.messages:
        data = json.loads(json.dumps(message.to_dict()))
        copy = Message.from_dict(data)
        assert copy.to_dict() == message.to_dict()
    image = chat.messages[2].attachments[0]
    assert image.kind == "image" and image.mime_type == "image/png" and image.content.startswith(b"\x89PNG")


# -- concurrency ---------------------------------------------------------------------------------


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


# -- bad input ---------------------------------------------------------------------------------------


def test_two_servers_with_one_name_in_one_call_are_refused(chat_on, echo_http_url):
    with pytest.raises(ValueError, match="two servers named 'echo'"):
        chat_on().with_mcp(http_echo(echo_http_url), http_echo(echo_http_url))


def test_bad_chat_arguments_are_refused():
    with pytest.raises(TypeError, match="store"):
        llm_mcp.chat("m", "openai", api_key="k", store=5)
    with pytest.raises(TypeError, match="params"):
        llm_mcp.chat("m", "openai", api_key="k", params=5)
    chat = llm_mcp.chat("m", "openai", api_key="k")
    with pytest.raises(TypeError, match="string"):
        chat.ask(None)
    with pytest.raises(TypeError, match="instructions must be a string"):
        chat.with_instructions(["a", "b"])
