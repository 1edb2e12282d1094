"""``llm_mcp.testing`` on its own: definitions, answers, logging, cancellation, progress, serving.

Most tests run kit tools directly with a recording ``CallChannel``; the serving
tests start real servers (a ``Server`` in a thread over HTTP, and subprocesses).
"""

from __future__ import annotations

import base64
import logging
import subprocess
import sys
import threading
from typing import Any

import pytest

import llm_mcp
import llm_mcp.testing as kit
from llm_mcp.testing import (
    CallChannel,
    OutputSchemaError,
    Prompt,
    Resource,
    ResourceTemplate,
    Server,
    Tool,
    ToolCancelled,
    ToolError,
    running_server,
)
from llm_mcp.testing.serve import serve_http, serve_stdio

OBJECT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


class Triple(Tool):
    name = "triple"
    title = "Tripler"
    description = "Multiplies by three."
    input_schema = OBJECT
    output_schema = {"type": "object", "properties": {"value": {"type": "integer"}}, "required": ["value"]}
    annotations = {"read_only_hint": True, "destructive_hint": False, "idempotent_hint": True,
                   "open_world_hint": False}
    security_schemes = [{"type": "noauth"}, {"type": "oauth2", "scopes": ["math.read"]}]
    meta = {"com.example/x": 1}

    def call(self) -> dict[str, Any]:
        self.client_logger.info(f"tripling {self.arguments['n']} for {self.context.get('user_id')}")
        return self.respond_with(structured_content={"value": 3 * self.arguments["n"]})


# --------------------------------------------------------------------------- definitions


def test_class_attribute_definitions() -> None:
    """MCP-KIT-02, MCP-KIT-19, MCP-KIT-21: every definition lands in the tools/list entry."""
    assert Triple.definition() == {
        "name": "triple",
        "title": "Tripler",
        "description": "Multiplies by three.",
        "inputSchema": OBJECT,
        "outputSchema": Triple.output_schema,
        "annotations": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True,
                        "openWorldHint": False},
        "_meta": {"com.example/x": 1,
                  "securitySchemes": [{"type": "noauth"}, {"type": "oauth2", "scopes": ["math.read"]}]},
    }


def test_define_hook_and_callables() -> None:
    """MCP-KIT-02: definitions from a define() hook, and schemas given as callables (with or without cls)."""

    class Hooked(Tool):
        @classmethod
        def define(cls) -> dict[str, Any]:
            return {"name": "hooked", "description": "From a hook.", "input_schema": lambda: dict(OBJECT),
                    "security_schemes": lambda klass: [{"type": "noauth", "owner": klass.__name__}]}

        def call(self) -> str:
            return "hooked"

    class Lambdas(Tool):
        name = "lambdas"
        input_schema = lambda: dict(OBJECT)
        output_schema = staticmethod(lambda: {"type": "object"})

    assert Hooked.definition() == {"name": "hooked", "description": "From a hook.", "inputSchema": OBJECT,
                                   "_meta": {"securitySchemes": [{"type": "noauth", "owner": "Hooked"}]}}
    assert Lambdas.definition() == {"name": "lambdas", "inputSchema": OBJECT, "outputSchema": {"type": "object"}}
    assert Hooked.run({"n": 1})["content"] == [{"type": "text", "text": "hooked"}]


def test_no_annotations_means_none_sent() -> None:
    """MCP-KIT-19: hints left out are not sent; the client applies the defaults (False, True, False, True)."""

    class Plain(Tool):
        name = "plain"

    assert "annotations" not in Plain.definition()
    assert Plain.definition()["inputSchema"] == {"type": "object", "properties": {}}


@pytest.mark.parametrize(("annotations", "error", "words"), [
    ({"readonly_hint": True}, ValueError, "unknown hint"),
    ({"title": "x"}, ValueError, "unknown hint"),
    ({"read_only_hint": "yes"}, TypeError, "True or False"),
    ({"open_world_hint": 1}, TypeError, "True or False"),
    (["read_only_hint"], TypeError, "dict of hints"),
])
def test_annotations_validated_at_definition(annotations: Any, error: type[Exception], words: str) -> None:
    """MCP-KIT-20: an unknown hint or a non-boolean value raises when the class is defined."""
    with pytest.raises(error, match=words):
        type("Bad", (Tool,), {"name": "bad", "annotations": annotations})


