"""What a server offers, by its announced capabilities: requests for what it does not are not sent.

MCP "Lifecycle / Capability Negotiation" (the ``capabilities`` of ``initialize`` or
``server/discover``): a server that announces no ``resources`` has no ``resources/*``
methods to call, and likewise ``prompts`` and ``completions``. The client follows the
announcement: a listing of what is not offered is empty without a request (`Client.list`),
and a direct request raises `MCPError` saying the server offers none (`Client.request`).
"""

from __future__ import annotations

from typing import Any

from .errors import MCPError

__all__ = ["CAPABILITY_OF", "missing_capability", "not_offered"]

CAPABILITY_OF: dict[str, str] = {
    "resources/list": "resources",
    "resources/templates/list": "resources",
    "resources/read": "resources",
    "resources/subscribe": "resources",
    "resources/unsubscribe": "resources",
    "prompts/list": "prompts",
    "prompts/get": "prompts",
    "completion/complete": "completions",
}
"""Request method -> the server capability it needs (methods not listed need none we check)."""


def missing_capability(method: str, capabilities: dict[str, Any]) -> str | None:
    """The capability ``method`` needs that ``capabilities`` (the server's, as announced) lacks,
    or ``None`` when the method may be sent."""
    needed = CAPABILITY_OF.get(method)
    if needed is None or needed in capabilities:
        return None
    return needed


def not_offered(server: str, method: str, capability: str) -> MCPError:
    """The error for a request the server's capabilities rule out (``.code`` is ``None``: nothing
    was sent)."""
    return MCPError(f"MCP server {server!r} offers no {capability} (its capabilities do not announce "
                    f"{capability!r}); {method} was not sent", server=server)
