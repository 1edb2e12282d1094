"""The HTTP+SSE transport of revision 2024-11-05, for servers that predate Streamable HTTP.

MCP 2024-11-05, "Transports / HTTP with SSE": the client opens a GET event stream; the
first ``endpoint`` event names the URL to POST messages to (resolved against the stream
URL), and every answer comes back on the stream. We use it only when a server refuses
both ``server/discover`` and a Streamable HTTP ``initialize`` (MCP 2025-03-26,
"Backward compatibility").

A request waits for its answer in the thread that sent it; the stream's reader thread
wakes it at each event, so a cancel scope is polled then, and a cancelled request gets
``notifications/cancelled`` from the client (MCP 2024-11-05, "Cancellation").
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Any, Callable
from urllib.parse import urljoin, urlsplit

import httpx
from httpx_sse import EventSource

from .. import protocol
from ..cancel import CancelScope, current_scope
from ..errors import (
    ConnectionError,
    ForbiddenError,
    MCPError,
    ServerTimeoutError,
    UnauthorizedError,
    from_httpx,
)
from .base import MessageHandler
from .http import (
    OverHTTP,
    broke_off,
    describe,
    hide_in_logs,
    insufficient_scope,
    parse_challenge,
)
from .stdio import MAX_UNHANDLED

__all__ = ["SSETransport"]

_LISTEN_SLICE = 0.1
"""Seconds between a listener's checks of its cancel scope while the stream is quiet."""


log = logging.getLogger("llm_mcp.client.sse")


def refused(response: httpx.Response, url: str, name: str) -> None:
    """Raise ``UnauthorizedError`` for a 401 and ``ForbiddenError`` (``InsufficientScopeError``
    for an ``insufficient_scope`` challenge) for a 403; return for anything else."""
    challenge = response.headers.get("www-authenticate")
    if response.status_code == 401:
        raise UnauthorizedError(f"MCP server {name!r} wants credentials (HTTP 401)", server=name,
                                www_authenticate=challenge)
    if response.status_code == 403:
        params = parse_challenge(challenge or "")
        if params.get("error") == "insufficient_scope":
            raise insufficient_scope(url, name, params)
        raise ForbiddenError(f"MCP server {name!r} refused the request (HTTP 403)", server=name)


class _Pending:
    __slots__ = ("done", "response", "wake")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.wake = threading.Event()  # set when answered, at each event on the stream, and on cancel
        self.response: dict[str, Any] | None = None

    def finish(self, response: dict[str, Any] | None = None) -> None:
        if response is not None:
            self.response = response
        self.done.set()
        self.wake.set()


