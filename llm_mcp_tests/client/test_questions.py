"""Questions from servers (MCP-QUEST): a kit server asks, over stdio and HTTP, in both eras.

The server (``llm_mcp_tests/support/servers/questions.py``) writes what every ``tools/call`` brought
(id, ``requestState``, ``inputResponses``, client capabilities) to a file, and the tests assert
on that: what the server really received, not what the client meant to send. Questions no form can
show, answers a schema refuses and malformed ``InputRequiredResult``s come from the ``asking_kit``
server and the hand-written ``odd_questions`` stdio server (which sends what a kit server cannot).
The example site's question form is tested in ``django/test_example_site.py``.
"""

from __future__ import annotations

import json
import logging
import math
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import llm_mcp
from llm_mcp.client.asking import MAX_INPUT_ROUNDS
from llm_mcp.testing import running_server
from llm_mcp.testing.scripted_model import reply, tool_call

from llm_mcp_tests.support.chats import answer_when_asked, make_chat
from llm_mcp_tests.support.kit_records import RecordingServer as QuestionServer
from llm_mcp_tests.support.kit_records import recording_server
from llm_mcp_tests.support.servers.asking_kit import server
from llm_mcp_tests.support.servers.questions import DEPLOY_STATE

ROOT = str(Path(__file__).resolve().parents[2])
BOTH = {"elicitation": {"form": {}, "url": {}}}


def _start(era: str, transport: str, folder: Path) -> Iterator[QuestionServer]:
    with recording_server("llm_mcp_tests.support.servers.questions", era, transport, folder) as server:
        yield server


