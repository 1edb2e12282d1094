"""`TurnLock`: one turn of a chat at a time, across threads and processes, with three
backends: a PostgreSQL session advisory lock, an ``flock`` on a file next to an SQLite
database, and a lock within this process for anything else.

    with TurnLock(record):
        ...   # no other turn of this chat runs here or elsewhere
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.db import connections, models

from .. import conf
from .rows import db_alias

__all__ = ["TurnLock"]


class TurnLock:
    """Holds one chat for a turn, across threads and processes; re-entrant in one thread.

        with TurnLock(record):
            ...   # no other turn of this chat runs here or elsewhere

    On PostgreSQL it is a session advisory lock (released by the server if the process dies);
    on an SQLite file, an ``flock`` on a file next to the database (released by the kernel);
    elsewhere (in-memory SQLite, other databases) a lock within this process. It holds no
    transaction open, so each message a turn writes is visible to other processes at once.
    Raises ``TimeoutError`` after ``LLM_MCP["TURN_LOCK_TIMEOUT"]`` seconds of waiting.
    """

    _local_locks: dict[Any, threading.Lock] = {}
    _local_guard = threading.Lock()

    def __init__(self, record: models.Model):
        self.record = record
        self._held = threading.local()
        self.on_acquire: Callable[[], Any] | None = None
        self.on_release: Callable[[], Any] | None = None

    def __enter__(self) -> TurnLock:
        depth = getattr(self._held, "depth", 0)
        if depth == 0:
            self._held.release = self._acquire()
            if self.on_acquire is not None:
                self.on_acquire()
        self._held.depth = depth + 1
        return self

    def __exit__(self, *exc: Any) -> None:
        self._held.depth -= 1
        if self._held.depth == 0:
            release, self._held.release = self._held.release, None
            try:
                if self.on_release is not None:
                    self.on_release()
            finally:
                release()

    @property
    def busy(self) -> bool:
        """Whether a turn of this chat runs now, in this process or another (the lock is
        held). Asks without waiting; not meaningful in a thread that holds the lock itself."""
        if getattr(self._held, "depth", 0):
            return True
        try:
            release = self._acquire(wait=False)
        except TimeoutError:
            return True
        release()
        return False

    def _acquire(self, *, wait: bool = True) -> Callable[[], None]:
        db = db_alias(self.record)
        connection = connections[db]
        name = f"{self.record._meta.db_table}:{self.record.pk}"
        deadline = time.monotonic() + (float(conf.get("TURN_LOCK_TIMEOUT")) if wait else -1.0)
        if connection.vendor == "postgresql":
            key = int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big", signed=True)

            def try_pg() -> Callable[[], None] | None:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_try_advisory_lock(%s)", [key])
                    if not cursor.fetchone()[0]:
                        return None
                return functools.partial(_pg_unlock, connection, key)

            return _wait(try_pg, deadline, name)
        path = _sqlite_lock_path(connection, name)
        if path is not None:
            def try_file() -> Callable[[], None] | None:
                try:
                    handle = open(path, "a")  # noqa: SIM115 - closed by the release function
                except FileNotFoundError:  # the folder went away since this process made it
                    path.parent.mkdir(parents=True, exist_ok=True)
                    handle = open(path, "a")  # noqa: SIM115
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    handle.close()
                    return None
                return handle.close  # closing the file releases the lock

            return _wait(try_file, deadline, name)
        with self._local_guard:
            lock = self._local_locks.setdefault((db, name), threading.Lock())

        def try_local() -> Callable[[], None] | None:
            return lock.release if lock.acquire(blocking=False) else None

        return _wait(try_local, deadline, name)


def _wait(attempt: Callable[[], Callable[[], None] | None], deadline: float, name: str) -> Callable[[], None]:
    delay = 0.02
    while True:
        release = attempt()
        if release is not None:
            return release
        if time.monotonic() > deadline:
            raise TimeoutError(f"another turn of chat {name} has run for longer than "
                               f"LLM_MCP['TURN_LOCK_TIMEOUT'] ({conf.get('TURN_LOCK_TIMEOUT')} s)")
        time.sleep(delay)
        delay = min(delay * 2, 0.25)


def _pg_unlock(connection: Any, key: int) -> None:
    if connection.connection is None:
        return  # the connection closed: the server released the lock with it
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_unlock(%s)", [key])


def _sqlite_lock_path(connection: Any, name: str) -> Path | None:
    if connection.vendor != "sqlite":
        return None
    database = str(connection.settings_dict.get("NAME") or "")
    if not database or connection.is_in_memory_db():
        return None
    resolved, folder = _lock_folder(os.path.abspath(database), conf.get("LOCK_DIR"))  # a relative name: as of now
    digest = hashlib.blake2b(f"{resolved}|{name}".encode(), digest_size=10).hexdigest()
    return folder / f"{digest}.lock"


@functools.lru_cache(maxsize=64)
def _lock_folder(database: str, lock_dir: Any) -> tuple[Path, Path]:
    """The database file's resolved path and the lock folder (made now), once per process and
    setting: resolving a path and making a folder at every turn cost more than taking the lock."""
    resolved = Path(database).resolve()
    folder = Path(lock_dir or resolved.parent / ".llm_mcp_locks")
    folder.mkdir(parents=True, exist_ok=True)
    return resolved, folder