@pytest.mark.parametrize(("attrs", "error", "words"), [
    ({"name": "has space"}, ValueError, "Bad.name"),
    ({"name": 3}, ValueError, "Bad.name"),
    ({"title": 3}, TypeError, "Bad.title"),
    ({"input_schema": {"type": "string"}}, ValueError, "must describe an object"),
    ({"input_schema": {"type": "object", "properties": 3}}, ValueError, "not a valid JSON Schema"),
    ({"input_schema": None}, TypeError, "input_schema is required"),
    ({"output_schema": "object"}, TypeError, "Bad.output_schema"),
    ({"security_schemes": [{"scopes": []}]}, ValueError, "needs a str 'type'"),
    ({"security_schemes": {"type": "noauth"}}, TypeError, "list of dicts"),
    ({"meta": [1]}, TypeError, "Bad.meta"),
    ({"define": classmethod(lambda cls: {"colour": "red"})}, ValueError, "unknown definitions"),
    ({"define": classmethod(lambda cls: 3)}, TypeError, "must return a dict"),
])
def test_bad_definitions_raise_naming_the_problem(attrs: dict[str, Any], error: type[Exception], words: str) -> None:
    """MCP-KIT-20: definition mistakes raise TypeError/ValueError at class creation."""
    with pytest.raises(error, match=words):
        type("Bad", (Tool,), attrs)


def test_tool_without_name_is_refused_by_the_server() -> None:
    class Nameless(Tool):
        pass

    with pytest.raises(TypeError, match="Nameless has no name"):
        Server("x", tools=[Nameless])


def test_server_options_checked() -> None:
    with pytest.raises(TypeError, match="tools must be Tool subclasses"):
        Server("x", tools=[Triple()])
    with pytest.raises(ValueError, match="share the tool name 'triple'"):
        Server("x", tools=[Triple, type("Again", (Triple,), {})])
    with pytest.raises(TypeError, match="page_size"):
        Server("x", page_size=-1)
    with pytest.raises(TypeError, match="context must be a dict"):
        Server("x", context=[("user_id", 1)])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="name must be a non-empty str"):
        Server("")


# --------------------------------------------------------------------------- inside call()


def test_arguments_and_context() -> None:
    """MCP-KIT-03, MCP-KIT-04: arguments by name (str keys), context values, {} when there are none."""
    channel = CallChannel()
    assert Triple.run({"n": 4}, {"user_id": 9}, channel)["structuredContent"] == {"value": 12}
    assert channel.logs == [("info", "tripling 4 for 9")]
    tool = Triple({"n": 1})
    assert tool.arguments == {"n": 1} and tool.context == {}


def test_invalid_arguments_answer_a_tool_error() -> None:
    assert Triple.run({"n": "four"}) == {
        "content": [{"type": "text", "text": "Invalid arguments for triple: 'four' is not of type 'integer'"}],
        "isError": True}


def test_client_logger_levels() -> None:
    """MCP-KIT-05: one method per protocol level, debug to emergency; an unknown level is an AttributeError."""
    channel = CallChannel()
    logger = Triple({"n": 1}, channel=channel).client_logger
    for level in kit.LOG_LEVELS:
        getattr(logger, level)(f"at {level}")
    assert channel.logs == [(level, f"at {level}") for level in
                            ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")]
    with pytest.raises(AttributeError):
        logger.verbose("x")  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="unknown log level 'trace'"):
        logger.log("trace", "x")


def test_server_logger_is_local(caplog: pytest.LogCaptureFixture) -> None:
    """MCP-KIT-06: server_logger is a Python logger; nothing goes to the client."""
    channel = CallChannel()
    tool = Triple({"n": 1}, channel=channel)
    with caplog.at_level(logging.DEBUG, logger="llm_mcp.testing.tools.triple"):
        tool.server_logger.debug("only here")
    assert [r.getMessage() for r in caplog.records] == ["only here"]
    assert caplog.records[0].name == "llm_mcp.testing.tools.triple"
    assert channel.logs == []


# --------------------------------------------------------------------------- answers


def test_structured_content_checked_against_output_schema() -> None:
    """MCP-KIT-07: structuredContent is the data (with a JSON text block); off-schema data raises."""
    tool = Triple({"n": 1})
    assert tool.respond_with(structured_content={"value": 3}) == {
        "content": [{"type": "text", "text": '{\n  "value": 3\n}'}], "structuredContent": {"value": 3},
        "isError": False}
    with pytest.raises(OutputSchemaError, match=r"Triple \(triple\): structured content does not match output_schema"):
        tool.respond_with(structured_content={"value": "three"})

    class Liar(Triple):
        name = "liar"

        def call(self) -> dict[str, Any]:
            return self.respond_with(structured_content={})

    with pytest.raises(OutputSchemaError, match="'value' is a required property"):
        Liar.run({"n": 1})