@pytest.fixture(scope="module", params=["stdio", "http"])
def modern(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[QuestionServer]:
    """The questions server on 2026-07-28, over stdio and over HTTP."""
    yield from _start("modern", request.param, tmp_path_factory.mktemp("questions"))


@pytest.fixture(scope="module", params=["stdio", "http"])
def handshake(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[QuestionServer]:
    """The questions server in the handshake era (2025-11-25), over stdio and over HTTP."""
    yield from _start("handshake", request.param, tmp_path_factory.mktemp("questions"))


@pytest.fixture
def q_modern(modern: QuestionServer) -> QuestionServer:
    modern.clear()
    return modern


@pytest.fixture
def q_handshake(handshake: QuestionServer) -> QuestionServer:
    handshake.clear()
    return handshake


def tool_text(request: Any, index: int = 0) -> str:
    return request.tool_results[index]["content"]


# -- a chat pauses, the user answers, the call resumes (2026-07-28) ------------------------------------

def test_quest_01_to_05_11_13_chat_pauses_answer_resumes(model, q_modern):
    """MCP-QUEST-01, MCP-QUEST-02, MCP-QUEST-03, MCP-QUEST-04, MCP-QUEST-05, MCP-QUEST-11, MCP-QUEST-13: a
    server's question pauses the call (ask returns, waiting); the question is an llm_mcp.Question with the
    server's message and fields; answer("staging") + complete() sends the original request again with a new
    id, inputResponses keyed like inputRequests and requestState byte for byte, and the call finishes."""
    chat = make_chat(model, [tool_call("deploy", {"branch": "release"}), reply("Deployed.")])
    chat.with_mcp(q_modern.mcp())
    paused = chat.ask("Deploy the release branch")
    assert chat.waiting and paused.tool_calls[0].name == "deploy" and len(model.requests) == 1
    [question] = chat.pending_questions
    assert isinstance(question, llm_mcp.Question)
    assert question.message == "Which environment?" and question.server == "questions" and not question.is_url
    [field] = question.fields
    assert (field.name, field.type, field.title, field.description, field.choices, field.default, field.required) \
        == ("environment", "string", "Environment", "Where to deploy", ["staging", "production"], None, True)
    assert chat.complete() is not None and chat.waiting and len(model.requests) == 1  # nothing answered yet
    question.answer("staging")
    assert not chat.waiting  # answered: complete() may resume
    assert chat.complete().content == "Deployed."
    assert tool_text(model.requests[1]) == "deployed release to staging"
    first, retry = q_modern.received("deploy")
    assert first["state"] is None and first["responses"] == {}
    assert retry["state"] == DEPLOY_STATE  # byte for byte
    assert retry["responses"] == {"env": {"action": "accept", "content": {"environment": "staging"}}}
    assert retry["id"] != first["id"]
    assert chat.messages[1].tool_calls[0].pending_questions == [] and not chat.waiting


def test_quest_06_07_several_fields_by_name_with_defaults(model, q_modern):
    """MCP-QUEST-06, MCP-QUEST-07: several fields answered by name; the ones left out take their defaults."""
    chat = make_chat(model, [tool_call("profile"), reply("ok")]).with_mcp(q_modern.mcp())
    chat.ask("fill my profile")
    [question] = chat.pending_questions
    assert [f.name for f in question.fields] == ["name", "age", "verified", "color", "reason"]
    assert [f.default for f in question.fields] == ["Ada", 36, False, "green", None]
    assert [f.required for f in question.fields] == [False, False, False, False, True]
    assert question.field("color").choices == ["red", "green"]
    question.answer(reason="Release 2.2", age=40)
    chat.complete()
    content = {"name": "Ada", "age": 40, "verified": False, "color": "green", "reason": "Release 2.2"}
    assert q_modern.received("profile")[-1]["responses"] == {"profile": {"action": "accept", "content": content}}
    assert json.loads(tool_text(model.requests[1])) == {"action": "accept", "content": content}


def test_quest_08_decline(model, q_modern):
    """MCP-QUEST-08: decline() is sent as {"action": "decline"}; the call finishes the server's way."""
    chat = make_chat(model, [tool_call("deploy"), reply("ok")]).with_mcp(q_modern.mcp())
    chat.ask("deploy")
    chat.pending_questions[0].decline()
    chat.complete()
    assert q_modern.received("deploy")[-1]["responses"] == {"env": {"action": "decline"}}
    assert tool_text(model.requests[1]) == "deploy declined"


def test_quest_09_url_question_answer_means_agreed(model, q_modern):
    """MCP-QUEST-09: a URL question has url and is_url; answer() with no value is sent as accept."""
    chat = make_chat(model, [tool_call("connect"), reply("ok")]).with_mcp(q_modern.mcp())
    chat.ask("connect")
    [question] = chat.pending_questions
    assert question.is_url and question.url == "https://accounts.example.com/connect?user=7"
    assert question.fields == [] and question.message == "Connect your account"
    with pytest.raises(ValueError, match="takes no values"):
        question.answer("yes")
    question.answer()
    chat.complete()
    last = q_modern.received("connect")[-1]
    assert last["responses"] == {"login": {"action": "accept"}} and last["state"] == "connect-1"
    assert tool_text(model.requests[1]) == "connected"


def test_tool_11_tool_call_raises_when_the_callbacks_leave_a_question_open(q_modern):
    """MCP-TOOL-11: ``tool.call()`` raises llm_mcp.InputRequiredError when the server still needs input
    after the ``before_input_request`` callbacks ran (this one sees the question and answers nothing)."""
    seen: list[llm_mcp.Question] = []
    server = q_modern.mcp(before_input_request=seen.append)
    with pytest.raises(llm_mcp.InputRequiredError) as caught:
        server.tool("deploy").call(branch="x")
    assert [q.key for q in seen] == ["env"]  # the callback ran first
    assert [q.key for q in caught.value.requests] == ["env"] and caught.value.request_state == DEPLOY_STATE


@pytest.mark.parametrize("url", ["javascript:alert(1)", "data:text/html,<script>x</script>", "file:///etc/passwd"])
def test_quest_10_non_web_url_declined_before_callback_and_chat(model, q_modern, url):
    """MCP-QUEST-10: a URL question whose scheme is not http(s) is declined automatically: the callback never
    sees it and the chat does not pause."""
    seen = []
    server = q_modern.mcp(before_input_request=seen.append)
    chat = make_chat(model, [tool_call("connect", {"url": url}), reply("ok")]).with_mcp(server)
    assert chat.ask("connect").content == "ok"
    assert seen == [] and not chat.waiting and chat.pending_questions == []
    assert q_modern.received("connect")[-1]["responses"] == {"login": {"action": "decline"}}
    assert tool_text(model.requests[1]) == "not connected (decline)"


def test_quest_12_server_asks_again_pauses_again(model, q_modern):
    """MCP-QUEST-12: the resumed call asks something more: it pauses again with the new question, and the
    loop goes on until none is left; each retry carries only its own round's answers and state."""
    chat = make_chat(model, [tool_call("two_steps"), reply("done")]).with_mcp(q_modern.mcp())
    chat.ask("go")
    chat.pending_questions[0].answer("production")
    chat.complete()
    assert chat.waiting
    [second] = chat.pending_questions
    assert second.key == "confirm" and second.message == "Really deploy to production?"
    second.answer(True)
    assert chat.complete().content == "done"
    first, retry1, retry2 = q_modern.received("two_steps")
    assert (retry1["state"], list(retry1["responses"])) == ("step-1", ["env"])
    assert (retry2["state"], retry2["responses"]) == ("step-2:production", {"confirm": {"action": "accept",
                                                                             "content": {"confirmed": True}}})
    assert len({first["id"], retry1["id"], retry2["id"]}) == 3
    assert tool_text(model.requests[1]) == "production confirmed=True"


def test_quest_13_waiting_until_every_question_of_the_call_is_answered(model, q_modern):
    """MCP-QUEST-13, MCP-QUEST-11: with two questions in one round the chat waits until both are answered;
    complete() before that does not resume the call."""
    chat = make_chat(model, [tool_call("both"), reply("ok")]).with_mcp(q_modern.mcp())
    chat.ask("both")
    env, login = chat.pending_questions
    env.answer("staging")
    assert chat.waiting and [q.key for q in chat.pending_questions] == ["login"]
    chat.complete()
    assert len(q_modern.received("both")) == 1  # not resumed
    login.answer()
    chat.complete()
    assert q_modern.received("both")[-1]["responses"] == {
        "env": {"action": "accept", "content": {"environment": "staging"}}, "login": {"action": "accept"}}


# -- outside chats ----------------------------------------------------------------------------------

def test_quest_14_outside_a_chat_raises_input_required_error(q_modern):
    """MCP-QUEST-14: server.call, a tool method and Tool.call raise llm_mcp.InputRequiredError whose
    .requests lists the unanswered Questions."""
    server = q_modern.mcp()
    for call in (lambda: server.call("deploy", branch="x"), lambda: server.deploy(branch="x"),
                 lambda: server.tool("deploy").call(branch="x")):
        with pytest.raises(llm_mcp.InputRequiredError) as caught:
            call()
        [question] = caught.value.requests
        assert isinstance(question, llm_mcp.Question) and question.key == "env"
        assert caught.value.request_state == DEPLOY_STATE
    assert len(q_modern.received("deploy")) == 3


def test_quest_14_callback_answering_everything_finishes_the_call(q_modern):
    """MCP-QUEST-14, MCP-QUEST-15: outside a chat, when the callback answers every question the call is sent
    again at once and finishes."""
    server = q_modern.mcp(before_input_request=lambda question: question.answer("production"))
    assert server.call("deploy", branch="main").text == "deployed main to production"
    first, retry = q_modern.received("deploy")
    assert retry["state"] == DEPLOY_STATE and retry["id"] != first["id"]


def test_rounds_are_bounded(q_modern):
    """MCP-QUEST-14: a server that asks again after every answer is stopped after MAX_INPUT_ROUNDS rounds."""
    server = q_modern.mcp(before_input_request=lambda question: question.answer(True))
    with pytest.raises(llm_mcp.MCPError, match="kept asking"):
        server.call("pushy")
    assert len(q_modern.received("pushy")) == MAX_INPUT_ROUNDS


# -- before_input_request -----------------------------------------------------------------------------

class DeploysBase(llm_mcp.MCP):
    """A server class that answers from the user's settings (its location comes from the test)."""

    name = "questions"
    inputs = ["default_environment"]
    before_input_request = "answer_from_settings"

    def answer_from_settings(self, question: llm_mcp.Question) -> None:
        field = question.fields[0] if len(question.fields) == 1 else None
        if question.is_url:
            question.decline()
        elif field is not None and field.name == "environment" and self.default_environment in (field.choices or []):
            question.answer(self.default_environment)


def deploys(qs: QuestionServer) -> type[llm_mcp.MCP]:
    return type("Deploys", (DeploysBase,), qs.location)


def test_quest_15_16_callback_answers_declines_or_leaves_open(model, q_modern):
    """MCP-QUEST-15, MCP-QUEST-16: the method named by before_input_request runs on the instance with each
    question; what it answers or declines goes to the server without pausing the chat; what it leaves open
    is added to chat.pending_questions."""
    chat = make_chat(model, [tool_call("deploy"), reply("one"), tool_call("connect"), reply("two"),
                             tool_call("deploy"), reply("three")])
    chat.with_mcp(deploys(q_modern)(default_environment="staging"))
    assert chat.ask("deploy").content == "one" and not chat.waiting
    assert tool_text(model.requests[1]) == "deployed main to staging"
    assert chat.ask("connect").content == "two" and not chat.waiting  # declined by the callback
    assert q_modern.received("connect")[-1]["responses"] == {"login": {"action": "decline"}}

    other = make_chat(model, [tool_call("deploy"), reply("later")])
    other.with_mcp(deploys(q_modern)(default_environment="moon"))  # not a choice: left open
    other.ask("deploy")
    assert other.waiting and [q.key for q in other.pending_questions] == ["env"]


def test_quest_16_callback_answers_one_of_two(model, q_modern):
    """MCP-QUEST-16: the callback answers the form and leaves the URL question open: only the URL question
    pauses the chat, and the retry carries both answers."""
    server = q_modern.mcp(before_input_request=lambda q: None if q.is_url else q.answer("production"))
    chat = make_chat(model, [tool_call("both"), reply("ok")]).with_mcp(server)
    chat.ask("both")
    [login] = chat.pending_questions
    assert login.key == "login"
    login.answer()
    chat.complete()
    assert q_modern.received("both")[-1]["responses"] == {
        "env": {"action": "accept", "content": {"environment": "production"}}, "login": {"action": "accept"}}


def test_quest_17_invalid_answers_raise_value_error(model, q_modern):
    """MCP-QUEST-17: a field the question lacks, a choice it does not offer or a value of the wrong type
    raises ValueError and leaves the question open; from the callback, the error comes out of the call."""
    chat = make_chat(model, [tool_call("profile")]).with_mcp(q_modern.mcp())
    chat.ask("profile")
    [question] = chat.pending_questions
    for bad in ({"reason": "x", "nickname": "y"}, {"reason": "x", "color": "blue"}, {"reason": "x", "age": "old"},
                {"reason": "x", "verified": 1}, {"reason": "x", "age": 200}, {"name": "x"}):
        with pytest.raises(ValueError):
            question.answer(**bad)
    with pytest.raises(ValueError, match="by name"):
        question.answer("just one value")
    assert chat.waiting and chat.pending_questions[0].response is None

    server = q_modern.mcp(before_input_request=lambda q: q.answer("moon"))
    with pytest.raises(ValueError, match="does not offer 'moon'"):
        server.call("deploy")
    chat = make_chat(model, [tool_call("deploy")]).with_mcp(q_modern.mcp(before_input_request=lambda q: q.answer(5)))
    with pytest.raises(ValueError, match="takes a string"):
        chat.ask("deploy")


def test_quest_17_answered_twice_is_refused(model, q_modern):
    """MCP-QUEST-17: a question answered already cannot be answered again (here: by another Question object
    for the same stored question)."""
    chat = make_chat(model, [tool_call("deploy")]).with_mcp(q_modern.mcp())
    chat.ask("deploy")
    first, again = chat.pending_questions[0], chat.pending_questions[0]
    first.answer("staging")
    with pytest.raises(ValueError, match="answered already"):
        again.decline()
    with pytest.raises(ValueError, match="answered already"):
        first.answer("production")


# -- input_requests and the capabilities declared --------------------------------------------------

@pytest.mark.parametrize(("setting", "declared"), [
    (True, BOTH), ("form", {"elicitation": {"form": {}}}), ("url", {"elicitation": {"url": {}}}),
    (["form", "url"], BOTH), (False, {})])
def test_quest_18_19_declared_capabilities(q_modern, setting, declared):
    """MCP-QUEST-18, MCP-QUEST-19: the capabilities the server receives follow input_requests: both kinds by
    default, one kind, or no elicitation key at all."""
    assert json.loads(q_modern.mcp(input_requests=setting).call("capabilities").text) == declared
    assert q_modern.received("capabilities")[-1]["capabilities"] == declared


def test_quest_18_default_is_both_kinds(q_modern):
    """MCP-QUEST-18: without settings, form and URL questions are accepted."""
    assert json.loads(q_modern.mcp().call("capabilities").text) == BOTH


def test_quest_18_every_request_of_one_server_object_declares_the_same(q_modern):
    """MCP-QUEST-18: the capabilities are built once per server object and era (they are sent
    in every 2026-07-28 request's ``_meta``); the second and third calls declare what the first did."""
    server = q_modern.mcp(input_requests="form")
    for _ in range(3):
        assert json.loads(server.call("capabilities").text) == {"elicitation": {"form": {}}}
    assert [r["capabilities"] for r in q_modern.received("capabilities")] == [{"elicitation": {"form": {}}}] * 3


def test_quest_18_an_overridden_declared_capabilities_is_asked_each_request(q_modern):
    """MCP-QUEST-18: a class that overrides ``declared_capabilities`` gets no kept copy: each
    request declares what it returns then."""

    class Changing(llm_mcp.MCP):
        offered: dict[str, Any] = {}

        def declared_capabilities(self, era: str) -> dict[str, Any]:
            return dict(self.offered)

    server = type("ChangingHere", (Changing,), q_modern.location)()
    assert json.loads(server.call("capabilities").text) == {}
    server.offered = {"elicitation": {"url": {}}}
    assert json.loads(server.call("capabilities").text) == {"elicitation": {"url": {}}}


def test_quest_20_undeclared_kind_declined(model, q_modern):
    """MCP-QUEST-20: a server that asks a kind the client did not accept gets a decline, with no callback and
    no pause."""
    seen = []
    server = q_modern.mcp(input_requests="form", before_input_request=seen.append)
    chat = make_chat(model, [tool_call("connect", {"force": True}), reply("ok")]).with_mcp(server)
    assert chat.ask("connect").content == "ok" and not chat.waiting and seen == []
    assert q_modern.received("connect")[-1]["responses"] == {"login": {"action": "decline"}}


def test_quest_21_no_questions_server_error_raises(q_modern):
    """MCP-QUEST-21: with input_requests=False a server that answers with an error raises MCPError."""
    with pytest.raises(llm_mcp.MCPError) as caught:
        q_modern.mcp(input_requests=False).call("deploy")
    assert caught.value.code == -32021 and not isinstance(caught.value, llm_mcp.InputRequiredError)


def test_settings_are_checked():
    """MCP-QUEST-19: a bad input_requests or before_input_request is refused naming the setting."""
    with pytest.raises(ValueError, match="input_requests"):
        llm_mcp.mcp(url="http://127.0.0.1:1/mcp", input_requests="sms")
    with pytest.raises(ValueError, match="before_input_request"):
        llm_mcp.mcp(url="http://127.0.0.1:1/mcp", before_input_request="no_such_method")


# -- handshake-era servers --------------------------------------------------------------------------

def test_handshake_declares_nothing_without_callback(q_handshake):
    """MCP-QUEST-18, MCP-CONN-03: without before_input_request a handshake-era server is told about no
    elicitation, so it cannot ask (the kit answers its refusal as an error, MCPError here)."""
    server = q_handshake.mcp()
    assert json.loads(server.call("capabilities").text) == {}
    with pytest.raises(llm_mcp.MCPError) as caught:
        server.call("deploy")
    assert caught.value.code == -32021


@pytest.mark.parametrize(("setting", "declared"), [(True, BOTH), ("form", {"elicitation": {"form": {}}}),
                                                   (False, {})])
def test_handshake_callback_declares_and_answers_in_line(q_handshake, setting, declared):
    """MCP-QUEST-15, MCP-QUEST-19: with before_input_request the initialize request declares elicitation as
    input_requests says, and elicitation/create requests are answered in line by the callback."""
    server = q_handshake.mcp(input_requests=setting, before_input_request=lambda q: q.answer("production"))
    assert json.loads(server.call("capabilities").text) == declared
    assert q_handshake.received("capabilities")[-1]["capabilities"] == declared
    if declared:
        assert server.call("deploy", branch="b").text == "deployed b to production"
        assert q_handshake.received("deploy")[-1]["responses"] == {
            "env": {"action": "accept", "content": {"environment": "production"}}}


def test_handshake_chat_callback_leaves_open_held_for_a_person(model, q_handshake):
    """MCP-QUEST-16, MCP-QUEST-08: in a chat, a handshake-era question the callback leaves open is held: it shows
    in chat.pending_questions (held) while the call stays open, an answer given in another thread goes back
    on the call's stream, and the call finishes with it (no complete() needed)."""
    chat = make_chat(model, [tool_call("deploy"), reply("ok")])
    chat.with_mcp(deploys(q_handshake)(default_environment="moon"))
    person = answer_when_asked(chat, lambda question: question.answer("staging"))
    assert chat.ask("deploy").content == "ok" and not chat.waiting
    person.join()
    [seen] = person.seen
    assert seen.held and seen.message == "Which environment?" and seen.tool_call_id == chat.messages[1].tool_calls[0].id
    assert tool_text(model.requests[1]) == "deployed main to staging"
    assert q_handshake.received("deploy")[-1]["responses"] == {
        "env": {"action": "accept", "content": {"environment": "staging"}}}
    assert chat.messages[1].tool_calls[0].pending_questions == []


def test_handshake_held_question_times_out_declined_and_the_model_told(model, q_handshake):
    """MCP-QUEST-16: nobody answers within question_timeout: the question is declined, the server gets the
    decline, and the model's tool result says the question went unanswered."""
    cls = type("Deploys", (DeploysBase,), {**q_handshake.location, "question_timeout": 0.5})
    chat = make_chat(model, [tool_call("deploy"), reply("ok")])
    chat.with_mcp(cls(default_environment="moon"))
    assert chat.ask("deploy").content == "ok" and not chat.waiting
    text = tool_text(model.requests[1])
    assert text.startswith("[questions asked: 'Which environment?'; nobody answered within 0.5 s")
    assert text.endswith("deploy declined")
    assert q_handshake.received("deploy")[-1]["responses"] == {"env": {"action": "decline"}}


def test_handshake_held_wait_not_counted_against_the_timeout(model, q_handshake):
    """MCP-QUEST-16: with timeout=4, an answer given after 6 s still reaches the server and the call finishes:
    the time the question was held is added to the request's deadline."""
    cls = type("Deploys", (DeploysBase,), {**q_handshake.location, "timeout": 4, "question_timeout": 30})
    chat = make_chat(model, [tool_call("deploy"), reply("ok")])
    chat.with_mcp(cls(default_environment="moon"))
    person = answer_when_asked(chat, lambda question: (time.sleep(6), question.answer("production")))
    assert chat.ask("deploy").content == "ok"
    person.join()
    assert tool_text(model.requests[1]) == "deployed main to production"


def test_handshake_question_outside_a_chat_declined_at_once(q_handshake):
    """MCP-QUEST-16: a server a chat uses declares elicitation, but a call made outside a chat keeps
    today's rule: a question the callback leaves open is declined at once."""
    server = deploys(q_handshake)(default_environment="moon")
    server.hold_questions()
    assert json.loads(server.call("capabilities").text) == BOTH
    assert server.call("deploy").text == "deploy declined"


def test_handshake_chat_cancelled_while_a_question_waits(model, q_handshake):
    """MCP-QUEST-16: cancelling the chat while a question is held stops the call at once (CancelledError),
    long before question_timeout; the call gets a result saying it was cancelled."""
    cls = type("Deploys", (DeploysBase,), {**q_handshake.location, "question_timeout": 120})
    chat = make_chat(model, [tool_call("deploy"), reply("ok")])
    chat.with_mcp(cls(default_environment="moon"))
    person = answer_when_asked(chat, lambda question: chat.cancel())
    started = time.monotonic()
    with pytest.raises(llm_mcp.CancelledError):
        chat.ask("deploy")
    assert time.monotonic() - started < 60  # half the question_timeout: the wait did not run out
    person.join()
    assert person.seen and chat.messages[-1].content == "The call was cancelled before it finished."


def test_handshake_several_fields_defaults_and_url(q_handshake):
    """MCP-QUEST-06, MCP-QUEST-07, MCP-QUEST-09, MCP-QUEST-10: in line, several fields with defaults, a URL
    question agreed to, and a non-web URL declined before the callback."""
    seen = []

    def answer(question):
        seen.append(question.mode)
        question.answer() if question.is_url else question.answer(reason="r")

    server = q_handshake.mcp(before_input_request=answer)
    assert json.loads(server.call("profile").text)["content"] == {
        "name": "Ada", "age": 36, "verified": False, "color": "green", "reason": "r"}
    assert server.call("connect").text == "connected"
    assert server.call("connect", url="javascript:alert(1)").text == "not connected (decline)"
    assert seen == ["form", "url"]


def test_handshake_invalid_callback_answer_raises(q_handshake):
    """MCP-QUEST-17: in the handshake era too, an answer the question cannot take raises ValueError from the
    call (the server got a decline meanwhile)."""
    server = q_handshake.mcp(before_input_request=lambda q: q.answer(environment="moon"))
    with pytest.raises(ValueError, match="does not offer 'moon'"):
        server.call("deploy")
    assert q_handshake.received("deploy")[-1]["responses"] == {"env": {"action": "decline"}}


# -- the question as data --------------------------------------------------------------------------

def test_question_round_trips_through_json(model, q_modern):
    """MCP-QUEST-22, MCP-QUEST-02: a question survives JSON with its key, the original request and its answer."""
    chat = make_chat(model, [tool_call("deploy", {"branch": "b"})]).with_mcp(q_modern.mcp())
    chat.ask("deploy")
    [question] = chat.pending_questions
    data = json.loads(json.dumps(question.to_dict()))
    assert data["key"] == "env" and data["request"] == {"method": "tools/call",
                                                         "params": {"name": "deploy", "arguments": {"branch": "b"}}}
    again = llm_mcp.Question.from_dict(data)
    assert again == question and again.fields == question.fields
    again.answer("production")
    restored = llm_mcp.Question.from_dict(json.loads(json.dumps(again.to_dict())))
    assert restored.response == {"action": "accept", "content": {"environment": "production"}} and restored.answered
    with pytest.raises(ValueError, match="not a stored question"):
        llm_mcp.Question.from_dict({"params": "x"})


def test_quest_13_ask_refused_while_questions_open_or_answered_not_sent(model, q_modern):
    """MCP-QUEST-13: ask() raises ValueError while a question is open, and while its answer has not been sent
    yet (complete() sends it); nothing is lost."""
    chat = make_chat(model, [tool_call("deploy"), reply("ok")]).with_mcp(q_modern.mcp())
    chat.ask("deploy")
    with pytest.raises(ValueError, match="pending_questions"):
        chat.ask("something else")
    chat.pending_questions[0].answer("staging")
    with pytest.raises(ValueError, match="pending_questions"):
        chat.ask("something else")
    assert chat.complete().content == "ok" and tool_text(model.requests[1]) == "deployed main to staging"


def test_kit_tool_asks_without_a_server():
    """The kit: run() without a server answers a question with the 2026-07-28 InputRequiredResult, and with the
    answer in the channel, finishes."""
    from llm_mcp.testing import CallChannel
    from llm_mcp_tests.support.servers.questions import Deploy

    channel = CallChannel(client_capabilities=BOTH)
    asked = Deploy.run({"branch": "x"}, channel=channel)
    assert asked["resultType"] == "input_required" and asked["requestState"] == DEPLOY_STATE
    assert asked["inputRequests"]["env"]["method"] == "elicitation/create"
    channel.input_responses = {"env": {"action": "accept", "content": {"environment": "staging"}}}
    assert Deploy.run({"branch": "x"}, channel=channel)["content"][0]["text"] == "deployed x to staging"


class LocalDeploy(llm_mcp.ChatTool):
    """A Python tool that asks the user, as a server would."""

    name = "local_deploy"
    description = "Deploy; asks where, then for a confirmation."
    parameters = {"type": "object", "properties": {}}

    def execute(self) -> str:
        from llm_mcp_tests.support.servers.questions import CONFIRM, ENVIRONMENT

        env = self.ask("Which environment?", schema=ENVIRONMENT, key="env")
        if env.declined:
            return "not deployed"
        where = env.response["content"]["environment"]
        sure = self.ask(f"Deploy to {where}?", schema=CONFIRM, key="confirm")
        return f"deployed to {where}" if sure.response["content"]["confirmed"] else "cancelled"


def test_quest_02_python_tool_asks_the_same_question_class(model):
    """MCP-QUEST-02, MCP-QUEST-12: a Python tool's own ask() produces the same llm_mcp.Question and pauses
    the chat the same way; complete() runs it again with the answers, and a second question pauses again."""
    chat = make_chat(model, [tool_call("local_deploy"), reply("done")]).with_tools(LocalDeploy)
    chat.ask("deploy")
    [question] = chat.pending_questions
    assert type(question) is llm_mcp.Question and question.server == "local_deploy" and question.key == "env"
    question.answer("production")
    chat.complete()
    [confirm] = chat.pending_questions
    assert confirm.message == "Deploy to production?"
    confirm.answer(True)
    assert chat.complete().content == "done" and tool_text(model.requests[1]) == "deployed to production"
    with pytest.raises(llm_mcp.InputRequiredError) as caught:
        LocalDeploy().call()
    assert [q.message for q in caught.value.requests] == ["Which environment?"]


def test_quest_01_resources_and_prompts_ask_too(q_modern):
    """MCP-QUEST-01, MCP-QUEST-14, MCP-QUEST-15: resources/read and prompts/get may answer with an
    InputRequiredResult too: the callback's answer is sent the same way, and without one the read raises
    InputRequiredError with the question."""
    with pytest.raises(llm_mcp.InputRequiredError) as caught:
        q_modern.mcp().resource("config://deploy")
    assert [q.message for q in caught.value.requests] == ["Config for which environment?"]
    assert caught.value.requests[0].request == {"method": "resources/read", "params": {"uri": "config://deploy"}}
    server = q_modern.mcp(before_input_request=lambda q: q.answer("staging"))
    assert server.resource("config://deploy").content == "config for staging"
    notes = server.prompt("release_notes")
    assert notes.messages[0].content == "Write release notes for staging"


def test_handshake_resources_and_prompts_ask_in_line(q_handshake):
    """MCP-QUEST-15: in the handshake era a resource or prompt asks with elicitation/create, answered in line."""
    server = q_handshake.mcp(before_input_request=lambda q: q.answer("production"))
    assert server.resource("config://deploy").content == "config for production"
    assert server.prompt("release_notes").messages[0].content == "Write release notes for production"


@pytest.fixture(scope="module", params=["modern", "handshake"])
def kit(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The kit server with ``asks``, over HTTP, in both eras."""
    with running_server(server, era=request.param) as running:
        yield running


@pytest.fixture(scope="module")
def modern_kit() -> Iterator[Any]:
    """The kit server with ``asks``, over stdio, on 2026-07-28 (open questions come out of a call)."""
    with running_server("llm_mcp_tests.support.servers.asking_kit", transport="stdio", era="modern", cwd=ROOT,
                        env={"PYTHONPATH": ROOT}) as running:
        yield running


ODD = {"command": [sys.executable, "-m", "llm_mcp_tests.support.servers.odd_questions"], "env": {"PYTHONPATH": ROOT},
       "directory": ROOT}


@pytest.fixture(scope="module")
def odd() -> llm_mcp.MCP:
    return llm_mcp.mcp(name="odd", **ODD)


@pytest.mark.slow
@pytest.mark.parametrize("schema", ["nested", "array_free"])
def test_quest_non_primitive_fields_are_declined_before_the_callback(kit, schema, caplog):
    """MCP-QUEST-17: a requestedSchema with a nested object, or an array without choices, is not a flat form
    of primitives (MCP "Elicitation": requested schema): the question is declined before the callback or the
    chat sees it, with a warning naming the field."""
    seen: list[Any] = []
    server = kit.mcp(name="asking", before_input_request=seen.append)
    with caplog.at_level(logging.WARNING, logger="llm_mcp.client"):
        result = server.call("asks", schema=schema)
    assert json.loads(result.text) == {"action": "decline"} and seen == []
    field = "address" if schema == "nested" else "tags"
    assert any(field in r.getMessage() and "declined" in r.getMessage() for r in caplog.records)


@pytest.mark.slow
def test_quest_non_primitive_field_does_not_pause_a_chat(model, modern_kit):
    """MCP-QUEST-17: in a chat, the same question never reaches pending_questions: the call finishes declined."""
    chat = make_chat(model, [tool_call("asks", {"schema": "nested"}), reply("ok")]).with_mcp(modern_kit.mcp(name="asking"))
    assert chat.ask("go").content == "ok" and not chat.waiting and chat.pending_questions == []
    assert json.loads(model.requests[1].tool_results[0]["content"]) == {"action": "decline"}


@pytest.mark.slow
@pytest.mark.parametrize(("url", "declined"), [
    ("HTTPS://EXAMPLE.COM/connect", False), ("Http://example.com/a", False),
    ("JavaScript:alert(1)", True), ("java\tscript:alert(1)", True), (" javascript:alert(1)", True),
    ("/relative/connect", True), ("//example.com/connect", True), ("https:///no-host", True),
    ("vbscript:msgbox(1)", True), ("blob:https://example.com/x", True)])
def test_quest_10_url_schemes_any_case_and_disguised(kit, url, declined):
    """MCP-QUEST-10: schemes compare without case (HTTPS: is a web URL and reaches the callback); a relative
    URL, one with no host, and javascript: in any case or with a tab or leading space inside are declined
    before the callback sees them (both eras)."""
    seen: list[Any] = []

    def agree(question: llm_mcp.Question) -> None:
        seen.append(question.url)
        question.answer()

    answer = json.loads(kit.mcp(name="asking", before_input_request=agree).call("visit", url=url).text)
    assert answer == ({"action": "decline"} if declined else {"action": "accept"})
    assert seen == ([] if declined else [url])


@pytest.mark.slow
def test_too_many_questions_at_once_stop_the_call(model, modern_kit):
    """MCP-QUEST-14: a server asking thousands of questions in one round is stopped with an MCPError naming the
    limit, in a chat too (the call's result is the error, nothing is saved to answer); at the limit it is
    asked as usual."""
    from llm_mcp.client.asking import MAX_INPUT_REQUESTS

    server = modern_kit.mcp(name="asking", before_input_request=lambda q: q.answer("x"))
    assert server.call("many", count=MAX_INPUT_REQUESTS).text == f"{MAX_INPUT_REQUESTS} answered"
    with pytest.raises(llm_mcp.MCPError, match=f"asked 5000 questions at once .*at most {MAX_INPUT_REQUESTS}"):
        server.call("many", count=5000)
    chat = make_chat(model, [tool_call("many", {"count": 5000}), reply("ok")])
    assert chat.with_mcp(modern_kit.mcp(name="asking")).ask("go").content == "ok"
    assert not chat.waiting and chat.pending_questions == []
    assert "5000 questions at once" in model.requests[1].tool_results[0]["content"]


def _open(kit: Any, schema: str) -> llm_mcp.Question:
    with pytest.raises(llm_mcp.InputRequiredError) as caught:
        kit.mcp(name="asking").call("asks", schema=schema)
    [question] = caught.value.requests
    return question


@pytest.mark.slow
def test_quest_17_string_formats_are_checked(modern_kit):
    """MCP-QUEST-17: a string field with a format (email, date, date-time, uri: the formats the elicitation
    schema allows) refuses a text that is not one, and takes one that is."""
    question = _open(modern_kit, "formats")
    good = {"mail": "ada@example.com", "day": "2026-11-30", "at": "2026-11-30T13:45:00Z",
            "page": "https://example.com/a?b=c"}
    for name, bad in (("mail", "not-an-email"), ("day", "yesterday"), ("day", "2026-13-01"),
                      ("at", "yesterday"), ("at", "2026-11-30"), ("page", "not a uri"), ("page", "relative/path")):
        with pytest.raises(ValueError, match=f"field '{name}'"):
            question.answer(**{**good, name: bad})
        assert question.response is None
    question.answer(**good)
    assert question.response == {"action": "accept", "content": good}


@pytest.mark.slow
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_quest_17_numbers_that_are_not_finite_are_refused(modern_kit, value):
    """MCP-QUEST-17: NaN and infinities are no JSON numbers; a number field refuses them (NaN would also slip
    past minimum/maximum)."""
    question = _open(modern_kit, "number")
    with pytest.raises(ValueError, match="field 'ratio'"):
        question.answer(value)
    question.answer(2.5)
    assert question.response == {"action": "accept", "content": {"ratio": 2.5}}


@pytest.mark.slow
def test_input_requests_not_an_object_is_a_clear_error(odd):
    """MCP-QUEST-14: inputRequests must map keys to requests; a list is a protocol error named at once (not
    ten rounds of sending the request again with no answers)."""
    with pytest.raises(llm_mcp.MCPError, match="inputRequests"):
        odd.call("odd", case="list")


@pytest.mark.slow
def test_request_state_not_a_string_is_a_clear_error(odd):
    """MCP-QUEST-11: requestState is an opaque string sent back byte for byte; a number cannot be, so it is a
    protocol error rather than a state silently dropped from the retry."""
    with pytest.raises(llm_mcp.MCPError, match="requestState"):
        odd.call("odd", case="state_int")


@pytest.mark.slow
def test_well_formed_odd_server_round_trips():
    """The same server, well formed: the answer and the state go back (so the two tests above fail for the
    reason they name)."""
    server = llm_mcp.mcp(name="odd", **ODD, before_input_request=lambda q: q.answer("Ada"))
    assert server.call("odd", case="ok").text == \
        'got {"q": {"action": "accept", "content": {"name": "Ada"}}} state "s1"'


SECRET = "my-private-note-7f3a"


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "handshake"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_answers_do_not_reach_logs_at_info(model, transport, era, caplog):
    """A form answer is the user's data: answering, resuming and the server's reply go through the client,
    the chat and the server's stderr without any log record at INFO or above carrying it."""
    with running_server("llm_mcp_tests.support.servers.asking_kit", transport=transport, era=era, cwd=ROOT,
                        env={"PYTHONPATH": ROOT}) as running, caplog.at_level(logging.DEBUG):
        if era == "modern":  # a chat pauses, the user answers, the call resumes
            chat = make_chat(model, [tool_call("asks", {"schema": "secret"}), reply("ok")])
            chat.with_mcp(running.mcp(name="asking"))
            chat.ask("note this")
            chat.pending_questions[0].answer(SECRET)
            assert chat.complete().content == "ok"
            assert SECRET in model.requests[1].tool_results[0]["content"]  # it did go through
        answering = running.mcp(name="asking", before_input_request=lambda q: q.answer(SECRET))
        assert SECRET in answering.call("asks", schema="secret").text
    loud = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO and SECRET in r.getMessage()]
    assert loud == []


def test_modern_roots_input_request_answered_by_the_client(q_modern, tmp_path):
    """2026-07-28: a roots/list input request is answered from the roots setting, without anyone seeing it:
    the request is sent again with the roots in inputResponses and the requestState unchanged. Without
    roots, the same request is an MCPError naming it."""
    root = {"uri": tmp_path.as_uri(), "name": "Work"}
    server = q_modern.mcp(roots=[root])
    assert json.loads(server.call("list_roots").text) == {"roots": {"roots": [root]}, "state": "roots-1"}
    assert json.loads(server.call("capabilities").text)["roots"] == {"listChanged": True}
    with pytest.raises(llm_mcp.MCPError, match="'roots/list'"):
        q_modern.mcp().call("list_roots")


def test_modern_roots_callable_gone_wrong_stops_the_call(q_modern, caplog):
    """2026-07-28: when the roots callable returns something that is not a list of roots, the roots/list
    input request cannot be answered (inputResponses has no error answer): the call stops with an MCPError
    naming the roots setting, as a malformed sampling input request does, and a WARNING says why."""
    server = q_modern.mcp(roots=lambda: "not a list")
    with caplog.at_level(logging.WARNING, logger="llm_mcp.client"), \
            pytest.raises(llm_mcp.MCPError, match="roots must be a list") as stopped:
        server.call("list_roots")
    assert stopped.value.server == server.name
    assert any("roots/list" in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)


def test_question_timeout_is_checked():
    """question_timeout must be a positive, finite number of seconds: anything else is refused naming it."""
    for bad in (0, -1, True, "60", float("inf"), float("nan")):
        with pytest.raises(ValueError, match="question_timeout"):
            llm_mcp.mcp(url="http://127.0.0.1:1/mcp", question_timeout=bad)
    assert llm_mcp.mcp(url="http://127.0.0.1:1/mcp", question_timeout=0.5).settings.option("question_timeout") == 0.5
