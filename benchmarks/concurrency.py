#!/usr/bin/env python
"""One server object shared by 1, 10 and 100 threads calling ``echo`` at once, against a raw floor.

    python benchmarks/concurrency.py                 # 600 calls per level x 3 rounds
    python benchmarks/concurrency.py --quick         # 60 calls per level x 1 round: a smoke run
    python benchmarks/concurrency.py --json out.json

Groups (each with its own floor, measured in the same run):

* ``http``: 2026-07-28, JSON answers. Floor: one ``httpx.Client`` shared by the pool's threads,
  POSTing a prepared ``tools/call`` body with the right headers and parsing the JSON answer.
* ``http-handshake``: a handshake-only server (JSON answers). Floor: the same, in an
  ``Mcp-Session-Id`` session set up by hand.
* ``stdio``: Floor: one server subprocess, JSON lines written under a lock by the calling
  threads and read by one reader thread that hands each response to its caller by id (the
  least a client that shares a stdio server between threads has to do).

``llm_mcp`` is one ``llm_mcp.mcp(...)`` object whose ``call("echo", ...)`` the same pool's
threads run. At each level (1, 10, 100 threads) a ``ThreadPoolExecutor`` of that many threads
(started and warmed up first) runs ``--calls`` calls; floor and llm_mcp take turns. Reported:
calls per second (wall), client CPU per call (``time.process_time()``, every thread of this
process; the servers are subprocesses), and llm_mcp's ratios to the floor of the same level:
``calls/s x`` (higher is better) and ``CPU x`` (lower is better). Medians over rounds. Every
answer is checked. Nothing passes or fails on speed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from _repo import REPO  # first: puts this repository on sys.path

from llm_mcp_tests.support.processes import (
    ECHO_SERVER,
    PYTHON,
    echo_command,
    end_stdio_server,
    start_http_server,
)

LATEST = "2026-07-28"
HANDSHAKE = "2025-11-25"
LEVELS = (1, 10, 100)
MESSAGE = "hi"
META = {"io.modelcontextprotocol/protocolVersion": LATEST, "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "floor", "version": "0"}}


def template(meta: bool) -> bytes:
    """A prepared ``tools/call`` body with ``%d`` for its id (requests in flight at once need their own)."""
    params: dict[str, Any] = {"name": "echo", "arguments": {"message": MESSAGE}}
    if meta:
        params["_meta"] = META
    return json.dumps({"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": params},
                      separators=(",", ":")).encode().replace(b'"id":0', b'"id":%d', 1)


def check(text: str) -> None:
    if text != MESSAGE:
        raise AssertionError(f"echo answered {text!r}")


# --------------------------------------------------------------------------- floors


class HTTPFloor:
    def __init__(self, url: str, *, handshake: bool):
        import httpx

        self.url = url
        self.client = httpx.Client()  # httpx's default pool, as llm_mcp's (100 connections, 20 kept alive)
        self.headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if handshake:
            answer = self.client.post(url, headers=self.headers, json={
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": HANDSHAKE, "capabilities": {},
                           "clientInfo": {"name": "floor", "version": "0"}}})
            answer.raise_for_status()
            self.headers.update({"MCP-Protocol-Version": HANDSHAKE, "Mcp-Session-Id": answer.headers["mcp-session-id"]})
            self.client.post(url, headers=self.headers,
                             json={"jsonrpc": "2.0", "method": "notifications/initialized"}).raise_for_status()
        else:
            self.headers.update({"MCP-Protocol-Version": LATEST, "Mcp-Method": "tools/call", "Mcp-Name": "echo"})
        self.template = template(meta=not handshake)
        self.ids = itertools.count(1)

    def call(self) -> None:
        check(self.client.post(self.url, content=self.template % next(self.ids), headers=self.headers).json()
              ["result"]["content"][0]["text"])

    def close(self) -> None:
        self.client.close()


class StdioFloor:
    """JSON lines to one subprocess from many threads: writes under a lock, one reader thread."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(echo_command("auto"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.ids = itertools.count(1)
        self.pending: dict[int, Future[dict[str, Any]]] = {}
        self.write_lock = threading.Lock()
        self.template = template(meta=True) + b"\n"
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            waiter = self.pending.pop(message.get("id"), None)
            if waiter is not None:
                waiter.set_result(message)

    def call(self) -> None:
        assert self.proc.stdin is not None
        request_id = next(self.ids)
        waiter: Future[dict[str, Any]] = Future()
        self.pending[request_id] = waiter
        line = self.template % request_id
        with self.write_lock:
            self.proc.stdin.write(line)
            self.proc.stdin.flush()
        check(waiter.result(timeout=60)["result"]["content"][0]["text"])

    def close(self) -> None:
        end_stdio_server(self.proc)


