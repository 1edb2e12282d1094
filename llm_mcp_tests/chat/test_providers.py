"""The OpenAI and Anthropic providers, through the real SDKs, against ScriptedModel over real HTTP.

Every expected value is written out by hand (or computed with ``base64``/``json``), not
taken from the code under test.
"""

from __future__ import annotations

import sys
from typing import Any

import anthropic
import openai
import pytest

from llm_mcp.chat.messages import Message, ToolCall
from llm_mcp.chat.providers import (
    AnthropicProvider,
    ModelRequest,
    OpenAIProvider,
    Provider,
    ToolSpec,
    get_provider,
    register_provider,
)
from llm_mcp.client.result import Attachment
from llm_mcp.testing.scripted_model import ScriptedModel, api_error, reply, scripted_model, tool_call, turn

from llm_mcp_tests.support.encoding import b64

__all__ = ["scripted_model"]  # the fixture, used by name below

APIS = ("openai", "anthropic")
SECRET = "sk-test-secret-123"

PNG = b"\x89PNG\r\n\x1a\n" + b"not really a png"
PDF = b"%PDF-1.4 tiny pdf"
WAV = b"RIFF\x00\x00\x00\x00WAVEfmt "
OGG = b"OggS and some audio"

ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "number", "description": "first"}, "b": {"type": "number"},
                   "tags": {"type": "array", "items": {"type": "string"}},
                   "opts": {"type": "object", "properties": {"round": {"type": "boolean"}}}},
    "required": ["a", "b"],
    "additionalProperties": False,
}
ADD = ToolSpec("add", "Add two numbers.", ADD_SCHEMA)
CLOCK = ToolSpec("clock", "The time.", {"type": "object", "properties": {}})


def provider_for(api: str, model: ScriptedModel, **options: Any) -> Provider:
    if api == "openai":
        return OpenAIProvider(base_url=model.openai_base_url, api_key=SECRET, **options)
    return AnthropicProvider(base_url=model.anthropic_base_url, api_key=SECRET, **options)


def ask(text: str = "Hi", **fields: Any) -> ModelRequest:
    return ModelRequest(fields.pop("model", "test-model"), [Message("user", text)], **fields)


def complete(provider: Provider, request: ModelRequest, stream: bool) -> tuple[Message, list[str]]:
    pieces: list[str] = []
    message = provider.complete(request, on_text=pieces.append if stream else None)
    return message, pieces


# --------------------------------------------------------------------------- answers


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("api", APIS)
def test_text_answer_with_model_and_tokens(scripted_model, api, stream):
    model = scripted_model([reply("Hello, world!", input_tokens=17, output_tokens=3)])
    message, pieces = complete(provider_for(api, model), ask(model="m-1"), stream)

    assert (message.role, message.content, message.tool_calls) == ("assistant", "Hello, world!", [])
    assert (message.model, message.input_tokens, message.output_tokens) == ("m-1", 17, 3)
    assert pieces == (["Hell", "o, w", "orld", "!"] if stream else [])
    request = model.requests[0]
    assert (request.api, request.stream, request.model) == (api, stream, "m-1")
    if api == "openai" and stream:
        assert request.body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("api", APIS)
def test_tool_calls_are_parsed(scripted_model, api, stream):
    model = scripted_model([turn("Checking.", [tool_call("add", {"a": 1, "b": [2, {"c": None}]}),
                                               tool_call("clock", {}, id="my-id")], output_tokens=9)])
    message, pieces = complete(provider_for(api, model), ask(tools=[ADD, CLOCK]), stream)

    first_id = "call_1" if api == "openai" else "toolu_1"
    assert message.content == "Checking."
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        (first_id, "add", {"a": 1, "b": [2, {"c": None}]}), ("my-id", "clock", {})]
    assert (message.input_tokens, message.output_tokens) == (10, 9)
    assert pieces == (["Chec", "king", "."] if stream else [])


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("raw, expected", [
    ('{"a": 1', {"_raw_arguments": '{"a": 1'}),
    ("[1, 2]", {"_raw_arguments": "[1, 2]"}),
    ('"text"', {"_raw_arguments": '"text"'}),
    ("", {}),
])
def test_openai_bad_arguments_are_kept_raw(scripted_model, raw, expected, stream):
    model = scripted_model([tool_call("add", raw_arguments=raw)])
    message, _ = complete(provider_for("openai", model), ask(tools=[ADD]), stream)
    assert [(c.name, c.arguments) for c in message.tool_calls] == [("add", expected)]


