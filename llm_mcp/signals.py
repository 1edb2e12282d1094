"""Django signals sent by llm_mcp.

    from llm_mcp.signals import mcp_unreachable

    @receiver(mcp_unreachable)
    def page_on_call(sender, server, error_class, status, **kwargs): ...

``mcp_unreachable`` is sent each time a chat finds an MCP server down (unreachable, HTTP 429
or 5xx, a stdio process that exited), with ``server`` (its name), ``error_class`` (the
exception's class name) and ``status`` (the HTTP status, or ``None``). It never carries the
error's message, which may hold a URL with secrets in it.

``mcp_changed`` is sent for each change an MCP server announces (see
``docs/how-to/listening.md``), in the thread that heard it (a listener's, usually), with
``sender`` the server's class, ``server`` the server object and ``change``: ``"tools"``,
``"prompts"``, ``"resources"``, or the `llm_mcp.Resource` whose content changed. Receivers
run like a Celery job: stale database connections are closed before and after.

    @receiver(mcp_changed, sender=Handbook)
    def reindex(sender, server, change, **kwargs):
        if isinstance(change, llm_mcp.Resource):
            reindex_policy.delay(change.uri)
"""

from __future__ import annotations

from typing import Any, Callable

from django.dispatch import Signal

__all__ = ["guard_database", "mcp_changed", "mcp_unreachable", "send_changed", "send_unreachable"]

mcp_unreachable = Signal()
mcp_changed = Signal()


def send_unreachable(server: str, error_class: str, status: int | None) -> None:
    """Send [`mcp_unreachable`][llm_mcp.signals.mcp_unreachable] (a listener of `llm_mcp.client.outages.listeners`)."""
    mcp_unreachable.send(sender=None, server=server, error_class=error_class, status=status)


def send_changed(server: Any, change: Any) -> None:
    """Send [`mcp_changed`][llm_mcp.signals.mcp_changed] (a listener of ``llm_mcp.client.state.change_listeners``)."""
    mcp_changed.send(sender=type(server), server=server, change=change)


def guard_database(callback: Callable[[], None]) -> None:
    """Run a change callback as a Celery job runs: database connections past their lifetime
    (or broken) are closed before and after, so the callback may use the ORM in a
    long-running listener thread (a guard of ``llm_mcp.client.state.change_guards``)."""
    from django.db import close_old_connections

    close_old_connections()
    try:
        callback()
    finally:
        close_old_connections()