def test_respond_with_one_block_many_blocks_and_meta() -> None:
    """MCP-KIT-08, MCP-KIT-09: one block becomes a one-element list; several keep their order."""
    tool = Triple({"n": 1})
    text = tool.text_content(text="a")
    image = tool.image_content(data=b"test", mime_type="image/png")
    assert tool.respond_with(content=text) == {"content": [text], "isError": False}
    assert tool.respond_with(content=[image, text], meta={"k": 1}) == {"content": [image, text], "isError": False,
                                                                       "_meta": {"k": 1}}


def test_respond_with_error_forms() -> None:
    """MCP-KIT-10: error="msg" and the positional ("error", text="msg") give the same isError result."""
    tool = Triple({"n": 1})
    expected = {"content": [{"type": "text", "text": "nope"}], "isError": True}
    assert tool.respond_with(error="nope") == expected
    assert tool.respond_with("error", text="nope") == expected


@pytest.mark.parametrize(("args", "kwargs", "error", "words"), [
    ((), {}, ValueError, "needs content=, structured_content= or error="),
    (("content",), {"text": "x"}, ValueError, "positional form"),
    (("error",), {}, ValueError, "needs text="),
    ((), {"text": "x"}, ValueError, "belongs to the form"),
    ((), {"error": "x", "content": {"type": "text", "text": "y"}}, ValueError, "cannot be combined"),
    ((), {"content": {"type": "video"}}, kit.InvalidResult, "content block"),
    ((), {"content": ["plain string"]}, kit.InvalidResult, "content block"),
    ((), {"error": 3}, kit.InvalidResult, r"Triple.respond_with: error= must be a non-empty str"),
])
def test_respond_with_misuse(args: tuple[Any, ...], kwargs: dict[str, Any], error: type[Exception],
                             words: str) -> None:
    with pytest.raises(error, match=words):
        Triple({"n": 1}).respond_with(*args, **kwargs)


def test_tool_errors_from_exceptions(caplog: pytest.LogCaptureFixture) -> None:
    class Fails(Tool):
        name = "fails"

        def call(self) -> dict[str, Any]:
            raise ToolError("quota exceeded")

    class Crashes(Tool):
        name = "crashes"

        def call(self) -> dict[str, Any]:
            return {}["missing"]

    class ReturnsNothing(Tool):
        name = "nothing"

        def call(self) -> None:
            return None

    assert Fails.run() == {"content": [{"type": "text", "text": "quota exceeded"}], "isError": True}
    with caplog.at_level(logging.ERROR):
        assert Crashes.run() == {"content": [{"type": "text", "text": "crashes failed: KeyError: 'missing'"}],
                                 "isError": True}
    assert "tool crashes failed" in caplog.text
    with pytest.raises(kit.InvalidResult, match=r"ReturnsNothing.call\(\) returned None: did you forget"):
        ReturnsNothing.run()


# --------------------------------------------------------------------------- content helpers


def test_text_content() -> None:
    """MCP-KIT-11: {"type": "text", "text": ...}."""
    assert kit.text_content(text="hi") == {"type": "text", "text": "hi"}
    assert kit.text_content(text="hi", meta={"a": 1}, annotations={"priority": 1}) == {
        "type": "text", "text": "hi", "_meta": {"a": 1}, "annotations": {"priority": 1}}
    with pytest.raises(TypeError):
        kit.text_content()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="text must be a str"):
        kit.text_content(text=3)  # type: ignore[arg-type]


def test_image_content() -> None:
    """MCP-KIT-12: base64 data and mimeType; both keywords required."""
    assert kit.image_content(data="dGVzdA==", mime_type="image/png") == {
        "type": "image", "data": "dGVzdA==", "mimeType": "image/png"}
    block = kit.image_content(data=b"\x89PNG", mime_type="image/png")
    assert base64.b64decode(block["data"]) == b"\x89PNG"
    with pytest.raises(TypeError):
        kit.image_content(data="dGVzdA==")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        kit.image_content(mime_type="image/png")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="not valid base64"):
        kit.image_content(data="not base64!", mime_type="image/png")
    with pytest.raises(TypeError, match="bytes or a base64 str"):
        kit.image_content(data=3, mime_type="image/png")  # type: ignore[arg-type]