def test_anthropic_streamed_bad_arguments_are_kept_raw(scripted_model):
    model = scripted_model([tool_call("add", raw_arguments='{"a": 1,')])
    message, _ = complete(provider_for("anthropic", model), ask(tools=[ADD]), True)
    assert [(c.name, c.arguments) for c in message.tool_calls] == [("add", {"_raw_arguments": '{"a": 1,'})]


def test_raw_arguments_are_sent_back_as_the_model_wrote_them(scripted_model):
    model = scripted_model([reply("ok")])
    history = [Message("user", "Hi"),
               Message("assistant", tool_calls=[ToolCall("call_x", "add", {"_raw_arguments": '{"a": 1'})]),
               Message("tool", "bad JSON", tool_call_id="call_x", is_error=True)]
    provider_for("openai", model).complete(ModelRequest("m", history, tools=[ADD]))
    sent = model.requests[0].messages[1]
    assert sent["tool_calls"][0]["function"] == {"name": "add", "arguments": '{"a": 1'}


# --------------------------------------------------------------------------- what the model is sent


@pytest.mark.parametrize("api", APIS)
def test_tools_and_instructions_are_sent_unchanged(scripted_model, api):
    model = scripted_model([reply("ok")])
    provider_for(api, model).complete(ask(instructions=["Be brief.", "Answer in French."], tools=[ADD, CLOCK]))

    request = model.requests[0]
    assert request.tool_names == ["add", "clock"]
    assert request.tools == [{"name": "add", "description": "Add two numbers.", "parameters": ADD_SCHEMA},
                             {"name": "clock", "description": "The time.",
                              "parameters": {"type": "object", "properties": {}}}]
    assert request.system == "Be brief.\n\nAnswer in French."
    if api == "openai":
        assert request.body["tools"][0] == {"type": "function", "function": {
            "name": "add", "description": "Add two numbers.", "parameters": ADD_SCHEMA}}
        assert request.messages == [{"role": "system", "content": "Be brief.\n\nAnswer in French."},
                                    {"role": "user", "content": "Hi"}]
    else:
        assert request.body["tools"][0] == {"name": "add", "description": "Add two numbers.",
                                            "input_schema": ADD_SCHEMA}
        assert request.body["system"] == "Be brief.\n\nAnswer in French."
        assert request.messages == [{"role": "user", "content": "Hi"}]
    assert "tool_choice" not in request.body


@pytest.mark.parametrize("api, choice, expected", [
    ("openai", "auto", "auto"),
    ("openai", "required", "required"),
    ("openai", "none", "none"),
    ("openai", "add", {"type": "function", "function": {"name": "add"}}),
    ("anthropic", "auto", {"type": "auto"}),
    ("anthropic", "required", {"type": "any"}),
    ("anthropic", "none", {"type": "none"}),
    ("anthropic", "add", {"type": "tool", "name": "add"}),
])
def test_choice_forms(scripted_model, api, choice, expected):
    model = scripted_model([reply("ok"), reply("ok")])
    provider = provider_for(api, model)
    provider.complete(ask(tools=[ADD], choice=choice))
    provider.complete(ask(choice=choice))  # no tools: no tool_choice at all
    assert model.requests[0].tool_choice == expected
    assert "tool_choice" not in model.requests[1].body and "tools" not in model.requests[1].body


@pytest.mark.parametrize("api", APIS)
def test_params_are_merged(scripted_model, api):
    model = scripted_model([reply("ok")])
    params = {"temperature": 0.25, "max_tokens": 99, "vendor_option": {"x": 1}, "extra_body": {"y": 2}}
    provider_for(api, model).complete(ask(params=params))
    body = model.requests[0].body
    # a keyword the SDK does not take (``vendor_option``; ``temperature`` for this anthropic SDK)
    # still reaches the API, through ``extra_body``
    assert (body["temperature"], body["max_tokens"], body["vendor_option"], body["y"]) == (0.25, 99, {"x": 1}, 2)
    assert "extra_body" not in body


def test_anthropic_max_tokens_default_and_option(scripted_model):
    model = scripted_model([reply("ok"), reply("ok")])
    provider_for("anthropic", model).complete(ask())
    provider_for("anthropic", model, max_tokens=321).complete(ask())
    assert [r.body["max_tokens"] for r in model.requests] == [4096, 321]


