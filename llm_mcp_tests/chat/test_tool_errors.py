"""Tool errors go back to the model: a tool's error result, a timeout, a server's failure or JSON-RPC
error, a broken stream, a Python tool's exception, unknown tools and bad arguments become tool
messages the turn goes on with; refusals and direct calls still raise; error texts show only a URL's
origin. Cases C14, C15 of shared/cases.

Real chats: the scripted model through the official SDK, the echo server over Streamable HTTP, the
raw HTTP server for failures.
"""

from __future__ import annotations

import pytest

import llm_mcp
from llm_mcp.chat import ChatTool
from llm_mcp.client import outages
from llm_mcp.testing.scripted_model import reply, tool_call, turn

from llm_mcp_tests.support.chats import error_text, http_echo, tool_result_text
from llm_mcp_tests.support.processes import PYTHON, echo_command, timed_after_start
from llm_mcp_tests.support.servers.echo_server import FAIL_TEXT


def test_case_c14_tool_error_reaches_the_model_and_the_turn_goes_on(chat_on, model, echo_http_url):
    """Case C14, MCP-WRAP-03 (without wrap): isError results reach the model as errors."""
    chat = chat_on([tool_call("fail", {}), reply("sorry")]).with_mcp(http_echo(echo_http_url))
    assert chat.ask("try").content == "sorry"
    assert chat.messages[2].is_error and chat.messages[2].content == FAIL_TEXT
    assert error_text(model.requests[1].tool_results[0]) == FAIL_TEXT


def test_case_c15_timeout_still_records_a_result(chat_on, model):
    """Case C15: a call that times out gets an error result; the next request is valid."""
    server = timed_after_start(llm_mcp.mcp(command=echo_command(), name="echo", timeout=60), 1)
    chat = chat_on([tool_call("sleep", {"seconds": 30}), reply("too slow")]).with_mcp(server)
    assert chat.ask("sleep").content == "too slow"
    result = {"content": error_text(model.requests[1].tool_results[0])}
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
    text = error_text(model.requests[1].tool_results[0])
    assert text.startswith("The MCP server 'raw' failed to run echo:") and expected in text
    assert ("may have partly run" in text) == (case == "err500_call")


def test_json_rpc_error_becomes_a_tool_error(chat_on, model, echo_http_url):
    """MCP-TOOLERR-01: a JSON-RPC error answer (unknown tool) is a tool error; the turn goes on."""
    server = http_echo(echo_http_url)
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
    assert error_text(model.requests[1].tool_results[0]) == "ZeroDivisionError: division by zero"


def test_unknown_tool_and_bad_arguments_get_results(chat_on, model, echo_http_url):
    """Every tool call gets a result: an unknown name and arguments that are not JSON included."""
    chat = chat_on([turn(tool_calls=[tool_call("nope", {}), tool_call("echo", {"message": "ok"})]),
                    reply("done")]).with_mcp(http_echo(echo_http_url))
    chat.ask("go")
    results = model.requests[1].tool_results
    assert error_text(results[0]) == "There is no tool named 'nope'." and results[1]["content"] == "ok"


def test_down_server_is_left_out_with_a_line_for_the_model(chat_on, model, echo_http_url, raw_http, caplog):
    """MCP-DOWN-01, MCP-DOWN-02, MCP-DOWN-03, MCP-DOWN-05: tools of a down server are left out, a
    warning names it and its status, the model is told in a line that never joins messages."""
    down = llm_mcp.mcp(url=raw_http.url("err500"), name="flaky")
    chat = chat_on([reply("flaky is down")]).with_mcp(down, http_echo(echo_http_url))
    with caplog.at_level("WARNING", logger="llm_mcp.chat"):
        chat.ask("hello")
    request = model.requests[0]
    assert "echo" in request.tool_names
    assert "flaky" in request.system and "unavailable" in request.system
    assert all("unavailable" not in m.content for m in chat.messages)
    assert any("flaky" in r.getMessage() and "500" in r.getMessage() for r in caplog.records)


class City(ChatTool):
    description = "Echo a city"

    def execute(self, city: str) -> str:
        return city