def test_audio_content() -> None:
    """MCP-KIT-13: {"type": "audio", "data", "mimeType"}; both keywords required."""
    assert kit.audio_content(data=b"RIFF", mime_type="audio/wav") == {
        "type": "audio", "data": base64.b64encode(b"RIFF").decode(), "mimeType": "audio/wav"}
    with pytest.raises(TypeError):
        kit.audio_content(data=b"RIFF")  # type: ignore[call-arg]


def test_embedded_resource_content() -> None:
    """MCP-KIT-14: {"type": "resource", "resource": {...}}; resource is required."""
    contents = {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "a"}
    assert kit.embedded_resource_content(resource=contents) == {"type": "resource", "resource": contents}

    class Doc(Resource):
        uri = "file:///doc.md"
        name = "doc"
        mime_type = "text/markdown"

        def read(self) -> str:
            return "# Doc"

    assert kit.embedded_resource_content(resource=Doc) == {
        "type": "resource", "resource": {"uri": "file:///doc.md", "mimeType": "text/markdown", "text": "# Doc"}}
    with pytest.raises(TypeError):
        kit.embedded_resource_content()  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="exactly one of 'text' or 'blob'"):
        kit.embedded_resource_content(resource={"uri": "file:///a"})
    with pytest.raises(ValueError, match="needs a str 'uri'"):
        kit.embedded_resource_content(resource={"text": "a"})


def test_resource_link() -> None:
    """MCP-KIT-15: {"type": "resource_link", "name", "uri"}; both required."""
    assert kit.resource_link(name="r", uri="file:///r") == {"type": "resource_link", "name": "r", "uri": "file:///r"}
    assert kit.resource_link(name="r", uri="file:///r", mime_type="application/pdf", size=3, title="R") == {
        "type": "resource_link", "name": "r", "uri": "file:///r", "mimeType": "application/pdf", "size": 3,
        "title": "R"}
    with pytest.raises(TypeError):
        kit.resource_link(name="r")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        kit.resource_link(uri="file:///r")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="size"):
        kit.resource_link(name="r", uri="file:///r", size=-1)


# --------------------------------------------------------------------------- cancellation and progress


class Worker(Tool):
    name = "worker"
    steps: list[int] = []

    def call(self) -> dict[str, Any]:
        def work() -> str:
            for i in range(100):
                self.sleep(0.02)
                self.steps.append(i)
            return "done"

        return self.respond_with(content=self.text_content(
            text=self.progressable(lambda: self.cancellable(work), max_duration=2, message="working",
                                   interval=0.02)))


def _cancel_when(channel: CallChannel, ready: Any) -> threading.Thread:
    def watch() -> None:
        while not ready():
            threading.Event().wait(0.005)
        channel.cancel()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_cancellable_returns_its_value_and_stops_on_cancel() -> None:
    """MCP-KIT-16: cancellable(fn) gives fn's value; a cancel interrupts the work, which goes no further."""
    tool = Triple({"n": 1})
    assert tool.cancellable(lambda: 42) == 42
    channel = CallChannel()
    started = threading.Event()
    reached: list[str] = []
    sleeper = Triple({"n": 1}, channel=channel)

    def work() -> None:
        started.set()
        sleeper.sleep(60)
        reached.append("after the sleep")

    _cancel_when(channel, started.is_set)
    with pytest.raises(ToolCancelled):
        sleeper.cancellable(work)
    assert reached == []
    with pytest.raises(TypeError, match="takes a callable"):
        tool.cancellable(42)  # type: ignore[arg-type]


def test_progressable_sends_rising_progress_with_message() -> None:
    """MCP-KIT-17: progress against max_duration, with the message, rising to 100, only when asked for."""
    channel = CallChannel(progress_requested=True)
    tool = Triple({"n": 1}, channel=channel)
    assert tool.progressable(lambda: tool.sleep(0.1) or "ok", max_duration=0.2, message="busy",
                             interval=0.02) == "ok"
    values = [p for p, _, _ in channel.progress_sent]
    assert values == sorted(set(values)) and values[-1] == 100 and len(values) >= 2
    assert {(total, message) for _, total, message in channel.progress_sent} == {(100, "busy")}

    quiet = CallChannel()
    silent = Triple({"n": 1}, channel=quiet)
    assert silent.progressable(lambda: "ok", max_duration=1) == "ok"
    assert quiet.progress_sent == []
    with pytest.raises(ValueError, match="max_duration"):
        silent.progressable(lambda: 1, max_duration=0)
    with pytest.raises(ValueError, match="interval"):
        silent.progressable(lambda: 1, max_duration=1, interval=-1)


