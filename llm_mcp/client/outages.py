"""Servers that are down, and how long chats leave them alone.

    outages.is_down(server)               # True while its backoff lasts
    outages.record(server, error)         # after an unreachable / 429 / 5xx answer
    outages.listeners.append(callback)    # callback(server_name, error_class, http_status)

A server is *down* when it cannot be reached, answers HTTP 429 or 5xx, or its stdio
process exits. Chats then skip it for `BACKOFF` seconds, or for as long as its
``Retry-After`` asks. The wait is shared by the whole process for servers described by a
fixed ``url`` or ``command`` used with the same credentials and environment; a server
whose ``url``/``command`` is computed, or that uses a ``transport``, may be a different
server per object, so its wait is kept on the object.

Refusals (401, 403, HTTP 404) are not outages: retrying will not fix them.

The backoffs live in `llm_mcp.client.state` (``state.outage_until``; ``state.reset()``
ends them all). Within one call (a `CallContext` that stands
for a call), where a server's wait is kept is worked out once, so a ``bearer_token`` or
``headers`` callable runs once for the call's checks and its request together.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from typing import TYPE_CHECKING, Any

from . import context, state
from .errors import is_outage, reported_name

if TYPE_CHECKING:
    from .context import CallContext
    from .server import MCP

__all__ = ["BACKOFF", "is_down", "is_outage", "listeners", "record", "reset"]

log = logging.getLogger("llm_mcp.chat")

BACKOFF = 60.0
"""Seconds a down server is left alone when it does not say how long (``Retry-After``)."""

listeners = state.outage_listeners
"""Called as ``callback(server_name, error_class_name, http_status_or_None)`` for each outage;
never with the error's message. A Django signal can be sent from here."""

_lock = state.outage_lock
_until = state.outage_until
_until_per_object = state.outage_until_per_object


def _key(server: MCP, call: CallContext | None = None) -> Any:
    """Where a server's wait is kept, worked out once per call (``call``, default: the current
    call context; see the module docstring)."""
    call = call or context.current()
    if call is None:
        return _compute_key(server, None)
    return call.remember(("outage key", id(server)), lambda: _compute_key(server, call))


def _compute_key(server: MCP, call: CallContext | None) -> Any:
    """Where a server's wait is kept: a process-wide key, or ``None`` to keep it on the object.

    A fixed ``url`` or ``command`` is keyed with a digest of the credentials and environment it
    is used with (``bearer_token``, ``headers``, ``env``, evaluated now), so one user's 429 does
    not hold up another user, while a new object per request for the same user still waits.
    A computed ``url``/``command``, or a ``transport``, may be a different server per object
    (``server.connection.fixed_address`` is ``None``)."""
    address = server.connection.fixed_address
    if address is None:
        return None
    setting, value = address
    try:
        used_with = server.connection.request_headers(call) if setting == "url" else server.connection.env_values()
        digest = hashlib.sha256(json.dumps(used_with, sort_keys=True, default=str).encode()).hexdigest()[:16]
    except Exception:  # noqa: BLE001 - a setting that cannot be evaluated now: keep the wait per object
        return None
    return (setting, value, digest)


def is_down(server: MCP, call: CallContext | None = None) -> bool:
    """Whether the server's backoff is running (``call``: the call asking, see `_key`)."""
    key = _key(server, call)
    with _lock:
        until = _until.get(key) if key is not None else _until_per_object.get(server)
    return until is not None and time.monotonic() < until


def record(server: MCP, error: BaseException, call: CallContext | None = None) -> None:
    """Start the server's backoff, log a warning naming it and the status or error class, and
    tell the `listeners` (``call``: the call that failed, default: the current call
    context, see `_key`; its ``went_down`` gets the server's name)."""
    status = getattr(error, "status", None)
    wait = getattr(error, "retry_after", None)
    until = time.monotonic() + (wait if isinstance(wait, (int, float)) and wait >= 0 else BACKOFF)
    call = call or context.current()
    if call is not None and call.call:
        call.went_down.add(server.name)
    key = _key(server, call)
    with _lock:
        if key is None:
            _until_per_object[server] = until
        else:
            _until[key] = until
    log.warning("MCP server %s is unavailable (%s); chats leave it out for %.0f s", server.name,
                f"HTTP {status}" if status else reported_name(error), until - time.monotonic())
    for listener in list(listeners):
        try:
            listener(server.name, reported_name(error), status)
        except Exception:  # a listener must not break the chat
            log.exception("an mcp_unreachable listener failed")


def reset(server: MCP | None = None) -> None:
    """End the backoff of one server, or of every server (tests, admin actions)."""
    with _lock:
        if server is None:
            _until.clear()
            _until_per_object.clear()
            return
        key = _key(server)
        if key is None:
            _until_per_object.pop(server, None)
        else:
            _until.pop(key, None)
