"""Start a kit server for a test and always stop it: a context manager (and, in pytest_plugin, fixtures).

    with running_server("llm_mcp_tests.servers.seed_tools", transport="http", era="modern") as running:
        server = llm_mcp.mcp(url=running.url)        # http://127.0.0.1:PORT/mcp
        server.call("double", number="21").text

A module name runs ``python -m MODULE`` (a subprocess); a :class:`~llm_mcp.testing.Server`
instance runs in a thread of this process (HTTP only). For stdio the client starts
the process itself, so ``running.command`` is only the argv. Spec: none (test harness).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from .serve import ERAS

__all__ = ["RunningServer", "free_port", "running_server"]

TRANSPORTS = ("stdio", "http")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now.

        port = free_port()     # e.g. 54321
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RunningServer:
    """A started kit server: where to reach it, and how to get a client for it.

        running.url        # "http://127.0.0.1:PORT/mcp" (HTTP) or None
        running.command    # [python, "-m", module, "--era", era, ...] (stdio) or None
        running.mcp()      # llm_mcp.mcp(url=...) or llm_mcp.mcp(command=...)
    """

    def __init__(self, *, transport: str, era: str, url: str | None = None, command: list[str] | None = None,
                 port: int | None = None, process: subprocess.Popen[bytes] | None = None,
                 cwd: str | None = None) -> None:
        self.transport, self.era, self.url, self.command, self.port = transport, era, url, command, port
        self.process = process
        self.cwd = cwd
        self._log: Any = None
        self._stop: Any = None

    def mcp(self, **options: Any) -> Any:
        """An ``llm_mcp.MCP`` reaching this server (extra ``options`` go to ``llm_mcp.mcp``).

        For stdio each call gives a new client, which starts its own server process
        (in ``cwd``, so ``python -m module`` finds the module).
        """
        import llm_mcp

        if self.url is not None:
            return llm_mcp.mcp(url=self.url, **options)
        if self.cwd is not None:
            options.setdefault("directory", self.cwd)
        return llm_mcp.mcp(command=list(self.command or []), **options)

    def output(self) -> str:
        """What a subprocess server wrote to stdout/stderr so far ("" for threads and stdio)."""
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")

    def stop(self) -> None:
        """Stop the server (idempotent)."""
        if self._stop is not None:
            stop, self._stop = self._stop, None
            stop()

    def __repr__(self) -> str:
        return f"<RunningServer {self.transport} {self.era} {self.url or self.command}>"


def _wait_listening(port: int, timeout: float, alive: Any) -> None:
    deadline = time.monotonic() + timeout
    while True:
        problem = alive()
        if problem:
            raise RuntimeError(problem)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not listen on 127.0.0.1:{port} within {timeout:g} s") from None
            time.sleep(0.02)


def _start_process(module: str, era: str, args: list[str], startup_timeout: float,
                   env: dict[str, str] | None, cwd: str | None) -> RunningServer:
    last: Exception | None = None
    for _ in range(3):  # the free port may be taken between choosing and binding it
        port = free_port()
        argv = [sys.executable, "-m", module, "--http", str(port), "--era", era, *args]
        log = tempfile.TemporaryFile()  # noqa: SIM115 - closed by running.stop()
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   env=env, cwd=cwd)
        running = RunningServer(transport="http", era=era, url=f"http://127.0.0.1:{port}/mcp", port=port,
                                process=process)
        running._log = log

        def stop(process: subprocess.Popen[bytes] = process, log: Any = log) -> None:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=5)
            log.close()

        running._stop = stop

        def alive(process: subprocess.Popen[bytes] = process, running: RunningServer = running,
                  argv: list[str] = argv) -> str | None:
            if process.poll() is None:
                return None
            return f"{argv} exited with {process.returncode} before listening:\n{running.output()[-4000:]}"

        try:
            _wait_listening(port, startup_timeout, alive)
            return running
        except RuntimeError as exc:
            last = exc
            running.stop()
    raise RuntimeError(f"could not start {module} over HTTP: {last}") from last


def _start_thread(server: Any, era: str, startup_timeout: float, json_response: bool) -> RunningServer:
    import uvicorn

    from .serve import build_http_app

    app = build_http_app(server.build(), era, json_response)
    last: Exception | None = None
    for _ in range(3):
        port = free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on",
                                timeout_graceful_shutdown=1)
        uv = uvicorn.Server(config)
        thread = threading.Thread(target=uv.run, name=f"mcp-test-server-{port}", daemon=True)
        thread.start()
        running = RunningServer(transport="http", era=era, url=f"http://127.0.0.1:{port}/mcp", port=port)

        def stop(uv: Any = uv, thread: threading.Thread = thread) -> None:
            uv.should_exit = True
            thread.join(timeout=10)

        running._stop = stop
        try:
            _wait_listening(port, startup_timeout,
                            lambda thread=thread: None if thread.is_alive() else "the server thread ended")
            return running
        except RuntimeError as exc:
            last = exc
            running.stop()
    raise RuntimeError(f"could not start the server in a thread: {last}") from last


@contextlib.contextmanager
def running_server(target: Any, *, transport: str = "http", era: str = "auto", args: Sequence[str] = (),
                   startup_timeout: float = 20.0, env: dict[str, str] | None = None, cwd: str | None = None,
                   json_response: bool = False) -> Iterator[RunningServer]:
    """Start ``target`` and yield a :class:`RunningServer`; stop it on exit, whatever happens.

        with running_server("my_tests.my_server", transport="stdio", era="handshake") as running:
            llm_mcp.mcp(command=running.command).tools
        with running_server(Server("x", tools=[Double])) as running: ...   # HTTP, in a thread

    Args:
        target: a module name (run as ``python -m target``, whose ``main`` serves with
            ``Server.serve()``) or a ``Server`` instance (HTTP in a thread).
        transport: ``"http"`` (Streamable HTTP on 127.0.0.1, a free port) or ``"stdio"``.
        era: ``"auto"``, ``"modern"`` or ``"handshake"``.
        args: extra command-line arguments for a module (``["--context", "user_id=7"]``).
        startup_timeout: seconds to wait for the port to accept connections.

    Raises:
        ValueError: unknown transport or era, or stdio with a ``Server`` instance.
        TypeError: ``target`` is neither a str nor a ``Server``.
        RuntimeError: the server did not start (its output is in the message).
    """
    from .server import Server

    if transport not in TRANSPORTS:
        raise ValueError(f"transport must be one of {', '.join(TRANSPORTS)}; got {transport!r}")
    if era not in ERAS:
        raise ValueError(f"era must be one of {', '.join(ERAS)}; got {era!r}")
    if isinstance(target, Server):
        if transport != "http":
            raise ValueError("a Server instance runs in a thread, which only serves HTTP; pass a module name "
                             "for stdio")
        running = _start_thread(target, era, startup_timeout, json_response)
    elif isinstance(target, str):
        extra = [*args, *(["--json-response"] if json_response else [])]
        if transport == "stdio":
            running = RunningServer(transport="stdio", era=era, cwd=cwd or os.getcwd(),
                                    command=[sys.executable, "-m", target, "--era", era, *extra])
        else:
            running = _start_process(target, era, extra, startup_timeout, env, cwd)
    else:
        raise TypeError(f"target must be a module name or a llm_mcp.testing.Server; got {type(target).__name__}")
    try:
        yield running
    finally:
        running.stop()