def test_progressable_around_cancellable() -> None:
    """MCP-KIT-18: nested, progress goes out and a cancel still stops the work."""
    Worker.steps = []
    channel = CallChannel(progress_requested=True)
    _cancel_when(channel, lambda: len(channel.progress_sent) >= 2)
    with pytest.raises(ToolCancelled):
        Worker.run({}, channel=channel)
    values = [p for p, _, _ in channel.progress_sent]
    assert values == sorted(set(values)) and values[-1] < 100
    assert len(Worker.steps) < 100


# --------------------------------------------------------------------------- resources and prompts


class Notes(ResourceTemplate):
    uri_template = "notes://{owner}/{+path}"
    name = "notes"
    completions = {"owner": ["ann", "bob", "anna"]}

    def read(self) -> bytes:
        return f"{self.params['owner']}:{self.params['path']}".encode()


def test_resource_template_matching() -> None:
    assert Notes.match("notes://ann/a/b%20c.txt") == {"owner": "ann", "path": "a/b c.txt"}
    assert Notes.match("notes://ann") is None
    assert Notes.match("other://ann/x") is None
    assert Notes.read_contents("notes://bob/x") == [{"uri": "notes://bob/x", "blob": base64.b64encode(b"bob:x").decode()}]
    assert Notes.definition() == {"uriTemplate": "notes://{owner}/{+path}", "name": "notes"}
    with pytest.raises(ValueError, match="does not match"):
        Notes.read_contents("notes://")


def test_resource_definitions_checked() -> None:
    with pytest.raises(TypeError, match="Bad.uri"):
        type("Bad", (Resource,), {"uri": 3, "name": "x"})
    with pytest.raises(TypeError, match="Bad.size"):
        type("Bad", (Resource,), {"uri": "file:///x", "name": "x", "size": -2})
    with pytest.raises(TypeError, match=r"Bad.completions\['x'\]"):
        type("Bad", (ResourceTemplate,), {"uri_template": "a://{x}", "name": "x", "completions": {"x": [1]}})
    with pytest.raises(TypeError, match="needs uri and name"):
        type("NoUri", (Resource,), {"name": "x"}).definition()


class Greet(Prompt):
    name = "greet"
    description = "Says hello."
    arguments = [{"name": "who", "required": True}, {"name": "style"}]
    completions = {"style": ["formal", "Friendly", "funny"],
                   "who": lambda value, arguments: [f"{value}-{arguments.get('style', 'any')}"]}

    def messages(self) -> list[dict[str, Any]]:
        return [self.user_message(f"Hello {self.arguments['who']}")]


def test_prompt_render_and_complete() -> None:
    assert Greet.definition() == {"name": "greet", "description": "Says hello.",
                                  "arguments": [{"name": "who", "required": True}, {"name": "style"}]}
    assert Greet.render({"who": "Ann"}) == {
        "description": "Says hello.", "messages": [{"role": "user", "content": {"type": "text", "text": "Hello Ann"}}]}
    with pytest.raises(ValueError, match=r"missing required argument\(s\) \['who'\]"):
        Greet.render({})
    assert Greet.complete("style", "f") == {"values": ["formal", "Friendly", "funny"], "total": 3, "hasMore": False}
    assert Greet.complete("style", "FO") == {"values": ["formal"], "total": 1, "hasMore": False}
    assert Greet.complete("who", "an", {"style": "formal"}) == {"values": ["an-formal"], "total": 1,
                                                                "hasMore": False}
    assert Greet.complete("unknown", "") == {"values": [], "total": 0, "hasMore": False}
    with pytest.raises(TypeError, match="Bad.arguments"):
        type("Bad", (Prompt,), {"name": "bad", "arguments": {"who": True}})


# --------------------------------------------------------------------------- serving


