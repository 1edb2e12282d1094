"""stdio: a server run as a subprocess, speaking newline-delimited JSON-RPC.

MCP 2026-07-28, "Transports / stdio": one JSON-RPC message per line on stdin/stdout,
stderr free for logs. We start the process on the first request (not before), give it
only an allow-listed environment plus ``env``, and stop it on ``close()`` (stdin closed,
then SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import logging
import math
import os
import select
import subprocess
import sys
import threading
import time
import weakref
from threading import get_ident
from typing import Any, Callable

from .. import protocol
from ..cancel import current_scope
from ..context import current as current_context
from ..context import held_seconds
from ..errors import ConnectionError, ProcessExitedError, ServerTimeoutError, StartupFailedError
from .base import MessageHandler, Transport
from .child_output import StderrTail, decode_line, input_unheld, unread_input, with_tail

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
    """One request waiting for its response (or a listener for its messages).

    No ``__init__`` and no ``__slots__``: the defaults are class attributes, so that making one per
    request is an allocation and one attribute set (``stream``), without a Python call."""

    stream: _Stream
    sent_at: int | None = None  # the stdin offset its request starts at, once written
    response: dict[str, Any] | None = None
    done = False
    inbox: list[dict[str, Any]] | None = None  # a listener's: the messages read for it, not yet handled
    # Made only when this waiter has to wait for another thread's reading: that thread wakes
    # this one alone (its response came, or the turn to read passes to it), not every waiter.
    wake: threading.Condition | None = None

    def answer(self) -> None:
        """Mark this request done (its response is set, or the process ended) and wake its
        thread if it waits; with the transport's lock held, once it is out of ``_pending``."""
        self.done = True
        if self.wake is not None:
            self.wake.notify()


