"""Credential stores for the tests: ``FileStore``, a JSON file shared by processes, with ``synchronize``
on ``fcntl`` locks; ``RecordingStore``, a dict that records every call; ``NotAStore``.

    store = FileStore("/tmp/credentials.json")
    configure(credential_store=store)
    with store.synchronize(key): ...      # no other process holds ``key`` meanwhile

The kind of store an app without Django writes for several worker processes (MCP-CRED-07).
``python -m llm_mcp_tests.support.stores STORE_PATH MCP_URL OWNER`` is a worker: it calls
the ``add`` tool of the protected test server with the stored credentials and prints the result.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["FileStore", "NotAStore", "RecordingStore"]


class FileStore:
    """Credentials in one JSON file; ``synchronize(key)`` takes an exclusive ``flock`` on a per-key file."""

    def __init__(self, path: str):
        self.path = path
        self._guard = threading.Lock()

    @contextlib.contextmanager
    def _file_lock(self, suffix: str) -> Iterator[None]:
        with open(f"{self.path}.{suffix}.lock", "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _load(self) -> dict[str, Any]:
        try:
            with open(self.path) as handle:
                return json.load(handle)
        except FileNotFoundError:
            return {}

    def read(self, key: str) -> dict[str, Any] | None:
        with self._guard, self._file_lock("file"):
            return self._load().get(key)

    def write(self, key: str, data: dict[str, Any], owner: Any = None) -> None:
        with self._guard, self._file_lock("file"):
            everything = self._load()
            everything[key] = data
            temporary = f"{self.path}.tmp{os.getpid()}"
            with open(temporary, "w") as handle:
                json.dump(everything, handle)
            os.replace(temporary, self.path)

    def delete(self, key: str) -> None:
        with self._guard, self._file_lock("file"):
            everything = self._load()
            everything.pop(key, None)
            with open(self.path, "w") as handle:
                json.dump(everything, handle)

    @contextlib.contextmanager
    def synchronize(self, key: str) -> Iterator[None]:
        with self._file_lock("key-" + hashlib.sha256(key.encode()).hexdigest()[:16]):
            yield


class RecordingStore:
    """A store with only read/write/delete (a dict), recording every call (keys only): ``calls`` is a
    list of ``("read" | "write" | "delete", key)``. Also a ``CREDENTIAL_STORE`` of an app's own."""

    def __init__(self) -> None:
        self.data: dict[str, dict[str, Any]] = {}
        self.calls: list[tuple[str, str]] = []

    def read(self, key: str) -> dict[str, Any] | None:
        self.calls.append(("read", key))
        return self.data.get(key)

    def write(self, key: str, data: dict[str, Any], owner: Any = None) -> None:
        self.calls.append(("write", key))
        self.data[key] = dict(data)

    def delete(self, key: str) -> None:
        self.calls.append(("delete", key))
        self.data.pop(key, None)


class NotAStore:
    """Has ``read`` only: not a credential store (the checks say which methods are missing)."""

    def read(self, key: str) -> None:
        return None


def main(argv: list[str]) -> int:
    import llm_mcp
    from llm_mcp.client.config import configure

    path, url, owner = argv[1:4]
    configure(credential_store=FileStore(path))
    server = llm_mcp.mcp(url=url, name="worker", oauth={"owner": owner})
    print(server.call("add", a=20, b=22).text, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
