"""Shaping a server's tools for chats: only/exclude, prefix, renames, fixed arguments, wrap,
own tools, approval, defer, rescue_from. Real chats: the scripted model through the OpenAI
SDK, and the echo test server over Streamable HTTP (one process for the whole session).
"""

from __future__ import annotations

from typing import Any

import pytest

import llm_mcp
from llm_mcp.chat import ChatTool
from llm_mcp.testing.scripted_model import reply, tool_call

from llm_mcp_tests.support.chats import http_echo
from llm_mcp_tests.support.servers.echo_server import FAIL_TEXT

ECHO_TOOLS = ["echo", "add", "image", "mixed", "fail", "with_meta", "headered", "sleep", "together", "progress", "files/read"]


def _text(result: dict[str, Any]) -> str:
    return result["content"].removeprefix("Error: ") if result["is_error"] is None else result["content"]


@pytest.fixture
def url(echo_http_url: str) -> str:
    return echo_http_url


def _bind(cls: type[llm_mcp.MCP], url: str) -> type[llm_mcp.MCP]:
    """A subclass of ``cls`` served at ``url`` (keeps the class's name for the server's name)."""
    return type(cls.__name__, (cls,), {"url": url})


def _server(url: str, **settings: Any) -> llm_mcp.MCP:
    return llm_mcp.mcp(url=url, **{"name": "echo", **settings})


# -- choosing ---------------------------------------------------------------------------------------


def test_only_offers_just_those_tools(chat_on, model, url):
    """MCP-CHOOSE-01"""
    chat = chat_on([reply("ok")]).with_mcp(_server(url, only=["echo", "add"]))
    chat.ask("hi")
    assert model.requests[0].tool_names == ["echo", "add"]


def test_exclude_offers_all_but_those(chat_on, model, url):
    """MCP-CHOOSE-02"""
    chat = chat_on([reply("ok")]).with_mcp(_server(url, exclude=["echo", "files/read"]))
    chat.ask("hi")
    assert model.requests[0].tool_names == [n for n in ECHO_TOOLS if n not in ("echo", "files/read")]


def test_only_and_exclude_together_are_refused(url):
    with pytest.raises(ValueError, match="only or exclude"):
        _server(url, only=["echo"], exclude=["add"])


@pytest.mark.parametrize("setting, value", [
    ("only", ["echo", "nope"]),
    ("exclude", ["nope"]),
    ("tool_options", {"nope": {"as": "x"}}),
    ("requires_approval", ["nope"]),
    ("defer", ["nope"]),
])
def test_every_declared_name_must_exist(chat_on, url, setting, value):
    """MCP-DEFER-03: a declared tool the server lacks raises ConfigurationError naming it as tools load."""
    chat = chat_on().with_mcp(_server(url, **{setting: value}))
    with pytest.raises(llm_mcp.ConfigurationError) as raised:
        chat.tools
    assert f"{setting}: nope" in str(raised.value)


# -- names and descriptions ---------------------------------------------------------------------------


def test_prefix_changes_only_the_model_facing_name(chat_on, model, url):
    """MCP-PREFIX-01, MCP-PREFIX-03, MCP-TOOL-02, MCP-TOOL-03: the model sees github_echo; tools/call sends echo."""
    server = _server(url, prefix="github")
    tool = server.tool("echo")
    assert (tool.name, tool.server_name) == ("github_echo", "echo")
    chat = chat_on([tool_call("github_echo", {"message": "prefixed"}), reply("ok")]).with_mcp(server)
    chat.ask("go")
    assert model.requests[0].tool_names[0] == "github_echo"
    assert model.requests[1].tool_results[0]["content"] == "prefixed"  # the server ran "echo"


def test_renamed_tool_keeps_its_given_name_under_a_prefix(url):
    """MCP-PREFIX-02"""
    server = _server(url, prefix="github", tool_options={"echo": {"as": "say"}})
    assert server.tool("echo").name == "say" and server.tool("add").name == "github_add"


def test_prefix_lets_two_servers_with_one_tool_name_share_a_chat(chat_on, model, url):
    """MCP-PREFIX-04, MCP-INLINE-03 (prefix in mcp())"""
    chat = chat_on([tool_call("gh_echo", {"message": "b"}), reply("ok")])
    chat.with_mcp(_server(url, name="one"), _server(url, name="two", prefix="gh"))
    chat.ask("go")
    assert "echo" in model.requests[0].tool_names and "gh_echo" in model.requests[0].tool_names


