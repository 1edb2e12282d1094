"""The recording kit server ``llm_mcp_tests.support.servers.progress_tools`` for progress, log and
cancellation tests, and how to read what it recorded.

Its ``steps`` tool appends a line per step to a file, ``cancelled`` when it is told to stop and
``completed`` when it finishes; ``--context record=PATH`` makes it record every request's ``_meta``,
``logging/setLevel`` and ``notifications/cancelled`` (read back with ``received``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import llm_mcp
from llm_mcp.testing import running_server

from llm_mcp_tests.support.servers.progress_tools import records


SERVER_MODULE = "llm_mcp_tests.support.servers.progress_tools"


COMBOS = [("stdio", "modern"), ("stdio", "handshake"), ("http", "modern"), ("http", "handshake")]


COMBO_IDS = [f"{t}-{e}" for t, e in COMBOS]


CANCEL_COMBOS = [("stdio", "modern"), ("http", "modern"), ("http", "handshake")]
"""Where a cancel is observed on the server side (see test_cancel_stops_the_server_call_at_the_next_event)."""


BOUND = 20.0
"""Seconds: a generous bound for work to be seen stopped (or started) on the server."""


@contextlib.contextmanager
def kit(tmp_path: Path, transport: str, era: str, *, json_response: bool = False, **options: Any
        ) -> Iterator[tuple[llm_mcp.MCP, Path]]:
    """The recording kit server, and an ``llm_mcp.mcp`` reaching it (named ``kit``)."""
    record = tmp_path / "received.jsonl"
    with running_server(SERVER_MODULE, transport=transport, era=era, args=["--context", f"record={record}"],
                        json_response=json_response) as running:
        server = running.mcp(name="kit", **options)
        try:
            yield server, record
        finally:
            server.close()


def received(record: Path, method: str) -> list[dict[str, Any]]:
    return [entry for entry in records(record) if entry["method"] == method]


def lines(path: Path) -> list[str]:
    return path.read_text().split("\n")[:-1] if path.exists() else []


def wait_until(condition: Any, seconds: float = BOUND) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return bool(condition())


def settled(path: Path, quiet: float = 1.0) -> list[str]:
    """The file's lines once it stopped changing for ``quiet`` seconds (or after BOUND)."""
    deadline = time.monotonic() + BOUND
    last = lines(path)
    since = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = lines(path)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            break
    return last


def steps_done(path: Path) -> int:
    return sum(1 for line in lines(path) if line.startswith("step "))


def reference_server(kind: str, request: pytest.FixtureRequest, **options: Any) -> llm_mcp.MCP:
    if kind == "stdio":
        return llm_mcp.mcp(command=request.getfixturevalue("everything_stdio_command"), name="everything", **options)
    return llm_mcp.mcp(url=request.getfixturevalue("everything_http_url"), name="everything", **options)