class _Stream:
    """One server process and what has been read of its stdout."""

    __slots__ = ("answered", "buffer", "eof", "fd", "poller", "process", "read_at", "scanned", "sent", "tail")

    def __init__(self, process: subprocess.Popen[bytes]):
        assert process.stdout is not None
        self.process = process
        self.fd = process.stdout.fileno()
        self.poller = None
        if _CAN_POLL:
            self.poller = select.poll()
            self.poller.register(self.fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        self.buffer = bytearray()
        self.scanned = 0
        self.eof = False
        # When stdout last gave bytes (monotonic; at most one wait slice early, see `_read`).
        self.read_at = -math.inf
        self.sent = 0  # bytes written to its stdin
        self.answered = False  # whether a response came from it (not mere output: a usage text)
        self.tail: StderrTail | None = None  # its stderr's last lines, for errors

    @property
    def usable(self) -> bool:
        """Whether requests can go to this process: stdout still open and the process not known
        to have ended. Asks the system (``waitpid``) only after `EXIT_CHECK` seconds without output:
        a process that wrote a moment ago is taken as alive (one system call less per request), and
        should it have ended since, the request's write finds its stdin closed and
        `StdioTransport.request` starts it again. (`StdioTransport._exchange` tells the usual
        case, output a moment ago, without this call.)"""
        if self.eof or self.process.returncode is not None:
            return False
        return time.monotonic() - self.read_at < EXIT_CHECK or self.process.poll() is None


EXIT_CHECK = 0.5
"""Seconds between checks that a server process still lives while a request waits."""

STDERR_WAIT = 1.0
"""Seconds an error waits for the stderr of a process that just ended to be read to its end."""

JUNK_LINES_LOGGED = 20
"""Lines that are not JSON-RPC logged per process (at debug level) before the log goes quiet."""


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End a server process: close its stdin, wait, then SIGTERM, then SIGKILL (2 s each)."""
    if process.poll() is not None:
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


_UNREAD = object()
"""`StdioTransport._parse`'s default: the line is not read yet."""

_CAN_POLL = hasattr(select, "poll")  # POSIX; on Windows a read waits until the server writes


class StdioTransport(Transport):
    """Talks to a subprocess over its stdin and stdout.

        transport = StdioTransport(lambda: (["npx", "-y", "server"], {"NODE_ENV": "production"}), name="files")
        transport.request(protocol.request("tools/list"), version="2026-07-28")
        transport.close()

    There is no reader thread: a request that waits for its response reads stdout itself,
    one waiting request at a time, and hands the responses it reads for others to them
    (so one call costs the client no thread switch). A response wakes only the thread that
    waits for it, and a reader that leaves passes the turn to the oldest waiter still
    unanswered, so many threads sharing one process do not all wake at each line. Messages the server sends while no
    request waits are read with the next request, or by a listener (`listen`), which waits
    like a request that is never answered and so reads while no request waits. stderr is
    read by a thread of its own.

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
        self.handler: MessageHandler | None = None
        self._stream: _Stream | None = None
        self._pending: dict[Any, _Pending] = {}
        self._lock = threading.Lock()
        self._reader: int | None = None  # the thread reading stdout now
        self._sender: int | None = None  # the reader while it writes its request (see `_lend_turn`)
        self._waiting: dict[_Pending, None] = {}  # threads waiting for the reader, oldest first
        self._write_lock = threading.Lock()
        self._junk_lines = 0
        self._lenient_warned = False
        self._listening: tuple[Any, _Pending] | None = None  # (subscription key, its pending)

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The server process, or ``None`` before the first request and after ``close()``."""
        return self._stream.process if self._stream is not None else None

    # -- the transport contract -------------------------------------------------------------

    def request(self, message: dict[str, Any], *, version: str | None, timeout: float | None = None,
                headers: dict[str, str] | None = None, on_message: MessageHandler | None = None) -> dict[str, Any]:
        if on_message is not None:
            self.handler = on_message
        seconds = self.timeout if timeout is None else timeout
        now = time.monotonic()
        data = protocol.encode(message) + b"\n"
        pending = self._exchange(message, data, seconds, now)
        if pending.response is not None:
            return pending.response
        if version == protocol.LATEST and pending.stream.answered and self._never_read(pending):
            # The process had answered before and ended without reading this request (killed,
            # crashed over another one, or exited while idle): a new process gets it, once. Only
            # on 2026-07-28, where a request carries all a process needs: in the handshake era a
            # new process has had no ``initialize`` (the session does the handshake at the next
            # request, seeing the process gone).
            log.debug("MCP server %s ended before reading %s; starting it again", self.name, message.get("method"))
            pending = self._exchange(message, data, seconds, now)
            if pending.response is not None:
                return pending.response
        raise self._exited(pending, message)

    def _exchange(self, message: dict[str, Any], data: bytes, seconds: float, now: float) -> _Pending:
        """Send ``data`` (``message`` encoded) to the running process and wait for the answer: the
        `_Pending` with its ``response``, ``None`` when the process ended first. Raises
        ``ServerTimeoutError`` ``seconds`` after ``now``."""
        key = message["id"]
        deadline = now + seconds
        me = get_ident()
        with self._lock:
            stream = self._stream
            if stream is None or stream.eof or stream.process.returncode is not None \
                    or now - stream.read_at >= EXIT_CHECK:  # else usable, as `_Stream.usable` tells
                stream = self._ensure_started()
            pending = self._pending[key] = _Pending()
            pending.stream = stream
            reader = self._reader
            if reader is None:
                # The usual case, no other reader: the turn to read is taken here, with the
                # registration (one lock acquisition for both). `_send` gives it up should the
                # write have to wait, for the process (which may wait for its stdout to be read)
                # or for another thread's write (which may wait for the process): see `_lend_turn`.
                self._reader = self._sender = me
        try:
            try:
                pending.sent_at = self._send(stream, data, deadline)
            except ProcessExitedError:
                if not stream.answered:
                    raise  # it never answered anything: it failed while starting
                pending.done = True  # nothing of it was accepted: see `_never_read`
                return pending
            finally:
                if self._sender == me:  # then the turn is still this thread's: nobody else sets it
                    self._sender = None
            # Whether this thread reads: only it sets `_reader` to itself or, holding it, back.
            if self._reader == me:
                answered = self._read(key, pending, deadline, reader == me)
            else:
                answered = self._wait(key, pending, deadline)
            if not answered:
                raise ServerTimeoutError(f"MCP server {self.name!r} did not answer {message.get('method')} within "
                                         f"{seconds:g} s", server=self.name)
        finally:
            if self._pending.get(key) is pending:  # an answer or the process's end took it out already
                with self._lock:
                    self._pending.pop(key, None)
                    if self._reader == me and reader is None:  # the send failed with the turn taken
                        self._leave_turn()
        return pending

    @staticmethod
    def _never_read(pending: _Pending) -> bool:
        """Whether the ended process of ``pending`` never read any byte of its request: the write
        found its stdin closed, or the bytes still unread in the pipe reach back to the request's
        start and no process can read them any more (Linux: ``FIONREAD``, and no reader of the pipe
        left: a child the process handed its stdin to may read the request yet, and run it; elsewhere
        ``False`` unless the write failed)."""
        if pending.sent_at is None:
            return True
        process = pending.stream.process
        unread = unread_input(process)
        return unread is not None and pending.stream.sent - unread <= pending.sent_at and input_unheld(process)

    def _exited(self, pending: _Pending, message: dict[str, Any]) -> ProcessExitedError:
        """The error for the process that ended while ``message`` (``pending``) waited: with that
        process's exit status and stderr tail (not those of a process started since, for another
        request), and `StartupFailedError` when it never read this request (`_never_read`; other
        requests left unread in its pipe say nothing of this one)."""
        stream = pending.stream
        tail = stream.tail.text(wait=STDERR_WAIT) if stream.tail is not None else ""
        status = stream.process.returncode
        if self._never_read(pending):
            kind: type[ProcessExitedError] = StartupFailedError
            what = "while starting, before reading" if not stream.answered else "before reading"
        else:
            kind, what = ProcessExitedError, "while handling"
        text = f"MCP server {self.name!r} exited with status {status} {what} {message.get('method')}"
        return kind(with_tail(text, tail), server=self.name, exit_status=status, stderr=tail)

    def notify(self, message: dict[str, Any], *, version: str | None) -> None:
        with self._lock:
            stream = self._ensure_started()
        self._write(stream, message)

    def cancel(self, notification: dict[str, Any], *, version: str | None) -> None:
        stream = self._stream
        if stream is not None and stream.process.poll() is None:
            try:
                self._write(stream, notification, time.monotonic() + 2)
            except ConnectionError:
                pass

    def close(self) -> None:
        with self._lock:
            stream, self._stream = self._stream, None
        if stream is not None:
            _stop(stream.process)

    @property
    def running(self) -> bool:
        """Whether the server process is alive."""
        process = self.process
        return process is not None and process.poll() is None

    @property
    def pid(self) -> int | None:
        process = self.process
        return process.pid if process is not None else None

    # -- the process --------------------------------------------------------------------------

    def _ensure_started(self) -> _Stream:
        stream = self._stream
        if stream is not None and stream.usable:
            return stream
        if stream is not None and stream.process.poll() is None:
            stream.process.kill()  # it closed its stdout but lives on: replace it
        argv, env = self.spawn()
        try:
            process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       cwd=self.directory, env=env)
        except OSError as exc:
            raise ConnectionError(f"MCP server {self.name!r} could not start: {exc.strerror or exc}",
                                  server=self.name) from None
        if _CAN_POLL:
            assert process.stdin is not None
            os.set_blocking(process.stdin.fileno(), False)  # writes wait with a deadline, in _write
        stream = _Stream(process)
        self._stream, self._junk_lines = stream, 0
        self._lenient_warned = False
        weakref.finalize(self, _stop, process)  # a transport never closed still ends its process
        stream.tail = StderrTail(secrets=[v for k, v in env.items() if k not in INHERITED_ENV])
        threading.Thread(target=stream.tail.read, args=(process, logging.getLogger(f"llm_mcp.server.{self.name}").info),
                         name=f"mcp-stderr-{self.name}", daemon=True).start()
        log.debug("started MCP server %s (pid %s)", self.name, process.pid)
        return self._stream

    def _write(self, stream: _Stream, message: dict[str, Any], deadline: float | None = None) -> None:
        """Send one message; a server that stops reading its stdin is killed at the deadline."""
        self._send(stream, protocol.encode(message) + b"\n", deadline)

    def _send(self, stream: _Stream, data: bytes, deadline: float | None = None) -> int:
        """Write one encoded message (see `_write`); returns the stdin offset it starts at. Raises
        ``ProcessExitedError`` when the process has ended (its stdin is closed), ``ConnectionError``
        when it is unreachable otherwise."""
        process = stream.process
        if not self._write_lock.acquire(False):
            if self._sender == get_ident():  # another write goes on, and may wait: see `_lend_turn`
                self._lend_turn()
            self._write_lock.acquire()
        try:
            try:
                start = stream.sent
                assert process.stdin is not None
                if not _CAN_POLL:
                    if self._sender == get_ident():  # this write may wait: see `_lend_turn`
                        self._lend_turn()
                    process.stdin.write(data)
                    process.stdin.flush()
                    stream.sent += len(data)
                    return start
                fd = process.stdin.fileno()
                try:
                    written = os.write(fd, data)  # a message fits the pipe's buffer, mostly: one write
                except BlockingIOError:
                    written = 0
                stream.sent += written
                if written == len(data):
                    return start
                if self._sender == get_ident():  # the pipe is full: see `_lend_turn`
                    self._lend_turn()
                deadline = deadline if deadline is not None else time.monotonic() + self.timeout
                view = memoryview(data)[written:]
                while view:
                    try:
                        written = os.write(fd, view)
                        stream.sent += written
                        view = view[written:]
                    except BlockingIOError:
                        writable = select.poll()
                        writable.register(fd, select.POLLOUT)
                        # In slices: between them, output nobody reads is read (see `_take_output`).
                        while not writable.poll(min(max(deadline - time.monotonic(), 0), CANCEL_CHECK) * 1000):
                            if time.monotonic() >= deadline:
                                process.kill()  # half a message sits in its pipe: this process is done
                                raise ServerTimeoutError(f"MCP server {self.name!r} stopped reading its input",
                                                         server=self.name) from None
                            self._take_output(stream)
                return start
            finally:
                self._write_lock.release()
        except ConnectionError:
            raise  # ours is an OSError too
        except (OSError, ValueError) as exc:
            try:  # a closed pipe: its process is ending, if not yet reaped
                status = process.wait(timeout=EXIT_CHECK) if isinstance(exc, BrokenPipeError) else process.poll()
            except subprocess.TimeoutExpired:
                status = None
            failure = ConnectionError if status is None else ProcessExitedError  # a broken pipe, exit not yet seen
            raise failure(f"MCP server {self.name!r} is not running (exit status {status})", server=self.name,
                          exit_status=status) from None

    def _take_output(self, stream: _Stream) -> None:
        """While a write waits for the process, which may wait for its stdout to be read (an answer
        nobody waits for any more, notifications), and no other thread reads: move what it wrote
        to the buffer, unparsed (the next reader reads it there). At most `TAKEN_AT_ONCE` bytes."""
        me = get_ident()
        with self._lock:
            if self._reader not in (None, me):
                return  # that thread reads
            lent, self._reader = self._reader is None, me
        try:
            taken = 0
            while taken < TAKEN_AT_ONCE and stream.poller is not None and stream.poller.poll(0):
                chunk = os.read(stream.fd, 1 << 16)
                if not chunk:
                    stream.eof = True
                    break
                stream.read_at = time.monotonic()
                stream.buffer += chunk  # appended: what `scanned` covers stays without a newline
                taken += len(chunk)
        except OSError:
            stream.eof = True
        finally:
            if lent:
                with self._lock:
                    self._leave_turn()

    # -- reading: whoever waits reads -----------------------------------------------------------

    def _wait(self, key: Any, pending: _Pending, deadline: float) -> bool:
        """Wait for ``pending`` (registered under ``key``) to be answered (or its process to end),
        reading when the turn comes to this thread; ``False`` at the deadline."""
        me = get_ident()
        with self._lock:
            while not pending.done and not pending.inbox and self._reader not in (None, me):
                remaining = deadline + held_seconds() - time.monotonic()
                if remaining <= 0:
                    return False
                _check_cancelled()
                if pending.wake is None:
                    pending.wake = threading.Condition(self._lock)
                self._waiting[pending] = None
                try:
                    pending.wake.wait(min(remaining, _slice()))
                finally:
                    self._waiting.pop(pending, None)
            if pending.done or pending.inbox:
                if self._reader is None and self._waiting:
                    self._pass_turn()  # the turn may have been passed to us after our answer came
                return True
            nested, self._reader = self._reader == me, me  # a handler may call the server again
        return self._read(key, pending, deadline, nested)

    def _lend_turn(self) -> None:
        """Give up the turn to read that `_exchange` took before writing its request, when the
        write has to wait (for a full pipe, or for another thread's write, which may wait for one):
        the process may have stopped reading its stdin until its stdout is read, for another
        waiter. The request is then waited for in `_wait`."""
        with self._lock:
            self._sender = None
            self._leave_turn()

    def _leave_turn(self) -> None:
        """Give up the turn to read (with the lock held): to the oldest waiter still unanswered."""
        self._reader = None
        if self._waiting:
            self._pass_turn()

    def _pass_turn(self) -> None:
        """Wake the oldest waiter still unanswered to read next (with the lock held)."""
        for waiter in self._waiting:
            if not waiter.done and not waiter.inbox:
                assert waiter.wake is not None
                waiter.wake.notify()
                return

    def _read(self, key: Any, pending: _Pending, deadline: float, nested: bool) -> bool:
        """Read stdout, with the turn to read, until ``pending`` (registered under ``key``) is
        answered (or its process ends, or a listener's inbox fills): ``True``; ``False`` at the
        deadline. Gives up the turn when done unless ``nested`` (a handler called the server
        again, in the thread whose turn it is: the outer read goes on after it)."""
        stream = pending.stream
        buffer = stream.buffer
        try:
            while not pending.done and not pending.inbox:
                end = buffer.find(b"\n", stream.scanned) if buffer else -1
                if end >= 0:
                    line = bytes(buffer[:end])
                    del buffer[:end + 1]
                    stream.scanned = 0
                elif stream.eof:
                    if not buffer:
                        self._ended(stream)
                        continue
                    line = bytes(buffer)  # a last line without a newline
                    buffer.clear()
                else:
                    call = current_context()  # read once per wait: the held time and the cancel scope
                    now = time.monotonic()
                    # A question held for a person does not count against the deadline.
                    left = deadline + (call.held_seconds if call is not None else 0.0) - now
                    if left <= 0:
                        return False
                    scope = call.cancel if call is not None else None
                    if scope is not None:
                        scope.check()
                    try:
                        # In slices, so that a server whose process ended while a child of its own
                        # holds its stdout open is noticed, not waited for until the deadline.
                        poller = stream.poller  # None on Windows: the read waits until data comes
                        if poller is not None and not poller.poll(
                                min(left, CANCEL_CHECK if scope is not None else EXIT_CHECK) * 1000):
                            if stream.process.poll() is not None:
                                stream.eof = True
                            continue
                        chunk = os.read(stream.fd, 1 << 16)
                    except OSError:
                        chunk = b""
                    if not chunk:
                        stream.eof = True
                        continue
                    stream.read_at = now  # when the wait began: early by a slice at most, never late
                    if buffer or chunk.find(b"\n") != len(chunk) - 1:
                        # Not the usual chunk, one whole line: to the buffer, scanned up to here.
                        stream.scanned = len(buffer)
                        buffer += chunk
                        continue
                    line = chunk  # its newline stays: JSON reads it as white space
                try:  # the usual line: one JSON-RPC result, most often the one awaited here
                    parsed = protocol.decode(line, True)  # in UTF-8
                except ValueError:
                    parsed = None
                if type(parsed) is dict and protocol.is_result(parsed) and parsed["id"] == key:
                    # This thread's own response, taken without the lock: another thread learns
                    # of a response only from `_pending` and `wake` under the lock, and only the
                    # thread whose turn it is (this one) reads and answers; the pending leaves
                    # `_pending` when the turn is given up, below (nested: in `_exchange`).
                    stream.answered = True
                    pending.response = parsed
                    pending.done = True
                    break
                for message in self._parse(line, parsed):
                    self._dispatch(stream, message)
            return True
        finally:
            if not nested:
                with self._lock:  # `_leave_turn`, inline: this runs at every request
                    if pending.done:
                        self._pending.pop(key, None)
                    self._reader = None
                    if self._waiting:
                        self._pass_turn()

    def _ended(self, stream: _Stream) -> None:
        try:
            status = stream.process.wait(timeout=EXIT_CHECK)
        except subprocess.TimeoutExpired:  # it closed its stdout but lives on: of no use any more
            stream.process.kill()
            status = stream.process.wait()
        with self._lock:
            for key, pending in list(self._pending.items()):
                if pending.stream is stream:
                    del self._pending[key]
                    pending.answer()  # response stays None: request() raises ConnectionError
        log.debug("MCP server %s exited with status %s", self.name, status)

    def _parse(self, raw: bytes, parsed: Any = _UNREAD) -> list[dict[str, Any]]:
        """The JSON-RPC messages on one line (a batch array counts as several); junk is skipped.
        ``parsed``: the line as `protocol.decode` reads it in UTF-8 (``None`` when it cannot), when
        the caller has read it already."""
        if parsed is _UNREAD:
            try:
                parsed = protocol.decode(raw, True)
            except ValueError:
                parsed = None
        if type(parsed) is dict and (protocol.is_result(parsed) or protocol.is_message(parsed)):
            return [parsed]
        line, lenient = decode_line(raw)
        if not line:
            return []
        try:
            parsed = protocol.decode(line)
        except ValueError:
            self._skipped("a line that is not UTF-8" if lenient else f"a line that is not JSON: {line[:200]}")
            return []
        if isinstance(parsed, dict):
            messages = [parsed] if protocol.is_message(parsed) else []
        else:
            messages = [m for m in (parsed if isinstance(parsed, list) else [parsed]) if protocol.is_message(m)]
        if not messages:
            self._skipped("JSON that is not JSON-RPC")
        elif lenient:
            self._decoded_leniently()
        return messages

    def _decoded_leniently(self) -> None:
        """Warn (once per process) that a JSON-RPC line held bytes that are not UTF-8."""
        if not self._lenient_warned:
            self._lenient_warned = True
            log.warning("MCP server %s wrote JSON-RPC that is not valid UTF-8 (another encoding?); read it "
                        "with replacement characters", self.name)

    def _skipped(self, what: str) -> None:
        """Log a skipped line at debug level: the first few per process, then one notice."""
        self._junk_lines += 1
        if self._junk_lines <= JUNK_LINES_LOGGED:
            log.debug("MCP server %s wrote %s; skipped", self.name, what)
        elif self._junk_lines == JUNK_LINES_LOGGED + 1:
            log.debug("MCP server %s keeps writing lines that are not JSON-RPC; no longer logging them", self.name)

    def _dispatch(self, stream: _Stream, message: dict[str, Any]) -> None:
        if "method" not in message:  # a response: `_parse` passes JSON-RPC messages only
            key = message.get("id")  # an error response may lack it (JSON-RPC wants null there)
            with self._lock:
                pending = self._pending.pop(key, None)
                stream.answered = True
                if pending is not None:
                    pending.response = message
                    pending.answer()
            if pending is None:
                log.debug("MCP server %s answered an unknown request id %r", self.name, key)
            return
        if self._listening is not None and self._for_listener(message):
            return
        handler = self.handler
        reply = handler(message) if handler else None
        if reply is None and protocol.is_request(message):
            reply = protocol.error_response(message["id"], protocol.METHOD_NOT_FOUND, "Method not supported")
        if reply is not None and protocol.is_request(message):
            try:
                self._write(stream, reply)
            except ConnectionError:
                pass


    # -- listening: a waiter that is never answered --------------------------------------------------

    def listen(self, message: dict[str, Any] | None, *, version: str | None, on_message: MessageHandler,
               on_open: Callable[[], None] | None = None) -> dict[str, Any] | None:
        """Hold a subscription (see ``transports.base``): ``message`` (``subscriptions/listen``)
        is sent and waited for like a request without a deadline; while no request waits, this
        thread is the one reading the pipe. Messages for the subscription (tagged with its id;
        for ``message`` ``None``, the change notifications) are handed to ``on_message`` here,
        in this thread. Raises ``ProcessExitedError`` when the process ends, ``CancelledError``
        when the current cancel scope is cancelled."""
        key = message["id"] if message is not None else _UNPROMPTED
        with self._lock:
            stream = self._ensure_started()
            pending = self._pending[key] = _Pending()
            pending.stream = stream
            pending.inbox = []
            self._listening = (key, pending)
        try:
            if message is not None:
                self._write(stream, message, time.monotonic() + self.timeout)
            elif on_open is not None:
                on_open()
            while True:
                self._wait(key, pending, float("inf"))
                with self._lock:
                    items, pending.inbox = pending.inbox or [], []
                for item in items:
                    on_message(item)
                if pending.done:
                    break
        finally:
            with self._lock:
                self._pending.pop(key, None)
                if self._listening is not None and self._listening[1] is pending:
                    self._listening = None
        if pending.response is None:  # the status of the process listened to, not of one started since
            status = pending.stream.process.returncode
            raise ProcessExitedError(f"MCP server {self.name!r} exited with status {status} while "
                                     "listened to", server=self.name, exit_status=status)
        return pending.response

    def _for_listener(self, message: dict[str, Any]) -> bool:
        """Queue ``message`` for the listener when it belongs to the subscription; ``False`` otherwise."""
        with self._lock:
            if self._listening is None:
                return False
            key, pending = self._listening
            if not _belongs(message, key):
                return False
            assert pending.inbox is not None
            if message in pending.inbox:  # the same news twice while a callback runs: once is enough
                return True
            if len(pending.inbox) >= MAX_UNHANDLED:
                log.debug("MCP server %s sends changes faster than they are handled; one dropped", self.name)
                return True
            pending.inbox.append(message)
            if pending.wake is not None:
                pending.wake.notify()
        return True