def test_rename_and_describe(chat_on, model, url):
    """MCP-RENAME-01, MCP-RENAME-02, MCP-TOOL-04: new name and description for the model; the
    server still gets tools/call for the original name."""
    server = _server(url, tool_options={"echo": {"as": "shout", "description": "Say it back, loudly."}})
    chat = chat_on([tool_call("shout", {"message": "hey"}), reply("ok")]).with_mcp(server)
    chat.ask("go")
    offered = {t["name"]: t for t in model.requests[0].tools}
    assert "echo" not in offered and offered["shout"]["description"] == "Say it back, loudly."
    assert model.requests[1].tool_results[0]["content"] == "hey"


def test_description_and_name_change_independently(url):
    """MCP-RENAME-03"""
    server = _server(url, tool_options={"echo": {"description": "Only the description"}, "add": {"as": "plus"}})
    echo, add = server.tool("echo"), server.tool("add")
    assert (echo.name, echo.description) == ("echo", "Only the description")
    assert (add.name, add.description) == ("plus", "Add two integers.")


# -- fixed arguments --------------------------------------------------------------------------------


def test_fixed_arguments_leave_the_schema_and_always_win(chat_on, model, url):
    """MCP-FIXED-01, MCP-FIXED-02, MCP-TOOL-05: b leaves properties and required; the model's b is overridden."""
    server = _server(url, tool_options={"add": {"fixed_arguments": {"b": 40}}})
    tool = server.tool("add")
    assert tool.params_schema == {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert tool.input_schema["required"] == ["a", "b"]  # the server's own schema is untouched
    chat = chat_on([tool_call("add", {"a": 2, "b": 1000}), reply("ok")]).with_mcp(server)
    chat.ask("add")
    sent = {t["name"]: t for t in model.requests[0].tools}["add"]["parameters"]
    assert sent == {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert model.requests[1].tool_results[0]["content"] == '{"sum": 42}'


def test_fixed_argument_callables_are_evaluated_per_call_on_the_instance(chat_on, model, url):
    """MCP-FIXED-03"""

    class Adder(llm_mcp.MCP):
        inputs = ["user"]
        tool_options = {"add": {"fixed_arguments": {"b": lambda self: self.user["b"]}}}

    Adder = _bind(Adder, url)
    user = {"b": 1}
    server = Adder(user=user)
    chat = chat_on([tool_call("add", {"a": 1}), tool_call("add", {"a": 1}), reply("ok")]).with_mcp(server)
    chat.tools
    user["b"] = 1
    model.add()  # nothing: the script is set
    chat.ask("first")
    results = [r["content"] for r in model.requests[-1].tool_results]
    assert results == ['{"sum": 2}', '{"sum": 2}']
    user["b"] = 9
    model.add(tool_call("add", {"a": 1}), reply("ok"))
    chat.ask("again")
    assert model.requests[-1].tool_results[-1]["content"] == '{"sum": 10}'


# -- wrap -------------------------------------------------------------------------------------------


class Cited(llm_mcp.MCP):
    inputs = ["user"]
    tool_options = {"echo": {"as": "read", "wrap": "cite"}, "fail": {"wrap": "cite"}}

    def cite(self, result: llm_mcp.Result, message: str = "", **arguments: Any) -> dict[str, Any]:
        return {"title": message, "text": result.text, "reader": self.user}


def test_wrap_receives_the_result_and_arguments_on_the_instance(chat_on, model, url):
    """MCP-WRAP-01, MCP-WRAP-02, MCP-TOOL-09: the model gets what the wrap method returns."""
    server = _bind(Cited, url)(user="ann")
    assert server.tool("echo").call(message="doc-1", tool_call=object()) == {
        "title": "doc-1", "text": "doc-1", "reader": "ann"}
    chat = chat_on([tool_call("read", {"message": "doc-7"}), reply("ok")]).with_mcp(server)
    chat.ask("read doc-7")
    assert model.requests[1].tool_results[0]["content"] == '{"title": "doc-7", "text": "doc-7", "reader": "ann"}'


def test_error_results_skip_wrap(chat_on, model, url):
    """MCP-WRAP-03"""
    server = _bind(Cited, url)(user="ann")
    result = server.tool("fail").call()
    assert isinstance(result, llm_mcp.Result) and result.is_error
    chat = chat_on([tool_call("fail", {}), reply("ok")]).with_mcp(server)
    chat.ask("fail")
    assert _text(model.requests[1].tool_results[0]) == FAIL_TEXT and chat.messages[2].is_error


# -- own tools --------------------------------------------------------------------------------------


class SearchAndRead(ChatTool):
    description = "Echo a message through the server, then read it back"

    def __init__(self, server: llm_mcp.MCP):
        super().__init__()
        self.server = server

    def execute(self, query: str) -> str:
        return "read: " + self.server.echo(message=query).text


class NoArguments(ChatTool):
    description = "A tool built without the server"

    def execute(self) -> str:
        return "plain"


class Broken(ChatTool):
    description = "Fails, and handles its own failure"
    rescue_from = {RuntimeError: "own_handler"}

    def execute(self) -> str:
        raise RuntimeError("inner")

    def own_handler(self, error: Exception) -> str:
        return f"handled by the tool: {error}"


def test_own_tools_join_the_servers_tools(chat_on, model, url):
    """MCP-OWNTOOL-01, MCP-OWNTOOL-02, MCP-OWNTOOL-03: built with the server when __init__ takes it;
    echo, hidden by only, stays callable as a method."""

    class Dropbox(llm_mcp.MCP):
        only = ["add"]
        extra_tools = [SearchAndRead, NoArguments]

    Dropbox = _bind(Dropbox, url)
    chat = chat_on([tool_call("search_and_read", {"query": "q1"}), reply("ok")]).with_mcp(Dropbox())
    chat.ask("search")
    assert model.requests[0].tool_names == ["add", "search_and_read", "no_arguments"]
    assert model.requests[1].tool_results[0]["content"] == "read: q1"
    assert isinstance(chat.mcp.dropbox.model_tools[1].server, Dropbox)


def test_own_tool_errors_go_to_their_own_handlers(chat_on, model, url):
    """MCP-OWNTOOL-04"""

    class Server(llm_mcp.MCP):
        only = ["echo"]
        extra_tools = [Broken]
        rescue_from = {Exception: "server_handler"}

        def server_handler(self, error: Exception) -> str:
            return "handled by the server"

    Server = _bind(Server, url)
    chat = chat_on([tool_call("broken", {}), reply("ok")]).with_mcp(Server())
    chat.ask("go")
    assert model.requests[1].tool_results[0]["content"] == "handled by the tool: inner"


# -- approval and defer -----------------------------------------------------------------------------


def test_requires_approval_true_covers_every_tool(url):
    """MCP-APPROVAL-02, MCP-TOOL-16"""
    server = _server(url, requires_approval=True)
    assert all(tool.requires_approval for tool in server.tools)
    assert not any(tool.requires_approval for tool in _server(url).tools)


def test_requires_approval_by_tool_property(url):
    """MCP-APPROVAL-03: "destructive" holds for add (no hints: destructive) and not for echo (read-only)."""
    server = _server(url, requires_approval="destructive")
    by_name = {t.name: t for t in server.tools}
    assert not by_name["echo"].requires_approval and by_name["add"].requires_approval
    assert [t.name for t in server.tools if t.requires_approval] == [t.name for t in server.tools if t.destructive]


def test_requires_approval_by_callable(chat_on, url):
    """MCP-APPROVAL-04: the callable receives the Tool."""
    seen = []

    def starts_with_a(tool: llm_mcp.Tool) -> bool:
        seen.append(tool)
        return tool.name.startswith("a")

    server = _server(url, requires_approval=starts_with_a)
    assert [t.name for t in server.tools if t.requires_approval] == ["add"]
    assert all(isinstance(t, llm_mcp.Tool) for t in seen)
    chat = chat_on([tool_call("add", {"a": 1, "b": 1}), reply("ok")]).with_mcp(server)
    chat.ask("add")
    assert chat.waiting and chat.pending_approvals[0].name == "add"


def test_defer_by_name(chat_on, model, url):
    """MCP-DEFER-01: deferred tools stay out of the first list; the search tool brings them in."""
    server = _server(url, defer=["add", "sleep"])
    chat = chat_on([tool_call("search_tools", {"query": "add integers"}), tool_call("add", {"a": 1, "b": 2}),
                    reply("3")]).with_mcp(server)
    chat.ask("add 1 and 2")
    first, second, _ = model.requests
    assert "add" not in first.tool_names and "sleep" not in first.tool_names and "echo" in first.tool_names
    assert first.tool_names[-1] == "search_tools"
    assert "add" in second.tool_names and "sleep" not in second.tool_names
    assert chat.messages[-2].content == '{"sum": 3}'


# -- rescue_from ------------------------------------------------------------------------------------


class Linear(llm_mcp.MCP):
    inputs = ["user"]
    rescue_from = {llm_mcp.MCPError: "server_refused"}

    def server_refused(self, error: Exception) -> dict[str, str]:
        if self.user == "strict":
            raise RuntimeError("stop the chat") from error
        return {"error": f"Linear couldn't answer {self.user}: {type(error).__name__}"}


def test_rescue_from_handler_result_becomes_the_result(chat_on, model, raw_http):
    """MCP-TOOLERR-02, MCP-TOOLERR-03: the handler runs on the instance (inputs available)."""
    Bound = _bind(Linear, raw_http.url("err500_call", era="modern"))
    chat = chat_on([tool_call("echo", {"message": "x"}), reply("ok")]).with_mcp(Bound(user="ann"))
    chat.ask("go")
    assert _text(model.requests[1].tool_results[0]) == "Linear couldn't answer ann: ConnectionError"


def test_rescue_from_handler_that_raises_stops_the_chat(chat_on, raw_http):
    """MCP-TOOLERR-04"""
    Bound = _bind(Linear, raw_http.url("err500_call", era="modern"))
    chat = chat_on([tool_call("echo", {"message": "x"}), reply("never")]).with_mcp(Bound(user="strict"))
    with pytest.raises(RuntimeError, match="stop the chat"):
        chat.ask("go")


def test_server_handler_comes_before_the_tool_class_handler(chat_on, model, raw_http, monkeypatch):
    """MCP-TOOLERR-05: the MCP class's handler first; llm_mcp.Tool's handler when the class has none."""
    monkeypatch.setattr(llm_mcp.Tool, "rescue_from", {llm_mcp.MCPError: lambda tool, error: "tool-level"})
    Bound = _bind(Linear, raw_http.url("err500_call", era="modern"))
    chat = chat_on([tool_call("echo", {"message": "x"}), reply("ok")]).with_mcp(Bound(user="ann"))
    chat.ask("go")
    assert _text(model.requests[1].tool_results[0]).startswith("Linear couldn't answer")
    from llm_mcp.client import outages

    outages.reset()  # the first call put this address in backoff; start afresh for the second server
    plain = llm_mcp.mcp(url=raw_http.url("err500_call", era="modern"), name="plain")
    model.add(tool_call("echo", {"message": "x"}), reply("ok"))
    chat.with_mcp(None).with_mcp(plain)
    chat.ask("again")
    assert model.requests[-1].tool_results[-1]["content"] == "tool-level"


def test_generic_tool_handler_does_not_take_server_failures(chat_on, model, raw_http, monkeypatch):
    """MCP-TOOLERR-06: a catch-all on ChatTool, which Python tools inherit, leaves MCP outages alone."""
    monkeypatch.setattr(ChatTool, "rescue_from", {Exception: lambda error: "generic handler"})
    server = llm_mcp.mcp(url=raw_http.url("err500_call", era="modern"), name="raw")
    chat = chat_on([tool_call("echo", {"message": "x"}), reply("ok")]).with_mcp(server)
    chat.ask("go")
    assert _text(model.requests[1].tool_results[0]).startswith("The MCP server 'raw' failed to run echo")


def test_mcp_tool_works_with_with_tools(chat_on, model, url):
    """MCP-TOOL-01: a single llm_mcp.Tool given to with_tools is offered and called."""
    server = _server(url)
    chat = chat_on([tool_call("add", {"a": 20, "b": 22}), reply("42")]).with_tools(server.tool("add"))
    chat.ask("add")
    assert model.requests[0].tool_names == ["add"]
    assert model.requests[0].tools[0]["parameters"] == server.tool("add").input_schema
    assert model.requests[1].tool_results[0]["content"] == '{"sum": 42}'


def test_shaping_settings_of_the_wrong_shape_are_refused(url):
    with pytest.raises(ValueError, match="tool_options"):
        _server(url, tool_options={"echo": {"rename": "x"}})
    with pytest.raises(ValueError, match="requires_approval"):
        _server(url, requires_approval="create_issue")
    with pytest.raises(ValueError, match="rescue_from"):
        _server(url, rescue_from={"not a class": "x"})
    with pytest.raises(ValueError, match="wrap"):
        _server(url, tool_options={"echo": {"wrap": "no_such_method"}})
    with pytest.raises(ValueError, match="prefix"):
        _server(url, prefix="")


@pytest.mark.parametrize("settings, message", [
    ({"extra_tools": 5}, "extra_tools"),
    ({"extra_tools": [5]}, "extra_tools"),
    ({"requires_approval": 1}, "requires_approval"),
    ({"defer": 1}, "defer"),
    ({"tool_options": {5: {}}}, "tool_options keys"),
    ({"tool_options": {"echo": {"description": 5}}}, "description"),
])
def test_more_bad_shaping_settings_are_refused(echo_http_url, settings, message):
    with pytest.raises(ValueError, match=message):
        http_echo(echo_http_url, **settings)
