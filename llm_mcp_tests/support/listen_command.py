"""``manage.py mcp_listen`` run as a real process for the command's tests, and what it wrote.

    with listening_command("llm_mcp_tests.support.listen_targets.ChangingOverHTTP",
                           env={"LLM_MCP_TEST_LISTEN_URL": url}) as (process, err):
        assert err.wait_for("Listening to MCP server changing")
        process.send_signal(signal.SIGTERM)
    # the process is killed (and reaped) if it still runs when the block ends

``err`` collects the command's stderr lines as they come (its log lines go there).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from llm_mcp_tests.support.listening import wait_until
from llm_mcp_tests.support.processes import REPO_ROOT

__all__ = ["Lines", "children", "gone", "listening_command", "start_listen"]


class Lines:
    """The lines a process writes to a pipe, read by a thread as they come."""

    def __init__(self, pipe: IO[str]):
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self._thread.start()

    def _read(self, pipe: IO[str]) -> None:
        for line in iter(pipe.readline, ""):
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, text: str, timeout: float = 30) -> bool:
        """Whether a line containing ``text`` came within ``timeout`` seconds."""
        return wait_until(lambda: any(text in line for line in self.lines), timeout)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def start_listen(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], Lines]:
    """``manage.py mcp_listen *args`` started with the example project's settings (stdout discarded)."""
    environment = {**os.environ, "PYTHONIOENCODING": "utf-8", **(env or {})}
    environment.pop("DJANGO_SETTINGS_MODULE", None)  # manage.py picks example_project.settings
    process = subprocess.Popen([sys.executable, "manage.py", "mcp_listen", *args], cwd=REPO_ROOT, env=environment,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    return process, Lines(process.stderr)


@contextlib.contextmanager
def listening_command(*args: str, env: dict[str, str] | None = None
                      ) -> Iterator[tuple[subprocess.Popen[str], Lines]]:
    """`start_listen`, and the process killed and reaped at the end of the block if it still runs."""
    process, err = start_listen(*args, env=env)
    try:
        yield process, err
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def children(pid: int) -> list[int]:
    """The pids whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (no such process, or a zombie)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"
