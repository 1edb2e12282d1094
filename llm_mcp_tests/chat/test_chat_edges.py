"""Edge cases and bad input in chats (regressions from a review that tried to break them).

Real chats: the scripted model through the real SDKs, the echo server over Streamable HTTP
or stdio, the raw HTTP server for failures, kit servers where a shape is needed.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

import llm_mcp
from llm_mcp.chat import ChatTool, MemoryStore
from llm_mcp.chat.chat import NOT_RUN
from llm_mcp.client import outages
from llm_mcp.testing.scripted_model import reply, tool_call, turn

from llm_mcp_tests.support.chats import make_chat
from llm_mcp_tests.support.processes import PYTHON, echo_command


def _text(result: dict[str, Any]) -> str:
    return result["content"].removeprefix("Error: ") if result["is_error"] is None else result["content"]


def _echo(url: str, **settings: Any) -> llm_mcp.MCP:
    return llm_mcp.mcp(url=url, **{"name": "echo", **settings})


class City(ChatTool):
    description = "Echo a city"

    def execute(self, city: str) -> str:
        return city


def test_model_arguments_named_like_parameters_are_tool_errors(chat_on, model, echo_http_url):
    """A model passing "self" (or any key) never crashes the turn: the call gets a result."""
    chat = chat_on([turn(tool_calls=[tool_call("city", {"self": 1}), tool_call("echo", {"self": 1, "message": "m"})]),
                    reply("ok")]).with_tools(City).with_mcp(_echo(echo_http_url))
    assert chat.ask("go").content == "ok"
    city, echo = model.requests[1].tool_results
    assert "TypeError" in _text(city)
    assert echo["content"] == "m"  # the server takes the extra key; nothing broke on our side


def test_ask_after_a_stopped_turn_settles_its_calls(chat_on, model):
    """A turn stopped by an exception leaves calls without results; the next ask() answers them first,
    so the history the model gets stays valid."""

    class Strict(ChatTool):
        rescue_from = {RuntimeError: "stop"}

        def execute(self) -> str:
            raise RuntimeError("stop the chat")

        def stop(self, error: Exception) -> str:
            raise error

    chat = chat_on([tool_call("strict", {}), reply("fresh start")]).with_tools(Strict)
    with pytest.raises(RuntimeError):
        chat.ask("go")
    assert chat.ask("something else").content == "fresh start"
    assert _text(model.requests[1].tool_results[0]) == NOT_RUN
    assert [m.role for m in chat.messages] == ["user", "assistant", "tool", "user", "assistant"]


def test_extra_tools_follow_the_servers_approval_and_defer(chat_on, model, echo_http_url):
    ran = []

    class Danger(ChatTool):
        description = "Do something dangerous"

        def execute(self) -> str:
            ran.append(1)
            return "done"

    chat = chat_on([tool_call("danger", {})]).with_mcp(
        _echo(echo_http_url, only=["echo"], requires_approval=True, extra_tools=[Danger]))
    chat.ask("go")
    assert chat.waiting and not ran and chat.pending_approvals[0].name == "danger"
    deferring = chat_on([reply("ok")]).with_mcp(_echo(echo_http_url, name="d", only=["echo"], defer=True,
                                                      extra_tools=[Danger]))
    deferring.ask("hi")
    assert model.requests[-1].tool_names == ["search_tools"]


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
    chat.with_mcp(_echo(echo_http_url)).with_tools(choice="echo")
    chat.ask("go")
    chat.ask("again")
    assert [r.tool_choice for r in model.requests] == [{"type": "function", "function": {"name": "echo"}}, None,
                                                       {"type": "function", "function": {"name": "echo"}}]


def test_two_resumes_at_once_run_an_approved_call_once(model):
    runs = []
    gate = threading.Event()

    class Transfer(ChatTool):
        requires_approval = True

        def execute(self, amount: int) -> str:
            runs.append(amount)
            gate.wait(5)
            return "sent"

    store = MemoryStore()
    first = make_chat(model, [tool_call("transfer", {"amount": 100}), reply("done")], store=store)
    first.with_tools(Transfer)
    first.ask("pay")
    first.pending_approvals[0].approve()
    second = make_chat(model, store=store).with_tools(Transfer)
    threads = [threading.Thread(target=c.complete) for c in (first, second)]
    for thread in threads:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join(30)
    assert runs == [100]
    assert [m.role for m in store.messages()] == ["user", "assistant", "tool", "assistant"]


def test_a_slow_call_is_not_an_outage(chat_on, model, heard_outages):
    server = llm_mcp.mcp(command=echo_command(), name="echo", timeout=1)
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


def test_a_call_to_a_down_servers_tool_says_so(chat_on, model, raw_http):
    server = llm_mcp.mcp(url=raw_http.url("basic", era="modern"), name="later_down")
    server.tools  # listed earlier in this process
    outages.record(server, llm_mcp.ConnectionError("gone", status=503))
    chat = chat_on([tool_call("echo", {"message": "x"}), reply("ok")]).with_mcp(server)
    chat.ask("go")
    assert _text(model.requests[1].tool_results[0]).startswith("The tool 'echo' is not available right now")


def test_two_servers_with_one_name_in_one_call_are_refused(chat_on, echo_http_url):
    with pytest.raises(ValueError, match="two servers named 'echo'"):
        chat_on().with_mcp(_echo(echo_http_url), _echo(echo_http_url))


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
            server._tools.append(llm_mcp.Tool(server, bad))
        chat = chat_on([reply("ok")]).with_mcp(server)
        with caplog.at_level(logging.WARNING, logger="llm_mcp.chat"):
            chat.ask("hi")
        assert model.requests[0].tool_names == ["good"]
        assert {"arr", "props", "req"} <= {r.getMessage().split("'")[1] for r in caplog.records}
        server.close()


def test_error_texts_show_only_the_origin_of_a_url(chat_on, model):
    from llm_mcp_tests.support.processes import free_port

    url = f"http://127.0.0.1:{free_port()}/mcp/SECRETPATH?api_key=QSECRET"
    server = llm_mcp.mcp(url=url, name="q")
    ghost = llm_mcp.Tool(server, {"name": "ghost"})
    chat = chat_on([tool_call("ghost", {}), reply("ok")]).with_tools(ghost)
    chat.ask("go")
    text = _text(model.requests[1].tool_results[0])
    assert "could not be reached at http://127.0.0.1:" in text
    assert "QSECRET" not in text and "SECRETPATH" not in text


def test_tool_search_still_works_when_its_name_is_taken(chat_on, model, echo_http_url):
    def search_tools(query: str) -> str:
        return "my own search"

    chat = chat_on().with_mcp(_echo(echo_http_url, defer=["add"])).with_tools(search_tools)
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
        _echo(echo_http_url, **settings)


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


def test_failure_text_is_a_sentence(chat_on, model):
    server = llm_mcp.mcp(command=[PYTHON, "-c", "import sys; sys.exit(3)"], name="gone", timeout=5)
    tool = llm_mcp.Tool(server, {"name": "t"})
    text = tool.call()["error"]
    assert ". " not in text.split(":", 1)[0] and text.endswith(".") and ".." not in text


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


# -- second review -------------------------------------------------------------------------------


def test_approval_values_are_checked_and_blank_means_none():
    from llm_mcp.chat import ToolCall

    assert ToolCall("c1", "t", approval="").approval is None
    with pytest.raises(ValueError, match="approval must be one of"):
        ToolCall("c1", "t", approval="maybe")


class Charge(ChatTool):
    description = "Charge an amount"
    charged: list[int] = []
    fail_on = 3

    def execute(self, amount: int) -> str:
        if amount == self.fail_on:
            raise SystemExit("the process died")  # not an Exception: the chat does not turn it into a result
        type(self).charged.append(amount)
        return f"charged {amount}"


def test_results_are_stored_as_each_call_finishes(model):
    """A process that dies mid-batch has stored the calls that finished; a resume runs only the rest."""
    Charge.charged = []
    store = MemoryStore()
    chat = make_chat(model, [turn(tool_calls=[tool_call("charge", {"amount": n}) for n in (1, 2, 3)]),
                             reply("all charged")], store=store).with_tools(Charge)
    with pytest.raises(SystemExit):
        chat.ask("charge three times")
    assert [m.content for m in store.messages() if m.role == "tool"] == ["charged 1", "charged 2"]
    Charge.fail_on = 0
    try:
        resumed = make_chat(model, store=MemoryStore(list(store.messages()))).with_tools(Charge)
        assert resumed.complete().content == "all charged"
    finally:
        Charge.fail_on = 3
    assert Charge.charged == [1, 2, 3]


class CallStore(MemoryStore):
    """A store that writes calls one by one, the way a database store would."""

    def __init__(self) -> None:
        super().__init__()
        self.saved_calls: list[tuple[str, str | None]] = []

    def save(self, message: Any) -> None:
        raise AssertionError("the whole message must not be written back when save_call exists")

    def save_call(self, message: Any, call: Any) -> None:
        self.saved_calls.append((call.id, call.approval))


def test_calls_are_saved_one_by_one_and_pending_marks_first(model):
    seen_before_running: list[Any] = []

    class Pay(ChatTool):
        requires_approval = True

        def execute(self) -> str:
            return "paid"

    store = CallStore()

    class Look(ChatTool):
        def execute(self) -> str:
            seen_before_running.extend(store.saved_calls)
            return "looked"

    chat = make_chat(model, [turn(tool_calls=[tool_call("pay", {}, id="c_pay"), tool_call("look", {}, id="c_look")]),
                             reply("done")], store=store).with_tools(Pay, Look)
    chat.ask("go")
    assert seen_before_running == [("c_pay", "pending")]  # other processes saw the pending call before Look ran
    chat.pending_approvals[0].approve()
    assert store.saved_calls[-1] == ("c_pay", "approved")
    assert chat.complete().content == "done"


def test_ask_after_decisions(chat_on, model, echo_http_url):
    chat = chat_on([tool_call("echo", {"message": "x"}), reply("ok")]).with_mcp(_echo(echo_http_url,
                                                                                      requires_approval=True))
    chat.ask("echo")
    chat.pending_approvals[0].decline()
    assert chat.ask("never mind").content == "ok"
    assert model.requests[1].tool_results[0]["content"] == "The user declined this tool call; it did not run."
    assert model.requests[1].last_user_text == "never mind"
    assert [m.content for m in chat.messages if m.role == "user"] == ["echo", "never mind"]
    model.add(tool_call("echo", {"message": "y"}))
    chat.ask("echo again")
    chat.pending_approvals[0].approve()
    with pytest.raises(ValueError, match="approved but not run"):
        chat.ask("something else")


def test_approved_call_in_a_fresh_chat_while_the_server_is_down(chat_on, model, raw_http):
    server = llm_mcp.mcp(url=raw_http.url("basic", era="modern"), name="fresh", requires_approval=True)
    first = chat_on([tool_call("echo", {"message": "x"}), reply("ok")]).with_mcp(server)
    first.ask("go")
    copy = [llm_mcp.chat.Message.from_dict(m.to_dict()) for m in first.messages]
    again = llm_mcp.mcp(url=raw_http.url("basic", era="modern"), name="fresh", requires_approval=True)
    outages.record(again, llm_mcp.ConnectionError("gone", status=503))
    fresh = make_chat(model, store=MemoryStore(copy)).with_mcp(again)
    fresh.pending_approvals[0].approve()
    fresh.complete()
    assert _text(model.requests[1].tool_results[0]).startswith("The tool 'echo' is not available right now")


def test_search_results_are_not_cut(chat_on, model, echo_http_url):
    chat = chat_on([tool_call("search_tools", {"query": "add integers return message image"}),
                    reply("ok")], max_result_chars=50).with_mcp(_echo(echo_http_url, defer=True))
    chat.ask("find")
    assert {"add", "echo", "image"} <= set(model.requests[1].tool_names)


def test_provider_repr_shows_only_the_origin():
    from llm_mcp.chat.providers import AnthropicProvider, OpenAIProvider

    for provider in (OpenAIProvider(base_url="https://user:PW@gw.example/v1?api-key=QS", api_key="k"),
                     AnthropicProvider(base_url="https://gw.example/x?key=QS", api_key="k")):
        assert "QS" not in repr(provider) and "PW" not in repr(provider) and "gw.example" in repr(provider)


def test_params_the_chat_sets_are_refused():
    with pytest.raises(ValueError, match="stream"):
        llm_mcp.chat("m", "openai", api_key="k", params={"stream": True})
    with pytest.raises(ValueError, match="model"):
        llm_mcp.chat("m", "openai", api_key="k", params={"model": "other"})


def test_pending_calls_pickle_and_with_tools_none_drops_the_choice(chat_on, model):
    import pickle

    def lookup() -> str:
        return "found"

    class Gate(ChatTool):
        requires_approval = True

        def execute(self) -> str:
            return "opened"

    chat = chat_on([tool_call("gate", {})]).with_tools(Gate)
    chat.ask("open")
    copy = pickle.loads(pickle.dumps(chat.pending_approvals[0]))
    assert copy.approval == "pending" and not hasattr(copy, "_save")
    other = chat_on([reply("no tools")]).with_tools(lookup, choice="lookup").with_tools(None)
    assert other.ask("hi").content == "no tools"


def test_agent_inputs_may_not_shadow_its_methods():
    with pytest.raises(ValueError, match="'describe' cannot be an input name"):
        class Agent(llm_mcp.Agent):
            model = "m"
            inputs = ["describe"]

            def describe(self) -> str:
                return "x"


def test_httpx_request_log_shows_only_the_origin_of_mcp_urls(raw_http, caplog):
    url = raw_http.url("basic", era="modern") + "&token=QSECRET"
    server = llm_mcp.mcp(url=url, name="q")
    with caplog.at_level(logging.INFO, logger="httpx"):
        assert server.call("echo", message="hi").text == "hi"
    lines = [r.getMessage() for r in caplog.records if r.name == "httpx"]
    assert lines and all("QSECRET" not in line and "/basic/" not in line for line in lines)
    assert any("HTTP Request: POST http://127.0.0.1:" in line for line in lines)


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


def test_agent_mcp_naming_no_method_fails_at_class_creation():
    """A typo in ``mcp = "servrs"`` is reported where the agent is defined, naming the attribute."""
    with pytest.raises(TypeError, match=r"Typo\.mcp is the string 'servrs', which names no method"):
        class Typo(llm_mcp.Agent):
            model = "m"
            mcp = "servrs"

            def servers(self):
                return []