class Ours:
    def __init__(self, **options: Any):
        import llm_mcp

        self.server = llm_mcp.mcp(name="echo", **options)
        self.call()

    def call(self) -> None:
        check(self.server.call("echo", message=MESSAGE).text)

    def close(self) -> None:
        self.server.close()


# --------------------------------------------------------------------------- measuring


def timed(pool: ThreadPoolExecutor, call: Callable[[], None], calls: int) -> tuple[float, float]:
    """``calls`` calls spread over the pool's threads: (wall seconds, CPU seconds of this process)."""
    c0, w0 = time.process_time(), time.perf_counter()
    for future in [pool.submit(call) for _ in range(calls)]:
        future.result()
    return time.perf_counter() - w0, time.process_time() - c0


def measure(groups: dict[str, dict[str, Any]], calls: int, rounds: int) -> list[dict[str, Any]]:
    rows = []
    for threads in LEVELS:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            list(pool.map(lambda _: time.sleep(0.01), range(threads)))  # start every thread
            for group, contenders in groups.items():
                for contender in contenders.values():  # warm up: connections for this many threads
                    timed(pool, contender.call, max(threads, 20))
                samples: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
                for r in range(rounds):
                    names = list(contenders)
                    for name in names[r % 2:] + names[:r % 2]:
                        samples[name].append(timed(pool, contenders[name].call, calls))
                floor_rate = statistics.median(calls / wall for wall, _ in samples["floor"])
                floor_cpu = statistics.median(cpu / calls for _, cpu in samples["floor"])
                for name, values in samples.items():
                    rate = statistics.median(calls / wall for wall, _ in values)
                    cpu = statistics.median(cpu / calls for _, cpu in values)
                    rows.append({"group": group, "threads": threads, "name": name, "calls_per_s": rate,
                                 "cpu_us": cpu * 1e6, "rate_ratio": rate / floor_rate, "cpu_ratio": cpu / floor_cpu})
                print(f"  {group} x{threads} done", file=sys.stderr, flush=True)
    return rows


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=600, help="calls per level per contender per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="60 calls x 1 round")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    if args.quick:
        args.calls, args.rounds = 60, 1
    for name in ("llm_mcp", "httpx"):
        logging.getLogger(name).setLevel(logging.ERROR)

    servers = [start_http_server(lambda p, era=era: [PYTHON, ECHO_SERVER, "--http", str(p), "--era", era,
                                                     "--json-response"]) for era in ("auto", "handshake")]
    urls = [f"http://127.0.0.1:{s.port}/mcp" for s in servers]
    groups: dict[str, dict[str, Any]] = {}
    try:
        groups["http"] = {"floor": HTTPFloor(urls[0], handshake=False), "llm_mcp": Ours(url=urls[0])}
        groups["http-handshake"] = {"floor": HTTPFloor(urls[1], handshake=True), "llm_mcp": Ours(url=urls[1])}
        groups["stdio"] = {"floor": StdioFloor(), "llm_mcp": Ours(command=echo_command("auto"), directory=str(REPO))}
        rows = measure(groups, args.calls, args.rounds)
    finally:
        for contenders in groups.values():
            for contender in contenders.values():
                contender.close()
        for server in servers:
            server.stop()

    print(f"One server object shared by N threads calling echo: {args.calls} calls per level, median of "
          f"{args.rounds} round(s); ratios to the floor at the same level")
    head = f"{'group':<15} {'threads':>7} {'contender':<9} {'calls/s':>8} {'CPU us':>7} {'calls/s x':>9} {'CPU x':>6}"
    print(head)
    print("-" * len(head))
    for row in rows:
        print(f"{row['group']:<15} {row['threads']:>7} {row['name']:<9} {row['calls_per_s']:>8.0f} "
              f"{row['cpu_us']:>7.0f} {row['rate_ratio']:>9.2f} {row['cpu_ratio']:>6.2f}")
    results = {"calls": args.calls, "rounds": args.rounds, "levels": list(LEVELS), "rows": rows}
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return results


if __name__ == "__main__":
    main()
