"""Start a kit server for a test and always stop it: a context manager (and, in pytest_plugin, fixtures).

    with running_server("llm_mcp_tests.support.servers.seed_tools", transport="http", era="modern") as running:
        server = llm_mcp.mcp(url=running.url)        # http://127.0.0.1:PORT/mcp
        server.call("double", number="21").text

A module name runs ``python -m MODULE`` (a subprocess); a [`Server`][llm_mcp.testing.Server]
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

from ..client.transports.stdio import child_environment
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
        running.mcp()      # llm_mcp.mcp(url=...) or llm_mcp.mcp(command=..., env=running.env)
        running.output()   # what a subprocess server printed (also after it stopped)
    """

    def __init__(self, *, transport: str, era: str, url: str | None = None, command: list[str] | None = None,
                 port: int | None = None, process: subprocess.Popen[bytes] | None = None,
                 cwd: str | None = None, env: dict[str, str] | None = None) -> None:
        self.transport, self.era, self.url, self.command, self.port = transport, era, url, command, port
        self.process = process
        self.cwd = cwd
        self.env: dict[str, str] = dict(env or {})
        """Extra environment variables for the server process (stdio: passed on by ``mcp()``)."""
        self._log: Any = None
        self._output = ""
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
        if self.env:
            options.setdefault("env", dict(self.env))
        return llm_mcp.mcp(command=list(self.command or []), **options)

    def output(self) -> str:
        """What a subprocess server wrote to stdout/stderr ("" for threads and stdio); readable after stop."""
        if self._log is None or self._log.closed:
            return self._output
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")

    def _keep_output(self) -> None:
        if self._log is not None and not self._log.closed:
            self._output = self.output()
            self._log.close()

    def stop(self) -> None:
        """Stop the server (idempotent)."""
        if self._stop is not None:
            stop, self._stop = self._stop, None
            stop()

    def __repr__(self) -> str:
        return f"<RunningServer {self.transport} {self.era} {self.url or self.command}>"


class _PortTaken(RuntimeError):
    """The chosen port was taken before the server bound it (the only start failure worth a retry)."""


_ADDRESS_IN_USE = ("address already in use", "errno 98", "errno 48", "only one usage of each socket address")


def _wait_listening(port: int, timeout: float, alive: Any, output: Any = lambda: "") -> None:
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
                text = output()
                raise RuntimeError(f"the server did not listen on 127.0.0.1:{port} within {timeout:g} s (startup_timeout)"
                                   + (f"; its output:\n{text[-4000:]}" if text else "; it printed nothing")) from None
            time.sleep(0.02)


def _start_process(module: str, era: str, args: list[str], startup_timeout: float,
                   env: dict[str, str] | None, cwd: str | None) -> RunningServer:
    for attempt in range(3):  # only when the free port was taken between choosing and binding it
        port = free_port()
        argv = [sys.executable, "-m", module, "--http", str(port), "--era", era, *args]
        log = tempfile.TemporaryFile()  # noqa: SIM115 - closed by running.stop()
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   env={**os.environ, **env} if env else None, cwd=cwd)
        running = RunningServer(transport="http", era=era, url=f"http://127.0.0.1:{port}/mcp", port=port,
                                process=process, cwd=cwd, env=env)
        running._log = log

        def stop(process: subprocess.Popen[bytes] = process, running: RunningServer = running) -> None:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=5)
            running._keep_output()

        running._stop = stop

        def alive(process: subprocess.Popen[bytes] = process, running: RunningServer = running,
                  argv: list[str] = argv) -> str | None:
            if process.poll() is None:
                return None
            text = running.output()
            if any(marker in text.lower() for marker in _ADDRESS_IN_USE):
                raise _PortTaken(text[-4000:])
            hint = (" (exit status 0 before listening: did the module call server.serve() under "
                    "`if __name__ == \"__main__\":`?)" if process.returncode == 0 else "")
            return f"{argv} exited with {process.returncode} before listening{hint}; its output:\n{text[-4000:]}"

        try:
            _wait_listening(port, startup_timeout, alive, running.output)
            return running
        except _PortTaken as exc:
            running.stop()
            if attempt == 2:
                raise RuntimeError(f"could not start {module} over HTTP: port {port} was in use:\n{exc}") from None
        except RuntimeError as exc:
            running.stop()
            raise RuntimeError(f"could not start {module} over HTTP: {exc}") from None
    raise AssertionError("unreachable")


