"""Streamable HTTP: JSON-RPC over POST, answered as JSON or as a server-sent event stream.

MCP 2026-07-28, "Transports / Streamable HTTP" (and 2025-11-25 for the handshake era):
each message is POSTed with ``Accept: application/json, text/event-stream``; the server
answers with one JSON body or an SSE stream that may carry notifications and requests
before the response. In the handshake era the server may hand out an ``Mcp-Session-Id``
that we send back until it expires (404) or we ``close()`` (DELETE).

Safety: redirects are never followed, and headers never reach the logs.
"""

from __future__ import annotations

import functools
import logging
import re
import socket
import ssl
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Iterator
from urllib.parse import urlsplit

import httpx
from httpx_sse import EventSource

from .. import protocol, state
from ..cancel import current_scope
from ..context import held_seconds
from ..errors import (
    CancelledError,
    ConnectionError,
    ForbiddenError,
    InsufficientScopeError,
    LegacyProtocolError,
    MCPError,
    ServerTimeoutError,
    SessionExpiredError,
    StreamBrokenError,
    UnauthorizedError,
    from_httpx,
)
from ..param_headers import method_headers
from ..protocol import origin
from .base import MessageHandler, Transport
from .child_output import decode_line

if TYPE_CHECKING:
    from ..httpcontext import HTTPContext

__all__ = ["HTTPTransport", "OverHTTP", "shared_ssl_context"]

log = logging.getLogger("llm_mcp.client.http")

ACCEPT = "application/json, text/event-stream"
CANCEL_NOTIFY_TIMEOUT = 5.0
"""Seconds a handshake-era ``notifications/cancelled`` POST may take before the cancelled request's
stream is shut anyway (see ``HTTPTransport._when_cancelled``)."""
MAX_ATTEMPTS = 3
"""Attempts at one request whose stream broke: the first, then at most two resumptions."""
DRAIN_GRACE = 0.05
"""Seconds an SSE stream may take to end after it carried the response, so that its connection
is kept alive for the next request. A server that keeps answered streams open costs this once:
the transport then closes such streams (and their connections) at once."""


@functools.lru_cache(maxsize=1)
def shared_ssl_context() -> ssl.SSLContext:
    """One TLS context for every server: building one costs tens of milliseconds."""
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


_endpoints = state.endpoints
"""MCP endpoint URLs (as httpx spells them) whose path and query httpx's request log must not show."""


