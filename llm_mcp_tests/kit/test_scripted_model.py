"""ScriptedModel itself: wire formats (raw HTTP and the SDKs), script forms, records, errors, threads."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from typing import Any

import anthropic
import openai
import pytest

from llm_mcp.testing.scripted_model import (
    ScriptedModel,
    _scripted_model_fixture,
    api_error,
    reply,
    scripted_model,
    tool_call,
    turn,
)

__all__ = ["scripted_model"]  # the fixture, used by name below


def post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def sse_events(data: bytes) -> list[tuple[str | None, str]]:
    events = []
    for chunk in data.decode().split("\n\n"):
        if not chunk:
            continue
        name = None
        payload = ""
        for line in chunk.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: "):]
            elif line.startswith("data: "):
                payload = line[len("data: "):]
        events.append((name, payload))
    return events


def test_openai_stream_wire_format(scripted_model):
    model = scripted_model([tool_call("add", {"a": 1}, id="c1"), reply("hi")], chunk_size=3)
    status, headers, data = post(model.openai_base_url + "/chat/completions",
                                 {"model": "m", "messages": [], "stream": True,
                                  "stream_options": {"include_usage": True}})
    assert (status, headers["content-type"]) == (200, "text/event-stream")
    events = sse_events(data)
    assert events[-1] == (None, "[DONE]")
    chunks = [json.loads(payload) for _, payload in events[:-1]]
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert deltas == [
        {"role": "assistant", "content": ""},
        {"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "add", "arguments": ""}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"a'}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": '": '}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]},
        {},
    ]
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"] == {
        "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    # without include_usage there is no usage chunk
    _, _, data = post(model.openai_base_url + "/chat/completions", {"model": "m", "messages": [], "stream": True})
    chunks = [json.loads(payload) for _, payload in sse_events(data)[:-1]]
    assert all(c["choices"] for c in chunks) and chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_anthropic_stream_wire_format(scripted_model):
    model = scripted_model([reply("hello")])
    status, _, data = post(model.anthropic_base_url + "/v1/messages",
                           {"model": "m", "max_tokens": 5, "messages": [], "stream": True})
    events = sse_events(data)
    assert status == 200
    assert [name for name, _ in events] == ["message_start", "ping", "content_block_start", "content_block_delta",
                                            "content_block_delta", "content_block_stop", "message_delta",
                                            "message_stop"]
    assert [json.loads(p)["delta"]["text"] for n, p in events if n == "content_block_delta"] == ["hell", "o"]
    assert json.loads(events[6][1])["usage"] == {"output_tokens": 5}


def test_both_sdks_share_one_script_and_numbering(scripted_model):
    model = scripted_model([tool_call("a"), tool_call("b"), reply("done")], input_tokens=3, output_tokens=4)
    oa = openai.OpenAI(base_url=model.openai_base_url, api_key="k")
    an = anthropic.Anthropic(base_url=model.anthropic_base_url, api_key="k")
    first = oa.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    second = an.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    third = oa.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert first.choices[0].message.tool_calls[0].id == "call_1"
    assert second.content[0].id == "toolu_2"
    assert (third.choices[0].message.content, third.usage.prompt_tokens, third.usage.completion_tokens) == (
        "done", 3, 4)
    assert [r.api for r in model.requests] == ["openai", "anthropic", "openai"]
    assert [r.index for r in model.requests] == [1, 2, 3]
    assert model.remaining == 0


def test_script_item_forms(scripted_model):
    seen = []

    def dynamic(request):
        seen.append(request.index)
        return f"you said {request.last_user_text}"

    model = scripted_model([dynamic, "plain", [reply("a"), tool_call("x", {"k": 1}), tool_call("y")],
                            lambda request: [tool_call("z")]])
    client = openai.OpenAI(base_url=model.openai_base_url, api_key="k")

    def ask(text: str) -> Any:
        return client.chat.completions.create(model="m", messages=[{"role": "user", "content": text}]).choices[0]

    assert ask("hello").message.content == "you said hello"
    assert seen == [1]
    assert ask("?").message.content == "plain"
    merged = ask("?").message
    assert merged.content == "a"
    assert [(c.function.name, c.function.arguments) for c in merged.tool_calls] == [("x", '{"k": 1}'), ("y", "{}")]
    assert [c.function.name for c in ask("?").message.tool_calls] == ["z"]
    model.add(reply("added later"))
    assert model.remaining == 1
    assert ask("?").message.content == "added later"


def test_recorded_request_helpers_read_both_formats(scripted_model):
    model = scripted_model(["one", "two"])
    openai_body = {"model": "gpt", "messages": [
        {"role": "system", "content": "S1"},
        {"role": "developer", "content": [{"type": "text", "text": "S2"}]},
        {"role": "user", "content": "question"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function",
                                                               "function": {"name": "t", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": "result"}]}],
        "tools": [{"type": "function", "function": {"name": "t", "description": "d", "parameters": {"type": "object"}}}],
        "tool_choice": "required"}
    anthropic_body = {"model": "claude", "max_tokens": 9, "stream": False,
                      "system": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}],
                      "tools": [{"name": "t", "description": "d", "input_schema": {"type": "object"}}],
                      "messages": [{"role": "user", "content": [
                          {"type": "tool_result", "tool_use_id": "u1", "content": "fine"},
                          {"type": "tool_result", "tool_use_id": "u2", "is_error": True,
                           "content": [{"type": "text", "text": "bad"}, {"type": "text", "text": "worse"}]},
                          {"type": "text", "text": "and then?"}]}]}
    post(model.openai_base_url + "/chat/completions", openai_body)
    post(model.anthropic_base_url + "/v1/messages", anthropic_body)
    first, second = model.requests
    assert (first.api, first.path, first.model, first.stream) == ("openai", "/v1/chat/completions", "gpt", False)
    assert first.system == "S1\n\nS2"
    assert first.tools == [{"name": "t", "description": "d", "parameters": {"type": "object"}}]
    assert (first.tool_names, first.tool_choice) == (["t"], "required")
    assert first.tool_results == [{"tool_call_id": "c", "content": "result", "is_error": None}]
    assert first.last_user_text == "question"
    assert first.messages == openai_body["messages"]
    assert (second.api, second.path, second.model, second.tool_choice) == ("anthropic", "/v1/messages", "claude", None)
    assert second.system == "A\n\nB"
    assert second.tools == [{"name": "t", "description": "d", "parameters": {"type": "object"}}]
    assert second.tool_results == [{"tool_call_id": "u1", "content": "fine", "is_error": False},
                                   {"tool_call_id": "u2", "content": "bad\nworse", "is_error": True}]
    assert second.last_user_text == "and then?"
    assert second.headers["content-type"] == "application/json"


def test_api_keys_stay_out_of_the_repr(scripted_model):
    model = scripted_model(["x"])
    openai.OpenAI(base_url=model.openai_base_url, api_key="sk-hidden").chat.completions.create(model="m", messages=[])
    assert "sk-hidden" in model.requests[0].headers["authorization"]
    assert "sk-hidden" not in repr(model.requests[0]) and "sk-hidden" not in repr(model)


def test_exhausted_and_failing_scripts_answer_500_without_retry(scripted_model):
    def broken(request):
        raise ValueError("boom")

    model = scripted_model([broken])
    status, headers, data = post(model.openai_base_url + "/chat/completions",
                                 {"model": "m", "messages": [{"role": "user", "content": "q"}]})
    assert (status, headers["x-should-retry"]) == (500, "false")
    assert json.loads(data)["error"]["message"] == "ScriptedModel: script turn 1 (request 1) raised ValueError: boom"
    status, headers, data = post(model.anthropic_base_url + "/v1/messages",
                                 {"model": "m", "messages": [{"role": "user", "content": "q2"}]})
    assert (status, headers["x-should-retry"]) == (500, "false")
    assert json.loads(data) == {"type": "error", "error": {"type": "api_error", "message": (
        "ScriptedModel: the script ran out at request 2 (it has 1 turns): POST /v1/messages, model 'm', "
        "tools [], last user text 'q2'")}}


def test_api_error_turns_in_each_format(scripted_model):
    model = scripted_model([api_error(400, "no good"), api_error(529, "busy")])
    status, _, data = post(model.openai_base_url + "/chat/completions", {"model": "m", "messages": []})
    assert (status, json.loads(data)["error"]["message"]) == (400, "no good")
    status, _, data = post(model.anthropic_base_url + "/v1/messages", {"model": "m", "messages": []})
    assert (status, json.loads(data)) == (529, {"type": "error", "error": {"type": "overloaded_error",
                                                                          "message": "busy"}})
    with pytest.raises(ValueError, match="4xx or 5xx"):
        api_error(302)


def test_unknown_route_is_404(scripted_model):
    model = scripted_model(["unused"])
    status, _, data = post(model.url + "/v1/embeddings", {})
    assert status == 404 and "no route POST /v1/embeddings" in json.loads(data)["error"]["message"]
    assert model.requests == [] and model.remaining == 1


def test_bad_script_items_are_reported():
    with pytest.raises(TypeError, match="takes tool_call"):
        turn("x", tool_calls=["add"])  # type: ignore[list-item]
    with ScriptedModel([42]) as model:  # type: ignore[list-item]
        status, _, data = post(model.openai_base_url + "/chat/completions", {"model": "m", "messages": []})
    assert status == 500 and "not int" in json.loads(data)["error"]["message"]


def test_lifecycle():
    model = ScriptedModel(["x"])
    with pytest.raises(RuntimeError, match="not started"):
        _ = model.url
    assert model.start() is model and model.start() is model  # idempotent
    url = model.url
    assert url.startswith("http://127.0.0.1:")
    assert (model.openai_base_url, model.anthropic_base_url) == (url + "/v1", url)
    post(model.openai_base_url + "/chat/completions", {"model": "m", "messages": []})
    model.stop()
    model.stop()
    assert len(model.requests) == 1  # still readable
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "/v1/chat/completions", data=b"{}", timeout=5)


def test_fixture_stops_its_models():
    fixture = _scripted_model_fixture()
    make = next(fixture)
    first, second = make(["a"]), make(["b"], chunk_size=2)
    assert first.url != second.url and second.chunk_size == 2
    fixture.close()
    for model in (first, second):
        with pytest.raises(RuntimeError, match="not started"):
            _ = model.url


def test_concurrent_requests_each_get_one_turn(scripted_model):
    count = 16
    model = scripted_model([reply(str(i)) for i in range(count)])
    answers: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        client = openai.OpenAI(base_url=model.openai_base_url, api_key="k")
        text = client.chat.completions.create(model="m", messages=[]).choices[0].message.content
        with lock:
            answers.append(text)

    threads = [threading.Thread(target=worker) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(answers, key=int) == [str(i) for i in range(count)]
    assert sorted(r.index for r in model.requests) == list(range(1, count + 1))
    assert model.remaining == 0


def test_chunk_delay_sends_the_same_stream_event_by_event(scripted_model):
    """With ``chunk_delay`` the events come one write at a time on a closing connection; the SDK reads
    the same reply, and the first piece can be read before the last one is written."""
    text = "slow and steady"
    model = scripted_model([reply(text), reply(text)], chunk_size=2, chunk_delay=0.01)
    client = openai.OpenAI(base_url=model.openai_base_url, api_key="test-key")
    pieces = [chunk.choices[0].delta.content for chunk in
              client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], stream=True)
              if chunk.choices and chunk.choices[0].delta.content]
    assert "".join(pieces) == text and len(pieces) == -(-len(text) // 2)
    request = urllib.request.Request(model.openai_base_url + "/chat/completions", method="POST",
                                     data=json.dumps({"model": "m", "messages": [], "stream": True}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.headers["Connection"] == "close" and response.headers["Content-Length"] is None
        first = response.readline()
        assert first.startswith(b"data: ")
    with pytest.raises(ValueError, match="chunk_delay"):
        ScriptedModel(chunk_delay=-1)