MAX_UNHANDLED = 1000
"""Change notifications kept for a listener busy in a callback; past that, more are dropped."""

_UNPROMPTED = object()
"""The key of a handshake-era listener, which has no request of its own."""



def _belongs(message: dict[str, Any], key: Any) -> bool:
    """Whether a server message is for the subscription ``key`` (a listen request id, or
    `_UNPROMPTED`: the change notifications an older server sends on its own)."""
    if protocol.is_request(message):
        return False
    if key is _UNPROMPTED:
        return message.get("method") in protocol.CHANGE_NOTIFICATIONS
    params = message.get("params")
    if not isinstance(params, dict):
        return False
    meta = params.get("_meta")
    if isinstance(meta, dict) and meta.get(protocol.META_SUBSCRIPTION_ID) == key:
        return True
    return message.get("method") == "notifications/cancelled" and params.get("requestId") == key


CANCEL_CHECK = 0.05
"""Seconds between checks of a cancel scope while a request waits (when one is active)."""

TAKEN_AT_ONCE = 1 << 20
"""Bytes of output a waiting write moves to the buffer at a time (`StdioTransport._take_output`)."""


def _slice() -> float:
    """How long one wait may last: short while a cancel scope could stop the request."""
    return CANCEL_CHECK if current_scope() is not None else EXIT_CHECK


def _check_cancelled() -> None:
    scope = current_scope()
    if scope is not None:
        scope.check()