@pytest.mark.parametrize("era", ["auto", "modern", "handshake"])
def test_server_in_a_thread_over_http(era: str) -> None:
    """MCP-KIT-01: a Server built from kit classes and a context answers over Streamable HTTP."""
    server = Server("kit-thread", tools=[Triple], resources=[], prompts=[Greet], context={"user_id": 5})
    with running_server(server, era=era) as running:
        assert running.url.startswith("http://127.0.0.1:") and running.url.endswith("/mcp")
        with running.mcp(timeout=20) as client:
            assert client.protocol_version == ("2025-11-25" if era == "handshake" else "2026-07-28")
            result = client.call("triple", n=14)
            assert result.structured == {"value": 42} and not result.is_error
            tool = client.tool("triple")
            assert (tool.read_only, tool.destructive, tool.idempotent, tool.open_world) == (True, False, True, False)
            assert tool.meta["com.example/x"] == 1
    with pytest.raises(llm_mcp.ConnectionError), llm_mcp.mcp(url=running.url, timeout=5) as client:
        client.tools


def test_running_server_refuses_bad_options() -> None:
    server = Server("x", tools=[Triple])
    with pytest.raises(ValueError, match="transport must be one of"), running_server(server, transport="ws"):
        pass
    with pytest.raises(ValueError, match="era must be one of"), running_server(server, era="2026"):
        pass
    with pytest.raises(ValueError, match="only serves HTTP"), running_server(server, transport="stdio"):
        pass
    with pytest.raises(TypeError, match="module name or a llm_mcp.testing.Server"), running_server(42):
        pass
    with pytest.raises(ValueError, match="era must be one of"):
        serve_stdio(object(), era="new")
    with pytest.raises(ValueError, match="port must be an int"):
        serve_http(object(), port=70000)


def test_running_server_reports_a_server_that_will_not_start() -> None:
    with pytest.raises(RuntimeError, match="exited with"), running_server("llm_mcp_tests.no_such_module", startup_timeout=10):
        pass


def test_stdio_command_from_running_server(mcp_test_server: Any) -> None:
    """MCP-KIT-01: the fixture's stdio form yields the argv; the client starts the process."""
    running = mcp_test_server("llm_mcp_tests.support.servers.seed_tools", transport="stdio", era="handshake")
    assert running.command[1:] == ["-m", "llm_mcp_tests.support.servers.seed_tools", "--era", "handshake"]
    assert mcp_test_server("llm_mcp_tests.support.servers.seed_tools", transport="stdio", era="handshake") is running
    with running.mcp(timeout=20) as client:
        assert client.protocol_version == "2025-11-25"
        assert client.call("double", number="4").text == "4 doubled is 8"


