"""What the client remembers for the whole process, in one place, with one `reset`.

    from llm_mcp.client import state
    state.eras                 # endpoint URL (or command) -> the era it spoke last time
    state.reset()              # forget what the process learned (tests, admin actions)

Everything else the client holds lives on objects (a server, its session, a call's
`CallContext`). The registries here are shared on purpose:

- `eras`: which protocol era each endpoint spoke, so a new server object for the same
  URL skips the probe (``session.Client``).
- `outage_until`: when each down server's backoff ends (``time.monotonic()``), keyed as
  ``outages`` explains; guarded by `outage_lock`.
- `endpoints`: the endpoint URLs in use, so log records show only their origin
  (``transports.http``).
- `idp_metadata`: identity providers' metadata, cached with its expiry (``oauth.grants``).

`reset` keeps `endpoints` (forgetting one could only let a secret path into a log)
and the registrations an app makes when it starts, since the app made them once and counts on
them: ``outages.listeners`` (`outage_listeners`), the client
configuration (``llm_mcp.client.config.config``: credential store, client ID) and the handlers
of ``llm_mcp.Tool.rescue_from``.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Callable

__all__ = ["change_guards", "change_listeners", "endpoints", "eras", "idp_metadata", "outage_listeners", "outage_lock", "outage_until",
           "outage_until_per_object", "reset"]

eras: dict[str, str] = {}
"""What each endpoint spoke last time, per process: endpoint URL (or command) -> era."""

outage_lock = threading.Lock()
outage_until: dict[Any, float] = {}
"""Process-wide outage backoffs: key (see ``outages``) -> ``time.monotonic()`` when it ends."""

outage_until_per_object: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()
"""Backoffs kept per server object (a computed ``url``/``command``, or a ``transport``)."""

outage_listeners: list[Callable[[str, str, int | None], None]] = []
"""``outages.listeners``: called for each outage (an app registration; kept by `reset`)."""

change_listeners: list[Callable[[Any, Any], None]] = []
"""Called ``(server, change)`` after ``after_change`` for every change a server announces (the
Django app sends the ``mcp_changed`` signal from here)."""

change_guards: list[Callable[[Callable[[], None]], None]] = []
"""Each runs a change callback, ``guard(fn)`` calling ``fn()`` (the Django app closes stale
database connections before and after, as a Celery job does); nested in order."""

endpoints: set[str] = set()
"""Endpoint URLs in use (their paths are kept out of log records)."""

idp_metadata: dict[str, tuple[float, dict[str, Any]]] = {}
"""Identity providers' metadata by issuer: ``(expires at, metadata)``."""


def reset() -> None:
    """Forget what the process learned: eras, outage backoffs, identity-provider metadata.
    Endpoints to hide and registrations (outage listeners, configuration, ``Tool.rescue_from``) stay."""
    eras.clear()
    with outage_lock:
        outage_until.clear()
        outage_until_per_object.clear()
    idp_metadata.clear()