def _check_importable(module: str, startup_timeout: float, env: dict[str, str] | None, cwd: str) -> None:
    """Import ``module`` in a child like the one the client will start, so a typo is reported with its cause."""
    code = "import importlib, sys; importlib.import_module(sys.argv[1])"
    try:
        done = subprocess.run([sys.executable, "-c", code, module], capture_output=True, text=True, cwd=cwd,
                              env=child_environment(env), timeout=startup_timeout, check=False)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"importing {module} took more than {startup_timeout:g} s (startup_timeout)") from None
    if done.returncode != 0:
        raise RuntimeError(f"{module} cannot be imported (cwd {cwd}), so a stdio client could not start it:\n"
                           f"{(done.stdout + done.stderr)[-4000:]}")


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
                            lambda thread=thread: None if thread.is_alive() else "the server thread ended "
                            "(see the uvicorn error logged above; most likely the port was taken)")
            return running
        except RuntimeError as exc:
            last = exc
            running.stop()
    raise RuntimeError(f"could not start the server in a thread: {last}") from last


@contextlib.contextmanager
def running_server(target: Any, *, transport: str = "http", era: str = "auto", args: Sequence[str] = (),
                   startup_timeout: float = 20.0, env: dict[str, str] | None = None, cwd: str | None = None,
                   json_response: bool = False) -> Iterator[RunningServer]:
    """Start ``target`` and yield a [`RunningServer`][llm_mcp.testing.RunningServer]; stop it on exit, whatever happens.

        with running_server("my_tests.my_server", transport="stdio", era="handshake") as running:
            llm_mcp.mcp(command=running.command).tools
        with running_server(Server("x", tools=[Double])) as running: ...   # HTTP, in a thread

    Args:
        target: a module name (run as ``python -m target``, whose ``main`` serves with
            ``Server.serve()``) or a ``Server`` instance (HTTP in a thread).
        transport: ``"http"`` (Streamable HTTP on 127.0.0.1, a free port) or ``"stdio"``.
        era: ``"auto"``, ``"modern"`` or ``"handshake"``.
        args: extra command-line arguments for a module, a list (``["--context", "user_id=7"]``).
        startup_timeout: seconds to wait for the port to accept connections (stdio: for the import check).
        env: extra environment variables for a module's process, on top of this process's
            (stdio: kept in ``running.env`` and passed on by ``running.mcp()``).
        cwd: the module process's directory (default: the current one).
        json_response: HTTP answers as single JSON bodies (logs and progress are then not delivered).

    A crash or a timeout is reported at once; only a port taken before the server bound it
    is retried (with a new port, three tries). For stdio the module is first imported in a
    child process, so a typo fails here with its traceback rather than inside the client.

    Raises:
        ValueError: unknown transport or era, or stdio with a ``Server`` instance.
        TypeError: ``target`` is neither a str nor a ``Server``; ``args`` not a list of str;
            ``env`` not a dict of str.
        RuntimeError: the server did not start or the module does not import (its output is in
            the message).
    """
    from .server import Server

    if isinstance(args, (str, bytes)) or not all(isinstance(a, str) for a in args):
        raise TypeError(f"running_server args must be a list of str such as ['--context', 'user_id=7']; got {args!r}")
    if env is not None and (not isinstance(env, dict)
                            or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())):
        raise TypeError(f"running_server env must be a dict of str to str; got {env!r}")
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
            directory = cwd or os.getcwd()
            if os.environ.get("PYTHONPATH") and "PYTHONPATH" not in (env or {}):  # importable here: there too,
                env = {"PYTHONPATH": os.environ["PYTHONPATH"], **(env or {})}     # as over HTTP
            _check_importable(target, startup_timeout, env, directory)
            running = RunningServer(transport="stdio", era=era, cwd=directory, env=env,
                                    command=[sys.executable, "-m", target, "--era", era, *extra])
        else:
            running = _start_process(target, era, extra, startup_timeout, env, cwd)
    else:
        raise TypeError(f"target must be a module name or a llm_mcp.testing.Server; got {type(target).__name__}")
    try:
        yield running
    finally:
        running.stop()
