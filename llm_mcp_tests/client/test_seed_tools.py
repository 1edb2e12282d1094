"""The client against the project's kit-built test server (``llm_mcp_tests.support.servers.seed_tools``).

Every test runs four times: stdio and Streamable HTTP, each in the 2026-07-28
era and in the handshake era. One server (or, for stdio, one client process) per
combination serves the whole module. Each tool's answer is checked as the
``llm_mcp.Result`` the client builds, against values computed here.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

import llm_mcp
from llm_mcp.testing import running_server

from llm_mcp_tests.support.servers import seed_tools

SEED = "llm_mcp_tests.support.servers.seed_tools"
USER_ID = 7
COMBOS = [("stdio", "modern"), ("stdio", "handshake"), ("http", "modern"), ("http", "handshake")]
SERVER_INFO_META = {"io.modelcontextprotocol/serverInfo": {"name": seed_tools.SERVER_NAME,
                                                          "version": seed_tools.SERVER_VERSION}}
LOG_LEVEL_META = "io.modelcontextprotocol/logLevel"
CHART_BYTES = base64.b64decode("dGVzdA==")
WEATHER = {"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65}


class Target:
    """One running seed-tools server and a client connected to it."""

    def __init__(self, transport: str, era: str, running: Any, server: llm_mcp.MCP, markers: Path) -> None:
        self.transport, self.era, self.running, self.server, self.markers = transport, era, running, server, markers
        self.full_sleep: Future[llm_mcp.Result] = Future()
        self.plain: Any = None  # the same kind of server, without context values

    def meta(self, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """The result ``_meta`` the client should see: 2026-07-28 servers add their identity."""
        return {**(extra or {}), **(SERVER_INFO_META if self.era == "modern" else {})}

    def marker(self, name: str) -> Path:
        return self.markers / name

    def wait_for_marker(self, name: str, deadline: float = 15.0) -> None:
        end = time.monotonic() + deadline
        while not self.marker(name).exists():
            assert time.monotonic() < end, f"the server never wrote {name}; markers: {sorted(self.markers.iterdir())}"
            time.sleep(0.01)

    def clear_markers(self) -> None:
        for path in self.markers.iterdir():
            path.unlink()


def _call_full_sleep(target: Target) -> None:
    """The 3-second cancellable_sleep, run on its own client while the other tests go on."""
    try:
        with target.running.mcp(timeout=30) as client:
            target.full_sleep.set_result(client.call("cancellable_sleep"))
    except BaseException as exc:  # noqa: BLE001 - handed to the test that reads it
        target.full_sleep.set_exception(exc)


@pytest.fixture(scope="module", params=COMBOS, ids=[f"{t}-{e}" for t, e in COMBOS])
def seed(request: pytest.FixtureRequest, mcp_test_server: Callable[..., Any],
         tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    transport, era = request.param
    markers = tmp_path_factory.mktemp(f"markers-{transport}-{era}")
    running = mcp_test_server(SEED, transport=transport, era=era,
                              args=("--context", f"user_id={USER_ID}", "--context", f"marker_dir={markers}"))
    sleeper_markers = tmp_path_factory.mktemp(f"sleeper-{transport}-{era}")
    sleeper_running = mcp_test_server(SEED, transport=transport, era=era,
                                      args=("--context", f"marker_dir={sleeper_markers}"))
    with running.mcp(timeout=20) as server:
        target = Target(transport, era, running, server, markers)
        sleeper = Target(transport, era, sleeper_running, server, sleeper_markers)
        target.full_sleep = sleeper.full_sleep
        target.plain = sleeper_running
        thread = threading.Thread(target=_call_full_sleep, args=(sleeper,), daemon=True)
        thread.start()
        try:
            yield target
        finally:
            thread.join(timeout=30)


@pytest.fixture(scope="module")
def plain(seed: Target) -> Iterator[llm_mcp.MCP]:
    """The same combination without a user_id in the context (the background sleeper's server)."""
    with seed.plain.mcp(timeout=20) as server:
        yield server


def expect(target: Target, result: llm_mcp.Result, *, text: str = "", structured: Any = None,
           attachments: list[tuple[str, str | None, Any]] | None = None, meta: dict[str, Any] | None = None,
           is_error: bool = False) -> None:
    assert result.text == text
    assert result.structured == structured
    assert [(a.kind, a.mime_type, a.content) for a in result.attachments] == (attachments or [])
    assert result.meta == target.meta(meta)
    assert result.is_error is is_error
    assert result.schema_errors == []


def call_with_logs(target: Target, name: str, arguments: dict[str, Any],
                   level: str | None = "debug") -> tuple[llm_mcp.Result, list[tuple[str, Any]]]:
    """Call a tool with a log level in the request's _meta; return the result and the log messages."""
    seen: list[tuple[str, Any]] = []

    def collect(message: dict[str, Any]) -> None:
        if message.get("method") == "notifications/message":
            seen.append((message["params"]["level"], message["params"]["data"]))

    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if level is not None:
        params["_meta"] = {LOG_LEVEL_META: level}
    target.server.client.on_notification.append(collect)
    try:
        raw = target.server.client.request("tools/call", params)
    finally:
        target.server.client.on_notification.remove(collect)
    return llm_mcp.Result(raw, tool_name=name), seen


# --------------------------------------------------------------------------- the server itself


def test_lists_every_tool_and_identifies_itself(seed: Target) -> None:
    """MCP-KIT-01: a kit server answers tools/list and tools/call, over stdio and HTTP, in both eras."""
    assert [tool.name for tool in seed.server.tools] == [cls.name for cls in seed_tools.TOOLS]
    assert seed.server.server_info["name"] == seed_tools.SERVER_NAME
    assert seed.server.instructions == seed_tools.INSTRUCTIONS
    assert seed.server.protocol_version == ("2026-07-28" if seed.era == "modern" else "2025-11-25")
    expect(seed, seed.server.call("fetch", id="1"), text="Contents of resource 1")


def test_definitions_reach_the_client(seed: Target) -> None:
    """MCP-KIT-02, MCP-KIT-19, MCP-KIT-21: name, title, description, schemas, annotations, security schemes."""
    raw = {t["name"]: t for t in seed.server.client.list("tools/list", "tools")}
    weather = raw["get_weather_data"]
    assert weather["title"] == "Weather Data Retriever"
    assert weather["description"] == seed_tools.GetWeatherData.description
    assert weather["inputSchema"] == seed_tools.GetWeatherData.input_schema
    assert weather["outputSchema"] == seed_tools.GetWeatherData.output_schema
    assert "annotations" not in weather
    assert raw["fetch"]["annotations"] == {"readOnlyHint": True, "openWorldHint": False}
    assert raw["slow"]["annotations"] == {"readOnlyHint": True, "idempotentHint": True}
    assert raw["search"]["_meta"]["securitySchemes"] == [{"type": "noauth"},
                                                         {"type": "oauth2", "scopes": ["search.read"]}]
    # defined through a define() hook whose schemas are callables
    assert raw["defined"]["title"] == "Defined by hook"
    assert raw["defined"]["inputSchema"] == {"type": "object", "properties": {"word": {"type": "string"}},
                                             "required": ["word"]}
    assert raw["defined"]["outputSchema"]["required"] == ["word"]
    assert raw["defined"]["_meta"] == {"securitySchemes": [{"type": "noauth"}]}


# Expected (read_only, destructive, idempotent, open_world, meta, ui_uri, visibility) per tool.
SEARCH_META = {"securitySchemes": [{"type": "noauth"}, {"type": "oauth2", "scopes": ["search.read"]}]}
WIDGET = "ui://seed/widget.html"
TOOL_TRAITS: dict[str, tuple[bool, bool, bool, bool, dict[str, Any], str | None, list[str] | None]] = {
    "get_weather_data": (False, True, False, True, {}, None, None),
    "double": (False, True, False, True, {}, None, None),
    "custom-chart-generator": (False, True, False, True, {}, None, None),
    "resource-finder": (False, True, False, True, {}, None, None),
    "get_temperature_history": (False, True, False, True, {}, None, None),
    "api-caller": (False, True, False, True, {}, None, None),
    "cancellable_sleep": (False, True, False, True, {}, None, None),
    "test_tool_with_progressable_and_cancellable": (False, True, False, True, {}, None, None),
    "fetch": (True, False, False, False, {}, None, None),
    "search": (False, True, False, True, SEARCH_META, None, None),
    "slow": (True, False, True, True, {}, None, None),
    "never_answers": (True, False, False, True, {}, None, None),
    "exit_process": (False, True, False, True, {}, None, None),
    "log_levels": (False, True, False, True, {}, None, None),
    "media": (False, True, False, True, {}, None, None),
    "bad_structured": (False, True, False, True, {}, None, None),
    "broken": (False, True, False, True, {}, None, None),
    "app_widget": (True, False, True, True, {"ui": {"resourceUri": WIDGET}, "com.example/x": 1}, WIDGET,
                   ["model", "app"]),
    "app_only": (False, False, False, True, {"ui": {"resourceUri": WIDGET, "visibility": ["app"]}}, WIDGET,
                 ["app"]),
    "defined": (False, True, False, True, {"securitySchemes": [{"type": "noauth"}]}, None, None),
}


def test_tool_attributes_and_predicates(seed: Target) -> None:
    """MCP-TOOL-06, MCP-TOOL-07, MCP-TOOL-08, MCP-TOOL-12, MCP-TOOL-13, MCP-TOOL-14, MCP-TOOL-15, MCP-KIT-30.

    Missing hints take the protocol's defaults; a read-only tool that also says
    destructiveHint true (app_widget) is not destructive; an App tool without a
    visibility is visible to model and app.
    """
    assert sorted(TOOL_TRAITS) == sorted(cls.name for cls in seed_tools.TOOLS)
    for name, (read_only, destructive, idempotent, open_world, meta, ui_uri, visibility) in TOOL_TRAITS.items():
        tool = seed.server.tool(name)
        assert tool is not None, name
        got = (tool.read_only, tool.destructive, tool.idempotent, tool.open_world, tool.meta, tool.ui_uri,
               tool.visibility)
        assert got == (read_only, destructive, idempotent, open_world, meta, ui_uri, visibility), name


# --------------------------------------------------------------------------- the seed's examples


def test_get_weather_data(seed: Target) -> None:
    """MCP-KIT-22, MCP-KIT-07, MCP-KIT-04: structured content matching its output schema; logs name user and place."""
    result, logs = call_with_logs(seed, "get_weather_data", {"location": "Paris"})
    expect(seed, result, text=json.dumps(WEATHER, indent=2), structured=WEATHER)
    assert seed.server.tool("get_weather_data").title == "Weather Data Retriever"
    infos = [data for level, data in logs if level == "info"]
    assert len(infos) == 2
    assert str(USER_ID) in infos[0] and "Paris" in infos[1]
    expect(seed, seed.server.call("get_weather_data", location="Paris"), text=json.dumps(WEATHER, indent=2),
           structured=WEATHER)


def test_double_with_and_without_user(seed: Target, plain: llm_mcp.MCP) -> None:
    """MCP-KIT-23, MCP-KIT-03, MCP-KIT-04, MCP-KIT-08: arguments by name, context user_id, one text block."""
    result = seed.server.call("double", number="21")
    expect(seed, result, text=f"User {USER_ID}, 21 doubled is 42")
    assert result.content == [{"type": "text", "text": f"User {USER_ID}, 21 doubled is 42"}]
    expect(seed, plain.call("double", number="-8"), text="-8 doubled is -16")
    assert seed.server.tool("double").title == "Number Doubler"


@pytest.mark.parametrize(("fmt", "mime"), [("svg", "image/svg+xml"), ("JPG", "image/jpeg"), ("jpeg", "image/jpeg"),
                                           ("png", "image/png"), ("gif", "image/png")])
def test_custom_chart_generator(seed: Target, fmt: str, mime: str) -> None:
    """MCP-KIT-24, MCP-KIT-12: one image, data "dGVzdA==", MIME type from the format (case-insensitive)."""
    result = seed.server.call("custom-chart-generator", chart_type="pie", format=fmt)
    expect(seed, result, attachments=[("image", mime, CHART_BYTES)])
    assert result.content == [{"type": "image", "data": "dGVzdA==", "mimeType": mime}]


def test_resource_finder(seed: Target) -> None:
    """MCP-KIT-25, MCP-KIT-14, MCP-KIT-10: embedded resources by name (case-insensitive), and the error path."""
    expect(seed, seed.server.call("resource-finder", name="test_resource"),
           attachments=[("resource", "text/plain", "Here is the test resource.")])
    expect(seed, seed.server.call("resource-finder", name="Test_Annotated_Resource"),
           attachments=[("resource", "text/markdown", "# Annotated\n")])
    binary = seed.server.call("resource-finder", name="TEST_BINARY_RESOURCE")
    expect(seed, binary, attachments=[("resource", "image/png", seed_tools.PNG_BYTES)])
    assert binary.attachments[0].uri == "file:///seed/pixel.png"
    expect(seed, seed.server.call("resource-finder", name="nope"), text="Resource `nope` not found", is_error=True)


def test_get_temperature_history(seed: Target) -> None:
    """MCP-KIT-26, MCP-KIT-09: text then a PNG image, in that order."""
    result = seed.server.call("get_temperature_history", zip="10001")
    expect(seed, result, text="85.2, 87.4, 89.0, 95.3, 96.0", attachments=[("image", "image/png", CHART_BYTES)])
    assert [block["type"] for block in result.content] == ["text", "image"]


def test_api_caller(seed: Target) -> None:
    """MCP-KIT-27, MCP-KIT-10: always a tool error naming the endpoint."""
    expect(seed, seed.server.call("api-caller", api_endpoint="https://api.example.com/v1", method="GET"),
           text="Failed to call API at https://api.example.com/v1: Connection timed out", is_error=True)


def test_cancellable_sleep_cancelled(seed: Target) -> None:
    """MCP-KIT-16, MCP-KIT-28: the client's timeout cancels the request and the server's sleep stops."""
    seed.clear_markers()
    with pytest.raises(llm_mcp.ConnectionError) as caught:
        seed.server.client.request("tools/call", {"name": "cancellable_sleep", "arguments": {}}, timeout=0.5)
    assert caught.value.timed_out
    seed.wait_for_marker("cancellable_sleep.cancelled")
    assert seed.marker("cancellable_sleep.started").exists()
    assert not seed.marker("cancellable_sleep.completed").exists()
    expect(seed, seed.server.call("fetch", id="after"), text="Contents of resource after")


def test_cancellable_sleep_takes_no_arguments(seed: Target) -> None:
    """MCP-KIT-28: additionalProperties false: an argument is refused before the tool runs."""
    assert seed.server.tool("cancellable_sleep").input_schema["additionalProperties"] is False
    result = seed.server.call("cancellable_sleep", seconds=1)
    assert result.is_error and result.text.startswith("Invalid arguments for cancellable_sleep")


def test_progress_arrives_in_order(seed: Target) -> None:
    """MCP-KIT-17, MCP-KIT-29: progress rises to total 100 with the message; the items come back."""
    progress: list[dict[str, Any]] = []
    raw = seed.server.client.request(
        "tools/call", {"name": "test_tool_with_progressable_and_cancellable",
                       "arguments": {"max_duration": 0.4, "work_steps": 4}}, on_progress=progress.append)
    expect(seed, llm_mcp.Result(raw), text="Successfully processed 4 items: item_1, item_2, item_3, item_4")
    values = [p["progress"] for p in progress]
    assert values == sorted(set(values)) and values[-1] == 100
    assert {p["total"] for p in progress} == {100}
    assert {p["message"] for p in progress} == {"Processing 4 items"}
    seed.marker("progress.completed").unlink()


def test_progress_work_steps_default_to_ten(seed: Target) -> None:
    """MCP-KIT-29: without work_steps, ten steps; without a progress request, no progress is needed."""
    items = ", ".join(f"item_{i}" for i in range(1, 11))
    expect(seed, seed.server.call("test_tool_with_progressable_and_cancellable", max_duration=0.1),
           text=f"Successfully processed 10 items: {items}")


def test_progress_and_cancel_nested(seed: Target) -> None:
    """MCP-KIT-18: progressable around cancellable: progress is reported and the cancel still stops the work."""
    seed.clear_markers()
    progress: list[dict[str, Any]] = []
    with pytest.raises(llm_mcp.ConnectionError):
        seed.server.client.request(
            "tools/call", {"name": "test_tool_with_progressable_and_cancellable",
                           "arguments": {"max_duration": 6, "work_steps": 60}},
            timeout=0.8, on_progress=progress.append)
    seed.wait_for_marker("progress.cancelled")
    assert not seed.marker("progress.completed").exists()
    values = [p["progress"] for p in progress]
    assert values == sorted(set(values)) and all(v < 100 for v in values)


def test_fetch(seed: Target) -> None:
    """MCP-KIT-30: read-only, not destructive, closed world; answers the resource's contents."""
    tool = seed.server.tool("fetch")
    assert (tool.read_only, tool.destructive, tool.open_world) == (True, False, False)
    expect(seed, seed.server.call("fetch", id="abc"), text="Contents of resource abc")


def test_search(seed: Target) -> None:
    """MCP-KIT-31, MCP-KIT-21: security schemes noauth and oauth2 (search.read); answers the query."""
    assert seed.server.tool("search").meta["securitySchemes"] == SEARCH_META["securitySchemes"]
    expect(seed, seed.server.call("search", q="llm mcp"), text="Results for 'llm mcp'")


# --------------------------------------------------------------------------- behaviours for later issues


def test_slow(seed: Target) -> None:
    expect(seed, seed.server.call("slow", seconds=0.05), text="slept 0.05")


def test_never_answers_until_cancelled(seed: Target) -> None:
    """MCP-KIT-16: a request that never gets an answer is cancelled by the client's timeout."""
    seed.clear_markers()
    with pytest.raises(llm_mcp.ConnectionError):
        seed.server.client.request("tools/call", {"name": "never_answers", "arguments": {}}, timeout=0.5)
    seed.wait_for_marker("never_answers.cancelled")
    assert not seed.marker("never_answers.completed").exists()


def test_log_levels(seed: Target) -> None:
    """MCP-KIT-05, MCP-KIT-06: every level reaches the client; server_logger messages never do.

    On 2026-07-28 only levels at or above the request's io.modelcontextprotocol/logLevel
    are sent, and nothing without it; in the handshake era everything is sent.
    """
    levels = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
    result, logs = call_with_logs(seed, "log_levels", {}, level="debug")
    expect(seed, result, text="logged")
    assert logs == [(level, f"{level} message") for level in levels]
    _, logs = call_with_logs(seed, "log_levels", {}, level="error")
    expected = levels[4:] if seed.era == "modern" else levels
    assert logs == [(level, f"{level} message") for level in expected]
    _, logs = call_with_logs(seed, "log_levels", {}, level=None)
    assert logs == ([] if seed.era == "modern" else [(level, f"{level} message") for level in levels])


def test_log_level_set_in_the_handshake_era(seed: Target) -> None:
    """MCP-KIT-05: handshake-era clients filter with logging/setLevel."""
    if seed.era == "modern":
        with pytest.raises(llm_mcp.MCPError):
            seed.server.client.request("logging/setLevel", {"level": "warning"})
        return
    seed.server.client.request("logging/setLevel", {"level": "critical"})
    try:
        _, logs = call_with_logs(seed, "log_levels", {}, level=None)
    finally:
        seed.server.client.request("logging/setLevel", {"level": "debug"})
    assert [level for level, _ in logs] == ["critical", "alert", "emergency"]


def test_media(seed: Target) -> None:
    """MCP-KIT-13, MCP-KIT-14, MCP-KIT-15: audio, embedded blob, resource link, result _meta."""
    result = seed.server.call("media")
    expect(seed, result, attachments=[("audio", "audio/wav", seed_tools.AUDIO_BYTES),
                                      ("resource", "image/png", seed_tools.PNG_BYTES),
                                      ("resource_link", "application/pdf", None)],
           meta={"com.example/request_id": "abc123"})
    link = result.attachments[2]
    assert (link.uri, link.name, link.size) == ("file:///reports/q3.pdf", "q3-report", 1234)


def test_structured_content_off_schema_is_a_server_error(seed: Target) -> None:
    """MCP-KIT-07: structured content that does not match output_schema is an error, not a success."""
    with pytest.raises(llm_mcp.MCPError) as caught:
        seed.server.call("bad_structured")
    assert caught.value.code == -32603
    assert "does not match output_schema" in str(caught.value)


def test_a_raising_tool_answers_a_tool_error(seed: Target) -> None:
    expect(seed, seed.server.call("broken"), text="broken failed: RuntimeError: the tool broke", is_error=True)


def test_app_tools(seed: Target) -> None:
    """MCP-TOOL-07, MCP-TOOL-08: ui:// tools answer like any other."""
    expect(seed, seed.server.call("app_widget"), text="widget ready")
    expect(seed, seed.server.call("app_only"), text="app only")


def test_defined_by_hook(seed: Target) -> None:
    """MCP-KIT-02: a tool defined with define() and callables works end to end."""
    expect(seed, seed.server.call("defined", word="hi"), text=json.dumps({"word": "hi"}, indent=2),
           structured={"word": "hi"})


# --------------------------------------------------------------------------- resources and prompts


def test_resources_with_meta(seed: Target) -> None:
    resources = {r["name"]: r for r in seed.server.client.list("resources/list", "resources")}
    assert sorted(resources) == ["test_annotated_resource", "test_binary_resource", "test_resource"]
    assert resources["test_resource"]["_meta"] == {"com.example/source": "seed"}
    assert resources["test_annotated_resource"]["annotations"] == {"audience": ["user", "assistant"], "priority": 0.9}
    text = seed.server.client.request("resources/read", {"uri": "file:///seed/test_resource.txt"})["contents"]
    assert text == [{"uri": "file:///seed/test_resource.txt", "mimeType": "text/plain",
                     "text": "Here is the test resource.", "_meta": {"com.example/source": "seed"}}]
    blob = seed.server.client.request("resources/read", {"uri": "file:///seed/pixel.png"})["contents"][0]
    assert base64.b64decode(blob["blob"]) == seed_tools.PNG_BYTES and blob["mimeType"] == "image/png"
    with pytest.raises(llm_mcp.MCPError) as caught:
        seed.server.client.request("resources/read", {"uri": "file:///seed/missing.txt"})
    assert caught.value.code == -32002


def test_resource_template(seed: Target) -> None:
    templates = seed.server.client.list("resources/templates/list", "resourceTemplates")
    assert [t["uriTemplate"] for t in templates] == ["file:///project/{+path}"]
    contents = seed.server.client.request("resources/read", {"uri": "file:///project/src/app.py"})["contents"]
    assert contents == [{"uri": "file:///project/src/app.py", "mimeType": "text/plain",
                         "text": seed_tools.PROJECT_FILES["src/app.py"]}]
    completion = seed.server.client.request("completion/complete", {
        "ref": {"type": "ref/resource", "uri": "file:///project/{+path}"},
        "argument": {"name": "path", "value": "src/"}})["completion"]
    assert completion == {"values": ["src/app.py", "src/util.py"], "total": 2, "hasMore": False}


def test_prompt_with_completions(seed: Target) -> None:
    prompts = seed.server.client.list("prompts/list", "prompts")
    assert [p["name"] for p in prompts] == ["code_review"]
    got = seed.server.client.request("prompts/get", {"name": "code_review",
                                                     "arguments": {"language": "rust", "focus": "security"}})
    assert got["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Review this rust code, looking at security."}},
        {"role": "assistant", "content": {"type": "text", "text": "Please paste the code."}},
    ]
    completion = seed.server.client.request("completion/complete", {
        "ref": {"type": "ref/prompt", "name": "code_review"}, "argument": {"name": "language", "value": "p"}})
    assert completion["completion"] == {"values": ["python", "perl", "php"], "total": 3, "hasMore": False}
    with pytest.raises(llm_mcp.MCPError) as caught:
        seed.server.client.request("prompts/get", {"name": "code_review", "arguments": {}})
    assert caught.value.code == -32602