def test_model_arguments_named_like_parameters_are_tool_errors(chat_on, model, echo_http_url):
    """A model passing "self" (or any key) never crashes the turn: the call gets a result."""
    chat = chat_on([turn(tool_calls=[tool_call("city", {"self": 1}), tool_call("echo", {"self": 1, "message": "m"})]),
                    reply("ok")]).with_tools(City).with_mcp(http_echo(echo_http_url))
    assert chat.ask("go").content == "ok"
    city, echo = model.requests[1].tool_results
    assert "TypeError" in tool_result_text(city)
    assert echo["content"] == "m"  # the server takes the extra key; nothing broke on our side


def test_a_call_to_a_down_servers_tool_says_so(chat_on, model, raw_http):
    server = llm_mcp.mcp(url=raw_http.url("basic", era="modern"), name="later_down")
    server.tools  # listed earlier in this process
    outages.record(server, llm_mcp.ConnectionError("gone", status=503))
    chat = chat_on([tool_call("echo", {"message": "x"}), reply("ok")]).with_mcp(server)
    chat.ask("go")
    assert tool_result_text(model.requests[1].tool_results[0]).startswith("The tool 'echo' is not available right now")


def test_error_texts_show_only_the_origin_of_a_url(chat_on, model):
    from llm_mcp_tests.support.processes import free_port

    url = f"http://127.0.0.1:{free_port()}/mcp/SECRETPATH?api_key=QSECRET"
    server = llm_mcp.mcp(url=url, name="q")
    ghost = llm_mcp.Tool(server, {"name": "ghost"})
    chat = chat_on([tool_call("ghost", {}), reply("ok")]).with_tools(ghost)
    chat.ask("go")
    text = tool_result_text(model.requests[1].tool_results[0])
    assert "could not be reached at http://127.0.0.1:" in text
    assert "QSECRET" not in text and "SECRETPATH" not in text


def test_failure_text_is_a_sentence(chat_on, model):
    server = llm_mcp.mcp(command=[PYTHON, "-c", "import sys; sys.exit(3)"], name="gone", timeout=5)
    tool = llm_mcp.Tool(server, {"name": "t"})
    text = tool.call()["error"]
    assert ". " not in text.split(":", 1)[0] and text.endswith(".") and ".." not in text


def test_a_handler_that_re_raises_the_servers_error_stops_the_chat(chat_on, raw_http):
    """MCP-TOOLERR-04 with the MCP error itself re-raised: it is not turned into a tool error."""

    class Strict(llm_mcp.MCP):
        url = raw_http.url("err500_call", era="modern")
        rescue_from = {llm_mcp.MCPError: "again"}

        def again(self, error: Exception) -> None:
            raise error

    chat = chat_on([tool_call("echo", {"message": "x"}), reply("never")]).with_mcp(Strict())
    with pytest.raises(llm_mcp.ConnectionError) as raised:
        chat.ask("go")
    assert raised.value.status == 500


def test_a_refused_address_raises_out_of_the_chat_like_other_refusals(chat_on, model, echo_http_url):
    """MCP-ADDR-02 in a chat: a server whose name resolves to loopback behind PublicAddressesOnly (the
    test's resolver answers). Like a 401, the refusal raises out of ``ask`` (retrying cannot help, the
    app must act); nothing was sent and the server is not counted as down."""
    from urllib.parse import urlsplit

    from llm_mcp.client.addresses import PublicAddressesOnly

    port = urlsplit(echo_http_url).port
    ctx = llm_mcp.context(transport=lambda: PublicAddressesOnly(resolve=lambda host, port: ["127.0.0.1"]))
    server = ctx.mcp(url=f"http://mcp.example.test:{port}/mcp", name="typed", allow_http=True)
    tool = llm_mcp.Tool(server, {"name": "echo", "inputSchema": {"type": "object"}})
    chat = chat_on([tool_call("echo", {"message": "x"}), reply("never")]).with_tools(tool)
    with pytest.raises(llm_mcp.AddressRefusedError, match=r"127\.0\.0\.1 \(loopback\)"):
        chat.ask("go")
    assert not outages.is_down(server)