class _HideEndpoints(logging.Filter):
    """Shows only the origin of MCP endpoint URLs in httpx's ``HTTP Request: ...`` log lines:
    hosted MCP URLs often carry secrets in their path or query."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any(str(arg) in _endpoints for arg in record.args):
            record.args = tuple(f"{origin(str(arg))}/..." if str(arg) in _endpoints else arg for arg in record.args)
        return True


def hide_in_logs(url: str) -> None:
    """Keep ``url``'s path and query out of httpx's request log (its INFO lines)."""
    spelled = str(httpx.URL(url))
    if spelled not in _endpoints:
        _endpoints.add(spelled)
        if not any(isinstance(f, _HideEndpoints) for f in logging.getLogger("httpx").filters):
            logging.getLogger("httpx").addFilter(_HideEndpoints())


def describe(exc: httpx.HTTPError, url: str) -> str:
    """Why a request failed, for messages: the URL and, for connection failures, the OS's reason.

    Only errors raised before anything was sent (connect, DNS) carry their text; others give
    their class name alone, so a refused header value can never reach a message.
    """
    reason = f"{type(exc).__name__}: {exc}" if isinstance(exc, httpx.ConnectError) and str(exc) else \
        type(exc).__name__
    return f"{origin(url)} ({reason})"


def broke_off(name: str, message: dict[str, Any] | None, exc: httpx.HTTPError) -> str:
    """The message of a failure after the request had left: the server received it and may
    have started the work, then the connection broke before its answer."""
    what = f" {message.get('method')}" if message else ""
    return (f"MCP server {name!r} received the request{what} but broke off before its answer "
            f"({type(exc).__name__})")


def parse_challenge(value: str) -> dict[str, str]:
    """The auth-params of a ``WWW-Authenticate: Bearer`` challenge (RFC 6750 §3), lower-cased keys."""
    params: dict[str, str] = {}
    rest = value.split(" ", 1)[1] if " " in value.strip() else ""
    key = ""
    i = 0
    while i < len(rest):
        ch = rest[i]
        if ch == "=":
            key = key.strip().strip(",").strip().lower()
            i += 1
            if i < len(rest) and rest[i] == '"':
                end = i + 1
                buf = []
                while end < len(rest) and rest[end] != '"':
                    if rest[end] == "\\" and end + 1 < len(rest):
                        end += 1
                    buf.append(rest[end])
                    end += 1
                params[key] = "".join(buf)
                i = end + 1
            else:
                end = rest.find(",", i)
                end = len(rest) if end < 0 else end
                params[key] = rest[i:end].strip()
                i = end
            key = ""
        else:
            key += ch
            i += 1
    return params


def insufficient_scope(url: str, name: str, challenge: dict[str, str]) -> InsufficientScopeError:
    """The error for a 403 ``insufficient_scope`` challenge (RFC 6750 §3.1): the message is
    ``"<host> refused the request: <reason>"`` (the server's ``error_description``, else the
    scopes it asks for); ``.scopes`` lists the challenged scopes. Nothing is re-authorized."""
    scopes = challenge.get("scope", "").split()
    reason = challenge.get("error_description") or (f"Additional scopes required: {' '.join(scopes)}" if scopes
                                                     else "insufficient scope")
    host = urlsplit(url).hostname or name
    return InsufficientScopeError(f"{host} refused the request: {reason[:300]}", server=name, scopes=scopes,
                                  reason=challenge.get("error_description"))


class OverHTTP(Transport):
    """What the HTTP transports share: the URL, the server name, the headers, the timeout and
    the ``httpx.Auth`` they send with, and how they open their ``httpx.Client``."""

    def __init__(self, url: str, *, name: str, headers: Callable[[], dict[str, str]] | None,
                 timeout: float, auth: httpx.Auth | None, http_context: HTTPContext | None = None):
        hide_in_logs(url)
        self.http_context = http_context
        self.url = url
        self.auth = auth
        self.name = name
        self.headers = headers or dict
        self.timeout = timeout

    def _new_client(self) -> httpx.Client:
        """An ``httpx.Client`` with the shared TLS context (or the HTTP context's settings), never
        following redirects."""
        if self.http_context is not None:
            return self.http_context.client(timeout=self.timeout)
        return httpx.Client(verify=shared_ssl_context(), follow_redirects=False, timeout=self.timeout)

    @property
    def _auth(self) -> Any:
        """What every request of this transport is sent with: ``auth``, else the client's default."""
        return self.auth or httpx.USE_CLIENT_DEFAULT


class HTTPTransport(OverHTTP):
    """Streamable HTTP to one endpoint, over one pooled ``httpx.Client``.

        transport = HTTPTransport("https://mcp.example.com/mcp", name="example", headers=lambda: {...})
        transport.request(protocol.request("tools/list"), version="2026-07-28")
        transport.close()

    Attributes:
        url: the endpoint URL.
        name: the server name, for logs and errors.
        headers: a callable returning the extra headers (authorization, custom) for each request.
        timeout: seconds to wait for a response when the caller gives no deadline.
        auth: an ``httpx.Auth`` every request goes through (OAuth: ``llm_mcp.client.oauth.OAuth``), or ``None``.
        session_id: the handshake-era ``Mcp-Session-Id``, or ``None``.
    """

    cancels_by_closing = True
    """On 2026-07-28, closing a request's response stream is its cancellation."""

    # listen_during_calls (False, set by the client): in the handshake era, hold a GET stream open
    # while a tools/call, prompts/get or resources/read runs, for server requests not tied to it
    # (2025-11-25 "Streamable HTTP / Listening for Messages from the Server").

    def __init__(self, url: str, *, name: str, headers: Callable[[], dict[str, str]] | None = None,
                 timeout: float = 60.0, client: httpx.Client | None = None, auth: httpx.Auth | None = None,
                 http_context: HTTPContext | None = None):
        super().__init__(url, name=name, headers=headers, timeout=timeout, auth=auth, http_context=http_context)
        self.session_id: str | None = None
        self._version: str | None = None
        self._client = client
        self._own_client = client is None
        self._lock = threading.Lock()
        self._drains = True  # False once the server kept an answered SSE stream open
        self._told: set[Any] = set()  # request ids whose notifications/cancelled a cancel scope sent
        self._told_lock = threading.Lock()

    @property
    def client(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = self._new_client()
            return self._client

    # -- the transport contract -------------------------------------------------------------

    def request(self, message: dict[str, Any], *, version: str | None, timeout: float | None = None,
                headers: dict[str, str] | None = None, on_message: MessageHandler | None = None) -> dict[str, Any]:
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        scope = current_scope()
        interrupt = _Interrupt(self.client) if scope is not None else None
        forget = scope.on_cancel(self._when_cancelled(message, version, interrupt, scope)) \
            if scope is not None and interrupt is not None else None
        listener = None
        failed = False
        if self.listen_during_calls and on_message is not None and version != protocol.LATEST and self.session_id \
                and message.get("method") in _CALLS:
            listener = _Listener(self, version, on_message)
        try:
            if scope is not None and scope.cancelled:  # cancelled since the client checked: do not send it
                raise CancelledError(f"{message.get('method')} to MCP server {self.name!r} was cancelled",
                                     server=self.name)
            try:
                sent = self._send(message, version=version, timeout=timeout, extra=headers, deadline=deadline,
                                  trace=interrupt.trace if interrupt is not None else None)
            except _ErrorBody as error:  # a 4xx that still speaks JSON-RPC: let the client read the error
                return {"jsonrpc": "2.0", "id": message["id"], "error": error.body["error"]}
            with sent as response:
                content_type = response.headers.get("content-type", "")
                kind = content_type.split(";")[0].strip().lower()
                if kind == "text/event-stream":
                    return self._read_stream(response, message, version, timeout, deadline, on_message,
                                             content_type)
                body = self._json_body(response, timeout=timeout)
        except BaseException:
            failed = True  # a cancelled request: the client's cancel() will find its id told
            raise
        finally:
            if forget is not None:
                forget()
                if not failed:  # answered after all: no cancel() follows
                    with self._told_lock:
                        self._told.discard(message.get("id"))
            if listener is not None:
                listener.stop()
        answer = self._find_response(body, message, on_message, version)
        if answer is None:
            raise MCPError(f"MCP server {self.name!r} answered {message.get('method')} without a JSON-RPC response",
                           server=self.name)
        return answer

    def notify(self, message: dict[str, Any], *, version: str | None) -> None:
        self._notify(message, version=version, timeout=self.timeout)

    def _notify(self, message: dict[str, Any], *, version: str | None, timeout: float) -> None:
        try:
            with self._send(message, version=version, timeout=timeout) as response:
                response.read()  # 202 empty, 200 with "null" or "{}": all fine, nothing to read into
        except _ErrorBody as error:
            raise MCPError(f"MCP server {self.name!r} refused {message.get('method')}: "
                           f"{error.body['error'].get('message', '')}", server=self.name,
                           code=error.body["error"].get("code")) from None

    def cancel(self, notification: dict[str, Any], *, version: str | None) -> None:
        """Send ``notifications/cancelled``, unless the request's cancel scope already sent it
        (handshake era, see `_when_cancelled`); never raises."""
        request_id = protocol.as_object(notification.get("params")).get("requestId")
        with self._told_lock:
            if request_id in self._told:
                self._told.discard(request_id)
                return
        self._deliver_cancel(notification, version, self.timeout)

    def _when_cancelled(self, message: dict[str, Any], version: str | None, interrupt: _Interrupt,
                        scope: Any) -> Callable[[], None]:
        """What cancelling the scope of the request ``message`` does.

        On 2026-07-28 the response stream is shut at once: that is the cancellation. In the
        handshake era ``notifications/cancelled`` goes first and the stream is shut after it was
        delivered (or after `CANCEL_NOTIFY_TIMEOUT`): a stream shut first leaves the server working,
        its progress sends going to a closed stream, until the notification arrives, if it does.
        Both run in the cancelling thread (no thread is started, MCP-PROG-09), so
        ``CancelScope.cancel()`` waits for that one POST, at most `CANCEL_NOTIFY_TIMEOUT` seconds;
        the request's id is noted first, so the client's own ``cancel`` does not send it twice.
        MCP 2025-11-25 "Utilities / Cancellation" (an ``initialize`` is never cancelled)."""
        if version is None or version == protocol.LATEST or "id" not in message \
                or message.get("method") == "initialize":
            return interrupt.abort
        request_id = message["id"]

        def notify_then_abort() -> None:
            with self._told_lock:
                self._told.add(request_id)
            notification = protocol.notification("notifications/cancelled",
                                                  {"requestId": request_id, "reason": scope.reason or "cancelled"})
            try:
                self._deliver_cancel(notification, version, min(self.timeout, CANCEL_NOTIFY_TIMEOUT))
            except Exception as exc:  # noqa: BLE001 - best effort; the stream is shut below anyway
                log.debug("MCP server %s: cancellation not sent (%s)", self.name, type(exc).__name__)
            finally:
                interrupt.abort()

        return notify_then_abort

    def _deliver_cancel(self, notification: dict[str, Any], version: str | None, timeout: float) -> None:
        """POST ``notifications/cancelled``; a connection failure gets one more try on a fresh
        connection (a pooled one may have gone stale), since a cancel that never arrives leaves
        the server working. Failures are logged at debug, never raised."""
        for attempt in (1, 2):
            try:
                self._notify(notification, version=version, timeout=timeout)
                return
            except ConnectionError as exc:
                if attempt == 2 or isinstance(exc, ServerTimeoutError):  # no answer in time: no second wait
                    log.debug("MCP server %s: cancellation not delivered (%s)", self.name, type(exc).__name__)
                    return
            except MCPError as exc:
                log.debug("MCP server %s: cancellation not delivered (%s)", self.name, type(exc).__name__)
                return

    def close(self) -> None:
        session, self.session_id = self.session_id, None
        client = self._client
        if session and client is not None:
            try:
                headers = {**self.headers(), "Mcp-Session-Id": session}
                if self._version:
                    headers["MCP-Protocol-Version"] = self._version
                response = client.delete(self.url, headers=headers, timeout=min(self.timeout, 5.0),
                                         auth=self._auth)
                if response.status_code not in (200, 202, 204, 404, 405):
                    log.debug("MCP server %s answered DELETE with %s", self.name, response.status_code)
            except Exception as exc:  # noqa: BLE001 - closing must not fail; the session times out anyway
                log.debug("MCP server %s: DELETE not sent (%s)", self.name, type(exc).__name__)
        if self._own_client and client is not None:
            client.close()
            self._client = None

    # -- listening ----------------------------------------------------------------------------

    def listen(self, message: dict[str, Any] | None, *, version: str | None, on_message: MessageHandler,
               on_open: Callable[[], None] | None = None) -> dict[str, Any] | None:
        """Hold a subscription (see ``transports.base``): POST ``message`` (``subscriptions/listen``)
        and read its event stream with no deadline, or, for ``message`` ``None``, read the
        session's GET event stream (2025-11-25 "Listening for Messages from the Server"). SSE
        comments (keep-alives) are skipped. Cancelling the current cancel scope shuts the stream's
        socket (closing it ends a 2026-07-28 subscription) and raises ``CancelledError``.

        Raises ``ConnectionError`` (unreachable), ``SessionExpiredError`` (404 on the GET
        stream), ``StreamBrokenError`` (the stream ended without the final response),
        ``MCPError`` (a server without a GET stream: HTTP 405)."""
        scope = current_scope()
        interrupt = _Interrupt(self.client)
        forget = scope.on_cancel(interrupt.abort) if scope is not None else None
        try:
            if message is None:
                response = self._open_events(version, interrupt)
                if on_open is not None:
                    on_open()
                wanted_id = None
            else:
                try:
                    sent = self._send(message, version=version, timeout=None, trace=interrupt.trace)
                except _ErrorBody as error:
                    return {"jsonrpc": "2.0", "id": message["id"], "error": error.body["error"]}
                response = sent.response
                wanted_id = message["id"]
            return self._read_listen(response, wanted_id, version, on_message)
        except httpx.HTTPError as exc:
            if scope is not None and scope.cancelled:
                raise CancelledError(f"listening to MCP server {self.name!r} was stopped", server=self.name) from None
            raise StreamBrokenError(f"MCP server {self.name!r} broke off the listen stream ({type(exc).__name__})",
                                    server=self.name) from None
        finally:
            if forget is not None:
                forget()

    def _open_events(self, version: str | None, interrupt: _Interrupt) -> httpx.Response:
        """The session's GET event stream, open (handshake era)."""
        try:
            request = self.client.build_request("GET", self.url, headers=self._stream_headers(version),
                                                timeout=_timeouts(None), extensions={"trace": interrupt.trace})
            response = self.client.send(request, stream=True, auth=self._auth)
        except httpx.HTTPError as exc:
            raise from_httpx(exc, server=self.name, message=f"MCP server {self.name!r} could not be reached at "
                             f"{describe(exc, self.url)}") from None
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if response.is_success and kind == "text/event-stream":
            return response
        response.close()
        if response.status_code == 404 and self.session_id:
            self.session_id = None
            raise SessionExpiredError(f"MCP server {self.name!r} ended the session (HTTP 404)", server=self.name)
        raise MCPError(f"MCP server {self.name!r} offers no event stream to listen on (HTTP {response.status_code} "
                       "to GET)", server=self.name)

    def _read_listen(self, response: httpx.Response, wanted_id: Any, version: str | None,
                     on_message: MessageHandler) -> dict[str, Any] | None:
        """Read a listen stream until the response ``wanted_id`` (returned) or its end."""
        try:
            kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if kind != "text/event-stream":
                body = self._json_body(response)
                for item in body if isinstance(body, list) else [body]:
                    if protocol.is_response(item) and item["id"] == wanted_id:
                        return item
                raise MCPError(f"MCP server {self.name!r} answered subscriptions/listen without a stream",
                               server=self.name)
            for _, _, data in _events(response):
                for item in data if isinstance(data, list) else [data]:
                    if not protocol.is_message(item):
                        continue
                    if protocol.is_response(item):
                        if wanted_id is not None and item["id"] == wanted_id:
                            return item
                        continue
                    self._handle(item, on_message, version)
        finally:
            response.close()
        if wanted_id is None:
            return None
        raise StreamBrokenError(f"MCP server {self.name!r} closed the listen stream without ending the subscription",
                                server=self.name)

    # -- sending ------------------------------------------------------------------------------

    def _base_headers(self, version: str | None) -> dict[str, str]:
        headers = {"Accept": ACCEPT, "Content-Type": "application/json", **self.headers()}
        if version:
            headers["MCP-Protocol-Version"] = version
        if self.session_id and version != protocol.LATEST:
            headers["Mcp-Session-Id"] = self.session_id
        return headers

    def _stream_headers(self, version: str | None) -> dict[str, str]:
        """The headers of a GET event stream (a resumed stream, or the listener's)."""
        headers = self._base_headers(version)
        headers["Accept"] = "text/event-stream"
        headers.pop("Content-Type", None)
        return headers

    def _send(self, message: dict[str, Any], *, version: str | None, timeout: float | None,
              extra: dict[str, str] | None = None, deadline: float | None = None,
              trace: Callable[[str, dict[str, Any]], None] | None = None):
        headers = self._base_headers(version)
        if version == protocol.LATEST:  # Mcp-Method and Mcp-Name are 2026-07-28's; older servers know none
            headers.update(method_headers(message))
        self._version = version
        if extra:
            headers.update(extra)
        body = protocol.encode(message)
        sent_session = headers.get("Mcp-Session-Id")
        try:
            request = self.client.build_request("POST", self.url, content=body, headers=headers,
                                                timeout=_timeouts(timeout),
                                                extensions={"trace": trace} if trace is not None else None)
            response = self.client.send(request, stream=True, auth=self._auth)
        except httpx.HTTPError as exc:
            raise from_httpx(exc, server=self.name, message=f"MCP server {self.name!r} could not be reached at "
                             f"{describe(exc, self.url)}", timeout_message=self._no_answer(message, timeout),
                             broke_message=broke_off(self.name, message, exc)) from None
        if response.is_success:
            # 2026-07-28 has no sessions: its answers' headers are not searched for one.
            session = response.headers.get("mcp-session-id") if version != protocol.LATEST else None
            if session:
                if not _VISIBLE_ASCII.match(session):
                    response.close()
                    raise MCPError(f"MCP server {self.name!r} sent an Mcp-Session-Id with characters other than "
                                   "visible ASCII", server=self.name)
                self.session_id = session
            if timeout is not None:  # None: a listen stream, open until either side ends it
                response.stream = _Deadline(response.stream, deadline or time.monotonic() + timeout)
            return _Closing(response)
        try:
            self._raise_for_status(response, message, sent_session)
        finally:
            response.close()
        raise AssertionError("unreachable")

    def _no_answer(self, message: dict[str, Any], timeout: float | None) -> str:
        """The message of a request that timed out."""
        if timeout is None:
            return f"MCP server {self.name!r} did not answer {message.get('method')}"
        return f"MCP server {self.name!r} did not answer {message.get('method')} within {timeout:g} s"

    def _raise_for_status(self, response: httpx.Response, message: dict[str, Any], sent_session: str | None) -> None:
        status = response.status_code
        method = message.get("method")
        if 300 <= status < 400:
            raise MCPError(f"MCP server {self.name!r} answered {method} with a redirect ({status}); "
                           "redirects are never followed", server=self.name)
        if status == 401:
            raise UnauthorizedError(f"MCP server {self.name!r} wants credentials (HTTP 401)", server=self.name,
                                    www_authenticate=response.headers.get("www-authenticate"))
        if status == 403:
            challenge = parse_challenge(response.headers.get("www-authenticate", ""))
            if challenge.get("error") == "insufficient_scope":
                raise insufficient_scope(self.url, self.name, challenge)
            raise ForbiddenError(f"MCP server {self.name!r} refused {method} (HTTP 403)", server=self.name)
        if status == 429 or status >= 500:
            raise from_httpx(response, server=self.name, message=f"MCP server {self.name!r} answered {method} with "
                             f"HTTP {status}")
        if status == 404 and sent_session:
            self.session_id = None
            raise SessionExpiredError(f"MCP server {self.name!r} ended the session (HTTP 404)", server=self.name)
        body = self._json_body(response, strict=False)
        if isinstance(body, dict) and "error" in body and isinstance(body["error"], dict):
            raise _ErrorBody(body, status)
        if status in (400, 404, 405):
            raise LegacyProtocolError(f"MCP server {self.name!r} answered {method} with HTTP {status}",
                                      status=status, server=self.name)
        raise MCPError(f"MCP server {self.name!r} answered {method} with HTTP {status}", server=self.name)

    def _json_body(self, response: httpx.Response, strict: bool = True, timeout: float | None = None) -> Any:
        try:
            raw = response.read()
        except httpx.HTTPError as exc:
            raise from_httpx(exc, server=self.name, message=broke_off(self.name, None, exc), timeout_message=f"MCP server {self.name!r} did not finish its "
                             f"answer within {self.timeout if timeout is None else timeout:g} s") from None
        if not raw.strip():
            return None
        try:
            return protocol.decode(raw)
        except ValueError:
            text, lenient = decode_line(raw)  # JSON in another encoding (a Windows code page)?
            if lenient:
                try:
                    parsed = protocol.decode(text)
                except ValueError:
                    pass
                else:
                    log.warning("MCP server %s answered with JSON that is not valid UTF-8 (another encoding?); "
                                "read it with replacement characters", self.name)
                    return parsed
            if strict:
                raise MCPError(f"MCP server {self.name!r} answered with a body that is not JSON",
                               server=self.name) from None
            return None

    # -- reading ------------------------------------------------------------------------------

    def _find_response(self, body: Any, message: dict[str, Any], on_message: MessageHandler | None,
                       version: str | None) -> dict[str, Any] | None:
        for item in body if isinstance(body, list) else [body]:
            if not protocol.is_message(item):
                continue
            if protocol.is_response(item) and item["id"] == message["id"]:
                return item
            self._handle(item, on_message, version)
        return None

    def _handle(self, item: dict[str, Any], on_message: MessageHandler | None, version: str | None) -> None:
        reply = on_message(item) if on_message else None
        if protocol.is_request(item):
            if reply is None:
                reply = protocol.error_response(item["id"], protocol.METHOD_NOT_FOUND, "Method not supported")
            try:
                with self._send(reply, version=version, timeout=self.timeout) as response:
                    response.read()
            except MCPError as exc:
                log.debug("MCP server %s: reply to %s not delivered (%s)", self.name, item.get("method"),
                          type(exc).__name__)

    def _read_stream(self, response: httpx.Response, message: dict[str, Any], version: str | None,
                     timeout: float, deadline: float, on_message: MessageHandler | None,
                     content_type: str | None = None) -> dict[str, Any]:
        last_id: str | None = None
        retry_ms: int | None = None
        attempts = 1
        while True:
            try:
                for event_id, retry, data in _events(response, content_type):
                    last_id = event_id or last_id
                    retry_ms = retry if retry is not None else retry_ms
                    answer = self._find_response(data, message, on_message, version)
                    if answer is not None:
                        self._drain(response)
                        return answer
            except httpx.TimeoutException as exc:
                no_answer = self._no_answer(message, timeout)
                raise from_httpx(exc, server=self.name, message=no_answer, timeout_message=no_answer) from None
            except httpx.HTTPError:
                pass  # the stream broke: resume below, as when it ended early
            finally:
                response.close()
            # The stream ended without our response. Older revisions let us resume it with GET
            # and Last-Event-ID after the server's retry delay; 2026-07-28 asks for a new request.
            if version == protocol.LATEST or last_id is None or attempts >= MAX_ATTEMPTS:
                raise StreamBrokenError(f"MCP server {self.name!r} closed the stream before answering "
                                        f"{message.get('method')}", server=self.name, attempts=attempts)
            attempts += 1
            time.sleep(max(0.0, min((retry_ms if retry_ms is not None else 1000) / 1000,
                                    deadline - time.monotonic())))
            response, content_type = self._resume(last_id, version, timeout, deadline), None

    def _drain(self, response: httpx.Response) -> None:
        """Read an answered SSE stream to its end, for at most `DRAIN_GRACE` seconds, so that its
        connection goes back to the pool instead of being closed (the spec asks servers to end the
        stream once it carried the response). Events after the response are dropped. A server that
        keeps the stream open is remembered: its streams are closed at once from then on."""
        if not self._drains:
            return
        stream = response.stream
        if isinstance(stream, _Deadline) and not stream.drain(response.request, DRAIN_GRACE):
            self._drains = False
            log.debug("MCP server %s keeps answered SSE streams open; closing them from now on", self.name)

    def _resume(self, last_id: str, version: str | None, timeout: float, deadline: float) -> httpx.Response:
        headers = self._stream_headers(version)
        headers["Last-Event-ID"] = last_id
        try:
            request = self.client.build_request("GET", self.url, headers=headers, timeout=timeout)
            response = self.client.send(request, stream=True, auth=self._auth)
        except httpx.HTTPError as exc:  # a timeout included: the stream is not there to resume
            raise from_httpx(exc, server=self.name, message=f"MCP server {self.name!r} could not be reached to "
                             f"resume a stream at {describe(exc, self.url)}") from None
        if not response.is_success:
            response.close()
            raise StreamBrokenError(f"MCP server {self.name!r} refused to resume the stream "
                                    f"(HTTP {response.status_code})", server=self.name, attempts=MAX_ATTEMPTS)
        response.stream = _Deadline(response.stream, deadline)
        return response


@functools.lru_cache(maxsize=64)
def _timeouts(timeout: float | None) -> httpx.Timeout:
    """A request's httpx timeouts: ``timeout`` seconds (connecting: 10 at most); ``None``: no
    read timeout (a listen stream), 10 s to connect. Kept per value (httpx only reads them):
    a server's requests mostly share one timeout."""
    if timeout is None:
        return httpx.Timeout(None, connect=10.0)
    return httpx.Timeout(timeout, connect=min(timeout, 10.0))


def _events(response: httpx.Response, content_type: str | None = None) -> Iterator[tuple[str | None, int | None, Any]]:
    """Yield ``(event id, retry ms, parsed data)`` for each SSE event that carries JSON.

    Events with empty data, comments (``: ping``), and data that is not JSON (such as
    ``keep-alive``) are skipped, though their ``id`` and ``retry`` still count.
    ``content_type``: the response's ``Content-Type`` as already read by the caller, if it was.
    """
    if content_type is None or "text/event-stream" not in content_type:
        # Media types are case-insensitive; httpx-sse's check is not. (Rewriting a header costs
        # a pass over them all: skipped when the server wrote it in lower case, as servers do.)
        response.headers["content-type"] = "text/event-stream"
    for sse in EventSource(response).iter_sse():
        data = sse.data
        parsed = None
        if data.strip():
            try:
                parsed = protocol.decode(data)
            except ValueError:
                log.debug("skipped an SSE event whose data is not JSON")
        yield sse.id or None, sse.retry, parsed


_VISIBLE_ASCII = re.compile(r"^[\x21-\x7e]+$")

_CALLS = ("tools/call", "prompts/get", "resources/read")

LISTEN_READY_TIMEOUT = 5.0
"""Seconds a call waits for its GET stream to open before it is sent anyway."""


class _Listener:
    """A GET stream held open in a thread while one handshake-era call runs: the server's requests
    on it (an ``elicitation/create`` not tied to the call) go to ``on_message`` and are answered by
    POST. A server without GET streams (405) just leaves it closed."""

    def __init__(self, transport: HTTPTransport, version: str | None, on_message: MessageHandler):
        self.transport = transport
        self.version = version
        self.on_message = on_message
        self.interrupt = _Interrupt(transport.client)
        self.ready = threading.Event()
        self.stopped = False
        self.thread = threading.Thread(target=self._run, name=f"mcp-listen-{transport.name}", daemon=True)
        self.thread.start()
        self.ready.wait(LISTEN_READY_TIMEOUT)

    def _run(self) -> None:
        transport = self.transport
        headers = transport._stream_headers(self.version)
        try:
            request = transport.client.build_request("GET", transport.url, headers=headers,
                                                     timeout=httpx.Timeout(None, connect=10.0),
                                                     extensions={"trace": self.interrupt.trace})
            response = transport.client.send(request, stream=True, auth=transport._auth)
        except httpx.HTTPError as exc:
            log.debug("MCP server %s: no GET stream (%s)", transport.name, type(exc).__name__)
            self.ready.set()
            return
        self.ready.set()
        try:
            kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if not response.is_success or kind != "text/event-stream":
                return
            for _, _, data in _events(response):
                for item in data if isinstance(data, list) else [data]:
                    if not self.stopped and protocol.is_message(item) and not protocol.is_response(item):
                        transport._handle(item, self.on_message, self.version)
        except httpx.HTTPError:
            pass  # stopped (the socket was shut down) or the server ended the stream
        finally:
            response.close()

    def stop(self) -> None:
        self.stopped = True
        self.interrupt.abort()
        self.thread.join(timeout=2.0)


class _Interrupt:
    """Interrupts one request from another thread, whether it waits for the response headers or
    reads the body: it finds the pooled connection carrying the request and shuts its socket
    down (a blocked read then returns at once; ``close()`` from another thread does not
    promise that). httpx has no public handle on that connection, so this looks it up in
    httpcore's pool; if httpcore changes shape, the request runs to its own deadline."""

    def __init__(self, client: httpx.Client):
        self.client = client
        self.core_request: Any = None

    def trace(self, event: str, info: dict[str, Any]) -> None:
        if event.endswith("send_request_headers.started"):
            self.core_request = info.get("request")

    def abort(self) -> None:
        pool = getattr(getattr(self.client, "_transport", None), "_pool", None)
        for pending in list(getattr(pool, "_requests", None) or ()):
            if self.core_request is not None and getattr(pending, "request", None) is self.core_request:
                connection = getattr(getattr(pending, "connection", None), "_connection", None)
                stream = getattr(connection, "_network_stream", None)
                sock = stream.get_extra_info("socket") if stream is not None else None
                if sock is not None:
                    try:
                        sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass


class _Deadline(httpx.SyncByteStream):
    """A response body that raises ``httpx.ReadTimeout`` once the request's deadline passes.

    httpx's read timeout bounds each read, so a server that trickles bytes (or pings an SSE
    stream forever) would otherwise hold a request far past its ``timeout``.
    """

    def __init__(self, stream: Any, deadline: float):
        self._stream = stream
        self._deadline = deadline

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._stream:
            yield chunk
            if time.monotonic() > self._deadline + held_seconds():  # a question held for a person does not count
                raise httpx.ReadTimeout("the request's deadline passed")

    def drain(self, request: httpx.Request, grace: float) -> bool:
        """Read the rest of the body, discarding it, for at most about ``grace`` seconds; ``True``
        when it ended (its connection can then be reused), ``False`` when it did not (or broke).

        The readers above may hold their own iteration suspended: this one reads on from where the
        connection is (httpcore's body iterator reads from the connection's state, not from a copy),
        with the request's read timeout (httpcore's ``timeout`` extension) lowered to ``grace``."""
        timeouts = request.extensions.get("timeout")
        if not isinstance(timeouts, dict):
            return False
        end = time.monotonic() + grace
        timeouts["read"] = grace
        try:
            for _ in self._stream:
                if time.monotonic() > end:
                    return False
        except httpx.HTTPError:  # a read timeout: the stream is still open
            return False
        return True

    def close(self) -> None:
        self._stream.close()


class _Closing:
    """Context manager closing a streamed response."""

    def __init__(self, response: httpx.Response):
        self.response = response

    def __enter__(self) -> httpx.Response:
        return self.response

    def __exit__(self, *exc: object) -> None:
        self.response.close()


class _ErrorBody(MCPError):
    """Internal: a non-2xx answer that carried a JSON-RPC error object; the caller unwraps it."""

    def __init__(self, body: dict[str, Any], status: int):
        super().__init__(f"HTTP {status}", code=body["error"].get("code"))
        self.body = body
        self.status = status
