"""What a stdio server's process writes, read with care: its stdout lines and its stderr tail.

Three small pieces the stdio transport hooks in (`llm_mcp.client.transports.stdio`):

* `decode_line`: a stdout line as text. UTF-8 first; a line with bytes of another encoding
  (a Windows code page, Latin-1) is decoded with replacement characters, and the caller
  keeps it only when it still parses as JSON-RPC (warning once per process, naming the
  server), so the waiting request gets its answer instead of sitting out its timeout.
* `StderrTail`: the last lines the process wrote to stderr, bounded (`TAIL_LINES` lines of
  at most `TAIL_LINE_CHARS` characters), control characters escaped, and the values of the
  environment the server was given replaced by ``[redacted]``: errors carry it
  (`ProcessExitedError.stderr`), ``mcp_inspect`` and ``mcp_call`` print it.
* `unread_input` and `input_unheld`: how many bytes written to a process's stdin it left
  unread, and whether anything can still read them. A process that exited without reading
  its first request failed while starting (an ``npx`` package that does not exist, a bad
  command); a request an ended process never read, and nothing else can, may go to a new one.
"""

from __future__ import annotations

import collections
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable

from ..logs import printable

__all__ = ["TAIL_LINES", "TAIL_LINE_CHARS", "StderrTail", "decode_line", "input_unheld", "unread_input", "with_tail"]

TAIL_LINES = 20
"""Lines of a server's stderr an error carries (the last ones)."""

TAIL_LINE_CHARS = 500
"""Characters kept of each stderr line (after escaping); longer lines end with ``...``."""

READ_LIMIT = 1 << 16
"""Bytes read from stderr at most per line: a longer line is read in pieces, the first kept (cut), the rest dropped."""

REDACT_MIN_CHARS = 4
"""Environment values shorter than this are not redacted from the tail (``"1"`` would garble it)."""


def decode_line(raw: bytes) -> tuple[str, bool]:
    """``(text, lenient)``: ``raw`` decoded as UTF-8, or, when it is not valid UTF-8, decoded
    with U+FFFD for each bad byte and ``lenient`` ``True``. A leading byte-order mark and
    surrounding whitespace are stripped."""
    try:
        text, lenient = raw.decode("utf-8"), False
    except UnicodeDecodeError:
        text, lenient = raw.decode("utf-8", "replace"), True
    return text.strip().lstrip("\ufeff"), lenient


class StderrTail:
    """The last lines a process wrote to stderr, safe to show (bounded, escaped, redacted).

        tail = StderrTail(secrets=["sk-live-123"])
        tail.add(b"npm error 404 Not Found - GET https://registry.npmjs.org/x\\n")
        tail.text()   # "npm error 404 Not Found - GET https://registry.npmjs.org/x"

    Thread-safe: the stderr reader thread adds, the waiting request reads.

    Attributes:
        lines: the kept lines, oldest first (escaped and redacted).
    """

    def __init__(self, secrets: Iterable[str] = (), *, max_lines: int = TAIL_LINES,
                 max_chars: int = TAIL_LINE_CHARS):
        self._secrets = sorted({s for s in secrets if isinstance(s, str) and len(s) >= REDACT_MIN_CHARS},
                               key=len, reverse=True)
        self._max_chars = max_chars
        self.lines: collections.deque[str] = collections.deque(maxlen=max_lines)
        self._lock = threading.Lock()
        self.finished = threading.Event()

    def add(self, raw: bytes) -> str:
        """Keep one line (bytes as read, newline included or not); returns it as kept."""
        text = raw.decode("utf-8", "replace").rstrip("\r\n")
        for secret in self._secrets:
            text = text.replace(secret, "[redacted]")
        text = printable(text)
        if len(text) > self._max_chars:
            text = text[:self._max_chars] + "..."
        with self._lock:
            self.lines.append(text)
        return text

    def text(self, wait: float = 0.0) -> str:
        """The kept lines joined by newlines (``""`` when none); ``wait`` seconds at most for the
        reader to reach the end of the stream first (a process that just exited)."""
        if wait > 0:
            self.finished.wait(wait)
        with self._lock:
            return "\n".join(line for line in self.lines if line.strip())

    def read(self, process: subprocess.Popen[bytes], on_line: Callable[[str], None] | None = None) -> None:
        """Read ``process``'s stderr to its end (run in a thread), keeping the tail and handing
        each kept line to ``on_line``."""
        assert process.stderr is not None
        continuing = False  # the rest of a line longer than READ_LIMIT: read and dropped (the kept
        try:                # line is cut far sooner, and a piece could start inside a secret)
            for raw in iter(lambda: process.stderr.readline(READ_LIMIT), b""):  # a line without end: in pieces
                if not continuing:
                    line = self.add(raw)
                    if on_line is not None:
                        on_line(line)
                continuing = not raw.endswith(b"\n")
        except (OSError, ValueError):
            pass
        finally:
            self.finished.set()


def with_tail(message: str, tail: str) -> str:
    """``message`` followed by the server's stderr tail, indented, when there is one."""
    if not tail:
        return message
    indented = "\n".join(f"  {line}" for line in tail.splitlines())
    return f"{message}. Its stderr ended with:\n{indented}"


def unread_input(process: subprocess.Popen[bytes]) -> int | None:
    """The bytes written to ``process``'s stdin that it has not read (``FIONREAD`` on the pipe;
    after it exited, what it left), or ``None`` when that cannot be told (not Linux, no pipe)."""
    if not sys.platform.startswith("linux") or process.stdin is None:
        return None
    import fcntl
    import struct
    import termios

    try:
        buffered = fcntl.ioctl(process.stdin.fileno(), termios.FIONREAD, struct.pack("i", 0))
    except (OSError, ValueError):
        return None
    return struct.unpack("i", buffered)[0]


def input_unheld(process: subprocess.Popen[bytes]) -> bool:
    """Whether no process holds ``process``'s stdin open for reading any more (Linux: the write
    end of a pipe without readers polls as ``POLLERR``): what is left in the pipe can never be
    read. ``False`` when a reader remains (a child the process handed its stdin to, which may
    read it yet) or when that cannot be told (not Linux, no pipe)."""
    if not sys.platform.startswith("linux") or process.stdin is None:
        return False
    import select

    try:
        poller = select.poll()
        poller.register(process.stdin.fileno(), select.POLLOUT)
        events = poller.poll(0)
    except (OSError, ValueError):
        return False
    return any(mask & select.POLLERR for _, mask in events)
