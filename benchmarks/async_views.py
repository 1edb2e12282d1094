#!/usr/bin/env python
"""Async views under uvicorn: N requests at once, each making one slow MCP tool call.

    python benchmarks/async_views.py                 # 20 requests at once, 1 s calls, 3 rounds
    python benchmarks/async_views.py --quick         # 1 round of 0.3 s calls: a smoke run
    python benchmarks/async_views.py --json out.json

uvicorn serves ``llm_mcp_tests/support/async_site.py``; every request calls the echo server's
``sleep`` tool (Streamable HTTP, 2026-07-28) for ``--seconds``.

* ``acall``: an async view awaiting ``MCP.acall`` (llm_mcp's own thread pool, up to 64 threads).
* ``to_thread``: an async view running the blocking ``server.call`` with ``asyncio.to_thread``:
  the event loop's default executor, ``min(32, CPUs + 4)`` threads (6 on two cores), so the
  requests queue behind each other in batches of that many.
* ``sync view``: the blocking call in a plain view; Django's ASGI handler gives each request a
  thread-sensitive context of its own, so these overlap too (a thread per request).

The floor is one request alone, measured on the same site in the same round. Reported: the
median wall time of N requests at once and its ratio to the floor (``x one``): about 1 when
the calls overlap, about N when they run one after the other. The test suite proves the overlap
by count (``e2e/test_async_views.py``); nothing here passes or fails on speed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from llm_mcp_tests.support.processes import ECHO_SERVER, PYTHON, start_http_server  # noqa: E402

VIEWS = {"acall": "call", "to_thread": "to-thread", "sync view": "sync-call"}


async def wall(url: str, count: int) -> float:
    async with httpx.AsyncClient(timeout=600, limits=httpx.Limits(max_connections=count)) as client:
        started = time.perf_counter()
        answers = await asyncio.gather(*(client.get(url) for _ in range(count)))
        took = time.perf_counter() - started
    for answer in answers:
        assert answer.status_code == 200 and answer.json()["text"].startswith("slept"), answer.text[:300]
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--quick", action="store_true", help="one round of 0.3 s calls")
    parser.add_argument("--concurrent", type=int, default=20, help="requests at once (default 20)")
    parser.add_argument("--seconds", type=float, default=None, help="seconds each call sleeps (default 1)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 3)")
    parser.add_argument("--json", help="write the numbers here as JSON")
    args = parser.parse_args()
    seconds = args.seconds if args.seconds is not None else (0.3 if args.quick else 1.0)
    rounds = args.rounds if args.rounds is not None else (1 if args.quick else 3)
    echo = start_http_server(lambda port: [PYTHON, ECHO_SERVER, "--http", str(port), "--era", "modern"])
    folder = tempfile.mkdtemp(prefix="llm-mcp-bench-")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "llm_mcp_tests.support.async_site",
           "ASYNC_SITE_ECHO_URL": f"http://127.0.0.1:{echo.port}/mcp", "LLM_MCP_TEST_BASE_URL": "http://127.0.0.1:9/v1",
           "DJANGO_DB_PATH": str(Path(folder) / "bench.sqlite3"), "PYTHONPATH": str(REPO)}
    site = start_http_server(lambda port: [PYTHON, "-m", "uvicorn", "llm_mcp_tests.support.async_asgi:application",
                                           "--port", str(port), "--host", "127.0.0.1", "--log-level", "warning"],
                             env=env)
    rows = []
    try:
        base = f"http://127.0.0.1:{site.port}"
        for name, path in VIEWS.items():
            url = f"{base}/{path}?seconds={seconds:g}"
            asyncio.run(wall(url, 1))  # warm: imports, connections
            singles, manys = [], []
            for _ in range(rounds):
                singles.append(asyncio.run(wall(url, 1)))
                manys.append(asyncio.run(wall(url, args.concurrent)))
            single, many = statistics.median(singles), statistics.median(manys)
            rows.append({"name": name, "concurrent": args.concurrent, "call_seconds": seconds,
                         "one_s": round(single, 3), "many_s": round(many, 3), "x_one": round(many / single, 2)})
    finally:
        site.stop()
        echo.stop()
    print(f"{args.concurrent} async-site requests at once, each one {seconds:g} s tool call; median of {rounds} round(s)")
    print(f"{'view':<10} {'one (s)':>8} {'all (s)':>8} {'x one':>6}")
    for row in rows:
        print(f"{row['name']:<10} {row['one_s']:>8.2f} {row['many_s']:>8.2f} {row['x_one']:>6.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"views": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
