"""Processes for the tests: free ports, server processes on 127.0.0.1, the argv of the test servers.

The Python servers live in ``llm_mcp_tests/support/servers`` (see each module's docstring); the
npm reference servers come from ``node_modules`` (``$LLM_MCP_NODE_MODULES``, else
``<repo>/node_modules``, else ``/tmp/npmtest/node_modules``). The fixtures that use these are in
``llm_mcp_tests/conftest.py``; ``benchmarks/`` imports them too.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVERS_DIR = Path(__file__).resolve().parent / "servers"
PYTHON = sys.executable
ECHO_SERVER = str(SERVERS_DIR / "echo_server.py")
RAW_STDIO_SERVER = str(SERVERS_DIR / "raw_stdio.py")
RAW_HTTP_SERVER = str(SERVERS_DIR / "raw_http.py")
STARTUP_TIMEOUT = 20.0


def free_port() -> int:
    """A currently free TCP port on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServerProcess:
    """A background server process listening on ``127.0.0.1:port``."""

    def __init__(self, argv: list[str], port: int, env: dict[str, str] | None = None, cwd: str | None = None):
        self.argv = argv
        self.port = port
        self._log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cwd or str(REPO_ROOT),
        )

    def output(self) -> str:
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")

    def wait_ready(self, timeout: float = STARTUP_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"server {self.argv} exited with {self.proc.returncode} before listening:\n{self.output()[-4000:]}"
                )
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"server {self.argv} did not listen on {self.port}:\n{self.output()[-4000:]}")
                time.sleep(0.02)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self._log.close()


def end_stdio_server(proc: subprocess.Popen[bytes]) -> None:
    """End a stdio server the way a client should: close its stdin, wait, kill it after 5 s."""
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def start_http_server(argv_for_port: Callable[[int], list[str]], env: dict[str, str] | None = None,
                      attempts: int = 3) -> ServerProcess:
    """Start a server on a free port, retrying if the port was grabbed in between."""
    last: Exception | None = None
    for _ in range(attempts):
        port = free_port()
        server = ServerProcess(argv_for_port(port), port, env=env)
        try:
            server.wait_ready()
            return server
        except RuntimeError as exc:
            last = exc
            server.stop()
    raise RuntimeError(f"could not start {argv_for_port(0)}") from last


def echo_command(era: str = "auto", *flags: str) -> list[str]:
    """argv for the mcp-SDK echo server over stdio (``era``: auto|modern|handshake)."""
    return [PYTHON, ECHO_SERVER, "--era", era, *flags]


def timed_after_start(server: Any, seconds: float) -> Any:
    """``server`` (an ``llm_mcp.MCP``) connected first, under the timeout it was made with (its
    process started, its revision found), then held to ``seconds`` a request.

        server = timed_after_start(llm_mcp.mcp(command=echo_command(), name="echo", timeout=60), 1)

    A test of a slow call then times the call, not a start-up that a loaded machine slows down."""
    server.client.connect()
    server.client.timeout = seconds
    return server


def raw_stdio_command(case: str = "none", era: str = "handshake", *flags: str) -> list[str]:
    """argv for the misbehaving raw stdio server (``case``: none|C01|C02|C03|C05|C16|C17|S2C|
    silent_discover|exit_on_discover|exit_after_call; see raw_stdio.py)."""
    return [PYTHON, RAW_STDIO_SERVER, "--case", case, "--era", era, *flags]


class RawHTTPServer:
    """Handle on the shared raw_http.py process."""

    def __init__(self, process: ServerProcess):
        self.process = process
        self.port = process.port
        self.base_url = f"http://127.0.0.1:{self.port}"

    def url(self, case: str = "basic", tag: str | None = None, era: str | None = None) -> str:
        path = f"/{case}/{tag}/mcp" if tag else f"/{case}/mcp"
        return self.base_url + path + (f"?era={era}" if era else "")

    def log(self, case: str | None = None, tag: str | None = None) -> list[dict[str, Any]]:
        import httpx

        params = {k: v for k, v in (("case", case), ("tag", tag)) if v is not None}
        response = httpx.get(self.base_url + "/_log", params=params, timeout=10)
        response.raise_for_status()
        return response.json()

    def clear_log(self) -> None:
        import httpx

        httpx.delete(self.base_url + "/_log", timeout=10).raise_for_status()


class RawHTTPView:
    """Per-test view of the raw HTTP server: URLs carry a tag unique to the test."""

    def __init__(self, server: RawHTTPServer, tag: str):
        self.server = server
        self.tag = tag
        self.base_url = server.base_url

    def url(self, case: str = "basic", era: str | None = None) -> str:
        return self.server.url(case, self.tag, era)

    def log(self, case: str | None = None) -> list[dict[str, Any]]:
        return self.server.log(case=case, tag=self.tag)


def find_node_modules() -> Path | None:
    candidates = []
    if os.environ.get("LLM_MCP_NODE_MODULES"):
        candidates.append(Path(os.environ["LLM_MCP_NODE_MODULES"]))
    candidates += [REPO_ROOT / "node_modules", Path("/tmp/npmtest/node_modules")]
    for candidate in candidates:
        if (candidate / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js").is_file():
            return candidate
    return None


def node_works(node: str) -> bool:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    match = re.match(r"v(\d+)\.", out.strip())
    return bool(match) and int(match.group(1)) >= 20


def odd_tasks_command(case: str, log: str | None = None) -> list[str]:
    """argv for the stdio server whose ``tasks/get`` answers break the Tasks extension
    (``case``: other_id|no_result|bad_status|bad_requests; see servers/odd_tasks.py); ``log``:
    a file each request's method is appended to."""
    return [PYTHON, str(SERVERS_DIR / "odd_tasks.py"), "--case", case, *(["--log", log] if log else [])]
