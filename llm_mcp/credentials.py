"""The encrypted credential store: ``Credential.objects``.

    Credential.objects.write("linear:user:42", {"refresh_token": "..."}, owner=user)
    with Credential.objects.synchronize("linear:user:42"):
        data = Credential.objects.read("linear:user:42")   # refresh, then write, here

``synchronize`` makes refreshes of one key take turns across processes (a rotating refresh
token may be spent once): a row lock (``SELECT ... FOR UPDATE``) on PostgreSQL, MySQL and
Oracle; on SQLite, which has no row locks, the database's write lock, taken at once.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import OperationalError, models, transaction

__all__ = ["CredentialManager"]

SQLITE_LOCK_WAIT = 60.0
"""Seconds ``synchronize`` keeps trying to take SQLite's write lock before giving up."""


class CredentialManager(models.Manager):
    """``Credential.objects``: a credential store with ``read``, ``write``, ``delete`` and
    ``synchronize``, the interface the MCP client's OAuth code does all its I/O through."""

    def read(self, key: str) -> dict[str, Any] | None:
        """The data stored under ``key`` (a dict), or ``None`` when nothing is."""
        row = self.filter(key=_checked(key)).only("secret").first()
        return None if row is None or not row.secret else row.data  # synchronize() leaves empty rows

    def write(self, key: str, data: dict[str, Any], *, owner: models.Model | None = None) -> None:
        """Store ``data`` (a JSON-serializable dict) under ``key``, replacing what was there.

        ``owner`` (any saved model instance, usually the user) is recorded when given; an
        existing row keeps its owner when it is not. Raises ``TypeError`` for non-dict data,
        ``ValueError`` for an unsaved owner."""
        from .models import owner_reference

        row = self.model(key=_checked(key))
        try:
            row.data = data  # TypeError unless a dict
        except ValueError as exc:  # json: NaN, circular
            raise TypeError(f"credentials for {key!r} cannot be stored: {exc}") from None
        except TypeError as exc:
            raise TypeError(f"credentials for {key!r} cannot be stored: {exc} (the data must be a dict of JSON "
                            "values)") from None
        values: dict[str, Any] = {"secret": row.secret}
        if owner is not None:
            values["owner_type"], values["owner_id"] = owner_reference(owner)
        self.update_or_create(key=key, defaults=values)

    def delete(self, key: str) -> None:
        """Forget ``key``; nothing happens when it is not stored."""
        self.filter(key=_checked(key)).delete()

    @contextmanager
    def synchronize(self, key: str) -> Iterator[None]:
        """Hold ``key`` for the ``with`` block: another process (or thread) that synchronizes
        on the same key waits until the block ends. Runs the block in a transaction."""
        _checked(key)
        with transaction.atomic(using=self.db):
            if self._sqlite:
                self._take_sqlite_write_lock()
            else:
                # The row may not exist yet: create it, so there is a row to lock.
                self.get_or_create(key=key)
                list(self.select_for_update().filter(key=key).values_list("pk", flat=True))
            yield

    @property
    def _sqlite(self) -> bool:
        from django.db import connections

        return connections[self.db].vendor == "sqlite"

    def _take_sqlite_write_lock(self) -> None:
        """SQLite starts transactions deferred: the first write takes the database's write
        lock. An UPDATE that matches nothing still takes it, so the block runs alone."""
        deadline = time.monotonic() + SQLITE_LOCK_WAIT
        while True:
            try:
                self.filter(pk=-1).update(key="")  # matches no row, takes the write lock
                return
            except OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)


def salt_key_problem() -> str | None:
    """What is wrong with ``settings.SALT_KEY`` for encrypting credentials, or ``None``."""
    from django.conf import settings

    salt = getattr(settings, "SALT_KEY", None)
    salts = salt if isinstance(salt, (list, tuple)) else [salt]
    if salt is None:
        return "SALT_KEY is not set"
    if not salts or not all(isinstance(value, str) and value for value in salts):
        return "SALT_KEY must be a non-empty string, or a list of them (the first encrypts, all decrypt)"
    return None


WEAK_SALT_CHARS = 16
"""A ``SALT_KEY`` shorter than this (characters) draws the weak-key warning."""

PLACEHOLDER_WORDS = ("salt", "saltkey", "secret", "secretkey", "default", "test", "password", "key")
"""Whole values (compared without case, digits and punctuation) a placeholder ``SALT_KEY`` is."""

PLACEHOLDER_PARTS = ("changeme", "change-me", "change_me", "example", "insecure", "placeholder", "replace-me",
                     "your-salt", "yoursalt")
"""Parts of a value (compared without case) that say it is a placeholder."""


def salt_key_weakness() -> str | None:
    """Why ``settings.SALT_KEY`` (each value of a list) looks weak or like a default, or ``None``:
    shorter than `WEAK_SALT_CHARS`, one or two characters repeated, a placeholder
    (`PLACEHOLDER_WORDS`, `PLACEHOLDER_PARTS`), or the same as ``SECRET_KEY``. The answer never
    includes the value itself."""
    from django.conf import settings

    salt = getattr(settings, "SALT_KEY", None)
    for position, value in enumerate(salt if isinstance(salt, (list, tuple)) else [salt]):
        if not isinstance(value, str) or not value:
            continue  # salt_key_problem() reports it
        which = f"SALT_KEY[{position}]" if isinstance(salt, (list, tuple)) else "SALT_KEY"
        lowered = value.lower()
        if len(value) < WEAK_SALT_CHARS:
            return f"{which} has {len(value)} characters (fewer than {WEAK_SALT_CHARS})"
        if len(set(value)) <= 2:
            return f"{which} repeats one or two characters"
        if "".join(ch for ch in lowered if ch.isalpha()) in PLACEHOLDER_WORDS or \
                any(part in lowered for part in PLACEHOLDER_PARTS):
            return f"{which} looks like a placeholder"
        if value == getattr(settings, "SECRET_KEY", None):
            return f"{which} is the same as SECRET_KEY"
    return None


def _checked(key: str) -> str:
    problem = salt_key_problem()
    if problem is not None:
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(f"llm_mcp cannot encrypt or decrypt credentials: {problem}. Set SALT_KEY in "
                                   "your settings (with SECRET_KEY, it derives the encryption keys).")
    if not isinstance(key, str) or not key:
        raise ValueError(f"a credential key must be a non-empty string, not {key!r}")
    if len(key) > 255:
        raise ValueError(f"a credential key has at most 255 characters, not {len(key)}")
    return key
