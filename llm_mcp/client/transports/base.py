"""The transport contract: what carries JSON-RPC messages between the client and a server.

A transport has four methods, and may declare three optional attributes and one optional
method, ``listen``::

    class Tunnel(llm_mcp.Transport):
        def request(self, message, *, version, timeout=None, headers=None, on_message=None) -> dict: ...
        def notify(self, message, *, version) -> None: ...
        def cancel(self, notification, *, version) -> None: ...
        def close(self) -> None: ...
        def listen(self, message, *, version, on_message) -> dict | None: ...   # optional

``request`` sends one JSON-RPC request (a dict) and returns the matching response (a
dict with string keys, holding ``result`` or ``error``). While it waits, it passes every
other message the server sends to ``on_message(message)``: notifications (progress,
logs), and requests from the server, whose reply ``on_message`` returns for the
transport to send back. ``version`` is the protocol revision in use; ``timeout`` is in
seconds and ``None`` unless the client wants a deadline shorter than the transport's
own; ``headers`` holds ``Mcp-Param-*`` headers (transports that do not end in HTTP
ignore it). Raise [ConnectionError][llm_mcp.client.errors.ConnectionError] when the server cannot be
reached. After ``close()``, the next request reconnects.

To support listening for changes ([`MCP.listen`][llm_mcp.MCP.listen]), a transport also has
``listen(message, *, version, on_message)``, called from the listener's thread. On
2026-07-28, ``message`` is a ``subscriptions/listen`` request: send it, pass each message
the server sends for it to ``on_message`` (the acknowledgement first, then the changes), and
return the server's final response once the server ends the subscription (raise, as
``request`` does, when the connection drops). For older servers ``message`` is ``None``: pass
on the change notifications the server sends unprompted until the connection ends. To stop
it, the client raises [CancelledError][llm_mcp.client.errors.CancelledError] in that thread,
from ``on_message`` (or from a cancel check, see ``llm_mcp.CancelScope``): let it propagate.

`Transport` is the base class of the built-in transports and gives the optional
attributes (`Transport.running`, `Transport.cancels_by_closing`,
`Transport.listen_during_calls`) their defaults. A transport of your own may subclass it,
or just have the four methods: `adopt` then wraps it once, when the client is built, in an
adapter that reads the optional attributes the object has and gives the others their
defaults, so the client never probes a transport for them.
"""

from __future__ import annotations

import abc
from typing import Any, Callable

from ..errors import MCPError

__all__ = ["OPTIONAL", "OPTIONAL_METHODS", "MessageHandler", "Transport", "adopt"]

MessageHandler = Callable[[dict[str, Any]], "dict[str, Any] | None"]
"""Receives a server message that is not the awaited response; returns a reply for requests."""

REQUIRED = ("request", "notify", "cancel", "close")
"""The methods every transport has."""

OPTIONAL = ("running", "cancels_by_closing", "listen_during_calls")
"""The attributes a transport may declare; `Transport` gives each its default."""

OPTIONAL_METHODS = ("listen",)
"""The methods a transport may have: ``listen`` (listening for changes)."""


