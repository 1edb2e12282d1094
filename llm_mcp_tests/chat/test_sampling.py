"""Sampling (MCP 2025-11-25 "Client Features / Sampling"): server-everything's
``trigger-sampling-request`` asks the client for a completion during a chat's call; the chat's model
(the scripted model, through the real OpenAI SDK) answers it, and the server reports what it
received. With approval, a person approves or declines it as a held question.
"""

from __future__ import annotations

import json
import logging

import pytest

import llm_mcp
from llm_mcp.testing.scripted_model import reply, tool_call

from llm_mcp_tests.support.chats import answer_when_asked, make_chat

TOOL = "trigger-sampling-request"
PROMPT = "Name a colour"
SECRET_PROMPT = "the prompt text never reaches the log"


@pytest.fixture(params=["stdio", "http"])
def where(request: pytest.FixtureRequest) -> dict:
    """How to reach server-everything: over stdio or Streamable HTTP."""
    if request.param == "stdio":
        return {"command": request.getfixturevalue("everything_stdio_command")}
    return {"url": request.getfixturevalue("everything_http_url")}


def sampled(text: str) -> dict:
    """The CreateMessageResult server-everything reports having received."""
    return json.loads(text.split("LLM sampling result: ", 1)[1])


def test_sampling_runs_on_the_chats_model_without_history(model, where, caplog):
    """sampling=True: the server's request goes to the chat's model with its system prompt, its message,
    max_tokens from maxTokens and no tools, none of the chat's history; the server receives the model's text.
    The request is logged at INFO without its content."""
    chat = make_chat(model, [tool_call(TOOL, {"prompt": SECRET_PROMPT, "maxTokens": 42}), reply("Teal."),
                             reply("The server heard Teal.")])
    server = llm_mcp.mcp(name="everything", sampling=True, **where)
    chat.with_mcp(server)
    with caplog.at_level(logging.INFO, logger="llm_mcp"), server:
        assert chat.ask("Earlier words the server must not see").content == "The server heard Teal."
    asked = model.requests[1]
    assert asked.system == "You are a helpful test server."
    assert [m["role"] for m in asked.messages if m["role"] != "system"] == ["user"]
    assert asked.last_user_text == f"Resource {TOOL} context: {SECRET_PROMPT}"
    assert asked.body["max_tokens"] == 42 and asked.body["temperature"] == 0.7 and asked.tools == []
    result = sampled(model.requests[2].tool_results[0]["content"])
    assert result["content"] == {"type": "text", "text": "Teal."} and result["role"] == "assistant"
    assert result["model"] == "gpt-test"
    logged = [r.getMessage() for r in caplog.records if "sampling" in r.getMessage()]
    assert any("asks for a model completion" in line and "maxTokens 42" in line for line in logged)
    assert not any(SECRET_PROMPT in r.getMessage() for r in caplog.records)


def test_sampling_approved_by_a_person(model, where):
    """requires_approval=["sampling"]: the request waits as a held question showing what the server asks;
    approved, it runs on the model and the server receives the answer."""
    chat = make_chat(model, [tool_call(TOOL, {"prompt": PROMPT, "maxTokens": 20}), reply("Red."), reply("ok")])
    server = llm_mcp.mcp(name="everything", sampling=True, requires_approval=["sampling"], **where)
    person = answer_when_asked(chat.with_mcp(server), lambda question: question.answer())
    with server:
        assert chat.ask("Ask the server").content == "ok"
    person.join()
    [question] = person.seen
    assert question.held and question.fields == []
    assert f"Resource {TOOL} context: {PROMPT}" in question.message and "at most 20 tokens" in question.message
    assert question.params["sampling"]["maxTokens"] == 20
    assert sampled(model.requests[2].tool_results[0]["content"])["content"]["text"] == "Red."


def test_sampling_declined_by_a_person(model, where):
    """Declined: the model is not asked; the server gets an error and its tool reports it."""
    chat = make_chat(model, [tool_call(TOOL, {"prompt": PROMPT, "maxTokens": 20}), reply("ok")])
    server = llm_mcp.mcp(name="everything", sampling=True, requires_approval=["sampling"], **where)
    person = answer_when_asked(chat.with_mcp(server), lambda question: question.decline())
    with server:
        assert chat.ask("Ask the server").content == "ok"
    person.join()
    [result] = model.requests[1].tool_results
    assert "did not approve the sampling request" in result["content"]
    assert len(model.requests) == 2  # no completion was asked for