def test_import_needs_neither_django_nor_mcp() -> None:
    """Importing llm_mcp.testing pulls in no Django and no mcp; building a server without mcp names the extra."""
    code = (
        "import sys\n"
        "import llm_mcp.testing as kit\n"
        "assert 'django' not in sys.modules and 'mcp' not in sys.modules, sorted(sys.modules)\n"
        "sys.modules['mcp'] = None\n"
        "try:\n"
        "    kit.Server('x').build()\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "pip install 'django-llm-mcp[testing]'" in done.stdout


def test_public_names() -> None:
    assert "ScriptedModel" in kit.__all__
    assert kit.ScriptedModel.__name__ == "ScriptedModel"
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        kit.Nothing
    for name in kit.__all__:
        assert getattr(kit, name) is not None


# --------------------------------------------------------------------------- review: bad answers fail loudly


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


# --------------------------------------------------------------------------- review: definitions refused early


@pytest.mark.parametrize(("base", "attrs", "error", "words"), [
    (Tool, {"name": "a", "input_schema": {"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}}},
     ValueError, r"Bad.input_schema: \$ref '#/\$defs/missing' does not resolve"),
    (Tool, {"name": "a", "inputSchema": {"type": "object"}}, ValueError, "Bad.inputSchema: did you mean input_schema"),
    (Tool, {"name": "a", "outputSchema": {"type": "object"}}, ValueError, "did you mean output_schema"),
    (Tool, {"name": "a", "inputschema": {"type": "object"}}, ValueError, "did you mean input_schema"),
    (Tool, {"name": "a", "annotation": {"read_only_hint": True}}, ValueError, "did you mean annotations"),
    (Tool, {"name": "a", "security_schemes": [{"type": "noauth"}], "meta": {"securitySchemes": []}}, ValueError,
     "security_schemes and meta"),
    (Resource, {"uri": "a://b", "name": "b", "annotations": {"audience": "robot"}}, ValueError,
     r"Bad.annotations\['audience'\]"),
    (Resource, {"uri": "a://b", "name": "b", "annotations": {"priority": 7}}, ValueError,
     r"Bad.annotations\['priority'\]"),
    (ResourceTemplate, {"uri_template": "a://x{?q}", "name": "t"}, ValueError, "only {var} and {[+]var}"),
    (ResourceTemplate, {"uri_template": "a://{/p}", "name": "t"}, ValueError, "only {var}"),
    (ResourceTemplate, {"uri_template": "a://{a,b}", "name": "t"}, ValueError, "only {var}"),
    (ResourceTemplate, {"uri_template": "a://{a", "name": "t"}, ValueError, "only {var}"),
    (ResourceTemplate, {"uri_template": "a://{a}", "name": "t", "completions": {"b": ["x"]}}, ValueError,
     r"Bad.completions names \['b'\]"),
    (Prompt, {"name": "p", "arguments": [{"name": "x", "requird": True}]}, ValueError, r"unknown key\(s\) \['requird'\]"),
    (Prompt, {"name": "p", "arguments": [{"name": "x"}, {"name": "x"}]}, ValueError, "more than once"),
    (Prompt, {"name": "p", "arguments": [{"name": "x"}], "completions": {"y": ["a"]}}, ValueError,
     r"Bad.completions names \['y'\]"),
])
def test_review_definitions_refused_at_class_creation(base: type, attrs: dict[str, Any], error: Any,
                                                      words: Any) -> None:
    """Review bugs 2, 7, suggestions 1 and 7: mistakes raise when the class is created, naming class and attribute."""
    if error is None:
        type("Fine", (base,), attrs)
        return
    with pytest.raises(error, match=words):
        type("Bad", (base,), attrs)


def test_async_work_methods_refused() -> None:
    """Review bug 2: async def call/read/messages raises TypeError at class creation."""
    with pytest.raises(TypeError, match=r"Bad.call\(\) must be a plain def"):
        class Bad(Tool):
            name = "bad"

            async def call(self) -> Any:
                return "x"
    with pytest.raises(TypeError, match=r"BadRead.read\(\) must be a plain def"):
        type("BadRead", (Resource,), {"uri": "a://b", "name": "b", "read": _async_read})
    with pytest.raises(TypeError, match=r"BadPrompt.messages\(\) must be a plain def"):
        type("BadPrompt", (Prompt,), {"name": "p", "messages": _async_read})


async def _async_read(self: Any) -> str:
    return "x"


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"version": 1}, "Server version must be a non-empty str"),
    ({"instructions": 5}, "Server instructions must be a str"),
    ({"title": 7}, "Server title must be a str"),
    ({"tools": Triple}, "Server tools= must be a list of Tool subclasses"),
    ({"prompts": "greet"}, "Server prompts= must be a list"),
])
def test_server_identity_and_lists_checked(kwargs: dict[str, Any], words: str) -> None:
    """Review bugs 6, 7: bad identity values and a class where a list belongs raise TypeError at construction."""
    with pytest.raises(TypeError, match=words):
        Server("x", **kwargs)


def test_templates_with_the_same_name_or_uri_template_refused() -> None:
    """Review bug 7: two templates may not share a name or a uri_template."""
    same_name = type("SameName", (ResourceTemplate,), {"uri_template": "other://{x}", "name": "notes"})
    same_uri = type("SameUri", (ResourceTemplate,), {"uri_template": Notes.uri_template, "name": "other"})
    with pytest.raises(ValueError, match="share the resource template name 'notes'"):
        Server("x", resource_templates=[Notes, same_name])
    with pytest.raises(ValueError, match="share the uri_template"):
        Server("x", resource_templates=[Notes, same_uri])


