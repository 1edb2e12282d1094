"""``llm_mcp.testing`` on its own: tool definitions (and those refused early), what ``call()`` sees,
answers, content helpers.

The tests run kit tools directly with a recording ``CallChannel``. The kit's cancellation and progress
are in ``test_cancellation.py``, resources and prompts in ``test_resources_and_prompts.py``, answers
that fail loudly in ``test_bad_answers.py``, serving in ``test_serving.py``.
"""

from __future__ import annotations

import base64
import logging
import subprocess
import sys
from typing import Any

import pytest

import llm_mcp.testing as kit
from llm_mcp.testing import CallChannel, OutputSchemaError, Prompt, Resource, ResourceTemplate, Server, Tool, ToolError

from llm_mcp_tests.support.kit_tools import OBJECT, Notes, Triple


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


# --------------------------------------------------------------------------- definitions refused early


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


