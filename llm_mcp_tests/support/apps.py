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
