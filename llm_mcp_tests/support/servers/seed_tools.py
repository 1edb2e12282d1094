"""The project's own MCP test server, built with ``llm_mcp.testing``.

Usage::

    python -m llm_mcp_tests.support.servers.seed_tools [--http PORT] [--era modern|handshake|auto]
        [--context KEY=VALUE ...] [--page-size N] [--json-response]

stdio by default; ``--http PORT`` serves Streamable HTTP on
``http://127.0.0.1:PORT/mcp``. ``--context user_id=7`` gives the tools a
``user_id``; ``--context marker_dir=/some/dir`` makes the long-running tools
leave marker files there (``<tool>.started``, ``<tool>.cancelled``,
``<tool>.completed``), so a test can see on the server side that cancelled work
really stopped.

Tools, one for every example of the server-side tool DSL (seed 001), under the
same names: ``get_weather_data``, ``double``, ``custom-chart-generator``,
``resource-finder``, ``get_temperature_history``, ``api-caller``,
``cancellable_sleep``, ``test_tool_with_progressable_and_cancellable``,
``fetch``, ``search``. Further behaviours the client's tests need: ``slow``,
``never_answers``, ``exit_process``, ``log_levels``, ``media``,
``bad_structured``, ``broken``, ``app_widget``, ``app_only``, ``defined``.
Resources (``test_resource``, ``test_annotated_resource``,
``test_binary_resource``, all with ``_meta``), the template
``file:///project/{+path}`` and the prompt ``code_review`` with completions.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from llm_mcp.testing import Prompt, Resource, ResourceTemplate, Server, Tool, ToolCancelled

__all__ = [
    "AUDIO_BYTES",
    "CHART_B64",
    "EXIT_CODE",
    "INSTRUCTIONS",
    "PNG_BYTES",
    "PROJECT_FILES",
    "PROMPT_LANGUAGES",
    "SERVER",
    "SERVER_NAME",
    "SERVER_VERSION",
    "TOOLS",
    "main",
]

SERVER_NAME = "seed-tools"
SERVER_VERSION = "1.0.0"
INSTRUCTIONS = "Test server for llm_mcp: every example tool of the server-side tool DSL, and a few misbehaving ones."

CHART_B64 = "dGVzdA=="  # the seed's stand-in chart: base64 of b"test"
# A 1x1 red RGB PNG (69 bytes).
PNG_BYTES = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde"
    b"\x00\x00\x00\x0cIDATx\xdac\xf8\xcf\xc0\x00\x00\x03\x01\x01\x00\xf7\x03AC"
    b"\x00\x00\x00\x00IEND\xaeB`\x82"
)
AUDIO_BYTES = b"RIFF\x24\x00\x00\x00WAVEfmt "  # a WAV header's first bytes; content does not matter here
EXIT_CODE = 3
PROJECT_FILES = {"README.md": "# Project\n", "src/app.py": "print('hello')\n", "src/util.py": "X = 1\n"}
PROMPT_LANGUAGES = ["python", "perl", "php", "ruby", "rust"]


def _obj(properties: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, **extra}
    if required:
        schema["required"] = required
    return schema


def _strings(**descriptions: str) -> dict[str, Any]:
    """An object schema of string properties, each with its description, all required."""
    return _obj({name: {"type": "string", "description": text} for name, text in descriptions.items()},
                list(descriptions))


class _Markers:
    """Marker files in ``context["marker_dir"]`` (when set): what the work did, seen from outside."""

    def __init__(self, tool: Tool, stem: str) -> None:
        directory = tool.context.get("marker_dir")
        self.base = Path(directory) / stem if directory else None

    def touch(self, state: str) -> None:
        if self.base is not None:
            Path(f"{self.base}.{state}").write_text(state)


def _marked(tool: Tool, stem: str, work: Any) -> Any:
    markers = _Markers(tool, stem)
    markers.touch("started")
    try:
        value = work()
    except ToolCancelled:
        markers.touch("cancelled")
        raise
    markers.touch("completed")
    return value


# --------------------------------------------------------------------------- resources


class _Fixed(Resource):
    """A resource whose contents are always ``value``."""

    __test__ = False  # not a pytest test class (the seed's names start with "Test")
    value: str | bytes = ""

    def read(self) -> str | bytes:
        return self.value


def _fixed(class_name: str, value: str | bytes, **attributes: Any) -> type[_Fixed]:
    return type(class_name, (_Fixed,), {"value": value, **attributes})


TestResource = _fixed("TestResource", "Here is the test resource.", uri="file:///seed/test_resource.txt",
                      name="test_resource", title="Test resource", description="A plain text resource.",
                      mime_type="text/plain", meta={"com.example/source": "seed"})
TestAnnotatedResource = _fixed("TestAnnotatedResource", "# Annotated\n", uri="file:///seed/annotated.md",
                               name="test_annotated_resource", description="A markdown resource with annotations.",
                               mime_type="text/markdown", meta={"com.example/reviewed": True},
                               annotations={"audience": ["user", "assistant"], "priority": 0.9})
TestBinaryResource = _fixed("TestBinaryResource", PNG_BYTES, uri="file:///seed/pixel.png", name="test_binary_resource",
                            description="A 1x1 PNG image.", mime_type="image/png", meta={"com.example/pixels": 1})


class ProjectFile(ResourceTemplate):
    uri_template = "file:///project/{+path}"
    name = "project-file"
    title = "Project file"
    description = "A file of the demo project, by path."
    mime_type = "text/plain"
    completions = {"path": sorted(PROJECT_FILES)}

    def read(self) -> str:
        path = self.params["path"]
        if path not in PROJECT_FILES:
            raise FileNotFoundError(path)
        return PROJECT_FILES[path]


class CodeReview(Prompt):
    name = "code_review"
    title = "Code review"
    description = "Ask for a review of a piece of code."
    arguments = [
        {"name": "language", "description": "Programming language", "required": True},
        {"name": "focus", "description": "What to look at"},
    ]
    completions = {"language": PROMPT_LANGUAGES, "focus": ["performance", "readability", "security"]}

    def messages(self) -> list[dict[str, Any]]:
        focus = self.arguments.get("focus", "anything")
        return [
            self.user_message(f"Review this {self.arguments['language']} code, looking at {focus}."),
            self.assistant_message("Please paste the code."),
        ]


RESOURCES: dict[str, type[Resource]] = {
    "test_annotated_resource": TestAnnotatedResource,
    "test_binary_resource": TestBinaryResource,
    "test_resource": TestResource,
}


# --------------------------------------------------------------------------- the seed's examples


class GetWeatherData(Tool):
    name = "get_weather_data"
    title = "Weather Data Retriever"
    description = "Current weather for a place."
    input_schema = _strings(location="City name or zip code")
    output_schema = _obj(
        {
            "temperature": {"type": "number", "description": "Degrees Celsius"},
            "conditions": {"type": "string", "description": "Weather in words"},
            "humidity": {"type": "number", "description": "Relative humidity, percent"},
        },
        ["temperature", "conditions", "humidity"],
    )

    def call(self) -> dict[str, Any]:
        self.client_logger.info(f"Looking up weather for user {self.context.get('user_id')}")
        location = self.arguments["location"]
        self.client_logger.info(f"Fetching weather data for {location}")
        return self.respond_with(structured_content={"temperature": 22.5, "conditions": "Partly cloudy",
                                                     "humidity": 65})


class Double(Tool):
    name = "double"
    title = "Number Doubler"
    description = "Doubles a number given as a string."
    input_schema = _obj({"number": {"type": "string"}}, ["number"])

    def call(self) -> dict[str, Any]:
        self.client_logger.info("Doubling a number")
        number = int(self.arguments["number"])
        user_id = self.context.get("user_id")
        prefix = f"User {user_id}, " if user_id is not None else ""
        return self.respond_with(content=self.text_content(text=f"{prefix}{number} doubled is {number * 2}"))


class ChartGenerator(Tool):
    name = "custom-chart-generator"
    description = "Draws a chart in the asked format."
    input_schema = _strings(chart_type="pie, bar or line", format="svg, jpg, png, ...")
    MIME_TYPES = {"svg": "image/svg+xml", "jpg": "image/jpeg", "jpeg": "image/jpeg"}

    def call(self) -> dict[str, Any]:
        mime_type = self.MIME_TYPES.get(self.arguments["format"].lower(), "image/png")
        return self.respond_with(content=self.image_content(data=CHART_B64, mime_type=mime_type))


class ResourceFinder(Tool):
    name = "resource-finder"
    description = "Finds a resource by its name."
    input_schema = _strings(name="Resource name")

    def call(self) -> dict[str, Any]:
        name = self.arguments["name"]
        resource = RESOURCES.get(name.lower())
        if resource is None:
            return self.respond_with("error", text=f"Resource `{name}` not found")
        return self.respond_with(content=self.embedded_resource_content(resource=resource.contents(self.context)))


class TemperatureHistory(Tool):
    name = "get_temperature_history"
    description = "Temperature history of a zip code, as text and a chart."
    input_schema = _obj({"zip": {"type": "string"}}, ["zip"])
    HISTORY = [85.2, 87.4, 89.0, 95.3, 96.0]

    def call(self) -> dict[str, Any]:
        self.client_logger.info("Collecting the temperature history")
        text = self.text_content(text=", ".join(f"{t:.1f}" for t in self.HISTORY))
        chart = self.image_content(data=CHART_B64, mime_type="image/png")
        return self.respond_with(content=[text, chart])


class ApiCaller(Tool):
    name = "api-caller"
    description = "Calls an external API (and always fails)."
    input_schema = _strings(api_endpoint="Endpoint URL", method="HTTP method")

    def call(self) -> dict[str, Any]:
        return self.respond_with(error=f"Failed to call API at {self.arguments['api_endpoint']}: Connection timed out")


class CancellableSleep(Tool):
    name = "cancellable_sleep"
    title = "Cancellable Sleep Tool"
    description = "Sleeps three seconds; the client may cancel it."
    input_schema = _obj({}, additionalProperties=False)
    SECONDS = 3

    def call(self) -> dict[str, Any]:
        self.client_logger.info("Sleeping for three seconds")

        def work() -> str:
            self.sleep(self.SECONDS)
            return "Sleep completed successfully"

        result = self.cancellable(lambda: _marked(self, self.name, work))
        return self.respond_with(content=self.text_content(text=result))


class ProgressAndCancel(Tool):
    name = "test_tool_with_progressable_and_cancellable"
    description = "Works through steps, reporting progress; the client may cancel it."
    input_schema = _obj(
        {"max_duration": {"type": "number", "description": "Seconds the work should take at most"},
         "work_steps": {"type": "number", "description": "How many steps"}},
        ["max_duration"],
    )

    def call(self) -> dict[str, Any]:
        max_duration = self.arguments.get("max_duration") or 10
        steps = int(self.arguments.get("work_steps") or 10)
        self.client_logger.info(f"Working: max_duration={max_duration}, work_steps={steps}")

        def work() -> list[str]:
            done = []
            for i in range(steps):
                self.sleep(max_duration / steps)
                done.append(f"item_{i + 1}")
            return done

        items = self.progressable(lambda: self.cancellable(lambda: _marked(self, "progress", work)),
                                  max_duration=max_duration, message=f"Processing {steps} items")
        return self.respond_with(
            content=self.text_content(text=f"Successfully processed {len(items)} items: {', '.join(items)}"))


class _Answering(Tool):
    """Answers the text ``answer`` (formatted with the arguments), after logging ``log_line``
    (formatted likewise) to the client when there is one."""

    answer = ""
    log_line: str | None = None

    def call(self) -> dict[str, Any]:
        if self.log_line is not None:
            self.client_logger.info(self.log_line.format(**self.arguments))
        return self.respond_with(content=self.text_content(text=self.answer.format(**self.arguments)))


def _answering(class_name: str, answer: str, **attributes: Any) -> type[_Answering]:
    return type(class_name, (_Answering,), {"answer": answer, **attributes})


Fetch = _answering("Fetch", "Contents of resource {id}", log_line="Fetching {id}", name="fetch",
                   description="Fetches one resource in full.",
                   input_schema=_strings(id="Resource id"),
                   annotations={"read_only_hint": True, "open_world_hint": False})
Search = _answering("Search", "Results for '{q}'", log_line="Searching: {q}", name="search",
                    description="Searches the indexed documents.",
                    input_schema=_strings(q="Query"),
                    security_schemes=[{"type": "noauth"}, {"type": "oauth2", "scopes": ["search.read"]}])


# --------------------------------------------------------------------------- behaviours later issues need


class Slow(Tool):
    name = "slow"
    description = "Sleeps the given seconds (cancellable), then answers."
    input_schema = _obj({"seconds": {"type": "number", "minimum": 0}, "tag": {"type": "string"}}, ["seconds"])
    annotations = {"read_only_hint": True, "idempotent_hint": True}

    def call(self) -> dict[str, Any]:
        seconds = self.arguments["seconds"]
        stem = f"slow-{self.arguments.get('tag', 'untagged')}"
        self.cancellable(lambda: _marked(self, stem, lambda: self.sleep(seconds)))
        return self.respond_with(content=self.text_content(text=f"slept {seconds:g}"))


class NeverAnswers(Tool):
    name = "never_answers"
    description = "Never answers; only a cancel ends it."
    annotations = {"read_only_hint": True}

    def call(self) -> dict[str, Any]:
        self.cancellable(lambda: _marked(self, self.name, lambda: self.channel.cancel_event.wait() and
                                         self.check_cancelled()))
        return self.respond_with(error="unreachable")  # pragma: no cover


class ExitProcess(Tool):
    name = "exit_process"
    description = "Ends the server process at once, without answering."
    annotations = {"destructive_hint": True}

    def call(self) -> dict[str, Any]:
        sys.stdout.flush()
        os._exit(EXIT_CODE)


class LogLevels(Tool):
    name = "log_levels"
    description = "Logs one client message at every protocol level, and one on the server only."

    def call(self) -> dict[str, Any]:
        for level in ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"):
            getattr(self.client_logger, level)(f"{level} message")
        self.server_logger.warning("server-side only message")
        return self.respond_with(content=self.text_content(text="logged"))


class Media(Tool):
    name = "media"
    description = "Audio, an embedded binary resource and a resource link, with result _meta."

    def call(self) -> dict[str, Any]:
        return self.respond_with(
            content=[
                self.audio_content(data=AUDIO_BYTES, mime_type="audio/wav"),
                self.embedded_resource_content(resource=TestBinaryResource.contents()),
                self.resource_link(name="q3-report", uri="file:///reports/q3.pdf", mime_type="application/pdf",
                                   title="Q3 report", size=1234),
            ],
            meta={"com.example/request_id": "abc123"},
        )


class BadStructured(Tool):
    name = "bad_structured"
    description = "Answers structured content that does not match its output schema."
    output_schema = _obj({"count": {"type": "integer"}}, ["count"])

    def call(self) -> dict[str, Any]:
        return self.respond_with(structured_content={"count": "many"})


class Broken(Tool):
    name = "broken"
    description = "Raises an exception inside call()."

    def call(self) -> dict[str, Any]:
        raise RuntimeError("the tool broke")


AppWidget = _answering("AppWidget", "widget ready", name="app_widget",
                       description="A tool that belongs to an MCP App (a ui:// resource).",
                       meta={"ui": {"resourceUri": "ui://seed/widget.html"}, "com.example/x": 1},
                       annotations={"read_only_hint": True, "destructive_hint": True, "idempotent_hint": True})
AppOnly = _answering("AppOnly", "app only", name="app_only", description="An MCP App tool only the app may call.",
                     meta={"ui": {"resourceUri": "ui://seed/widget.html", "visibility": ["app"]}},
                     annotations={"destructive_hint": False, "open_world_hint": True})


class Defined(Tool):
    """Defined through a define() hook and callables, the way the seed uses blocks."""

    @classmethod
    def define(cls) -> dict[str, Any]:
        return {
            "name": "defined",
            "title": "Defined by hook",
            "description": "Echoes a word; defined with define() and callables.",
            "input_schema": lambda: _obj({"word": {"type": "string"}}, ["word"]),
            "output_schema": lambda: _obj({"word": {"type": "string"}}, ["word"]),
            "security_schemes": lambda: [{"type": "noauth"}],
        }

    def call(self) -> dict[str, Any]:
        return self.respond_with(structured_content={"word": self.arguments["word"]})


TOOLS: list[type[Tool]] = [
    GetWeatherData, Double, ChartGenerator, ResourceFinder, TemperatureHistory, ApiCaller, CancellableSleep,
    ProgressAndCancel, Fetch, Search, Slow, NeverAnswers, ExitProcess, LogLevels, Media, BadStructured, Broken,
    AppWidget, AppOnly, Defined,
]

SERVER = Server(
    SERVER_NAME,
    version=SERVER_VERSION,
    instructions=INSTRUCTIONS,
    tools=TOOLS,
    resources=[TestResource, TestAnnotatedResource, TestBinaryResource],
    resource_templates=[ProjectFile],
    prompts=[CodeReview],
)


def main(argv: list[str] | None = None) -> None:
    """Serve the seed tools as the command line says (see the module docstring)."""
    SERVER.serve(argv)


if __name__ == "__main__":
    main()
