"""What a test may leave behind: child processes (zombies included) and threads."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable


def child_processes(exclude: Iterable[int] = ()) -> set[int]:
    """PIDs whose parent is this process (Linux ``/proc``), zombies included, minus ``exclude``."""
    mine, skipped, found = os.getpid(), set(exclude), set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == mine and int(entry) not in skipped:
            found.add(int(entry))
    return found


IN_PROCESS_SERVER_THREAD = "process_request_thread"
"""The name part of the handler threads of in-process test servers (the scripted model's
``ThreadingHTTPServer`` keeps one per kept-alive SDK connection): not the client's."""


class Snapshot:
    """The child processes and threads alive when a test cell starts (session servers included)."""

    def __init__(self) -> None:
        self.threads = set(threading.enumerate())
        self.pids = child_processes()


def left_behind(before: Snapshot, *, wait: float = 3.0) -> tuple[set[int], list[str]]:
    """``(child pids, names of live threads)`` that were not there at ``before`` and are still
    there after waiting up to ``wait`` seconds for them to end: both empty when the cell left
    nothing behind. Handler threads of in-process test servers (`IN_PROCESS_SERVER_THREAD`) are
    not counted."""
    deadline = time.monotonic() + wait
    while True:
        pids = child_processes(before.pids)
        threads = [t.name for t in threading.enumerate() if t not in before.threads and t.is_alive()
                   and IN_PROCESS_SERVER_THREAD not in t.name]
        if (not pids and not threads) or time.monotonic() > deadline:
            return pids, threads
        time.sleep(0.05)
