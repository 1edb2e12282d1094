#!/usr/bin/env python
"""Client-side cost of one ``tools/call`` of the echo server's ``echo`` tool, over loopback.

    python benchmarks/run.py                      # defaults: 300 calls x 5 rounds per contender
    python benchmarks/run.py --quick              # smoke run: 30 calls x 2 rounds
    python benchmarks/run.py --json results.json  # also write the numbers as JSON
    python benchmarks/run.py --profile            # then cProfile llm_mcp's calls (HTTP and stdio)

Contenders, grouped by the floor they are compared with (see ``benchmarks/README.md``):

* ``http``  (echo server ``--json-response``): the floor is a raw ``httpx.Client`` POST of a
  prepared 2026-07-28 ``tools/call`` body with the right headers, parsing the JSON answer;
  then llm_mcp and the official SDK client (mcp 2.3, async) on 2026-07-28, and both again
  on the handshake era (against an ``--era handshake`` server).
* ``http-sse`` (an ``--era handshake`` echo server without ``--json-response``, which answers
  every POST with an SSE stream): floor = a raw ``httpx.Client`` POST in an ``Mcp-Session-Id``
  session it set up by hand, the ``data:`` line parsed by hand; llm_mcp; the SDK. (The SDK's
  server answers a 2026-07-28 ``echo`` with plain JSON even without ``--json-response``: it
  only switches to SSE once a handler sends a notification, so SSE answers to ``echo`` are a
  handshake-era affair.)
* ``stdio``: floor = JSON lines written to / read from the server subprocess by hand;
  llm_mcp; the SDK.

Client CPU is ``time.process_time()`` of this process only (every thread of it; servers are
subprocesses), wall time is ``time.perf_counter()``. Each contender is connected and warmed
up first; then every round runs ``--calls`` calls per contender (contenders interleaved, in
a rotating order). Reported: the median over rounds of the per-call cost, and its ratio to
the floor of the same group measured in the same run. Ratios are the result: nothing here
passes or fails on speed.

Also measured: ``import llm_mcp.client`` vs ``import mcp.client`` (time and peak RSS, each in
a fresh interpreter), and the time from creating a server object to the first result over
HTTP in this (warm) process, with and without building a first TLS context.

Every server this script starts is stopped before it exits.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from _repo import REPO  # first: puts this repository on sys.path

from llm_mcp_tests.support.processes import (
    ECHO_SERVER,
    PYTHON,
    ServerProcess,
    echo_command,
    end_stdio_server,
    free_port,
    start_http_server,
)

LATEST = "2026-07-28"
MESSAGE = "hi"
BUDGET = {"http": 1.2, "http-sse": 1.2, "stdio": 2.0}
"""The project's budget for llm_mcp's client CPU per call, as a ratio to the group's floor."""

META = {
    "io.modelcontextprotocol/protocolVersion": LATEST,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "floor", "version": "0"},
}
FLOOR_BODY = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
     "params": {"name": "echo", "arguments": {"message": MESSAGE}, "_meta": META}},
    separators=(",", ":"),
).encode()
FLOOR_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": LATEST,
    "Mcp-Method": "tools/call",
    "Mcp-Name": "echo",
}
HANDSHAKE = "2025-11-25"
HANDSHAKE_BODY = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": MESSAGE}}},
    separators=(",", ":"),
).encode()


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def quiet_logs() -> None:
    # Both clients warn that the echo server lists two tools with invalid x-mcp-header names.
    for name in ("llm_mcp", "mcp", "client", "httpx", "httpx2"):  # the SDK's session logs as "client"
        logging.getLogger(name).setLevel(logging.ERROR)


# --------------------------------------------------------------------------- servers