def test_sampling_off_by_default_and_refused_outside_a_chat(everything_stdio_command):
    """Without the setting nothing is declared (the server offers no sampling tool); with sampling=True but
    no chat, the request is refused with an error the server reports; a callable answers anywhere."""
    with llm_mcp.mcp(command=everything_stdio_command, name="everything") as server:
        assert "sampling" not in server.declared_capabilities("handshake") and server.tool(TOOL) is None
    with llm_mcp.mcp(command=everything_stdio_command, name="everything", sampling=True) as server:
        refused = server.call(TOOL, prompt=PROMPT, maxTokens=5)
        assert refused.is_error and "outside a chat" in refused.text
    seen = []
    with llm_mcp.mcp(command=everything_stdio_command, name="everything",
                     sampling=lambda params: seen.append(params) or "Blue.") as server:
        assert sampled(server.call(TOOL, prompt=PROMPT, maxTokens=5).text)["content"]["text"] == "Blue."
    assert seen[0]["maxTokens"] == 5


def test_sampling_settings_are_checked():
    """A sampling value that cannot work is refused when the server is built, naming the problem."""
    for bad, problem in (("no_such_method", "not a method"), ({"modle": "x"}, "takes the keys"),
                         ({"model": 3}, "must be a string"), (3, "must be True, False"),
                         ({"provider": "anthropic"}, "names a provider but no model"),
                         ({"provider": "anthropic", "model": ""}, "names a provider but no model")):
        with pytest.raises(ValueError, match=problem):
            llm_mcp.mcp(command=["x"], sampling=bad)
    server = llm_mcp.mcp(command=["x"], sampling={"model": "m", "history": True}, requires_approval=["sampling"])
    assert server.declared_capabilities("handshake")["sampling"] == {"context": {}}


def test_model_preferences_pick_among_the_listed_models(model):
    """modelPreferences.hints pick the first listed model whose id contains a hint; without a match, the first
    listed model; without a list, the chat's model. Each request carries only the server's message."""
    chat = make_chat(model, [reply("one"), reply("two"), reply("three")])
    params = {"messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}], "maxTokens": 9,
              "modelPreferences": {"hints": [{"name": "mini"}]}}
    assert chat._sample(params, {"models": ["gpt-large", "gpt-mini"]})["model"] == "gpt-mini"
    assert chat._sample({**params, "modelPreferences": {"hints": [{"name": "claude"}]}},
                        {"models": ["gpt-large", "gpt-mini"]})["content"]["text"] == "two"
    assert chat._sample(params, {})["content"]["text"] == "three"
    assert [r.model for r in model.requests] == ["gpt-mini", "gpt-large", "gpt-test"]
    assert all(r.last_user_text == "Hi" and r.body["max_tokens"] == 9 for r in model.requests)


# -- the kit's complete_for_me tool: sampling as a 2026-07-28 input request (and on the stream before) ----------

KIT_TOOL = "complete_for_me"


@pytest.fixture(scope="module", params=[("modern", "stdio"), ("modern", "http"), ("handshake", "http")],
                ids=lambda p: "-".join(p))
