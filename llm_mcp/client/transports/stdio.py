"""stdio: a server run as a subprocess, speaking newline-delimited JSON-RPC.

MCP 2026-07-28, "Transports / stdio": one JSON-RPC message per line on stdin/stdout,
stderr free for logs. We start the process on the first request (not before), give it
only an allow-listed environment plus ``env``, and stop it on ``close()`` (stdin closed,
then SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from typing import Any, Callable

from .. import protocol
from ..errors import ConnectionError
from .base import MessageHandler

__all__ = ["INHERITED_ENV", "StdioTransport", "child_environment"]

log = logging.getLogger("llm_mcp.client.stdio")

INHERITED_ENV = (
    ("APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT", "PROCESSOR_ARCHITECTURE",
     "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE")
    if sys.platform == "win32"
    else ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE",
          "GEM_HOME", "GEM_PATH")
)
"""The parent variables a stdio server inherits (when set); everything else stays out."""


def child_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a server process: the allow-listed variables, then ``extra``."""
    env = {key: os.environ[key] for key in INHERITED_ENV if key in os.environ}
    env.update({str(k): str(v) for k, v in (extra or {}).items()})
    return env


class _Pending:
    __slots__ = ("done", "on_message", "response")

    def __init__(self, on_message: MessageHandler | None):
        self.done = threading.Event()
        self.response: dict[str, Any] | None = None
        self.on_message = on_message


class StdioTransport:
    """Talks to a subprocess over its stdin and stdout.

        transport = StdioTransport(lambda: (["npx", "-y", "server"], {"NODE_ENV": "production"}), name="files")
        transport.request(protocol.request("tools/list"), version="2026-07-28")
        transport.close()

    Attributes:
        name: the server name, used in logs and errors.
        spawn: a callable returning ``(argv, env)``, called at each process start, so that
            ``env`` values that read inputs are current after a restart.
        directory: the working directory of the process, or ``None`` for ours.
        timeout: seconds to wait for a response when the caller gives no deadline.
    """

    def __init__(self, spawn: Callable[[], tuple[list[str], dict[str, str]]], *, name: str,
                 directory: str | None = None, timeout: float = 60.0):
        self.spawn = spawn
        self.name = name
        self.directory = directory
        self.timeout = timeout
        self.process: subprocess.Popen[bytes] | None = None
        self.handler: MessageHandler | None = None
        self._pending: dict[Any, _Pending] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._exit_status: int | None = None

    # -- the transport contract -------------------------------------------------------------

    def request(self, message: dict[str, Any], *, version: str | None, timeout: float | None = None,
                headers: dict[str, str] | None = None, on_message: MessageHandler | None = None) -> dict[str, Any]:
        if on_message is not None:
            self.handler = on_message
        pending = _Pending(on_message)
        with self._lock:
            process = self._ensure_started()
            self._pending[message["id"]] = pending
        try:
            self._write(process, message)
            if not pending.done.wait(self.timeout if timeout is None else timeout):
                raise ConnectionError(
                    f"MCP server {self.name!r} did not answer {message.get('method')} within "
                    f"{self.timeout if timeout is None else timeout:g} s", server=self.name)
        finally:
            with self._lock:
                self._pending.pop(message["id"], None)
        if pending.response is None:
            raise ConnectionError(f"MCP server {self.name!r} exited with status {self._exit_status} while "
                                  f"handling {message.get('method')}", server=self.name,
                                  exit_status=self._exit_status)
        return pending.response

    def notify(self, message: dict[str, Any], *, version: str | None) -> None:
        with self._lock:
            process = self._ensure_started()
        self._write(process, message)

    def cancel(self, notification: dict[str, Any], *, version: str | None) -> None:
        process = self.process
        if process is not None and process.poll() is None:
            try:
                self._write(process, notification)
            except ConnectionError:
                pass

    def close(self) -> None:
        with self._lock:
            process, self.process = self.process, None
        if process is None:
            return
        try:
            if process.stdin:
                process.stdin.close()
            process.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            process.terminate()
            try:
                process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    @property
    def running(self) -> bool:
        """Whether the server process is alive."""
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    # -- the process --------------------------------------------------------------------------

    def _ensure_started(self) -> subprocess.Popen[bytes]:
        if self.process is not None and self.process.poll() is None:
            return self.process
        argv, env = self.spawn()
        try:
            process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       cwd=self.directory, env=env)
        except OSError as exc:
            raise ConnectionError(f"MCP server {self.name!r} could not start: {exc.strerror or exc}",
                                  server=self.name) from None
        self.process, self._exit_status = process, None
        threading.Thread(target=self._read_stdout, args=(process,), name=f"mcp-stdio-{self.name}",
                         daemon=True).start()
        threading.Thread(target=self._read_stderr, args=(process,), name=f"mcp-stderr-{self.name}",
                         daemon=True).start()
        log.debug("started MCP server %s (pid %s)", self.name, process.pid)
        return process

    def _write(self, process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        try:
            with self._write_lock:
                assert process.stdin is not None
                process.stdin.write(data)
                process.stdin.flush()
        except (OSError, ValueError):
            raise ConnectionError(f"MCP server {self.name!r} is not running (exit status {process.poll()})",
                                  server=self.name, exit_status=process.poll()) from None

    def _read_stdout(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        for raw in iter(process.stdout.readline, b""):
            message = self._parse(raw)
            if message is not None:
                self._dispatch(process, message)
        try:
            status = process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            status = None
        with self._lock:
            self._exit_status = status
            waiting = list(self._pending.values()) if self.process is process or self.process is None else []
        for pending in waiting:
            pending.done.set()  # response stays None: request() raises ConnectionError
        log.debug("MCP server %s exited with status %s", self.name, status)

    def _parse(self, raw: bytes) -> dict[str, Any] | None:
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            log.warning("MCP server %s wrote a line that is not UTF-8; skipped", self.name)
            return None
        if not line:
            return None
        try:
            message = json.loads(line)
        except ValueError:
            log.debug("MCP server %s wrote a line that is not JSON: %.200s", self.name, line)
            return None
        if not protocol.is_message(message):
            log.debug("MCP server %s wrote JSON that is not JSON-RPC; skipped", self.name)
            return None
        return message

    def _dispatch(self, process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
        if protocol.is_response(message):
            with self._lock:
                pending = self._pending.get(message["id"])
            if pending is None:
                log.debug("MCP server %s answered an unknown request id %r", self.name, message["id"])
                return
            pending.response = message
            pending.done.set()
            return
        handler = self.handler
        if handler is None:
            with self._lock:
                handler = next((p.on_message for p in self._pending.values() if p.on_message), None)
        reply = handler(message) if handler else None
        if reply is None and protocol.is_request(message):
            reply = protocol.error_response(message["id"], protocol.METHOD_NOT_FOUND, "Method not supported")
        if reply is not None and protocol.is_request(message):
            try:
                self._write(process, reply)
            except ConnectionError:
                pass

    def _read_stderr(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stderr is not None
        server_log = logging.getLogger(f"llm_mcp.server.{self.name}")
        for raw in iter(process.stderr.readline, b""):
            server_log.info("%s", raw.decode("utf-8", "replace").rstrip())