class Servers:
    """The HTTP echo servers, started together (they take a second or so each to import mcp)."""

    VARIANTS = {
        "json": ("auto", "--json-response"),
        "json-handshake": ("handshake", "--json-response"),
        "sse-handshake": ("handshake",),
    }

    def __init__(self) -> None:
        self.procs: dict[str, ServerProcess] = {}
        self.urls: dict[str, str] = {}

    def start(self) -> None:
        pending = {}
        for key, (era, *flags) in self.VARIANTS.items():
            port = free_port()
            pending[key] = ServerProcess([PYTHON, ECHO_SERVER, "--http", str(port), "--era", era, *flags], port)
        for key, proc in pending.items():
            try:
                proc.wait_ready()
            except RuntimeError:  # the port was taken in between: start it again, with retries
                proc.stop()
                era, *flags = self.VARIANTS[key]
                proc = start_http_server(lambda p, era=era, flags=flags: [PYTHON, ECHO_SERVER, "--http", str(p),
                                                                         "--era", era, *flags])
            self.procs[key] = proc
            self.urls[key] = f"http://127.0.0.1:{proc.port}/mcp"

    def stop(self) -> None:
        for proc in self.procs.values():
            proc.stop()
        self.procs.clear()


# --------------------------------------------------------------------------- contenders


class Contender:
    """Something that calls ``echo``: ``start()`` connects, ``run(n)`` times n calls, ``stop()``."""

    def __init__(self, group: str, name: str, kind: str, era: str, note: str = ""):
        self.group, self.name, self.kind, self.era, self.note = group, name, kind, era, note
        self.cpu: list[float] = []  # per-call seconds, one value per round
        self.wall: list[float] = []

    @property
    def label(self) -> str:
        return f"{self.group}/{self.name}"

    def start(self) -> None:
        raise NotImplementedError

    def run(self, n: int) -> tuple[float, float]:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError


class SyncContender(Contender):
    call: Callable[[], Any]

    def run(self, n: int) -> tuple[float, float]:
        call = self.call
        gc.collect()
        c0, w0 = time.process_time(), time.perf_counter()
        for _ in range(n):
            call()
        return time.process_time() - c0, time.perf_counter() - w0


def check(text: str) -> None:
    if text != MESSAGE:
        raise AssertionError(f"echo answered {text!r}")


def sse_response(text: str) -> dict[str, Any]:
    """The JSON-RPC response with id 1 in an SSE body, parsed by hand."""
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            message = json.loads(line[5:])
            if message.get("id") == 1:
                return message
    raise AssertionError("no response in the SSE stream")


class HTTPFloor(SyncContender):
    """2026-07-28 with JSON answers (``sse=False``), or a handshake-era session with SSE answers."""

    def __init__(self, url: str, *, sse: bool, group: str):
        super().__init__(group, "floor", "floor", HANDSHAKE if sse else LATEST,
                         "raw httpx POST, SSE parsed by hand" if sse else "raw httpx POST, prepared body")
        self.url, self.sse = url, sse
        self.headers = dict(FLOOR_HEADERS)

    def start(self) -> None:
        import httpx

        self.client = httpx.Client()
        client, url = self.client, self.url

        def call_json() -> None:
            check(client.post(url, content=FLOOR_BODY, headers=FLOOR_HEADERS).json()["result"]["content"][0]["text"])

        def call_sse() -> None:
            check(sse_response(client.post(url, content=HANDSHAKE_BODY, headers=headers).text)
                  ["result"]["content"][0]["text"])

        if self.sse:  # the handshake, by hand
            headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
            answer = client.post(url, headers=headers, json={
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": HANDSHAKE, "capabilities": {},
                           "clientInfo": {"name": "floor", "version": "0"}}})
            answer.raise_for_status()
            headers.update({"MCP-Protocol-Version": HANDSHAKE, "Mcp-Session-Id": answer.headers["mcp-session-id"]})
            client.post(url, headers=headers,
                        json={"jsonrpc": "2.0", "method": "notifications/initialized"}).raise_for_status()
            self.headers = headers
        self.call = call_sse if self.sse else call_json

    def stop(self) -> None:
        if self.sse:
            self.client.delete(self.url, headers=self.headers)
        self.client.close()


