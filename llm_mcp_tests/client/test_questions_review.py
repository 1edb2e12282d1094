"""Questions from servers, seen by a reviewer: malformed questions and answers a schema refuses.

Real servers: a kit server (HTTP and stdio, both eras where it matters) and a hand-written stdio
server (``llm_mcp_tests/support/servers/odd_questions.py``) that sends what a kit server cannot.
"""

from __future__ import annotations

import json
import logging
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import llm_mcp
from llm_mcp.testing import running_server
from llm_mcp.testing.scripted_model import reply, tool_call

from llm_mcp_tests.support.chats import make_chat
from llm_mcp_tests.support.servers.asking_kit import _form, server

ROOT = str(Path(__file__).resolve().parents[2])
pytestmark = pytest.mark.slow


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


# -- a server that asks something no form can show ----------------------------------------------------

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


def test_quest_non_primitive_field_does_not_pause_a_chat(model, modern_kit):
    """MCP-QUEST-17: in a chat, the same question never reaches pending_questions: the call finishes declined."""
    chat = make_chat(model, [tool_call("asks", {"schema": "nested"}), reply("ok")]).with_mcp(modern_kit.mcp(name="asking"))
    assert chat.ask("go").content == "ok" and not chat.waiting and chat.pending_questions == []
    assert json.loads(model.requests[1].tool_results[0]["content"]) == {"action": "decline"}


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


# -- answers the schema refuses ---------------------------------------------------------------------

def _open(kit: Any, schema: str) -> llm_mcp.Question:
    with pytest.raises(llm_mcp.InputRequiredError) as caught:
        kit.mcp(name="asking").call("asks", schema=schema)
    [question] = caught.value.requests
    return question


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


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_quest_17_numbers_that_are_not_finite_are_refused(modern_kit, value):
    """MCP-QUEST-17: NaN and infinities are no JSON numbers; a number field refuses them (NaN would also slip
    past minimum/maximum)."""
    question = _open(modern_kit, "number")
    with pytest.raises(ValueError, match="field 'ratio'"):
        question.answer(value)
    question.answer(2.5)
    assert question.response == {"action": "accept", "content": {"ratio": 2.5}}


# -- a server whose InputRequiredResult is malformed ----------------------------------------------------

def test_input_requests_not_an_object_is_a_clear_error(odd):
    """MCP-QUEST-14: inputRequests must map keys to requests; a list is a protocol error named at once (not
    ten rounds of sending the request again with no answers)."""
    with pytest.raises(llm_mcp.MCPError, match="inputRequests"):
        odd.call("odd", case="list")


def test_request_state_not_a_string_is_a_clear_error(odd):
    """MCP-QUEST-11: requestState is an opaque string sent back byte for byte; a number cannot be, so it is a
    protocol error rather than a state silently dropped from the retry."""
    with pytest.raises(llm_mcp.MCPError, match="requestState"):
        odd.call("odd", case="state_int")


def test_well_formed_odd_server_round_trips():
    """The same server, well formed: the answer and the state go back (so the two tests above fail for the
    reason they name)."""
    server = llm_mcp.mcp(name="odd", **ODD, before_input_request=lambda q: q.answer("Ada"))
    assert server.call("odd", case="ok").text == \
        'got {"q": {"action": "accept", "content": {"name": "Ada"}}} state "s1"'


# -- the user's answers stay out of the logs ----------------------------------------------------------

SECRET = "my-private-note-7f3a"


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


# -- the example site's question form -------------------------------------------------------------------

@pytest.mark.db
@pytest.mark.django_db(transaction=True)
def test_site_form_refuses_nan_format_and_forged_posts(monkeypatch):
    """MCP-QUEST-17, MCP-QUEST-22: the example site's question form refuses "nan" for a number (float() takes
    it; the JSON column and the server could not), a text not of the field's format, and "1.5" for an integer
    (with a message naming the field), leaving the question open; a POST without the CSRF token, or naming a call of another chat, changes nothing."""
    from django.test import Client
    from django.urls import reverse

    from example_project import agents
    from llm_mcp import tasks
    from llm_mcp.models import Message as MessageRow
    from llm_mcp.models import ToolCall as ToolCallRow

    jobs: list[tuple] = []
    monkeypatch.setattr(tasks.resume_chat, "delay", lambda *args: jobs.append(args))  # resumed elsewhere
    record, other = agents.new_chat("offline", "offline"), agents.new_chat("offline", "offline")
    assistant = MessageRow.objects.create(chat=record, role="assistant", content="")
    schema = _form(ratio={"type": "number", "maximum": 10}, day={"type": "string", "format": "date"},
                   count={"type": "integer"})
    question = llm_mcp.Question("q", {"message": "Numbers?", "requestedSchema": schema}, server="s",
                                request={"method": "tools/call", "params": {"name": "asks", "arguments": {}}})
    call = ToolCallRow.objects.create(message=assistant, tool_call_id="call_1", name="asks", arguments={},
                                      pending_questions=[question.to_dict()], request_state="s")
    url = reverse("answer_question", args=[record.pk, call.pk, "q"])
    assert Client(enforce_csrf_checks=True).post(url, {"action": "decline"}).status_code == 403
    client = Client()
    assert client.post(reverse("answer_question", args=[other.pk, call.pk, "q"]), {"action": "decline"}).status_code \
        == 404
    for bad in ({"field-ratio": "nan"}, {"field-ratio": "1e999"}, {"field-ratio": "2", "field-day": "tomorrow"}):
        page = client.post(url, {"action": "answer", **bad}, follow=True)
        assert "does not fit the question" in page.content.decode()
        call.refresh_from_db()
        assert call.pending_questions[0]["response"] is None and jobs == []
    page = client.post(url, {"action": "answer", "field-ratio": "2", "field-count": "1.5"}, follow=True)
    assert "field &#x27;count&#x27; takes an integer, not &#x27;1.5&#x27;" in page.content.decode()  # not int()'s words
    client.post(url, {"action": "answer", "field-ratio": "2", "field-day": "2026-11-30"})
    call.refresh_from_db()
    assert call.pending_questions[0]["response"] == {"action": "accept", "content": {"ratio": 2.0, "day": "2026-11-30"}}
    assert jobs == [(record.pk,)]