HISTORY = [
    Message("user", "What is 1+2 and the time?"),
    Message("assistant", "Let me check.", tool_calls=[ToolCall("call_a", "add", {"a": 1, "b": 2}),
                                                      ToolCall("call_b", "clock", {})]),
    Message("tool", "3", tool_call_id="call_a"),
    Message("tool", "clock is broken", tool_call_id="call_b", is_error=True),
    Message("user", "Thanks, and now?"),
]


def test_openai_history_shapes(scripted_model):
    model = scripted_model([reply("ok")])
    provider_for("openai", model).complete(ModelRequest("m", HISTORY, ["Be brief."], [ADD, CLOCK]))
    request = model.requests[0]
    assert request.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is 1+2 and the time?"},
        {"role": "assistant", "content": "Let me check.", "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}},
            {"id": "call_b", "type": "function", "function": {"name": "clock", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_a", "content": "3"},
        {"role": "tool", "tool_call_id": "call_b", "content": "Error: clock is broken"},
        {"role": "user", "content": "Thanks, and now?"},
    ]
    assert request.tool_results == [{"tool_call_id": "call_a", "content": "3", "is_error": None},
                                    {"tool_call_id": "call_b", "content": "Error: clock is broken", "is_error": None}]


def test_anthropic_groups_tool_results_in_one_user_message(scripted_model):
    model = scripted_model([reply("ok")])
    provider_for("anthropic", model).complete(ModelRequest("m", HISTORY, ["Be brief."], [ADD, CLOCK]))
    request = model.requests[0]
    assert request.messages == [
        {"role": "user", "content": "What is 1+2 and the time?"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "call_a", "name": "add", "input": {"a": 1, "b": 2}},
            {"type": "tool_use", "id": "call_b", "name": "clock", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_a", "is_error": False, "content": "3"},
            {"type": "tool_result", "tool_use_id": "call_b", "is_error": True, "content": "clock is broken"},
            {"type": "text", "text": "Thanks, and now?"}]},
    ]
    assert request.tool_results == [{"tool_call_id": "call_a", "content": "3", "is_error": False},
                                    {"tool_call_id": "call_b", "content": "clock is broken", "is_error": True}]


def test_a_full_tool_round_trip(scripted_model):
    """The usual loop: the answer's tool call goes back with its result, ids intact."""
    for api in APIS:
        model = scripted_model([tool_call("add", {"a": 1, "b": 2}), reply("3")])
        provider = provider_for(api, model)
        messages = [Message("user", "1+2?")]
        first = provider.complete(ModelRequest("m", messages, tools=[ADD]))
        call = first.tool_calls[0]
        messages += [first, Message("tool", "3", tool_call_id=call.id)]
        second = provider.complete(ModelRequest("m", messages, tools=[ADD]))
        assert second.content == "3"
        assert model.requests[1].tool_results == [
            {"tool_call_id": call.id, "content": "3", "is_error": None if api == "openai" else False}]


USER_ATTACHMENTS = [
    Attachment("image", "image/png", PNG),
    Attachment("resource", "application/pdf", PDF, uri="file:///docs/report.pdf"),
    Attachment("resource", "text/plain", "hello text", uri="file:///notes.txt"),
    Attachment("resource_link", "application/pdf", None, uri="https://x.example/y.pdf", name="y"),
    Attachment("audio", "audio/wav", WAV),
    Attachment("audio", "audio/ogg", OGG),
]


def test_openai_user_attachments(scripted_model):
    model = scripted_model([reply("ok")])
    provider_for("openai", model).complete(
        ModelRequest("m", [Message("user", "Look at these", attachments=USER_ATTACHMENTS)]))
    assert model.requests[0].messages == [{"role": "user", "content": [
        {"type": "text", "text": "Look at these"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(PNG)}},
        {"type": "file", "file": {"filename": "report.pdf", "file_data": "data:application/pdf;base64," + b64(PDF)}},
        {"type": "text", "text": "[resource file:///notes.txt (text/plain)]\nhello text"},
        {"type": "text", "text": '[attachment not included: resource_link "y" <https://x.example/y.pdf> '
                                 "(application/pdf)]"},
        {"type": "input_audio", "input_audio": {"data": b64(WAV), "format": "wav"}},
        {"type": "text", "text": f"[attachment not included: audio (audio/ogg) {len(OGG)} bytes]"},
    ]}]


