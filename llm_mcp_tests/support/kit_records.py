"""A kit server module run over stdio or HTTP that records every ``tools/call`` it receives.

The server modules in ``support/servers/`` that take ``--context record=PATH`` append one JSON line
per request (``{"tool", "id", "version", "state", "responses", "capabilities"}``): tests assert on
what the server really received, not on what the client meant to send.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import llm_mcp
from llm_mcp.testing import running_server

ROOT = str(Path(__file__).resolve().parents[2])


class RecordingServer:
    """A running kit server and the file it records its requests in.

    Attributes:
        running: the `llm_mcp.testing.RunningServer`.
        record: the JSON-lines file.
        era: ``"modern"`` or ``"handshake"``.
    """

    def __init__(self, running: Any, record: Path, era: str):
        self.running = running
        self.record = record
        self.era = era

    def mcp(self, **options: Any) -> llm_mcp.MCP:
        """An inline server object for it, named ``questions`` (``options`` are settings)."""
        return self.running.mcp(name="questions", **options)

    @property
    def location(self) -> dict[str, Any]:
        """Class settings that reach this server."""
        if self.running.url:
            return {"url": self.running.url}
        return {"command": list(self.running.command), "env": dict(self.running.env), "directory": self.running.cwd}

    def received(self, tool: str | None = None) -> list[dict[str, Any]]:
        """The recorded requests, oldest first (those of ``tool`` only, when given)."""
        if not self.record.exists():
            return []
        lines = [json.loads(line) for line in self.record.read_text(encoding="utf-8").splitlines() if line]
        return [line for line in lines if tool is None or line["tool"] == tool]

    def clear(self) -> None:
        """Forget what was recorded so far."""
        self.record.write_text("", encoding="utf-8")


@contextmanager
def recording_server(module: str, era: str, transport: str, folder: Path) -> Iterator[RecordingServer]:
    """Run ``module`` (``python -m``) in ``era`` over ``transport``, recording into a file in ``folder``."""
    record = folder / f"{era}-{transport}.jsonl"
    with running_server(module, transport=transport, era=era, cwd=ROOT, env={"PYTHONPATH": ROOT},
                        args=["--context", f"record={record}"]) as running:
        yield RecordingServer(running, record, era)