def kit(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """The questions kit server (whose complete_for_me tool asks for sampling), recording every tools/call."""
    from llm_mcp_tests.support.kit_records import recording_server

    with recording_server("llm_mcp_tests.support.servers.questions", *request.param,
                          tmp_path_factory.mktemp("sampling")) as server:
        yield server


@pytest.fixture
def fresh_kit(kit):
    kit.clear()
    return kit


def kit_reply(text: str) -> dict:
    """What complete_for_me reports: the CreateMessageResult it got and the requestState it was sent."""
    return json.loads(text)


def test_sampling_input_request_answered_by_the_chats_model(model, fresh_kit):
    """2026-07-28: a sampling/createMessage input request is answered with the same sampling
    setting as a handshake-era request: the chat's model gets the server's system prompt and message, max_tokens
    from maxTokens and no chat history; the call is sent again with the CreateMessageResult in inputResponses and
    the requestState unchanged (the handshake era: on the stream of the call)."""
    from llm_mcp_tests.support.servers.questions import SAMPLING_SYSTEM

    chat = make_chat(model, [tool_call(KIT_TOOL, {"prompt": "Name a fruit", "max_tokens": 17}), reply("Plum."),
                             reply("The server heard Plum.")])
    chat.with_mcp(fresh_kit.mcp(sampling=True))
    assert chat.ask("Words the server must not see").content == "The server heard Plum."
    asked = model.requests[1]
    assert asked.system == SAMPLING_SYSTEM and asked.last_user_text == "Name a fruit"
    assert "Words the server must not see" not in json.dumps(asked.messages)
    assert asked.body["max_tokens"] == 17 and asked.tools == []
    got = kit_reply(model.requests[2].tool_results[0]["content"])
    assert got["reply"]["content"] == {"type": "text", "text": "Plum."} and got["reply"]["model"] == "gpt-test"
    calls = fresh_kit.received(KIT_TOOL)
    assert calls[-1]["capabilities"]["sampling"] == {}
    if fresh_kit.era == "modern":
        first, retry = calls
        assert first["responses"] == {} and retry["state"] == "sampling-1" and got["state"] == "sampling-1"
        assert retry["responses"]["completion"]["content"]["text"] == "Plum."
        assert retry["id"] != first["id"]


def test_sampling_input_request_approved_and_declined(model, fresh_kit):
    """requires_approval=["sampling"] on 2026-07-28: the request waits as a held sampling question showing
    what the server asked (system prompt, message, maxTokens); approved, the model answers it; declined, the
    model is not asked, the server gets no answer, and the chat's model is told the request was not approved."""
    from llm_mcp_tests.support.servers.questions import SAMPLING_SYSTEM

    chat = make_chat(model, [tool_call(KIT_TOOL, {"prompt": "Name a tree", "max_tokens": 9}), reply("Oak."),
                             reply("approved"),
                             tool_call(KIT_TOOL, {"prompt": "Name a river"}), reply("declined")])
    chat.with_mcp(fresh_kit.mcp(sampling=True, requires_approval=["sampling"]))
    person = answer_when_asked(chat, lambda question: question.answer())
    assert chat.ask("Ask the server").content == "approved"
    person.join()
    [question] = person.seen
    assert question.held and question.sampling == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Name a tree"}}], "maxTokens": 9,
        "systemPrompt": SAMPLING_SYSTEM}
    assert "Name a tree" in question.message and "at most 9 tokens" in question.message
    assert kit_reply(model.requests[2].tool_results[0]["content"])["reply"]["content"]["text"] == "Oak."
    fresh_kit.clear()
    person = answer_when_asked(chat, lambda question: question.decline())
    assert chat.ask("Ask again").content == "declined"
    person.join()
    refused = model.requests[-1].tool_results[-1]
    assert "did not approve the sampling request" in refused["content"]
    assert len(model.requests) == 5  # nobody asked the model for the declined completion
    calls = fresh_kit.received(KIT_TOOL)
    assert all("completion" not in call["responses"] for call in calls)  # the server never got an answer


def test_sampling_input_request_not_declared_or_outside_a_chat(fresh_kit):
    """Without the sampling setting no sampling capability is declared, and the kit tool, which must not ask
    what was not declared, answers error -32021. With sampling=True outside a chat there is no model to ask:
    on 2026-07-28 the call stops with an MCPError saying so (inputResponses has no place for an error); in the
    handshake era the server gets error -1, which the kit passes on. A callable sampling setting answers anywhere."""
    with fresh_kit.mcp() as server:
        assert "sampling" not in server.declared_capabilities("modern")
        with pytest.raises(llm_mcp.MCPError, match="did not declare the sampling capability") as undeclared:
            server.call(KIT_TOOL, prompt="Name a bird")
        assert undeclared.value.code == -32021
    with fresh_kit.mcp(sampling=True) as server:
        with pytest.raises(llm_mcp.MCPError, match="outside a chat") as refused:
            server.call(KIT_TOOL, prompt="Name a bird")
        assert refused.value.code == -1  # the client's refusal; the kit passes the error it got on
    seen = []
    with fresh_kit.mcp(sampling=lambda params: seen.append(params) or "Wren.") as server:
        assert kit_reply(server.call(KIT_TOOL, prompt="Name a bird").text)["reply"]["content"]["text"] == "Wren."
    assert seen[0]["messages"][0]["content"]["text"] == "Name a bird" and seen[0]["maxTokens"] == 30


