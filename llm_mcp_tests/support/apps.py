"""The MCP Apps test server (``support/servers/apps.py``) started for a test, with what it received."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import llm_mcp
from llm_mcp.testing import running_server

ROOT = str(Path(__file__).resolve().parents[2])
MODULE = "llm_mcp_tests.support.servers.apps"


class AppsServer:
    """A running apps server and the file it records each ``tools/call`` in."""

    def __init__(self, running: Any, record: Path, era: str):
        self.running = running
        self.record = record
        self.era = era

    def mcp(self, **options: Any) -> llm_mcp.MCP:
        return self.running.mcp(**{"name": "weather", **options})

    def received(self) -> list[dict[str, Any]]:
        """The ``tools/call`` requests the server got, oldest first."""
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text(encoding="utf-8").splitlines() if line]


@contextmanager
def apps_server(era: str, folder: Path, *, transport: str = "http", connect: str | None = None,
                name: str = "apps") -> Iterator[AppsServer]:
    """Start the apps server in ``era``; ``connect`` is the origin its App's CSP declares."""
    record = folder / f"{name}-{era}-{transport}.jsonl"
    args = ["--context", f"record={record}"]
    if connect:
        args += ["--context", f"connect={connect}"]
    with running_server(MODULE, transport=transport, era=era, cwd=ROOT, env={"PYTHONPATH": ROOT},
                        args=args) as running:
        yield AppsServer(running, record, era)


APPS_URL_ENV = "LLM_MCP_TEST_APPS_URL"
ECHO_URL_ENV = "LLM_MCP_TEST_ECHO_URL"


class WeatherApps(llm_mcp.MCP):
    """The apps server whose URL the test put in ``LLM_MCP_TEST_APPS_URL`` (read when the chat is built)."""

    name = "weather"
    url = "address"
    extensions = "apps"

    def address(self) -> str:
        import os

        return os.environ[APPS_URL_ENV]


class Echo(llm_mcp.MCP):
    """The echo server whose URL the test put in ``LLM_MCP_TEST_ECHO_URL``: a second server of the chat."""

    name = "echo"
    url = "address"

    def address(self) -> str:
        import os

        return os.environ[ECHO_URL_ENV]


class AppsAgent(llm_mcp.Agent):
    """A chat with the weather App server and the echo server, owned by its ``user``."""

    chat_class = "llm_mcp.models.Chat"
    model = "gpt-test"
    provider = "openai"
    inputs = ["user"]
    mcp = [WeatherApps, Echo]


class ShapedWeatherApps(WeatherApps):
    """The weather App server with ``plain`` left out by ``exclude``: a tool the site never uses."""

    exclude = ["plain"]


class ShapedAppsAgent(AppsAgent):
    """`AppsAgent` whose weather server excludes ``plain``."""

    mcp = [ShapedWeatherApps, Echo]


VANILLA = "@modelcontextprotocol/server-basic-vanillajs"
VANILLA_ARGV_ENV = "LLM_MCP_TEST_VANILLA_ARGV"


def find_vanilla() -> Path | None:
    """``dist/index.js`` of the npm App server ``server-basic-vanillajs`` (pinned in package.json):
    under the repository's node_modules (``npm ci``), ``$LLM_MCP_NODE_MODULES``, or
    ``$LLM_MCP_APPS_NODE_MODULES`` (a separate ``npm install --prefix``)."""
    import os

    from llm_mcp_tests.support.processes import find_node_modules

    folders = [find_node_modules(), Path(os.environ["LLM_MCP_APPS_NODE_MODULES"])
               if os.environ.get("LLM_MCP_APPS_NODE_MODULES") else None]
    for folder in folders:
        if folder is not None and (folder / VANILLA / "dist" / "index.js").is_file():
            return folder / VANILLA / "dist" / "index.js"
    return None


class BasicVanilla(llm_mcp.MCP):
    """``server-basic-vanillajs`` over stdio; its argv is the JSON list in ``LLM_MCP_TEST_VANILLA_ARGV``."""

    name = "vanilla"
    command = "argv"
    extensions = "apps"
    timeout = 30

    def argv(self) -> list[str]:
        import os

        return json.loads(os.environ[VANILLA_ARGV_ENV])


class VanillaAgent(llm_mcp.Agent):
    """A chat with the npm App server ``server-basic-vanillajs``."""

    chat_class = "llm_mcp.models.Chat"
    model = "gpt-test"
    provider = "openai"
    inputs = ["user"]
    mcp = [BasicVanilla]
