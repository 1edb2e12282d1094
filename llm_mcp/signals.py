"""Django signals sent by llm_mcp.

    from llm_mcp.signals import mcp_unreachable

    @receiver(mcp_unreachable)
    def page_on_call(sender, server, error_class, status, **kwargs): ...

``mcp_unreachable`` is sent each time a chat finds an MCP server down (unreachable, HTTP 429
or 5xx, a stdio process that exited), with ``server`` (its name), ``error_class`` (the
exception's class name) and ``status`` (the HTTP status, or ``None``). It never carries the
error's message, which may hold a URL with secrets in it.
"""

from __future__ import annotations

from django.dispatch import Signal

__all__ = ["mcp_unreachable", "send_unreachable"]

mcp_unreachable = Signal()


def send_unreachable(server: str, error_class: str, status: int | None) -> None:
    """Send [`mcp_unreachable`][llm_mcp.signals.mcp_unreachable] (a listener of `llm_mcp.client.outages.listeners`)."""
    mcp_unreachable.send(sender=None, server=server, error_class=error_class, status=status)