def test_malformed_sampling_input_request_stops_the_call(everything_stdio_command):
    """A 2026-07-28 sampling input request without messages or maxTokens cannot be answered: the call stops
    with an MCPError naming the problem (the model is never asked)."""
    from llm_mcp.client.server.sampling import REFUSED

    server = llm_mcp.mcp(command=everything_stdio_command, name="odd", sampling=lambda params: "never")
    for bad, problem in (({"maxTokens": 5}, "non-empty list of messages"),
                         ({"messages": [{"role": "user", "content": {"type": "text", "text": "x"}}]}, "maxTokens")):
        with pytest.raises(llm_mcp.MCPError, match=problem) as stopped:
            server._sampling.input_response(bad)
        assert stopped.value.code == REFUSED


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_sampling_requests_per_call_are_bounded(era):
    """A server asking for more than MAX_PER_CALL completions in one call (each spends the user's tokens) gets
    the first MAX_PER_CALL answered and the next refused: the call fails with the refusal, naming the limit."""
    from llm_mcp.client.server.sampling import MAX_PER_CALL
    from llm_mcp.testing import Server, Tool, running_server
    from llm_mcp.testing.asking import sampling_request

    class Greedy(Tool):
        name = "greedy"

        def call(self):
            requests = {f"s{i}": sampling_request(f"Question {i}", max_tokens=5) for i in range(MAX_PER_CALL + 5)}
            return str(len(self.ask_all(requests, check_capabilities=False)))

    answered = []
    with running_server(Server("greedy", tools=[Greedy]), era=era) as running:
        with running.mcp(name="greedy", sampling=lambda params: answered.append(params) or "ok") as server:
            with pytest.raises(llm_mcp.MCPError, match=f"more than {MAX_PER_CALL} model completions"):
                server.call("greedy")
    assert len(answered) == MAX_PER_CALL


def test_a_huge_request_has_a_short_summary_and_the_whole_request():
    """The approval question's plain-text message is cut at MAX_SUMMARY_CHARS, saying how much was left out;
    question.sampling keeps the request exactly as the server sent it."""
    from llm_mcp.client.server.sampling import MAX_SUMMARY_CHARS, approval_params

    text = "x" * (3 * MAX_SUMMARY_CHARS)
    request = {"messages": [{"role": "user", "content": {"type": "text", "text": text}}], "maxTokens": 4}
    question = llm_mcp.Question("sampling", approval_params("big", request), server="big", kind="sampling")
    assert len(question.message) < MAX_SUMMARY_CHARS + 60 and "more characters]" in question.message
    assert question.sampling == request and question.sampling["messages"][0]["content"]["text"] == text


def test_sampling_on_another_provider_and_tools_refused(model, fresh_kit):
    """sampling={"provider": "anthropic", "model": ..., "options": {...}}: an OpenAI chat's sampling request goes
    through the Anthropic SDK to that model (max_tokens, system prompt), in both eras. A request offering tools is
    refused (this client does not declare sampling.tools), so the model is not asked for it."""
    from llm_mcp.testing import Server, Tool, running_server
    from llm_mcp_tests.support.servers.questions import SAMPLING_SYSTEM

    chat = make_chat(model, [tool_call(KIT_TOOL, {"prompt": "Name a stone", "max_tokens": 11}), reply("Flint."),
                             reply("ok")])
    chat.with_mcp(fresh_kit.mcp(sampling={"provider": "anthropic", "model": "claude-test", "options": {
        "base_url": model.anthropic_base_url, "api_key": "test-key"}}))
    assert chat.ask("Ask the server").content == "ok"
    sampled = model.requests[1]
    assert (sampled.api, sampled.model, sampled.system) == ("anthropic", "claude-test", SAMPLING_SYSTEM)
    assert sampled.body["max_tokens"] == 11 and sampled.last_user_text == "Name a stone"
    assert kit_reply(model.requests[2].tool_results[0]["content"])["reply"]["model"] == "claude-test"

    class WithTools(Tool):
        name = "with_tools"

        def call(self):
            return str(self.sample("k", "Use a tool", max_tokens=5, tools=[
                {"name": "dig", "inputSchema": {"type": "object"}}]))

    asked = []
    with running_server(Server("tools", tools=[WithTools]), era=fresh_kit.era) as running:
        with running.mcp(name="tools", sampling=lambda params: asked.append(params) or "no") as server:
            with pytest.raises(llm_mcp.MCPError, match="does not offer tools in sampling"):
                server.call("with_tools")
    assert asked == []


