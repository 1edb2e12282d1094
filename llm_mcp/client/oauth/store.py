"""Where OAuth credentials live: the credential store protocol and the in-memory default.

    store = MemoryStore()
    store.write("oauth:https://mcp.example.com/mcp#auth.user:42", {"access_token": "..."}, owner=user)
    with synchronized(store, key): data = store.read(key)   # one refresh per key at a time

A store is any object with ``read(key)``, ``write(key, data, owner=None)`` and
``delete(key)``; a store several processes share should also have ``synchronize(key)``,
a context manager holding the key against other processes (the Django ``Credential``
model's manager uses a row lock). The client does all its credential I/O through the
store configured with `llm_mcp.client.config.configure` (``MemoryStore`` by default).
"""

from __future__ import annotations

import contextlib
import copy
import threading
from collections.abc import Iterator
from typing import Any, ContextManager, Protocol, runtime_checkable

__all__ = ["CredentialStore", "MemoryStore", "key_lock", "missing_methods", "synchronized"]


def missing_methods(store: Any) -> list[str]:
    """Which of ``read``, ``write`` and ``delete`` ``store`` lacks (``[]``: it can be a credential store)."""
    return [name for name in ("read", "write", "delete") if not callable(getattr(store, name, None))]


@runtime_checkable
class CredentialStore(Protocol):
    """What the client needs from a credential store (``synchronize`` is optional).

        class RedisStore:
            def read(self, key): ...            # -> dict or None
            def write(self, key, data, owner=None): ...
            def delete(self, key): ...

    Keys are strings of at most 255 characters; data are dicts of JSON values.
    """

    def read(self, key: str) -> dict[str, Any] | None:
        """The data last written under ``key``, or ``None`` when there is none."""
        ...

    def write(self, key: str, data: dict[str, Any], *, owner: Any = None) -> None:
        """Keep ``data`` under ``key`` (replacing what was there); ``owner`` is whose
        credentials they are, or ``None``."""
        ...

    def delete(self, key: str) -> None:
        """Forget ``key`` (nothing happens when it is not there)."""
        ...


class MemoryStore:
    """Credentials kept in this process's memory (the default without Django).

        store = MemoryStore()
        store.write("k", {"access_token": "t"})
        store.read("k")   # {"access_token": "t"} (a copy)

    Attributes:
        owners: the owner given with each key's last write that named one.

    ``synchronize(key)`` holds a per-key lock, so threads of this process take turns; the
    store is not shared with other processes. ``repr`` shows how many keys, never data.
    """

    def __init__(self) -> None:
        self._data: dict[str, dict[str, Any]] = {}
        self.owners: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._key_locks: dict[str, threading.RLock] = {}

    def read(self, key: str) -> dict[str, Any] | None:
        """A copy of the data stored under ``key``, or ``None``."""
        with self._lock:
            data = self._data.get(key)
            return copy.deepcopy(data) if data is not None else None

    def write(self, key: str, data: dict[str, Any], *, owner: Any = None) -> None:
        """Store a copy of ``data`` under ``key``; raises ``TypeError`` unless ``data`` is a dict."""
        if not isinstance(data, dict):
            raise TypeError(f"credential data must be a dict, not {type(data).__name__}")
        with self._lock:
            self._data[key] = copy.deepcopy(data)
            if owner is not None:
                self.owners[key] = owner

    def delete(self, key: str) -> None:
        """Forget ``key`` (nothing happens when it is not stored)."""
        with self._lock:
            self._data.pop(key, None)
            self.owners.pop(key, None)

    @contextlib.contextmanager
    def synchronize(self, key: str) -> Iterator[None]:
        """Hold ``key`` for the ``with`` block against other threads of this process."""
        with self._lock:
            lock = self._key_locks.setdefault(key, threading.RLock())
        with lock:
            yield

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"<MemoryStore {len(self._data)} keys>"


_locks: dict[str, threading.RLock] = {}
_locks_guard = threading.Lock()


def key_lock(key: str) -> threading.RLock:
    """The process-wide lock of one credential key (threads refreshing it take turns)."""
    with _locks_guard:
        return _locks.setdefault(key, threading.RLock())


@contextlib.contextmanager
def synchronized(store: Any, key: str) -> Iterator[None]:
    """Hold ``key`` in this process (a thread lock) and, when the store has
    ``synchronize(key)``, against other processes too. Read, refresh and write inside."""
    with key_lock(key):
        sync = getattr(store, "synchronize", None)
        context: ContextManager[Any] = sync(key) if callable(sync) else contextlib.nullcontext()
        with context:
            yield
