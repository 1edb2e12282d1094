"""Servers that are down: left out of chats, backed off process-wide, calls skipped meanwhile.

The raw HTTP test server fails on demand (``err500``, ``rate429``, ``*_call``) and logs
every request it gets, so the tests can see when a server was *not* contacted.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import llm_mcp
from llm_mcp.client import outages
from llm_mcp.testing.scripted_model import reply, tool_call

from llm_mcp_tests.support.processes import PYTHON, echo_command, free_port, raw_stdio_command, timed_after_start


def _calls(raw_http: Any, case: str, method: str) -> int:
    """How many JSON-RPC requests of ``method`` the raw server received."""
    count = 0
    for entry in raw_http.log(case):
        try:
            body = json.loads(entry.get("body") or "null")
        except ValueError:
            continue
        count += isinstance(body, dict) and body.get("method") == method
    return count


@pytest.mark.parametrize("how", ["refused", "http500", "http429", "stdio-exit"])
def test_unreachable_servers_are_left_out_and_reported(chat_on, model, raw_http, heard_outages, caplog, how):
    """MCP-DOWN-01, MCP-DOWN-02, MCP-DOWN-03, MCP-DOWN-04: refused, 5xx, 429, a process that exits:
    the turn goes on without the server; a warning and one event name it, never the message."""
    if how == "refused":
        down = llm_mcp.mcp(url=f"http://127.0.0.1:{free_port()}/mcp", name="down")
        expected = ("down", "ConnectionError", None)
    elif how == "http500":
        down = llm_mcp.mcp(url=raw_http.url("err500"), name="down")
        expected = ("down", "ConnectionError", 500)
    elif how == "http429":
        down = llm_mcp.mcp(url=raw_http.url("rate429"), name="down")
        expected = ("down", "ConnectionError", 429)
    else:
        down = llm_mcp.mcp(command=[PYTHON, "-c", "import sys; sys.exit(3)"], name="down", timeout=5)
        expected = ("down", "ConnectionError", None)
    working = llm_mcp.mcp(command=raw_stdio_command(), name="working")
    chat = chat_on([reply("down is down")]).with_mcp(down, working)
    with caplog.at_level("WARNING", logger="llm_mcp.chat"):
        assert chat.ask("hi").content == "down is down"
    assert model.requests[0].tool_names == ["echo", "crash", "big", "ask_client", "bad_sum", "sleep"]
    assert heard_outages == [expected]
    warning = [r.getMessage() for r in caplog.records if "down" in r.getMessage()]
    assert warning and (str(expected[2]) in warning[0] if expected[2] else "ConnectionError" in warning[0])
    working.close()


def test_down_server_waits_process_wide_and_for_retry_after(chat_on, model, raw_http, heard_outages, caplog):
    """MCP-DOWN-06, MCP-DOWN-07: another chat, with another instance of the same server, does not
    contact it during the wait; a Retry-After of 1 s replaces the 60 s."""
    url = raw_http.url("rate429")
    chat_on([reply("one")]).with_mcp(llm_mcp.mcp(url=url, name="busy")).ask("hi")
    requests_so_far = len(raw_http.log("rate429"))
    assert requests_so_far >= 1 and outages.is_down(llm_mcp.mcp(url=url, name="another"))
    chat = chat_on([reply("two")]).with_mcp(llm_mcp.mcp(url=url, name="busy"))
    chat.ask("hi again")
    assert len(raw_http.log("rate429")) == requests_so_far  # not contacted
    assert "busy" in model.requests[1].system
    assert any("for 1 s" in r.getMessage() for r in caplog.records)
    assert len(heard_outages) == 1


def test_default_wait_is_a_minute(raw_http, caplog):
    """MCP-DOWN-06: without Retry-After the backoff is BACKOFF (60 s)."""
    assert outages.BACKOFF == 60.0
    server = llm_mcp.mcp(url=raw_http.url("err500"), name="down")
    with caplog.at_level("WARNING", logger="llm_mcp.chat"):
        outages.record(server, llm_mcp.ConnectionError("x", status=500))
    assert "for 60 s" in caplog.records[-1].getMessage() and outages.is_down(server)


def test_computed_addresses_back_off_per_object(raw_http):
    """MCP-DOWN-08: a server with a callable url keeps its wait on the object."""
    url = raw_http.url("err500")

    class PerUser(llm_mcp.MCP):
        def url(self):
            return url

    first, second = PerUser(), PerUser()
    outages.record(first, llm_mcp.ConnectionError("x", status=500))
    assert outages.is_down(first) and not outages.is_down(second)
    fixed_a, fixed_b = llm_mcp.mcp(url=url, name="a"), llm_mcp.mcp(url=url, name="b")
    outages.record(fixed_a, llm_mcp.ConnectionError("x", status=500))
    assert outages.is_down(fixed_b)


def test_a_chat_that_listed_the_tools_keeps_them(chat_on, model, echo_http_url):
    """MCP-DOWN-09: other chats find the server down; this chat listed it before and keeps offering it."""
    server = llm_mcp.mcp(url=echo_http_url, name="echo")
    chat = chat_on([reply("first"), tool_call("echo", {"message": "hi"}), reply("second")]).with_mcp(server)
    chat.ask("one")
    outages.record(server, llm_mcp.ConnectionError("elsewhere", status=503))
    other = chat_on().with_mcp(llm_mcp.mcp(url=echo_http_url, name="echo"))
    assert other.tools == []
    chat.ask("two")
    assert "echo" in model.requests[1].tool_names


def test_a_call_that_fails_puts_the_server_out_of_the_next_requests(chat_on, model, raw_http, heard_outages):
    """MCP-DOWN-12, MCP-DOWN-13, MCP-DOWN-14, MCP-TOOLERR-07: after a 500 on tools/call the chat leaves the server out;
    a call during the backoff gets the tool error with no request and no rescue_from handler."""
    handled: list[Exception] = []

    class Flaky(llm_mcp.MCP):
        url = raw_http.url("err500_call", era="modern")
        rescue_from = {llm_mcp.MCPError: "handler"}

        def handler(self, error: Exception) -> str:
            handled.append(error)
            return "handled"

    server = Flaky()
    echo = server.tool("echo")
    chat = chat_on([tool_call("echo", {"message": "x"}), reply("after the failure"),
                    tool_call("echo", {"message": "y"}), reply("skipped")]).with_mcp(server)
    chat.ask("first")
    assert handled and model.requests[1].tool_results[0]["content"] == "handled"
    assert heard_outages == [("flaky", "ConnectionError", 500)]
    calls = _calls(raw_http, "err500_call", "tools/call")
    assert calls == 1
    # next turn: the server sits out, and a call to its tool (given with with_tools) is skipped
    chat.with_tools(echo)
    chat.ask("second")
    assert "echo" in model.requests[2].tool_names  # offered through with_tools only
    text = model.requests[3].tool_results[-1]["content"].removeprefix("Error: ")
    assert text.startswith("The MCP server 'flaky' is unavailable right now")
    assert _calls(raw_http, "err500_call", "tools/call") == 1 and len(handled) == 1
    assert "flaky" in model.requests[2].system


def test_approvals_work_while_the_server_is_down(chat_on, model, raw_http):
    """MCP-DOWN-18: listing and deciding approvals contacts nothing."""
    server = llm_mcp.mcp(url=raw_http.url("basic", era="modern"), name="later_down", requires_approval=True)
    chat = chat_on([tool_call("echo", {"message": "x"}), reply("ok")]).with_mcp(server)
    chat.ask("go")
    before = len(raw_http.log("basic"))
    outages.record(server, llm_mcp.ConnectionError("gone", status=503))
    [call] = chat.pending_approvals
    call.approve()
    assert len(raw_http.log("basic")) == before
    chat.complete()
    assert model.requests[1].tool_results[0]["content"].removeprefix("Error: ").startswith(
        "The MCP server 'later_down' is unavailable right now")


def test_bearer_token_callable_runs_once_per_tool_call(echo_http_modern_url):
    """Outages and headers are evaluated once per call: a tool call the way a chat makes it
    (``Tool.call``: the outage check, then the request) runs the ``bearer_token`` callable once."""
    runs: list[int] = []

    def token(server: Any) -> str:
        runs.append(1)
        return "token"

    with llm_mcp.mcp(url=echo_http_modern_url, name="echo", bearer_token=token) as server:
        echo = server.tool("echo")  # listed outside any call
        assert echo is not None
        before = len(runs)
        assert echo.call(message="once").text == "once"
        assert len(runs) - before == 1
        echo.call(message="again")
        assert len(runs) - before == 2


def test_a_slow_call_is_not_an_outage(chat_on, model, heard_outages):
    server = timed_after_start(llm_mcp.mcp(command=echo_command(), name="echo", timeout=60), 1)
    chat = chat_on([tool_call("sleep", {"seconds": 5}), reply("slow"), reply("still here")]).with_mcp(server)
    chat.ask("sleep")
    assert not outages.is_down(server) and heard_outages == []
    chat.ask("again")
    assert "echo" in model.requests[-1].tool_names
    server.close()


def test_computed_credentials_keep_the_backoff_per_object(raw_http):
    url = raw_http.url("rate429")

    class PerUser(llm_mcp.MCP):
        inputs = ["user"]
        bearer_token = lambda self: f"token-{self.user}"

    Bound = type("PerUser", (PerUser,), {"url": url})
    ann, bob = Bound(user="ann"), Bound(user="bob")
    outages.record(ann, llm_mcp.ConnectionError("429", status=429))
    assert outages.is_down(ann) and not outages.is_down(bob)
    a = llm_mcp.mcp(command=[PYTHON, "x.py"], env={"TENANT": "a"}, name="a")
    b = llm_mcp.mcp(command=[PYTHON, "x.py"], env={"TENANT": "b"}, name="b")
    outages.record(a, llm_mcp.ConnectionError("exit", exit_status=1))
    assert outages.is_down(a) and not outages.is_down(b)


def test_a_new_object_per_request_for_the_same_user_still_waits(raw_http):
    """The backoff key includes a digest of the evaluated credentials: same user, new object -> same wait;
    another user -> no wait."""
    url = raw_http.url("rate429")

    class PerUser(llm_mcp.MCP):
        inputs = ["user"]
        bearer_token = lambda self: f"token-{self.user}"  # noqa: E731

    Bound = type("PerUser", (PerUser,), {"url": url})
    outages.record(Bound(user="ann"), llm_mcp.ConnectionError("429", status=429))
    assert outages.is_down(Bound(user="ann")) and not outages.is_down(Bound(user="bob"))