class SSETransport(OverHTTP):
    """A GET event stream for answers, and POSTs to the endpoint it announces.

        transport = SSETransport("http://127.0.0.1:9000/sse", name="legacy")
        transport.request(protocol.request("initialize", {...}), version=None)
        transport.close()

    Attributes:
        url: the stream URL.
        endpoint: the POST URL from the ``endpoint`` event, once connected.
        name: the server name, for logs and errors.
        timeout: seconds to wait for an answer.
        auth: an ``httpx.Auth`` the stream and every POST go through (OAuth), or ``None``.
    """

    def __init__(self, url: str, *, name: str, headers: Callable[[], dict[str, str]] | None = None,
                 timeout: float = 60.0, auth: httpx.Auth | None = None, http_context: Any = None):
        super().__init__(url, name=name, headers=headers, timeout=timeout, auth=auth, http_context=http_context)
        self.endpoint: str | None = None
        self.handler: MessageHandler | None = None
        self._client: httpx.Client | None = None
        self._stream: httpx.Response | None = None
        self._pending: dict[Any, _Pending] = {}
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._inbox: queue.SimpleQueue[dict[str, Any]] | None = None  # a listener's change notifications

    def connect(self) -> None:
        """Open the event stream and wait for the ``endpoint`` event; raises ``ConnectionError``."""
        if self.running:
            return
        self.close()
        self._client = self._new_client()
        self._closed.clear()
        try:
            request = self._client.build_request("GET", self.url, headers={"Accept": "text/event-stream",
                                                                           **self.headers()},
                                                 timeout=httpx.Timeout(self.timeout, read=None))
            response = self._client.send(request, stream=True, auth=self._auth)
        except httpx.HTTPError as exc:
            raise self._unreachable(exc) from None
        if not response.is_success or "text/event-stream" not in response.headers.get("content-type", ""):
            response.close()
            refused(response, self.url, self.name)
            raise MCPError(f"MCP server {self.name!r} speaks no MCP revision we know (HTTP {response.status_code} "
                           "to the 2024-11-05 event stream)", server=self.name)
        self._stream = response
        ready = threading.Event()  # this stream's own: the reader of a stream closed before sets only its event
        threading.Thread(target=self._read, args=(response, ready), name=f"mcp-sse-{self.name}", daemon=True).start()
        if not ready.wait(self.timeout) or self.endpoint is None:
            self.close()
            raise MCPError(f"MCP server {self.name!r} sent no usable endpoint event (none, or one on another "
                           "origin)", server=self.name)

    def request(self, message: dict[str, Any], *, version: str | None, timeout: float | None = None,
                headers: dict[str, str] | None = None, on_message: MessageHandler | None = None) -> dict[str, Any]:
        if on_message is not None:
            self.handler = on_message
        self.connect()
        pending = _Pending()
        with self._lock:
            self._pending[message["id"]] = pending
        try:
            self._post(message)
            if not self._wait(pending, self.timeout if timeout is None else timeout, current_scope()):
                raise ServerTimeoutError(f"MCP server {self.name!r} did not answer {message.get('method')} in time",
                                         server=self.name)
        finally:
            with self._lock:
                self._pending.pop(message["id"], None)
        if pending.response is None:
            raise ConnectionError(f"MCP server {self.name!r} closed its event stream before answering "
                                  f"{message.get('method')}", server=self.name, request_sent=True)
        return pending.response

    @staticmethod
    def _wait(pending: _Pending, seconds: float, scope: CancelScope | None) -> bool:
        """Wait for the answer; ``False`` at the deadline. With a cancel scope, poll it at each
        event (raises [`CancelledError`][llm_mcp.client.errors.CancelledError])."""
        if scope is None:
            return pending.done.wait(seconds)
        deadline = time.monotonic() + seconds
        forget = scope.on_cancel(pending.wake.set)
        try:
            while not pending.done.is_set():
                if not pending.wake.wait(max(0.0, deadline - time.monotonic())):
                    return False
                pending.wake.clear()
                if not pending.done.is_set():
                    scope.poll()
            return True
        finally:
            forget()

    def listen(self, message: dict[str, Any] | None, *, version: str | None, on_message: MessageHandler,
               on_open: Callable[[], None] | None = None) -> dict[str, Any] | None:
        """Pass the change notifications the server sends on the event stream to ``on_message``,
        in this thread, until the stream ends (returns ``None``) or the current cancel scope is
        cancelled (``CancelledError``). 2024-11-05 servers have no ``subscriptions/listen``."""
        if message is not None:
            raise MCPError(f"MCP server {self.name!r} speaks 2024-11-05, which has no subscriptions/listen",
                           server=self.name)
        self.connect()
        inbox: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        self._inbox = inbox
        scope = current_scope()
        try:
            if on_open is not None:
                on_open()
            while self.running:
                if scope is not None:
                    scope.check()
                try:
                    item = inbox.get(timeout=_LISTEN_SLICE)
                except queue.Empty:
                    continue
                on_message(item)
        finally:
            if self._inbox is inbox:
                self._inbox = None
        return None

    def _unreachable(self, exc: httpx.HTTPError) -> ConnectionError:
        """The error for a stream or POST that failed (a timeout included)."""
        return from_httpx(exc, server=self.name,
                          message=f"MCP server {self.name!r} could not be reached at {describe(exc, self.url)}",
                          broke_message=broke_off(self.name, None, exc))

    def notify(self, message: dict[str, Any], *, version: str | None) -> None:
        self.connect()
        self._post(message)

    def cancel(self, notification: dict[str, Any], *, version: str | None) -> None:
        try:
            self._post(notification)
        except MCPError:
            pass

    @property
    def running(self) -> bool:
        """Whether the event stream (and so the server's session) is open."""
        return self._stream is not None and not self._closed.is_set()

    def close(self) -> None:
        self._closed.set()
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.close()
        if self._client is not None:
            self._client.close()
            self._client = None
        self.endpoint = None

    def _post(self, message: dict[str, Any]) -> None:
        if self._client is None or self.endpoint is None:
            raise ConnectionError(f"MCP server {self.name!r} is not connected", server=self.name)
        try:
            response = self._client.post(self.endpoint, content=protocol.encode(message),
                                         headers={"Content-Type": "application/json", **self.headers()},
                                         auth=self._auth)
        except httpx.HTTPError as exc:
            raise self._unreachable(exc) from None
        if not response.is_success:
            refused(response, self.url, self.name)
            raise MCPError(f"MCP server {self.name!r} refused a message (HTTP {response.status_code})",
                           server=self.name)

    def _read(self, response: httpx.Response, ready: threading.Event) -> None:
        try:
            for sse in EventSource(response).iter_sse():
                if sse.event == "endpoint":
                    if self.endpoint is None:
                        self.endpoint = self._same_origin(urljoin(self.url, sse.data.strip()))
                        if self.endpoint:
                            hide_in_logs(self.endpoint)  # it holds the session id
                        ready.set()
                    continue
                try:
                    message = protocol.decode(sse.data) if sse.data.strip() else None
                except ValueError:
                    continue
                if protocol.is_message(message):
                    self._dispatch(message)
        except httpx.HTTPError:
            pass
        finally:
            if self._stream is response:
                self._closed.set()  # the session ended with its stream: the next request opens a new one
            ready.set()
            with self._lock:
                waiting = list(self._pending.values())
            for pending in waiting:
                pending.finish()

    def _same_origin(self, endpoint: str) -> str | None:
        """The endpoint, if it is on the stream's origin; ``None`` (refused) otherwise.

        Our headers (a bearer token) go to the endpoint, so a server may not send them elsewhere.
        """
        ours, theirs = urlsplit(self.url), urlsplit(endpoint)
        if (ours.scheme, ours.hostname, ours.port) != (theirs.scheme, theirs.hostname, theirs.port):
            log.warning("MCP server %s named an endpoint on another origin; refused", self.name)
            return None
        return endpoint

    def _dispatch(self, message: dict[str, Any]) -> None:
        if protocol.is_response(message):
            with self._lock:
                pending = self._pending.get(message["id"])
            if pending is not None:
                pending.finish(message)
            return
        inbox = self._inbox
        if inbox is not None and message.get("method") in protocol.CHANGE_NOTIFICATIONS:
            if inbox.qsize() < MAX_UNHANDLED:
                inbox.put(message)  # the listener handles it, in its own thread
            return
        reply = self.handler(message) if self.handler else None
        if not protocol.is_request(message):
            with self._lock:
                waiting = list(self._pending.values())
            for pending in waiting:
                pending.wake.set()  # an event: waiting requests look at their cancel scopes
        else:
            try:
                self._post(reply or protocol.error_response(message["id"], protocol.METHOD_NOT_FOUND,
                                                            "Method not supported"))
            except MCPError:
                pass