def test_anthropic_user_attachments(scripted_model):
    model = scripted_model([reply("ok")])
    named_pdf = Attachment("resource", "application/pdf", PDF, name="Report")
    provider_for("anthropic", model).complete(
        ModelRequest("m", [Message("user", "Look at these", attachments=[*USER_ATTACHMENTS, named_pdf])]))
    pdf_source = {"type": "base64", "media_type": "application/pdf", "data": b64(PDF)}
    assert model.requests[0].messages == [{"role": "user", "content": [
        {"type": "text", "text": "Look at these"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(PNG)}},
        {"type": "document", "source": pdf_source},
        {"type": "text", "text": "[resource file:///notes.txt (text/plain)]\nhello text"},
        {"type": "text", "text": '[attachment not included: resource_link "y" <https://x.example/y.pdf> '
                                 "(application/pdf)]"},
        {"type": "text", "text": f"[attachment not included: audio (audio/wav) {len(WAV)} bytes]"},
        {"type": "text", "text": f"[attachment not included: audio (audio/ogg) {len(OGG)} bytes]"},
        {"type": "document", "source": pdf_source, "title": "Report"},
    ]}]


TOOL_IMAGE_HISTORY = [
    Message("user", "chart please"),
    Message("assistant", tool_calls=[ToolCall("call_c", "chart", {}), ToolCall("call_d", "stats", {})]),
    Message("tool", "Here is the chart", tool_call_id="call_c", attachments=[Attachment("image", "image/png", PNG)]),
    Message("tool", "n=3", tool_call_id="call_d",
            attachments=[Attachment("resource", "text/csv", "a,b\n1,2", uri="mem://t.csv")]),
]


def test_openai_tool_images_follow_the_batch_in_a_user_message(scripted_model):
    model = scripted_model([reply("ok"), reply("ok")])
    provider = provider_for("openai", model)
    provider.complete(ModelRequest("m", TOOL_IMAGE_HISTORY))
    provider.complete(ModelRequest("m", [*TOOL_IMAGE_HISTORY, Message("assistant", "A chart."),
                                         Message("user", "thanks")]))
    image_message = {"role": "user", "content": [
        {"type": "text", "text": "Attachments returned by tool call call_c:"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(PNG)}}]}
    expected = [
        {"role": "user", "content": "chart please"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_c", "type": "function", "function": {"name": "chart", "arguments": "{}"}},
            {"id": "call_d", "type": "function", "function": {"name": "stats", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_c",
         "content": "Here is the chart\n[image follows in the next user message]"},
        {"role": "tool", "tool_call_id": "call_d", "content": "n=3\n[resource mem://t.csv (text/csv)]\na,b\n1,2"},
        image_message,
    ]
    assert model.requests[0].messages == expected
    assert model.requests[1].messages == [*expected, {"role": "assistant", "content": "A chart."},
                                          {"role": "user", "content": "thanks"}]


def test_anthropic_tool_images_go_inside_the_tool_result(scripted_model):
    model = scripted_model([reply("ok")])
    provider_for("anthropic", model).complete(ModelRequest("m", TOOL_IMAGE_HISTORY))
    assert model.requests[0].messages[2] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "call_c", "is_error": False, "content": [
            {"type": "text", "text": "Here is the chart"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(PNG)}}]},
        {"type": "tool_result", "tool_use_id": "call_d", "is_error": False, "content": [
            {"type": "text", "text": "n=3"},
            {"type": "text", "text": "[resource mem://t.csv (text/csv)]\na,b\n1,2"}]},
    ]}
    assert model.requests[0].tool_results[0] == {"tool_call_id": "call_c", "content": "Here is the chart",
                                                 "is_error": False}


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_anthropic_thinking_is_kept_raw_and_sent_back_verbatim(scripted_model, stream):
    model = scripted_model([turn("Yes", [tool_call("clock", {})], thinking="Let me think."), reply("done")])
    provider = provider_for("anthropic", model)
    first, pieces = complete(provider, ask("Sure?", tools=[CLOCK]), stream)

    blocks = [{"type": "thinking", "thinking": "Let me think.", "signature": "sig"},
              {"type": "text", "text": "Yes"},
              {"type": "tool_use", "id": "toolu_1", "name": "clock", "input": {}}]
    assert first.raw == {"provider": "anthropic", "content": blocks}
    assert (first.content, pieces) == ("Yes", ["Yes"] if stream else [])
    provider.complete(ModelRequest("m", [Message("user", "Sure?"), first,
                                         Message("tool", "noon", tool_call_id="toolu_1")], tools=[CLOCK]))
    assert model.requests[1].messages[1] == {"role": "assistant", "content": blocks}