class StdioFloor(SyncContender):
    def __init__(self) -> None:
        super().__init__("stdio", "floor", "floor", LATEST, "raw JSON lines")

    def start(self) -> None:
        self.proc = subprocess.Popen(echo_command("auto"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None
        line = FLOOR_BODY + b"\n"

        def call() -> None:
            stdin.write(line)
            stdin.flush()
            check(json.loads(stdout.readline())["result"]["content"][0]["text"])

        self.call = call

    def stop(self) -> None:
        end_stdio_server(self.proc)


class Ours(SyncContender):
    def __init__(self, group: str, name: str, era: str, note: str, **options: Any):
        super().__init__(group, name, "llm_mcp", era, note)
        self.options = options

    def start(self) -> None:
        import llm_mcp

        self.server = llm_mcp.mcp(name="echo", **self.options)
        server = self.server

        def call() -> None:
            check(server.call("echo", message=MESSAGE).text)

        self.call = call
        call()
        if self.era != "any" and not (server.protocol_version == LATEST) == (self.era == LATEST):
            raise AssertionError(f"{self.label}: expected era {self.era}, got {server.protocol_version}")
        self.era = server.protocol_version

    def stop(self) -> None:
        self.server.close()


class SDK(Contender):
    """The official client (async only): a driver task in a private event loop, which times
    the calls itself, so no loop start-up is counted per call. ``kind="fastmcp"`` drives
    FastMCP's ``Client`` (built on the official SDK) the same way."""

    def __init__(self, group: str, name: str, era: str, note: str, target: Callable[[], Any], mode: str,
                 kind: str = "sdk"):
        super().__init__(group, name, kind, era, note)
        self.target, self.mode = target, mode

    def _client(self) -> Any:
        if self.kind == "fastmcp":
            from fastmcp import Client as FastMCPClient

            return FastMCPClient(self.target(), mode=self.mode)
        from mcp.client import Client

        return Client(self.target(), mode=self.mode)

    def start(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.ready = self.loop.create_future()
        self.inbox: asyncio.Queue[Any] = asyncio.Queue()
        self.task = self.loop.create_task(self._driver())
        self._wait(self.ready)

    def _wait(self, future: asyncio.Future[Any]) -> Any:
        self.loop.run_until_complete(asyncio.wait([future, self.task], return_when=asyncio.FIRST_COMPLETED))
        if future.done():
            return future.result()
        self.task.result()  # raises what the driver raised
        raise RuntimeError(f"{self.label}: the SDK driver ended early")

    async def _driver(self) -> None:
        async with self._client() as client:
            async def call() -> None:
                result = await client.call_tool("echo", {"message": MESSAGE})
                check(result.content[0].text)

            await call()
            version = client.protocol_version
            if not (version == LATEST) == (self.era == LATEST):
                raise AssertionError(f"{self.label}: expected era {self.era}, got {version}")
            self.era = version
            self.ready.set_result(None)
            while True:
                job = await self.inbox.get()
                if job is None:
                    return
                n, done = job
                gc.collect()
                c0, w0 = time.process_time(), time.perf_counter()
                for _ in range(n):
                    await call()
                done.set_result((time.process_time() - c0, time.perf_counter() - w0))

    def run(self, n: int) -> tuple[float, float]:
        done = self.loop.create_future()
        self.inbox.put_nowait((n, done))
        return self._wait(done)

    def stop(self) -> None:
        try:
            if not self.task.done():
                self.inbox.put_nowait(None)
                self.loop.run_until_complete(self.task)
        finally:
            self.loop.close()


def sdk_stdio_target() -> Any:
    from mcp.client.stdio import StdioServerParameters

    argv = echo_command("auto")
    return StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(REPO))


def fastmcp_stdio_target() -> Any:
    from fastmcp.client.transports import StdioTransport

    argv = echo_command("auto")
    return StdioTransport(command=argv[0], args=argv[1:], cwd=str(REPO))


def have_fastmcp() -> bool:
    try:
        import fastmcp  # noqa: F401
    except ImportError:
        return False
    return True


def contenders(urls: dict[str, str]) -> list[Contender]:
    json_url, hs_url, sse_url = urls["json"], urls["json-handshake"], urls["sse-handshake"]
    stdio = echo_command("auto")
    fast = have_fastmcp()  # the `bench` extra; without it the FastMCP rows are left out
    rows: list[Contender | None] = [
        HTTPFloor(json_url, sse=False, group="http"),
        Ours("http", "llm_mcp", LATEST, "", url=json_url),
        SDK("http", "sdk", LATEST, "mcp 2.3 Client, mode=auto", lambda: json_url, "auto"),
        SDK("http", "fastmcp", LATEST, "FastMCP 4.1 Client, mode=auto", lambda: json_url, "auto",
            kind="fastmcp") if fast else None,
        Ours("http", "llm_mcp-handshake", "handshake", "handshake-only server", url=hs_url),
        SDK("http", "sdk-handshake", "handshake", "mode=legacy, handshake-only server", lambda: hs_url, "legacy"),
        SDK("http", "fastmcp-handshake", "handshake", "FastMCP, mode=legacy, handshake-only server",
            lambda: hs_url, "legacy", kind="fastmcp") if fast else None,
        HTTPFloor(sse_url, sse=True, group="http-sse"),
        Ours("http-sse", "llm_mcp", "handshake", "handshake-only server, SSE answers", url=sse_url),
        SDK("http-sse", "sdk", "handshake", "mode=legacy, SSE answers", lambda: sse_url, "legacy"),
        SDK("http-sse", "fastmcp", "handshake", "FastMCP, mode=legacy, SSE answers", lambda: sse_url, "legacy",
            kind="fastmcp") if fast else None,
        StdioFloor(),
        Ours("stdio", "llm_mcp", LATEST, "", command=stdio, directory=str(REPO)),
        SDK("stdio", "sdk", LATEST, "mcp 2.3 Client, mode=auto", sdk_stdio_target, "auto"),
        SDK("stdio", "fastmcp", LATEST, "FastMCP 4.1 Client, mode=auto", fastmcp_stdio_target, "auto",
            kind="fastmcp") if fast else None,
    ]
    return [row for row in rows if row is not None]


def measure_calls(all_contenders: list[Contender], calls: int, rounds: int, warmup: int) -> None:
    started: list[Contender] = []
    try:
        for contender in all_contenders:
            log(f"  connecting {contender.label}")
            contender.start()
            started.append(contender)
            contender.run(warmup)
        for r in range(rounds):
            log(f"  round {r + 1}/{rounds}")
            shift = r % len(started)
            for contender in started[shift:] + started[:shift]:
                cpu, wall = contender.run(calls)
                contender.cpu.append(cpu / calls)
                contender.wall.append(wall / calls)
    finally:
        for contender in reversed(started):
            try:
                contender.stop()
            except Exception as exc:  # keep stopping the others
                log(f"  stopping {contender.label} failed: {exc!r}")


def call_rows(all_contenders: list[Contender]) -> list[dict[str, Any]]:
    floors = {c.group: c for c in all_contenders if c.kind == "floor"}
    rows = []
    for c in all_contenders:
        floor = floors[c.group]
        cpu, wall = statistics.median(c.cpu), statistics.median(c.wall)
        floor_cpu, floor_wall = statistics.median(floor.cpu), statistics.median(floor.wall)
        rows.append({
            "group": c.group, "name": c.name, "kind": c.kind, "era": c.era, "note": c.note,
            "cpu_us": cpu * 1e6, "wall_us": wall * 1e6,
            "cpu_ratio": cpu / floor_cpu, "wall_ratio": wall / floor_wall,
            # The same, paired by round (each round's figure over the floor's in that round):
            # steadier when the machine's load drifts during the run.
            "cpu_ratio_paired": statistics.median(a / b for a, b in zip(c.cpu, floor.cpu)),
            "wall_ratio_paired": statistics.median(a / b for a, b in zip(c.wall, floor.wall)),
            "budget": BUDGET[c.group] if c.kind == "llm_mcp" else None,
            "cpu_rounds_us": [v * 1e6 for v in c.cpu], "wall_rounds_us": [v * 1e6 for v in c.wall],
        })
    return rows


# --------------------------------------------------------------------------- imports

# Peak RSS comes from VmHWM: getrusage's ru_maxrss survives exec on Linux, so a child of this
# (large) process would report our peak, not its own.
IMPORT_PROBE = """
import json, sys, time
t = time.perf_counter()
{statement}
elapsed = time.perf_counter() - t
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
print(json.dumps({{"seconds": elapsed, "maxrss_kb": int(status["VmHWM"].split()[0]), "modules": len(sys.modules)}}))
"""

IMPORTS = [
    ("baseline", "pass"),
    ("llm_mcp.client", "import llm_mcp.client"),
    ("llm_mcp.client+http", "import llm_mcp.client, llm_mcp.client.transports.http"),
    ("mcp.client", "import mcp.client"),
    ("fastmcp", "import fastmcp"),
]


def measure_imports(repeats: int) -> list[dict[str, Any]]:
    rows = []
    for name, statement in IMPORTS:
        if name == "fastmcp" and not have_fastmcp():
            continue
        samples = []
        for i in range(repeats + 1):  # the first run may write .pyc files: discarded
            out = subprocess.run([PYTHON, "-c", IMPORT_PROBE.format(statement=statement)], cwd=str(REPO),
                                 capture_output=True, text=True, check=True, timeout=120).stdout
            if i:
                samples.append(json.loads(out.strip().splitlines()[-1]))
        rows.append({
            "name": name, "statement": statement,
            "ms": statistics.median(s["seconds"] for s in samples) * 1e3,
            "peak_rss_mb": statistics.median(s["maxrss_kb"] for s in samples) / 1024,
            "modules": statistics.median(s["modules"] for s in samples),
        })
    base = rows[0]
    sdk = next(r for r in rows if r["name"] == "mcp.client")
    for row in rows:
        row["rss_over_baseline_mb"] = row["peak_rss_mb"] - base["peak_rss_mb"]
    for row in rows:
        row["ms_ratio_to_sdk"] = row["ms"] / sdk["ms"]
        row["rss_over_baseline_ratio_to_sdk"] = (row["rss_over_baseline_mb"] / sdk["rss_over_baseline_mb"]
                                                 if sdk["rss_over_baseline_mb"] else None)
    return rows


# --------------------------------------------------------------------------- first result


def first_result(url: str, repeats: int) -> list[dict[str, Any]]:
    """Server object created -> first echo result, in this warm process (imports done)."""
    import httpx
    import httpx2

    import llm_mcp
    from llm_mcp.client.transports.http import shared_ssl_context
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client

    context = shared_ssl_context()

    def floor(tls: bool) -> float:
        t = time.perf_counter()
        client = httpx.Client() if tls else httpx.Client(verify=context)
        check(client.post(url, content=FLOOR_BODY, headers=FLOOR_HEADERS).json()["result"]["content"][0]["text"])
        elapsed = time.perf_counter() - t
        client.close()
        return elapsed

    def ours(tls: bool) -> float:
        if tls:
            shared_ssl_context.cache_clear()
        t = time.perf_counter()
        server = llm_mcp.mcp(url=url, name="echo")
        check(server.call("echo", message=MESSAGE).text)
        elapsed = time.perf_counter() - t
        server.close()
        return elapsed

    def sdk(tls: bool) -> float:
        async def go() -> float:
            t = time.perf_counter()
            if tls:  # the SDK's default: a new httpx2.AsyncClient, hence a new TLS context, per Client
                target: Any = url
                http_client = None
            else:
                http_client = httpx2.AsyncClient(verify=context, timeout=httpx2.Timeout(30, read=300))
                target = streamable_http_client(url, http_client=http_client)
            async with Client(target) as client:
                check((await client.call_tool("echo", {"message": MESSAGE})).content[0].text)
                elapsed = time.perf_counter() - t
            if http_client is not None:
                await http_client.aclose()
            return elapsed

        loop = asyncio.new_event_loop()
        try:
            return loop.run_until_complete(go())
        finally:
            loop.close()

    rows = []
    for name, fn in (("floor", floor), ("llm_mcp", ours), ("sdk", sdk)):
        for tls in (True, False):
            fn(tls)  # warm-up
            samples = [fn(tls) for _ in range(repeats)]
            rows.append({"name": name, "first_tls_context": tls, "ms": statistics.median(samples) * 1e3,
                         "samples_ms": [s * 1e3 for s in samples]})
    shared_ssl_context()
    floors = {r["first_tls_context"]: r["ms"] for r in rows if r["name"] == "floor"}
    for row in rows:
        row["ratio"] = row["ms"] / floors[row["first_tls_context"]]
    return rows


# --------------------------------------------------------------------------- profile


def syscalls() -> dict[str, int]:
    """This process's read and write system calls so far (Linux ``/proc/self/io``; else empty)."""
    try:
        with open("/proc/self/io") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
    except OSError:
        return {}
    return {"read": int(fields["syscr"]), "write": int(fields["syscw"])}


def profile(urls: dict[str, str], calls: int, top: int) -> dict[str, Any]:
    """cProfile llm_mcp's calls with a per-thread CPU clock (``time.thread_time``), so that
    blocking waits do not count, over HTTP with JSON and with SSE answers, and over stdio,
    where the reader thread is profiled too and the CPU per call is split by thread."""
    import cProfile
    import io
    import pstats
    import threading

    import llm_mcp

    out: dict[str, Any] = {}

    def new_profile() -> cProfile.Profile:
        return cProfile.Profile(time.thread_time)

    def report(title: str, profiles: list[cProfile.Profile]) -> str:
        buf = io.StringIO()
        stats = pstats.Stats(profiles[0], stream=buf)
        for extra in profiles[1:]:
            stats.add(extra)
        print("--- llm_mcp's own functions, by own time", file=buf)
        stats.sort_stats("tottime").print_stats(r"llm_mcp[/\\]client", top)
        print("--- everything, by own time", file=buf)
        stats.strip_dirs().sort_stats("tottime").print_stats(top)
        print("--- everything, by cumulative time", file=buf)
        stats.sort_stats("cumulative").print_stats(top)
        return f"===== {title} (thread CPU time) =====\n" + buf.getvalue()

    def profiled(server: Any) -> cProfile.Profile:
        prof = new_profile()
        prof.enable()
        for _ in range(calls):
            server.call("echo", message=MESSAGE)
        prof.disable()
        return prof

    for key, url, title in (("http", urls["json"], "HTTP, 2026-07-28, JSON answers"),
                            ("http-sse", urls["sse-handshake"], "HTTP, handshake era, SSE answers")):
        server = llm_mcp.mcp(url=url, name="echo")
        for _ in range(20):
            server.call("echo", message=MESSAGE)
        prof = profiled(server)
        server.close()
        out[key] = report(f"llm_mcp, {title}, {calls} calls", [prof])

    # stdio: responses are read by threads the transport starts with the process, so a
    # profiler is switched on in each thread started while the first call runs.
    thread_profiles: list[cProfile.Profile] = []

    def bootstrap(frame: Any, event: str, arg: Any) -> None:
        p = new_profile()
        thread_profiles.append(p)
        p.enable()  # replaces this hook for the rest of the thread

    # First the CPU per call split by thread, unprofiled.
    server = llm_mcp.mcp(command=echo_command("auto"), name="echo", directory=str(REPO))
    for _ in range(20):
        server.call("echo", message=MESSAGE)
    clocks = {"main": time.pthread_getcpuclockid(threading.main_thread().ident)}  # type: ignore[arg-type]
    for t in threading.enumerate():
        if t.name.startswith("mcp-std") and t.ident is not None:
            clocks[t.name.rsplit("-", 1)[0]] = time.pthread_getcpuclockid(t.ident)
    before = {k: time.clock_gettime(v) for k, v in clocks.items()}
    io_before = syscalls()
    c0 = time.process_time()
    for _ in range(calls):
        server.call("echo", message=MESSAGE)
    total = time.process_time() - c0
    io_after = syscalls()
    split = {k: (time.clock_gettime(v) - before[k]) / calls * 1e6 for k, v in clocks.items()}
    split["whole process"] = total / calls * 1e6
    out["stdio_syscalls_per_call"] = {k: (io_after[k] - io_before[k]) / calls for k in io_after}
    server.close()
    # Then the profiles, with the reader threads profiled too.
    server = llm_mcp.mcp(command=echo_command("auto"), name="echo", directory=str(REPO))
    threading.setprofile(bootstrap)  # type: ignore[arg-type]
    try:
        server.call("echo", message=MESSAGE)
    finally:
        threading.setprofile(None)  # type: ignore[arg-type]
    for _ in range(20):
        server.call("echo", message=MESSAGE)
    prof = profiled(server)
    server.close()  # the reader threads end with the process
    out["stdio_cpu_us_per_call_by_thread"] = split
    out["stdio"] = report(f"llm_mcp, stdio, main thread, {calls} calls", [prof])
    if thread_profiles:
        out["stdio_reader"] = report(f"llm_mcp, stdio, reader threads, all {calls + 21} calls", thread_profiles)
    return out


# --------------------------------------------------------------------------- output


def _table_head(head: str, *, title: str | None = None) -> None:
    """Print a table's column heads under a rule, after a blank line and ``title`` when given."""
    if title is not None:
        print()
        print(title)
    print(head)
    print("-" * len(head))


def print_tables(results: dict[str, Any]) -> None:
    print()
    print(f"Per tools/call of echo, loopback; median over {results['meta']['rounds']} rounds of "
          f"{results['meta']['calls']} calls; ratio = contender / floor of its group, same run;\n"
          "CPU x/rd = median over rounds of that round's CPU ratio.")
    head = f"{'group':<9} {'contender':<18} {'era':<11} {'CPU us':>8} {'wall us':>8} {'CPU x':>6} {'wall x':>6} " \
           f"{'CPU x/rd':>8}  {'budget':<7} note"
    _table_head(head)
    for row in results["calls"]:
        budget = f"<={row['budget']:g}x" if row["budget"] else ""
        print(f"{row['group']:<9} {row['name']:<18} {row['era']:<11} {row['cpu_us']:>8.0f} {row['wall_us']:>8.0f} "
              f"{row['cpu_ratio']:>6.2f} {row['wall_ratio']:>6.2f} {row['cpu_ratio_paired']:>8.2f}  {budget:<7} "
              f"{row['note']}")
    _table_head(f"{'import':<22} {'ms':>7} {'x sdk':>6} {'peak RSS MB':>12} {'+ over bare':>12} {'x sdk':>6} "
                f"{'modules':>8}", title="Import in a fresh interpreter (median); RSS = peak RSS of that interpreter")
    for row in results["imports"]:
        rss_ratio = row["rss_over_baseline_ratio_to_sdk"]
        print(f"{row['name']:<22} {row['ms']:>7.1f} {row['ms_ratio_to_sdk']:>6.2f} {row['peak_rss_mb']:>12.1f} "
              f"{row['rss_over_baseline_mb']:>12.1f} {'' if rss_ratio is None else f'{rss_ratio:.2f}':>6} "
              f"{row['modules']:>8.0f}")
    _table_head(f"{'contender':<10} {'new TLS context':>16} {'x floor':>8} {'TLS ctx reused':>15} {'x floor':>8}",
                title="Server object created -> first echo result over HTTP, warm process (median ms)")
    for name in ("floor", "llm_mcp", "sdk"):
        cold = next(r for r in results["first_result"] if r["name"] == name and r["first_tls_context"])
        warm = next(r for r in results["first_result"] if r["name"] == name and not r["first_tls_context"])
        print(f"{name:<10} {cold['ms']:>16.1f} {cold['ratio']:>8.2f} {warm['ms']:>15.1f} {warm['ratio']:>8.2f}")
    print("  (llm_mcp's first call is server/discover + tools/list + tools/call; the SDK's includes its own "
          "discover/list)")
    if "profile" in results:
        prof = results["profile"]
        print()
        print("llm_mcp over stdio, CPU per call by thread (us):",
              ", ".join(f"{k} {v:.0f}" for k, v in prof["stdio_cpu_us_per_call_by_thread"].items()))
        if prof["stdio_syscalls_per_call"]:
            print("llm_mcp over stdio, system calls per call:",
                  ", ".join(f"{k} {v:.1f}" for k, v in prof["stdio_syscalls_per_call"].items()))
        for key in ("http", "http-sse", "stdio", "stdio_reader"):
            if key in prof:
                print(prof[key])


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for dist in ("mcp", "fastmcp", "httpx", "httpx2", "anyio", "pydantic"):
        try:
            found[dist] = version(dist)
        except PackageNotFoundError:
            pass
    import llm_mcp

    found["llm_mcp"] = llm_mcp.__version__
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per contender per round (default 300)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 30 calls, 2 rounds, fewer repeats")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON to PATH")
    parser.add_argument("--profile", action="store_true", help="also cProfile llm_mcp's calls (HTTP and stdio)")
    parser.add_argument("--top", type=int, default=20, help="functions listed per profile (default 20)")
    args = parser.parse_args(argv)
    if args.quick:
        args.calls, args.rounds = 30, 2
    repeats = 2 if args.quick else 5
    warmup = 5 if args.quick else max(20, args.calls // 10)

    quiet_logs()
    # Import what the measured code uses before anything is timed (import cost is measured apart).
    import httpx  # noqa: F401
    import mcp.client  # noqa: F401
    import mcp.client.stdio  # noqa: F401

    import llm_mcp  # noqa: F401
    import llm_mcp.client.transports.http  # noqa: F401
    import llm_mcp.client.transports.sse  # noqa: F401
    import llm_mcp.client.transports.stdio  # noqa: F401

    started = time.perf_counter()
    results: dict[str, Any] = {
        "meta": {"calls": args.calls, "rounds": args.rounds, "warmup": warmup, "quick": args.quick,
                 "python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count(),
                 "versions": versions(), "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                 "budget": BUDGET},
    }
    log("imports (fresh interpreters)")
    results["imports"] = measure_imports(repeats)
    servers = Servers()
    try:
        log("starting HTTP echo servers")
        servers.start()
        log(f"calls: {args.calls} x {args.rounds} rounds per contender")
        all_contenders = contenders(servers.urls)
        measure_calls(all_contenders, args.calls, args.rounds, warmup)
        results["calls"] = call_rows(all_contenders)
        log("first result")
        results["first_result"] = first_result(servers.urls["json"], repeats if args.quick else 10)
        if args.profile:
            log("profiling llm_mcp")
            results["profile"] = profile(servers.urls, args.calls, args.top)
    finally:
        servers.stop()
    results["meta"]["seconds"] = time.perf_counter() - started
    print_tables(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
        log(f"wrote {args.json}")
    log(f"done in {results['meta']['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
