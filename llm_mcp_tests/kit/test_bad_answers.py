"""Kit servers whose tools, resources and prompts answer badly fail loudly: error -32603 naming the
class, messages that say what is wrong, ``SystemExit`` in ``call()``, completion errors; the log level
is per session. Against a kit server over HTTP in both eras."""

from __future__ import annotations

import logging
from typing import Any

import pytest

import llm_mcp
import llm_mcp.testing as kit
from llm_mcp.testing import Prompt, Resource, Server, Tool, ToolCancelled, running_server

from llm_mcp_tests.support.kit_tools import Greet, Notes, Triple


class _Answers(Tool):
    """Base of tools answering one fixed (bad) thing."""

    def answer(self) -> Any:
        raise NotImplementedError

    def call(self) -> Any:
        return self.answer()


def _tool(name: str, answer: Any, **attrs: Any) -> type[Tool]:
    return type(name, (_Answers,), {"name": name.lower(), "answer": answer, **attrs})


BAD_TOOLS = [
    _tool("BadAudience", lambda self: self.respond_with(content=self.text_content(
        text="hi", annotations={"audience": "robot"}))),
    _tool("BadEmbeddedText", lambda self: self.respond_with(content=self.embedded_resource_content(
        resource={"uri": "x:/a", "text": 5}))),
    _tool("BadEmbeddedBlob", lambda self: self.respond_with(content=self.embedded_resource_content(
        resource={"uri": "x:/a", "blob": "!!!"}))),
    _tool("EmptyMime", lambda self: self.respond_with(content=self.image_content(data=b"x", mime_type=""))),
    _tool("ReturnsNone", lambda self: None),
    _tool("Returns42", lambda self: 42),
    _tool("ReturnsBytes", lambda self: b"bytes"),
    _tool("ReturnsBlock", lambda self: self.text_content(text="hi")),
    _tool("ReturnsBlocks", lambda self: [self.text_content(text="hi")]),
    _tool("StructuredList", lambda self: self.respond_with(structured_content=[1, 2, 3])),
    _tool("StructuredText", lambda self: self.respond_with(structured_content="text")),
    _tool("StructuredNaN", lambda self: self.respond_with(structured_content={"a": float("nan")})),
    _tool("SchemaWithoutStructure", lambda self: self.respond_with(content=self.text_content(text="hi")),
          output_schema={"type": "object"}),
    _tool("CancelledAlone", lambda self: (_ for _ in ()).throw(ToolCancelled("nobody cancelled"))),
]


class ExitsTool(Tool):
    name = "exits"

    def call(self) -> Any:
        raise SystemExit(3)


class BadRead(Resource):
    uri = "kit://bad-read"
    name = "bad-read"

    def read(self) -> Any:
        return [{"foo": 1}]


class CrashingRead(Resource):
    uri = "kit://crashing-read"
    name = "crashing-read"

    def read(self) -> Any:
        return {}["missing"]


class NotAList(Prompt):
    name = "not-a-list"

    def messages(self) -> Any:
        return "not a list"


class RaisesValueError(Prompt):
    name = "raises-value-error"
    arguments = [{"name": "x"}]
    completions = {"x": lambda value, arguments: 1 / 0}

    def messages(self) -> Any:
        raise ValueError("my own mistake")


class LevelTool(Tool):
    name = "level"

    def call(self) -> Any:
        self.client_logger.info("info message")
        return "ok"


@pytest.fixture(scope="module", params=["modern", "handshake"])
def broken(request: pytest.FixtureRequest) -> Any:
    server = Server("kit-broken", tools=[*BAD_TOOLS, ExitsTool, Triple, LevelTool],
                    resources=[BadRead, CrashingRead], resource_templates=[Notes],
                    prompts=[NotAList, RaisesValueError, Greet])
    with running_server(server, era=request.param) as running, running.mcp(timeout=20) as client:
        BROKEN_URL[:] = [running.url]
        yield client


BROKEN_URL: list[str] = []


@pytest.mark.parametrize("tool", BAD_TOOLS, ids=lambda t: t.__name__)
def test_a_bad_tool_answer_is_error_32603_naming_the_class(broken: Any, tool: type[Tool],
                                                          caplog: pytest.LogCaptureFixture) -> None:
    """Review bugs 1, 2, 8, 14: bad answers are -32603 with the kit's message, in both eras, and logged."""
    with caplog.at_level(logging.ERROR, logger="llm_mcp.testing"), pytest.raises(llm_mcp.MCPError) as caught:
        broken.call(tool.name)
    assert caught.value.code == -32603
    assert tool.__name__ in str(caught.value)
    assert "Internal server error" not in str(caught.value)
    assert any(r.name == "llm_mcp.testing" for r in caplog.records)