def test_openai_ignores_anthropic_raw(scripted_model):
    model = scripted_model([reply("ok")])
    raw = {"provider": "anthropic", "content": [{"type": "thinking", "thinking": "x", "signature": "s"}]}
    provider_for("openai", model).complete(ModelRequest("m", [Message("user", "a"), Message("assistant", "b", raw=raw),
                                                             Message("user", "c")]))
    assert model.requests[0].messages[1] == {"role": "assistant", "content": "b"}


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_exhausted_script_is_a_readable_error_openai(scripted_model, stream):
    model = scripted_model([reply("one")])
    provider = provider_for("openai", model)
    provider.complete(ask())
    with pytest.raises(openai.InternalServerError) as caught:
        complete(provider, ask("second question", tools=[ADD]), stream)
    text = str(caught.value)
    assert "the script ran out at request 2 (it has 1 turns)" in text
    assert "'second question'" in text and "['add']" in text and SECRET not in text
    assert len(model.requests) == 2  # no retries


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_exhausted_script_is_a_readable_error_anthropic(scripted_model, stream):
    model = scripted_model([])
    with pytest.raises(anthropic.InternalServerError) as caught:
        complete(provider_for("anthropic", model), ask(), stream)
    assert "the script ran out at request 1 (it has 0 turns)" in str(caught.value)
    assert len(model.requests) == 1


@pytest.mark.parametrize("api, error", [("openai", openai.RateLimitError), ("anthropic", anthropic.RateLimitError)])
def test_api_errors_propagate_as_the_sdk_raises_them(scripted_model, api, error):
    model = scripted_model([api_error(429, "slow down")])
    with pytest.raises(error, match="slow down"):
        provider_for(api, model).complete(ask())


# --------------------------------------------------------------------------- construction and registry


@pytest.mark.parametrize("api", APIS)
def test_api_key_is_not_in_repr(scripted_model, api):
    model = scripted_model([])
    provider = provider_for(api, model)
    assert SECRET not in repr(provider) and SECRET not in str(vars(provider).get("base_url"))
    assert repr(provider).startswith("<OpenAIProvider" if api == "openai" else "<AnthropicProvider")


def test_a_ready_client_can_be_given(scripted_model):
    model = scripted_model([reply("via client"), reply("via client too")])
    client = openai.OpenAI(base_url=model.openai_base_url, api_key="x", max_retries=0)
    assert OpenAIProvider(client=client).complete(ask()).content == "via client"
    aclient = anthropic.Anthropic(base_url=model.anthropic_base_url, api_key="x")
    assert AnthropicProvider(client=aclient).complete(ask()).content == "via client too"
    with pytest.raises(TypeError, match="either client"):
        OpenAIProvider(client=client, api_key="x")
    with pytest.raises(TypeError, match="either client"):
        AnthropicProvider(client=aclient, base_url="http://127.0.0.1:1")


@pytest.mark.parametrize("module, cls, extra", [("openai", OpenAIProvider, "openai"),
                                                ("anthropic", AnthropicProvider, "anthropic")])
def test_missing_sdk_names_the_extra(monkeypatch, module, cls, extra):
    monkeypatch.setitem(sys.modules, module, None)  # makes ``import <module>`` fail
    with pytest.raises(ImportError, match=rf"pip install 'django-llm-mcp\[{extra}\]'"):
        cls(api_key="x")


def test_get_provider_by_name_and_instance(scripted_model):
    model = scripted_model([reply("from registry")])
    provider = get_provider("openai", base_url=model.openai_base_url, api_key="x")
    assert isinstance(provider, OpenAIProvider)
    assert provider.complete(ask()).content == "from registry"
    assert isinstance(get_provider("anthropic", api_key="x", max_tokens=7), AnthropicProvider)
    assert get_provider(provider) is provider