# --------------------------------------------------------------------------- last: the 3-second sleep


def test_cancellable_sleep_completes(seed: Target) -> None:
    """MCP-KIT-28: left alone, the sleep ends with "Sleep completed successfully" (run in the background)."""
    expect(seed, seed.full_sleep.result(timeout=30), text="Sleep completed successfully")


# --------------------------------------------------------------------------- one server per test


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_pagination(era: str) -> None:
    """Lists come in pages when --page-size is set; the client follows nextCursor."""
    with running_server(SEED, transport="stdio", era=era, args=["--page-size", "3"]) as running, \
            running.mcp(timeout=20) as server:
        first = server.client.request("tools/list", {})
        assert [t["name"] for t in first["tools"]] == [cls.name for cls in seed_tools.TOOLS[:3]]
        assert isinstance(first["nextCursor"], str)
        assert [t.name for t in server.tools] == [cls.name for cls in seed_tools.TOOLS]
        assert len(server.client.list("resources/list", "resources")) == 3
        with pytest.raises(llm_mcp.MCPError) as caught:
            server.client.request("tools/list", {"cursor": "not-a-cursor"})
        assert caught.value.code == -32602


@pytest.mark.parametrize(("transport", "era"), COMBOS, ids=[f"{t}-{e}" for t, e in COMBOS])
def test_exit_process(transport: str, era: str) -> None:
    """A tool that ends the server process: the client gets an MCPError, never a result."""
    with running_server(SEED, transport=transport, era=era) as running:
        with running.mcp(timeout=10) as server, pytest.raises(llm_mcp.MCPError):
            server.call("exit_process")
        if running.process is not None:
            assert running.process.wait(timeout=10) == seed_tools.EXIT_CODE