@pytest.mark.db
@pytest.mark.django_db(transaction=True)
def test_site_form_multi_select(monkeypatch):
    """MCP-QUEST-02, MCP-QUEST-22: a multi-select field (an array of choices) shows as a multiple select with its
    defaults selected, not a text box holding the list's repr; picking two choices answers with both."""
    from django.test import Client
    from django.urls import reverse

    from example_project import agents
    from llm_mcp import tasks
    from llm_mcp.models import Message as MessageRow
    from llm_mcp.models import ToolCall as ToolCallRow

    monkeypatch.setattr(tasks.resume_chat, "delay", lambda *args: None)
    record = agents.new_chat("offline", "offline")
    assistant = MessageRow.objects.create(chat=record, role="assistant", content="")
    schema = _form(tags={"type": "array", "items": {"type": "string", "enum": ["bug", "ui", "docs"]},
                         "default": ["ui"]})
    question = llm_mcp.Question("q", {"message": "Labels?", "requestedSchema": schema}, server="s",
                                request={"method": "tools/call", "params": {"name": "asks", "arguments": {}}})
    call = ToolCallRow.objects.create(message=assistant, tool_call_id="call_1", name="asks", arguments={},
                                      pending_questions=[question.to_dict()], request_state="s")
    client = Client()
    html = client.get(reverse("chat", args=[record.pk])).content.decode()
    assert '<select name="field-tags" multiple>' in html
    assert '<option value="ui" selected>' in html and '<option value="bug">' in html
    client.post(reverse("answer_question", args=[record.pk, call.pk, "q"]),
                {"action": "answer", "field-tags": ["bug", "docs"]})
    call.refresh_from_db()
    assert call.pending_questions[0]["response"] == {"action": "accept", "content": {"tags": ["bug", "docs"]}}


@pytest.mark.db
@pytest.mark.django_db(transaction=True)
def test_site_form_choice_without_default_is_not_preselected(monkeypatch):
    """MCP-QUEST-07, MCP-QUEST-17: a choice field without a default starts on an empty option, so pressing
    Answer without choosing is refused (required) instead of sending the first choice the user never picked."""
    from django.test import Client
    from django.urls import reverse

    from example_project import agents
    from llm_mcp import tasks
    from llm_mcp.models import Message as MessageRow
    from llm_mcp.models import ToolCall as ToolCallRow

    from llm_mcp_tests.support.servers.questions import ENVIRONMENT

    monkeypatch.setattr(tasks.resume_chat, "delay", lambda *args: None)
    record = agents.new_chat("offline", "offline")
    assistant = MessageRow.objects.create(chat=record, role="assistant", content="")
    question = llm_mcp.Question("env", {"message": "Which environment?", "requestedSchema": ENVIRONMENT},
                                server="deploys", request={"method": "tools/call", "params": {"name": "deploy"}})
    call = ToolCallRow.objects.create(message=assistant, tool_call_id="call_1", name="deploy", arguments={},
                                      pending_questions=[question.to_dict()], request_state="s")
    client = Client()
    html = client.get(reverse("chat", args=[record.pk])).content.decode()
    select = html[html.index('<select name="field-environment">'):]
    select = select[:select.index("</select>")]
    assert '<option value="" selected>' in select and '<option value="staging">' in select  # nothing picked
    page = client.post(reverse("answer_question", args=[record.pk, call.pk, "env"]),
                       {"action": "answer", "field-environment": ""}, follow=True)
    assert "is required" in page.content.decode()
    call.refresh_from_db()
    assert call.pending_questions[0]["response"] is None


@pytest.mark.db
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("key", ["step/1", "a?b#c", "100%", " "])
def test_site_question_keys_chosen_by_the_server(monkeypatch, key):
    """MCP-QUEST-22: the question's key is the server's choice (any string); the chat page still shows, and its
    form still answers the right question, when the key holds a slash, ?, # or %."""
    from django.test import Client
    from django.urls import reverse

    from example_project import agents
    from llm_mcp import tasks
    from llm_mcp.models import Message as MessageRow
    from llm_mcp.models import ToolCall as ToolCallRow

    from llm_mcp_tests.support.servers.questions import ENVIRONMENT

    monkeypatch.setattr(tasks.resume_chat, "delay", lambda *args: None)
    record = agents.new_chat("offline", "offline")
    assistant = MessageRow.objects.create(chat=record, role="assistant", content="")
    question = llm_mcp.Question(key, {"message": "Which environment?", "requestedSchema": ENVIRONMENT},
                                server="deploys", request={"method": "tools/call", "params": {"name": "deploy"}})
    call = ToolCallRow.objects.create(message=assistant, tool_call_id="call_1", name="deploy", arguments={},
                                      pending_questions=[question.to_dict()], request_state="s")
    client = Client()
    page = client.get(reverse("chat", args=[record.pk]))
    assert page.status_code == 200 and "Which environment?" in page.content.decode()
    client.post(reverse("answer_question", args=[record.pk, call.pk, key]),
                {"action": "answer", "field-environment": "production"})
    call.refresh_from_db()
    assert call.pending_questions[0]["response"] == {"action": "accept", "content": {"environment": "production"}}