def test_bad_answer_messages_say_what_is_wrong() -> None:
    """Review bugs 1, 2, 8: the messages name the class and the field."""
    expectations = {
        "BadAudience": "annotations.audience",
        "ReturnsNone": "did you forget `return self.respond_with(...)`",
        "ReturnsBlock": "returned a content block",
        "ReturnsBlocks": "returned a list",
        "Returns42": "must return self.respond_with",
        "StructuredList": "must be a JSON object",
        "StructuredNaN": "NaN",
        "SchemaWithoutStructure": "declares output_schema",
    }
    for tool in BAD_TOOLS:
        if tool.__name__ in expectations:
            with pytest.raises(kit.InvalidResult) as caught:
                tool.run()
            assert tool.__name__ in str(caught.value)
            assert expectations[tool.__name__] in str(caught.value)


def test_system_exit_in_call_is_a_tool_error_and_the_server_lives(broken: Any) -> None:
    """Review bug 14: SystemExit in call() answers a tool error; the HTTP server keeps serving."""
    result = broken.call("exits")
    assert result.is_error and "SystemExit" in result.text
    assert broken.call("triple", n=1).structured == {"value": 3}


@pytest.mark.parametrize(("uri", "words"), [
    ("kit://bad-read", "BadRead.read(): contents[0] needs exactly one of 'text' or 'blob'"),
    ("kit://crashing-read", "CrashingRead.read() failed: KeyError"),
])
def test_a_bad_read_is_error_32603(broken: Any, uri: str, words: str) -> None:
    """Review bugs 1, 2: read() results are checked; exceptions in read() name the class."""
    with pytest.raises(llm_mcp.MCPError) as caught:
        broken.client.request("resources/read", {"uri": uri})
    assert caught.value.code == -32603 and words in str(caught.value)


@pytest.mark.parametrize(("name", "words"), [
    ("not-a-list", "NotAList.messages() must return a list of messages"),
    ("raises-value-error", "RaisesValueError.messages() failed: ValueError: my own mistake"),
])
def test_a_bad_prompt_is_error_32603(broken: Any, name: str, words: str) -> None:
    """Review bugs 1, 14: messages() is checked; its own ValueError is -32603, not -32602."""
    with pytest.raises(llm_mcp.MCPError) as caught:
        broken.client.request("prompts/get", {"name": name, "arguments": {}})
    assert caught.value.code == -32603 and words in str(caught.value)


def test_completion_errors(broken: Any) -> None:
    """Review bugs 2, 14: a raising completion callable is -32603; unknown prompts/templates are -32602."""
    with pytest.raises(llm_mcp.MCPError) as caught:
        broken.client.request("completion/complete", {"ref": {"type": "ref/prompt", "name": "raises-value-error"},
                                                      "argument": {"name": "x", "value": ""}})
    assert caught.value.code == -32603 and "RaisesValueError.completions['x']" in str(caught.value)
    for ref in ({"type": "ref/prompt", "name": "nope"}, {"type": "ref/resource", "uri": "nope://{x}"}):
        with pytest.raises(llm_mcp.MCPError) as caught:
            broken.client.request("completion/complete", {"ref": ref, "argument": {"name": "x", "value": ""}})
        assert caught.value.code == -32602


def test_log_level_is_per_session(broken: Any) -> None:
    """Review bug 11: logging/setLevel from one handshake-era session leaves the others alone."""
    if broken.protocol_version != "2025-11-25":
        return  # 2026-07-28 has no setLevel; each request opts in through _meta
    def logged(client: Any) -> list[str]:
        seen: list[str] = []

        def collect(message: dict[str, Any]) -> None:
            if message.get("method") == "notifications/message":
                seen.append(message["params"]["data"])

        client.client.on_notification.append(collect)
        try:
            client.client.request("tools/call", {"name": "level", "arguments": {}})
        finally:
            client.client.on_notification.remove(collect)
        return seen

    broken.client.request("logging/setLevel", {"level": "critical"})
    try:
        with llm_mcp.mcp(url=BROKEN_URL[0],
                         timeout=20) as other:
            assert logged(other) == ["info message"]
        assert logged(broken) == []
    finally:
        broken.client.request("logging/setLevel", {"level": "debug"})