class Transport(abc.ABC):
    """The base of every transport: the four methods of the contract (see the module docstring)
    and the optional attributes, with their defaults.

    ``isinstance(obj, Transport)`` is true for any object with the four methods, subclass or not.
    """

    cancels_by_closing: bool = False
    """Whether closing a request's response stream cancels it on the server, so that a 2026-07-28
    request that times out or is cancelled needs no ``notifications/cancelled`` (Streamable
    HTTP). ``False``: the client sends the notification through `cancel`."""

    listen_during_calls: bool = False
    """Set to ``True`` by the client when it answers a handshake-era server's questions in line:
    a transport whose server may send requests outside a call's response (Streamable HTTP's GET
    stream) then listens while a ``tools/call``, ``prompts/get`` or ``resources/read`` runs.
    Transports that carry every message on one channel ignore it."""

    @property
    def running(self) -> bool:
        """Whether the connection a handshake-era session lives on is still up (a stdio process,
        an SSE stream). ``False`` makes the client handshake again before the next request; a
        transport with no such connection stays ``True``."""
        return True

    @classmethod
    def __subclasshook__(cls, other: type) -> bool:
        if cls is Transport and all(callable(getattr(other, name, None)) for name in REQUIRED):
            return True
        return NotImplemented

    @abc.abstractmethod
    def request(self, message: dict[str, Any], *, version: str | None, timeout: float | None = None,
                headers: dict[str, str] | None = None, on_message: MessageHandler | None = None) -> dict[str, Any]:
        """Send one request; return its response dict. Raises `ConnectionError` when unreachable."""

    @abc.abstractmethod
    def notify(self, message: dict[str, Any], *, version: str | None) -> None:
        """Send one notification."""

    @abc.abstractmethod
    def cancel(self, notification: dict[str, Any], *, version: str | None) -> None:
        """Send a ``notifications/cancelled``; a failure to deliver it is not raised."""

    @abc.abstractmethod
    def close(self) -> None:
        """End the connection (and the session); the next request reconnects."""

    def listen(self, message: dict[str, Any] | None, *, version: str | None, on_message: MessageHandler,
               on_open: Callable[[], None] | None = None) -> dict[str, Any] | None:
        """Hold a subscription open (see the module docstring); returns the server's final
        response (``None`` when an older server's stream ends). ``on_open`` runs once the
        transport receives what the server sends unprompted (``message`` ``None``).

        Raises [MCPError][llm_mcp.client.errors.MCPError] here: this transport cannot listen."""
        raise MCPError(f"the transport {type(self).__name__} cannot listen for changes (it has no listen method)")


def adopt(transport: Any) -> Transport:
    """``transport`` itself when it subclasses `Transport`, else an adapter around it.

    The adapter forwards the four methods, and each optional attribute the object has
    (`OPTIONAL`, looked for once, here); the others keep `Transport`'s defaults.
    """
    if Transport in type(transport).__mro__:  # a real subclass: isinstance() also accepts duck types
        return transport
    return _Adopted(transport)


class _Adopted(Transport):
    """A transport that does not subclass `Transport`, with the defaults it does not declare."""

    def __init__(self, inner: Any):
        self.inner = inner
        self._declared = frozenset(name for name in OPTIONAL if hasattr(inner, name)) | frozenset(
            name for name in OPTIONAL_METHODS if callable(getattr(inner, name, None)))

    def request(self, message: dict[str, Any], *, version: str | None, timeout: float | None = None,
                headers: dict[str, str] | None = None, on_message: MessageHandler | None = None) -> dict[str, Any]:
        return self.inner.request(message, version=version, timeout=timeout, headers=headers, on_message=on_message)

    def notify(self, message: dict[str, Any], *, version: str | None) -> None:
        self.inner.notify(message, version=version)

    def cancel(self, notification: dict[str, Any], *, version: str | None) -> None:
        self.inner.cancel(notification, version=version)

    def close(self) -> None:
        self.inner.close()

    def listen(self, message: dict[str, Any] | None, *, version: str | None, on_message: MessageHandler,
               on_open: Callable[[], None] | None = None) -> dict[str, Any] | None:
        if "listen" not in self._declared:
            raise MCPError(f"the transport {type(self.inner).__name__} cannot listen for changes (it has no listen "
                           "method)")
        if on_open is not None:  # the hook takes no on_open: it listens as soon as it is called
            on_open()
        return self.inner.listen(message, version=version, on_message=on_message)

    @property
    def running(self) -> bool:
        return bool(self.inner.running) if "running" in self._declared else True

    @property
    def cancels_by_closing(self) -> bool:  # type: ignore[override]
        return bool(self.inner.cancels_by_closing) if "cancels_by_closing" in self._declared else False

    @property
    def listen_during_calls(self) -> bool:  # type: ignore[override]
        return bool(self.inner.listen_during_calls) if "listen_during_calls" in self._declared else False

    @listen_during_calls.setter
    def listen_during_calls(self, value: bool) -> None:
        if "listen_during_calls" in self._declared:
            self.inner.listen_during_calls = value