@pytest.mark.parametrize(("argv", "words"), [
    (["--page-size", "-3"], "--page-size: must be 0 or more"),
    (["--http", "99999"], "--http: a port is 0..65535"),
])
def test_command_line_values_checked(argv: list[str], words: str) -> None:
    """Review bug 14: bad --page-size and --http values are argparse errors, not tracebacks."""
    done = subprocess.run([sys.executable, "-m", "llm_mcp_tests.support.servers.seed_tools", *argv], capture_output=True,
                          text=True, timeout=60, check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr


# --------------------------------------------------------------------------- review: running servers


SEED = "llm_mcp_tests.support.servers.seed_tools"


def _module(tmp_path: Any, name: str, source: str) -> str:
    (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
    return str(tmp_path)


def test_a_crashing_module_is_started_once_and_its_output_reported(tmp_path: Any) -> None:
    """Review bug 3: no retry for a crash; the output is in the error."""
    cwd = _module(tmp_path, "crash_server", "import pathlib\n"
                  "with open('starts.txt', 'a') as f: f.write('x')\n"
                  "raise SystemExit('crash_server refuses to start')\n")
    with pytest.raises(RuntimeError, match="crash_server refuses to start"), \
            running_server("crash_server", cwd=cwd, startup_timeout=20):
        pass
    assert (tmp_path / "starts.txt").read_text() == "x"


def test_a_module_that_does_not_serve_gets_a_hint(tmp_path: Any) -> None:
    """Review bug 3: exit status 0 before listening suggests calling server.serve()."""
    cwd = _module(tmp_path, "quiet_server", "print('defined, never served')\n")
    with pytest.raises(RuntimeError, match=r"did the module call server.serve\(\)") as caught, \
            running_server("quiet_server", cwd=cwd, startup_timeout=20):
        pass
    assert "defined, never served" in str(caught.value)


def test_a_startup_timeout_reports_the_output(tmp_path: Any) -> None:
    """Review bug 3: a server that never listens: the timeout error carries its output."""
    cwd = _module(tmp_path, "stuck_server", "import sys, time\nprint('stuck before listening', flush=True)\n"
                  "time.sleep(60)\n")
    with pytest.raises(RuntimeError, match="stuck before listening"), \
            running_server("stuck_server", cwd=cwd, startup_timeout=3):
        pass


def test_stdio_with_a_module_that_does_not_import() -> None:
    """Review bug 4: stdio checks the module imports, and reports why not."""
    with pytest.raises(RuntimeError, match="(?s)no_such_module cannot be imported.*ModuleNotFoundError"), \
            running_server("llm_mcp_tests.no_such_module", transport="stdio"):
        pass


def test_output_readable_after_stop_and_args_must_be_a_list() -> None:
    """Review bugs 12, 13: output() after the server stopped; args as a str is a TypeError."""
    with running_server(SEED, args=["--context", "user_id=7"]) as running:
        pass
    assert isinstance(running.output(), str)
    with pytest.raises(TypeError, match="args must be a list of str"), running_server(SEED, args="--context"):
        pass


def test_env_reaches_http_and_stdio_servers(tmp_path: Any, mcp_test_server: Any) -> None:
    """Review bugs 9, 10: env= works with the fixture (no unhashable dict) and reaches a stdio process."""
    cwd = _module(tmp_path, "env_server", "import os\nfrom llm_mcp.testing import Server, Tool\n"
                  "class Env(Tool):\n    name = 'env'\n"
                  "    def call(self):\n        return os.environ.get('KIT_MARK', 'unset')\n"
                  "server = Server('env', tools=[Env])\n"
                  "if __name__ == '__main__':\n    server.serve()\n")
    for transport in ("http", "stdio"):
        running = mcp_test_server("env_server", transport=transport, env={"KIT_MARK": transport}, cwd=cwd)
        assert mcp_test_server("env_server", transport=transport, env={"KIT_MARK": transport}, cwd=cwd) is running
        with running.mcp(timeout=20) as client:
            assert client.call("env").text == transport


def test_an_orphaned_stdio_server_exits_when_stdin_closes(tmp_path: Any) -> None:
    """Review bug 5: a tool blocking forever does not keep the process alive once its client is gone."""
    cwd = _module(tmp_path, "blocking_server", "import time\nfrom llm_mcp.testing import Server, Tool\n"
                  "class Block(Tool):\n    name = 'block'\n"
                  "    def call(self):\n        while True:\n            time.sleep(0.1)\n"
                  "server = Server('blocking', tools=[Block])\n"
                  "if __name__ == '__main__':\n    server.serve()\n")
    import json

    process = subprocess.Popen([sys.executable, "-m", "blocking_server", "--era", "handshake"], cwd=cwd,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdin is not None and process.stdout is not None

    def send(message: dict[str, Any]) -> None:
        process.stdin.write((json.dumps(message) + "\n").encode())
        process.stdin.flush()

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        assert b'"id":1' in process.stdout.readline()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "block", "arguments": {}}})
        send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        assert b'"id":3' in process.stdout.readline()  # the blocking call is in flight
        process.stdin.close()  # what the OS does when the client dies
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