def test_get_provider_errors():
    with pytest.raises(ValueError, match=r"unknown provider 'nope'; known providers: .*anthropic, .*openai"):
        get_provider("nope")
    with pytest.raises(TypeError, match="not int"):
        get_provider(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="only apply to a provider name"):
        get_provider(OpenAIProvider(api_key="x"), api_key="y")


class EchoProvider(Provider):
    def __init__(self, prefix: str = ""):
        self.prefix = prefix

    def complete(self, request, *, on_text=None):
        return Message("assistant", self.prefix + request.messages[-1].content)


def test_register_provider(monkeypatch):
    import llm_mcp.chat.providers as registry

    monkeypatch.setattr(registry, "_factories", dict(registry._factories))  # leave the registry as it was
    register_provider("test-echo", EchoProvider)
    register_provider("test-bad", lambda **options: "not a provider")
    provider = get_provider("test-echo", prefix="> ")
    assert provider.complete(ask("hey")).content == "> hey"
    with pytest.raises(ValueError, match="test-echo"):
        get_provider("missing")
    with pytest.raises(TypeError, match="returned str, not a Provider"):
        get_provider("test-bad")
    with pytest.raises(TypeError, match="must be callable"):
        register_provider("x", "not callable")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-empty"):
        register_provider("", EchoProvider)


@pytest.mark.parametrize("api", APIS)
def test_images_of_other_types_are_described(scripted_model, api):
    model = scripted_model([reply("ok")])
    svg = Attachment("image", "image/svg+xml", b"<svg/>")
    provider_for(api, model).complete(ModelRequest("m", [Message("user", "see", attachments=[svg])]))
    assert model.requests[0].messages[0]["content"][1] == {
        "type": "text", "text": "[attachment not included: image (image/svg+xml) 6 bytes]"}


def test_anthropic_empty_tool_result_has_no_content(scripted_model):
    model = scripted_model([reply("ok")])
    provider_for("anthropic", model).complete(ModelRequest("m", [
        Message("user", "go"), Message("assistant", tool_calls=[ToolCall("u1", "clock", {})]),
        Message("tool", "", tool_call_id="u1")]))
    assert model.requests[0].messages[2] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "u1", "is_error": False}]}


def test_anthropic_input_tokens_include_cache_tokens():
    usage = anthropic.types.Usage(input_tokens=5, output_tokens=2, cache_creation_input_tokens=100,
                                  cache_read_input_tokens=1000)
    assert AnthropicProvider._input_tokens(usage) == 1105
    assert AnthropicProvider._input_tokens(anthropic.types.Usage(input_tokens=5, output_tokens=2)) == 5


def test_providers_with_equal_settings_share_one_sdk_client():
    """Building the SDK client loads CA certificates; chats built per request reuse it."""
    from llm_mcp.chat.providers import AnthropicProvider, OpenAIProvider

    one = OpenAIProvider(api_key="k1", base_url="http://127.0.0.1:9/v1")
    two = OpenAIProvider(api_key="k1", base_url="http://127.0.0.1:9/v1")
    other_key = OpenAIProvider(api_key="k2", base_url="http://127.0.0.1:9/v1")
    assert one.client is two.client and other_key.client is not one.client
    assert AnthropicProvider(api_key="k1", base_url="http://127.0.0.1:9").client is not one.client
    assert "k1" not in repr(one) and "k2" not in repr(other_key)


def test_building_a_chat_needs_no_api_key(monkeypatch):
    """The SDK client is built on the first model request: a chat (or an agent's saved chat)
    can be set up where no key is configured; the SDK's own error comes with the first call."""
    import openai

    import llm_mcp

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    chat = llm_mcp.chat("gpt-4.1-mini")
    assert repr(chat.provider) == "<OpenAIProvider base_url='https://api.openai.com'>"
    with pytest.raises(openai.OpenAIError, match="api_key"):
        chat.ask("hi")


def test_provider_repr_shows_only_the_origin():
    from llm_mcp.chat.providers import AnthropicProvider, OpenAIProvider

    for provider in (OpenAIProvider(base_url="https://user:PW@gw.example/v1?api-key=QS", api_key="k"),
                     AnthropicProvider(base_url="https://gw.example/x?key=QS", api_key="k")):
        assert "QS" not in repr(provider) and "PW" not in repr(provider) and "gw.example" in repr(provider)