ASKED = [{"role": "user", "content": {"type": "text", "text": "Name a bird"}}]


@pytest.mark.parametrize("junk", [{"modelPreferences": "fast please"}, {"modelPreferences": [1, 2]},
                                  {"modelPreferences": {"hints": 5}}, {"modelPreferences": {"hints": "mini"}},
                                  {"modelPreferences": {"hints": [None, {"name": 7}, {"name": "mini"}]}}])
def test_junk_model_preferences_are_only_hints(model, raw_stdio_command_factory, junk):
    """modelPreferences are advisory (spec: hints the client MAY follow): a server sending junk there (a
    string, a list, hints that are not a list of {"name"} objects) still gets its completion from the
    chat's model; usable hints among the junk still pick from the setting's models."""
    chat = make_chat(model, [tool_call("ask_client", {"method": "sampling/createMessage",
                                                      "params": {"messages": ASKED, "maxTokens": 7, **junk}}),
                             reply("Wren."), reply("done")])
    with llm_mcp.mcp(command=raw_stdio_command_factory(), name="odd",
                     sampling={"models": ["gpt-large", "gpt-mini"]}) as server:
        assert chat.with_mcp(server).ask("go").content == "done"
    answered = json.loads(model.requests[2].tool_results[0]["content"].removeprefix("client answered: "))
    assert answered["result"]["content"] == {"type": "text", "text": "Wren."}, answered
    usable = junk["modelPreferences"] == {"hints": [None, {"name": 7}, {"name": "mini"}]}
    assert model.requests[1].model == ("gpt-mini" if usable else "gpt-large")
    assert model.requests[1].last_user_text == "Name a bird" and model.requests[1].body["max_tokens"] == 7


@pytest.mark.parametrize("messages", [[1, "x"], [{"role": "user", "content": "a bare string"}],
                                      [{"role": "user", "content": [{"type": "image", "data": "AA=="}]}, 5]])
def test_malformed_sampling_messages_get_invalid_params(model, raw_stdio_command_factory, messages):
    """A sampling request whose messages are not {"role", "content": block(s)} objects is malformed: the
    server gets -32602 naming the problem, and the chat's model is not asked (no empty prompt is sent)."""
    chat = make_chat(model, [tool_call("ask_client", {"method": "sampling/createMessage",
                                                      "params": {"messages": messages, "maxTokens": 7}}),
                             reply("done")])
    with llm_mcp.mcp(command=raw_stdio_command_factory(), name="odd", sampling=True) as server:
        assert chat.with_mcp(server).ask("go").content == "done"
    answered = json.loads(model.requests[1].tool_results[0]["content"].removeprefix("client answered: "))
    assert answered["error"]["code"] == -32602 and "message" in answered["error"]["message"], answered
    assert len(model.requests) == 2


def test_a_sampling_setting_that_cannot_run_is_the_clients_error(model, raw_stdio_command_factory, caplog):
    """A sampling dict naming a provider this process does not have fails when the server asks: the server
    gets -32603 (the client's failure, not -32602 "your params are invalid"), the call goes on, and a WARNING
    under llm_mcp.client names the setting's problem for the developer."""
    chat = make_chat(model, [tool_call("ask_client", {"method": "sampling/createMessage"}), reply("done")])
    with caplog.at_level(logging.WARNING, logger="llm_mcp.client"), \
            llm_mcp.mcp(command=raw_stdio_command_factory(), name="odd",
                        sampling={"provider": "no-such-provider", "model": "m"}) as server:
        assert chat.with_mcp(server).ask("go").content == "done"
    answered = json.loads(model.requests[1].tool_results[0]["content"].removeprefix("client answered: "))
    assert answered["error"]["code"] == -32603, answered
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("odd" in line and "no-such-provider" in line for line in warned), warned
    assert len(model.requests) == 2
