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
    with pytest.raises(OutputSchemaError, match="triple: structured content does not match output_schema"):
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
        client.tools  # noqa: B018 - the server has stopped


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
    running = mcp_test_server("llm_mcp_tests.servers.seed_tools", transport="stdio", era="handshake")
    assert running.command[1:] == ["-m", "llm_mcp_tests.servers.seed_tools", "--era", "handshake"]
    assert mcp_test_server("llm_mcp_tests.servers.seed_tools", transport="stdio", era="handshake") is running
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
        kit.Nothing  # noqa: B018
    for name in kit.__all__:
        assert getattr(kit, name) is not None
