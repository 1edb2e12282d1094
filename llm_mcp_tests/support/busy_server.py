"""Two calls to a stdio server that reads one request at a time, and something done meanwhile.

    outcomes = while_busy(server, lambda: server.call("echo", message="x").text, then=server.close)
    outcomes[0], outcomes[1]     # each the call's text, or the MCPError it raised

For the raw stdio server (``raw_stdio_command(era=...)``), whose ``sleep`` tool keeps it from
reading: the second request waits in its pipe while ``then`` runs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import llm_mcp

SLEEP_SECONDS = 1.5
"""How long the first call keeps the server busy."""

STEP_SECONDS = 0.4
"""The pause between the first call and the second, and between the second and ``then``."""


def while_busy(server: Any, second: Callable[[], str], *, then: Callable[[], None]) -> dict[int, object]:
    """Call ``sleep`` on ``server`` in one thread and ``second()`` in another `STEP_SECONDS` later;
    `STEP_SECONDS` after that run ``then()``; wait for both calls (30 s at most each) and return
    ``{0: outcome, 1: outcome}``, each the call's text or the ``llm_mcp.MCPError`` it raised."""
    outcomes: dict[int, object] = {}
    calls = (lambda: server.call("sleep", seconds=SLEEP_SECONDS).text, second)

    def run(index: int) -> None:
        try:
            outcomes[index] = calls[index]()
        except llm_mcp.MCPError as exc:
            outcomes[index] = exc

    threads = [threading.Thread(target=run, args=(index,)) for index in range(2)]
    threads[0].start()
    time.sleep(STEP_SECONDS)  # the server reads the first request and sleeps
    threads[1].start()
    time.sleep(STEP_SECONDS)
    then()
    for thread in threads:
        thread.join(30)
    return outcomes
