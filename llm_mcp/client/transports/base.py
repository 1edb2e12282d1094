"""The transport contract: what carries JSON-RPC messages between the client and a server.

A transport is any object with these four methods (``listen`` is optional)::

    class Tunnel:
        def request(self, message, *, version, timeout=None, headers=None, on_message=None) -> dict: ...
        def notify(self, message, *, version) -> None: ...
        def cancel(self, notification, *, version) -> None: ...
        def close(self) -> None: ...

``request`` sends one JSON-RPC request (a dict) and returns the matching response (a
dict with string keys, holding ``result`` or ``error``). While it waits, it passes every
other message the server sends to ``on_message(message)``: notifications (progress,
logs), and requests from the server, whose reply ``on_message`` returns for the
transport to send back. ``version`` is the protocol revision in use; ``timeout`` is in
seconds and ``None`` unless the client wants a deadline shorter than the transport's
own; ``headers`` holds ``Mcp-Param-*`` headers (transports that do not end in HTTP
ignore it). Raise :class:`llm_mcp.ConnectionError` when the server cannot be reached.
After ``close()``, the next request reconnects.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, runtime_checkable

from ..errors import MCPError

__all__ = ["LegacyProtocolError", "MessageHandler", "SessionExpiredError", "StreamBrokenError", "Transport"]

MessageHandler = Callable[[dict[str, Any]], "dict[str, Any] | None"]
"""Receives a server message that is not the awaited response; returns a reply for requests."""


@runtime_checkable
class Transport(Protocol):
    """The four methods every transport has; see the module docstring."""

    def request(self, message: dict[str, Any], *, version: str | None, timeout: float | None = None,
                headers: dict[str, str] | None = None, on_message: MessageHandler | None = None) -> dict[str, Any]:
        ...

    def notify(self, message: dict[str, Any], *, version: str | None) -> None:
        ...

    def cancel(self, notification: dict[str, Any], *, version: str | None) -> None:
        ...

    def close(self) -> None:
        ...


class LegacyProtocolError(MCPError):
    """The peer answered like a server that predates 2026-07-28.

    Raised by the HTTP transport for HTTP 400, 404 or 405 without a JSON-RPC error body
    (MCP 2026-07-28, "Backward compatibility"); the client then tries the handshake.
    """

    def __init__(self, message: str, *, status: int | None = None, server: str | None = None):
        super().__init__(message, server=server)
        self.status = status


class SessionExpiredError(MCPError):
    """A handshake-era HTTP server answered 404 to our ``Mcp-Session-Id``: the session is gone."""


class StreamBrokenError(MCPError):
    """A response stream ended before the response arrived and could not be resumed.

    Attributes:
        attempts: how many streams the transport already read for this request
            (the POST, plus any resumptions), counted against the client's limit of three.
    """

    def __init__(self, message: str, *, server: str | None = None, attempts: int = 1):
        super().__init__(message, server=server)
        self.attempts = attempts
