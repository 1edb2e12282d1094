"""One server's protocol state: which revision it speaks, and every request's envelope.

The client speaks revision 2026-07-28 first: each request stands alone and carries
``_meta`` with our protocol version, capabilities and identity; ``server/discover`` tells
us the server's identity, capabilities and instructions. When the server turns that
down the way an older server does, we fall back to the ``initialize`` handshake
(2025-11-25 back to 2024-11-05) and, over HTTP, to the 2024-11-05 HTTP+SSE transport.
See MCP 2026-07-28, "Lifecycle" and "Backward compatibility".
"""

from __future__ import annotations

import copy
import itertools
import logging
import threading
from functools import partial
from typing import TYPE_CHECKING, Any, Callable

from . import protocol, state
from .cancel import current_scope
from .context import current as current_context
from .errors import (
    CancelledError,
    ConnectionError,
    ExtensionRequiredError,
    InputRequiredError,
    LegacyProtocolError,
    MCPError,
    ServerTimeoutError,
    SessionExpiredError,
    StartupFailedError,
    StreamBrokenError,
)
from .extensions import TASKS_EXTENSION
from .logs import LOG_LEVEL_META, check_log_level, printable, wanted
from .logs import write as write_log
from .offered import CAPABILITY_OF, missing_capability, not_offered
from .transports.base import Transport, adopt

if TYPE_CHECKING:
    from .context import CallContext

__all__ = ["Client"]

log = logging.getLogger("llm_mcp.client")

MODERN = "modern"
HANDSHAKE = "handshake"
LEGACY_SSE = "sse"

MAX_PAGES = 1000
"""Pages of one list we follow before deciding the server pages forever."""

MAX_ATTEMPTS = 3
"""Streams one request may read (first answer plus resumptions or re-sends) before MCPError."""

PROBE_TIMEOUT = 10.0
"""Seconds a stdio server gets to answer ``server/discover`` before we try the handshake."""

_eras = state.eras
"""What each endpoint spoke last time, per process (``state.eras``): endpoint URL (or command) -> era."""

_BASE_META = {
    protocol.META_CLIENT_CAPABILITIES: {},
    protocol.META_CLIENT_INFO: protocol.CLIENT_INFO,
}


class Client:
    """Speaks MCP to one server over a transport.

        client = Client(transport, name="docs")
        tools = client.list("tools/list", "tools")
        result = client.request("tools/call", {"name": "search", "arguments": {"q": "x"}})

    Attributes:
        transport: the object that carries messages, as given (see ``transports.base``).
        channel: ``transport`` as a `Transport`: itself when it subclasses it, else the adapter
            that gives the optional attributes it lacks their defaults (``transports.base.adopt``).
        name: the server's name, for logs and errors.
        timeout: seconds a request may take, or ``None`` for the transport's own.
        era_key: where the detected era is remembered for the process (an endpoint URL),
            or ``None`` to remember it on this object only.
        legacy_transport: a callable building the 2024-11-05 HTTP+SSE transport, for HTTP.
        declared: a callable taking the era (``"modern"`` or ``"handshake"``) and returning the
            client capabilities to declare (``{"elicitation": {...}, "extensions": {...}}``);
            ``None`` declares none. Called per 2026-07-28 request; what it returns is only read and
            sent, never changed, so it may hand out the same dict each time.
        declared_fixed: ``True`` when ``declared`` gives the same capabilities for 2026-07-28 for
            the client's life (an ``MCP`` whose capabilities come from declared values sets it):
            then it is asked once, not per request. ``False`` by default.
        on_input_request: answers a handshake-era server's ``elicitation/create`` request in
            line: takes its params, returns the ``ElicitResult`` dict; ``None`` refuses such
            requests (``-32601``). An exception it raises declines the request, then comes out
            of the call that was running; a ``CancelledError`` stops the call at once.
        request_handlers: answers to other requests a handshake-era server sends (``"roots/list"``,
            ``"sampling/createMessage"``), by method: each takes the params and returns the
            result dict; ``ValueError`` becomes a ``-32602`` error, another exception ``-32603``
            (its type only: no message, which could carry a secret), an `MCPError` with a
            ``code`` that error.
        protocol_version: the revision in use once connected, e.g. ``"2026-07-28"``.
        server_info: the server's ``{"name", "version", ...}``, once connected.
        capabilities: the server's capabilities dict, once connected.
        instructions: the server's instructions, or ``None``.
        log_level: the least severe server log message wanted (``"warning"``: warning and
            above; one of ``logs.LOG_LEVELS``), written under the logger
            ``llm_mcp.server.<name>``; ``None`` (the default) asks for none and writes none.
    """

    def __init__(self, transport: Transport, *, name: str = "server", timeout: float | None = None,
                 era_key: str | None = None, legacy_transport: Callable[[], Transport] | None = None,
                 declared: Callable[[str], dict[str, Any]] | None = None, log_level: str | None = None):
        self.transport = transport
        self.log_level = check_log_level(log_level)
        self.declared = declared
        self.declared_fixed = False
        # `request`'s usual _meta (none of its own in the params): (capabilities, version, log level,
        # meta); capabilities ``False`` until one is kept (``None`` is a real value: none declared)
        self._meta_kept: tuple[Any, Any, Any, dict[str, Any]] = (False, None, None, {})
        self.name = name
        self.timeout = timeout
        self.era_key = era_key
        self.legacy_transport = legacy_transport
        self.era: str | None = None
        self.protocol_version: str | None = None
        self._identity({})  # server_info {}, capabilities {}, instructions None: nothing said yet
        self.on_notification: list[Callable[[dict[str, Any]], None]] = []
        self.on_input_request: Callable[[dict[str, Any]], dict[str, Any]] | None = None
        self.request_handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}
        self._inline_errors: list[BaseException] = []
        self._on_legacy = False
        self._progress: dict[Any, Callable[[dict[str, Any]], None]] = {}
        self._tokens = itertools.count(1)
        self._lock = threading.RLock()
        self._server_log = logging.getLogger(f"llm_mcp.server.{name}")

    @property
    def transport(self) -> Any:
        """The transport as given; setting it also sets `channel`."""
        return self._transport

    @transport.setter
    def transport(self, transport: Any) -> None:
        self._transport, self.channel = transport, adopt(transport)

    @property
    def meta(self) -> dict[str, Any]:
        """The ``_meta`` every 2026-07-28 request carries; computed, nothing is sent.

        Declares the capabilities ``declared`` gives for the modern era (none without it).
        """
        return copy.deepcopy(self._meta_for(protocol.LATEST))

    @property
    def connected(self) -> bool:
        return self.era is not None

    # -- connecting ---------------------------------------------------------------------------

    def connect(self) -> None:
        """Find out which revision the server speaks; raises ``MCPError`` if it speaks none we know."""
        if self.era == MODERN:  # stateless: nothing to check per request
            return
        with self._lock:
            if self.era is not None and self._transport_alive():
                return
            remembered = _eras.get(self.era_key) if self.era_key else self.era
            if remembered == LEGACY_SSE and self.legacy_transport is not None:
                self._switch_to_legacy()
            if remembered in (None, MODERN) and self._discover():
                return
            self._handshake()

    def _transport_alive(self) -> bool:
        # A handshake-era stdio server whose process ended needs a new handshake.
        return self.era == MODERN or self.channel.running

    def _remember(self, era: str) -> None:
        self.era = era
        if self.era_key:
            _eras[self.era_key] = era

    def _discover(self, version: str = protocol.LATEST, retries: int = 1) -> bool:
        message = protocol.request("server/discover", {"_meta": self._meta_for(version)})
        probe = None if self.era_key else min(PROBE_TIMEOUT, self.timeout or PROBE_TIMEOUT)
        try:
            response = self._exchange(message, version, probe)
        except LegacyProtocolError:
            return False
        except StartupFailedError:
            raise  # it never read the probe: the handshake would start it again for nothing
        except ConnectionError as exc:
            if self.era_key or exc.status is not None:
                raise
            return False  # a stdio server that ignores the probe or exits on it predates 2026-07-28
        error = response.get("error")
        if isinstance(error, dict):
            code = error.get("code")
            if code == protocol.UNSUPPORTED_PROTOCOL_VERSION:
                supported = protocol.as_object(error.get("data")).get("supported")
                chosen = self._choose(supported)
                if chosen is None:
                    raise MCPError(f"MCP server {self.name!r} speaks none of the revisions we know "
                                   f"(it supports {supported})", code=code, server=self.name)
                if chosen == protocol.LATEST:
                    if retries > 0:
                        return self._discover(chosen, retries - 1)
                    raise self._error(error, "server/discover")
                return False  # it names an older revision: the handshake negotiates that one
            if code in (protocol.HEADER_MISMATCH, protocol.MISSING_REQUIRED_CLIENT_CAPABILITY):
                raise self._error(error, "server/discover")
            return False  # "method not found", "not initialized", ...: an older server
        result = response.get("result")
        if not isinstance(result, dict):
            raise MCPError(f"MCP server {self.name!r} answered server/discover without a result", server=self.name)
        versions = result.get("supportedVersions")
        if not isinstance(versions, list) or not versions:
            return False  # not a discover result: a server that answers anything with {} predates it
        if protocol.LATEST not in versions:
            if self._choose(versions) is None:
                raise MCPError(f"MCP server {self.name!r} speaks none of the revisions we know "
                               f"({result.get('supportedVersions')})", server=self.name)
            return False
        self.protocol_version = protocol.LATEST
        self._identity(result, protocol.as_object(result.get("_meta")).get("io.modelcontextprotocol/serverInfo"))
        self._remember(MODERN)
        log.debug("MCP server %s speaks %s", self.name, protocol.LATEST)
        return True

    def _handshake(self, *, legacy_tried: bool = False) -> None:
        message = protocol.request("initialize", {
            "protocolVersion": protocol.HANDSHAKE_REVISIONS[0],
            "capabilities": self._capabilities(HANDSHAKE),
            "clientInfo": dict(protocol.CLIENT_INFO),
        })
        try:
            response = self._exchange(message, None, self.timeout)
        except LegacyProtocolError as exc:
            if self.legacy_transport is None or legacy_tried:
                raise MCPError(f"MCP server {self.name!r} speaks none of the revisions we know "
                               f"(HTTP {exc.status} to initialize)", server=self.name) from None
            self._switch_to_legacy()
            return self._handshake(legacy_tried=True)
        if "error" in response:
            raise self._error(response["error"], "initialize")
        result = protocol.as_object(response.get("result"))
        version = result.get("protocolVersion")
        if version not in protocol.HANDSHAKE_REVISIONS:
            raise MCPError(f"MCP server {self.name!r} speaks none of the revisions we know ({version!r})",
                           server=self.name)
        self.protocol_version = version
        self._identity(result)
        self.transport.notify(protocol.notification("notifications/initialized"), version=version)
        self._remember(LEGACY_SSE if self._on_legacy else HANDSHAKE)
        log.debug("MCP server %s speaks %s (handshake)", self.name, version)
        self._set_level(version)

    def _set_level(self, version: str) -> None:
        """Ask a handshake-era server for log messages at ``log_level`` and above, when it declares
        ``logging`` (MCP 2025-11-25, "Logging" > "Setting Log Level"); a refusal is only logged."""
        if self.log_level is None or "logging" not in self.capabilities:
            return
        try:
            response = self._exchange(protocol.request("logging/setLevel", {"level": self.log_level}), version,
                                      self.timeout)
        except MCPError as exc:
            log.debug("MCP server %s: logging/setLevel not delivered (%s)", self.name, type(exc).__name__)
            return
        if "error" in response:
            log.debug("MCP server %s refused logging/setLevel %s", self.name, self.log_level)

    def _exchange(self, message: dict[str, Any], version: str | None, timeout: float | None) -> dict[str, Any]:
        """One request through the transport, outside any call (connecting); an answer that is not an
        object counts as empty. A call's requests go through `request`, which passes its context."""
        return protocol.as_object(self._transport.request(message, version=version, timeout=timeout,
                                                         on_message=self._on_message))

    def _on_message_in(self, context: CallContext, incoming: dict[str, Any]) -> dict[str, Any] | None:
        """`_on_message` for a message arriving during a call of ``context``: the server's requests
        are answered with the context active (whichever thread reads them), so a question can reach
        its chat; notifications are handled in the reading thread, as they come."""
        if current_context() is context or not protocol.is_request(incoming):
            return self._on_message(incoming)
        with context.active():
            return self._on_message(incoming)

    def _identity(self, result: dict[str, Any], fallback_info: Any = None) -> None:
        """Keep what a discover or initialize result says about the server, ignoring ill-typed fields."""
        info = result.get("serverInfo")
        self.server_info: dict[str, Any] = info if isinstance(info, dict) else protocol.as_object(fallback_info)
        self.capabilities: dict[str, Any] = protocol.as_object(result.get("capabilities"))
        self.instructions: str | None = protocol.as_text(result.get("instructions"))

    def _switch_to_legacy(self) -> None:
        assert self.legacy_transport is not None
        self.transport.close()
        self.transport = self.legacy_transport()
        self.legacy_transport = None
        self._on_legacy = True

    @staticmethod
    def _choose(supported: Any) -> str | None:
        if not isinstance(supported, list):
            return None
        return next((v for v in protocol.SUPPORTED_REVISIONS if v in supported), None)

    def _capabilities(self, era: str) -> dict[str, Any]:
        """The client capabilities declared to a server of this era (``{}`` when none)."""
        return self.declared(era) if self.declared is not None else {}

    def _meta_for(self, version: str, extra: dict[str, Any] | None = None, log_level: str | None = None,
                  capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        """A message's ``_meta`` on 2026-07-28: ``extra``, then the protocol version, client info,
        ``capabilities`` (when ``None``, what ``declared`` gives for the modern era) and the wanted
        ``log_level`` (requests only). A fresh dict, shallow on purpose: the nested values are
        constants, serialized at once (`request` keeps and reuses its usual one, see ``_meta_kept``)."""
        meta = {**(extra or {}), **_BASE_META, protocol.META_PROTOCOL_VERSION: version,
                protocol.META_CLIENT_CAPABILITIES: self._capabilities(MODERN) if capabilities is None else capabilities}
        if log_level is not None:
            meta[LOG_LEVEL_META] = log_level
        return meta

    # -- requests -----------------------------------------------------------------------------

    def request(self, method: str, params: dict[str, Any] | None = None, *, headers: dict[str, str] | None = None,
                timeout: float | None = None, resend: bool = True,
                on_progress: Callable[[dict[str, Any]], None] | None = None,
                context: CallContext | None = None) -> dict[str, Any]:
        """Send one request and return its ``result`` dict.

        Args:
            method: the JSON-RPC method, e.g. ``"tools/list"``.
            params: its params (our ``_meta`` is merged into theirs on 2026-07-28).
            headers: ``Mcp-Param-*`` headers for the transport (2026-07-28 only).
            timeout: seconds, overriding the server's timeout.
            resend: whether a request whose stream broke may be sent again (new id).
            on_progress: receives each ``notifications/progress`` params dict for this request.
            context: the call this request belongs to; its ``cancel`` scope can stop it
                (default: the current call context, see ``context.current``).

        Raises:
            MCPError: a JSON-RPC error (``.code``), an unknown ``resultType``, or a stream
                that broke three times. ``ConnectionError`` when unreachable.
            InputRequiredError: the server answered with an ``InputRequiredResult`` (its
                ``input_requests`` and ``request_state`` as sent; ``requests`` is empty here:
                ``MCP.run`` turns them into questions).
        """
        # Every tool call runs through here: the usual 2026-07-28 answer (a complete result) takes
        # as few lines and calls as it can; what is rare (progress, errors, retries) is off that path.
        if self.era != MODERN:  # 2026-07-28 is stateless: nothing to check per request
            self.connect()
        if method in CAPABILITY_OF and CAPABILITY_OF[method] not in self.capabilities:
            raise not_offered(self.name, method, CAPABILITY_OF[method])
        if context is None:
            context = current_context()
        params = params or {}  # only read: what is sent is built anew below
        token = None
        if on_progress is not None:
            token = f"{self.name}-{next(self._tokens)}"
            params = {**params, "_meta": {**(params.get("_meta") or {}), "progressToken": token}}
            self._progress[token] = on_progress
        scope = context.cancel if context is not None else None
        # the server's messages during the call are answered in its context (see `_on_message_in`)
        on_message = self._on_message if context is None else partial(self._on_message_in, context)
        renegotiated = renewed = False
        attempts = 0  # streams read for this request, resumptions included; three at most
        try:
            while True:
                version = self.protocol_version
                if self.era == MODERN:
                    kept = self._meta_kept  # the last request's own _meta, and what it was built from
                    capabilities = kept[0] if self.declared_fixed and kept[0] is not False else (
                        self.declared(MODERN) if self.declared is not None else None)
                    if kept[0] is not capabilities or kept[1] != version or kept[2] != self.log_level \
                            or "_meta" in params:
                        kept = (capabilities, version, self.log_level,
                                self._meta_for(version, params.get("_meta"), self.log_level, capabilities))
                        if "_meta" not in params:  # the same dict again while these stay: it is only read
                            self._meta_kept = kept
                    body = {**params, "_meta": kept[3]}
                else:
                    body = params
                message = protocol.request(method, body or None)
                try:
                    if scope is not None:
                        scope.check()
                    try:
                        response = self._transport.request(message, version=version, timeout=timeout or self.timeout,
                                                           headers=headers if self.era == MODERN else None,
                                                           on_message=on_message)
                    except Exception:
                        if scope is not None and scope.cancelled:
                            self._cancel(message["id"], scope.reason or "cancelled")
                            raise CancelledError(f"{method} to MCP server {self.name!r} was cancelled: "
                                                 f"{scope.reason}", server=self.name) from None
                        raise
                except ServerTimeoutError:
                    self._cancel(message["id"], "timed out")
                    raise
                except SessionExpiredError:
                    if renewed:
                        raise MCPError(f"MCP server {self.name!r} ended the new session too (HTTP 404)",
                                       server=self.name) from None
                    renewed = True
                    self.era = None
                    self._handshake()
                    continue
                except StreamBrokenError as exc:
                    attempts += exc.attempts
                    if not resend or attempts >= MAX_ATTEMPTS:
                        raise StreamBrokenError(f"{exc} ({attempts} attempt{'s' if attempts > 1 else ''})",
                                                server=self.name, attempts=attempts) from None
                    continue
                result = response.get("result") if type(response) is dict else None
                if type(result) is dict and "error" not in response and result.get("resultType", "complete") == "complete":
                    return result  # the usual answer; below, errors, then `_complete` for the others
                error = protocol.as_object(response).get("error")
                if isinstance(error, dict):
                    if scope is not None and scope.cancelled:
                        # told before its stream was shut (handshake-era HTTP), the server answered with an
                        # error (the SDKs' -32800 "Request cancelled"): that is the cancellation
                        raise CancelledError(f"{method} to MCP server {self.name!r} was cancelled: {scope.reason}",
                                             server=self.name)
                    if error.get("code") == protocol.UNSUPPORTED_PROTOCOL_VERSION and self.era == MODERN \
                            and not renegotiated:
                        renegotiated = True
                        chosen = self._choose(protocol.as_object(error.get("data")).get("supported"))
                        if chosen is None:
                            raise self._error(error, method)
                        if chosen != protocol.LATEST:
                            self.era = None
                            self._handshake()
                        continue
                    raise self._error(error, method)
                return self._complete(result, method)
        finally:
            if token is not None:
                self._progress.pop(token, None)
            if self._inline_errors:
                raise self._inline_errors.pop(0)

    def _complete(self, result: Any, method: str) -> dict[str, Any]:
        if not isinstance(result, dict):
            raise MCPError(f"MCP server {self.name!r} answered {method} without a result object", server=self.name)
        kind = result.get("resultType", "complete")
        if kind == "complete":
            return result
        if kind == "input_required":
            state, requests = result.get("requestState"), result.get("inputRequests", {})
            if not isinstance(requests, dict) or not isinstance(state, (str, type(None))):
                wrong = "inputRequests is not an object" if not isinstance(requests, dict) else \
                    "requestState is not a string"
                raise MCPError(f"MCP server {self.name!r} answered {method} with a malformed InputRequiredResult: "
                               f"{wrong}", server=self.name)
            raise InputRequiredError(f"MCP server {self.name!r} needs input to finish {method}", server=self.name,
                                     method=method, input_requests=requests, request_state=state)
        if kind == "task" and method == "tools/call" and isinstance(protocol.as_object(
                self._capabilities(MODERN).get("extensions")).get(TASKS_EXTENSION), dict):
            return result  # Tasks extension declared: Calls turns it into a Task
        if kind == "task":
            raise MCPError(f"MCP server {self.name!r} answered {method} with a task, which we did not ask for",
                           server=self.name)
        raise MCPError(f"MCP server {self.name!r} answered {method} with an unknown resultType {kind!r}",
                       server=self.name)

    def _cancel(self, request_id: Any, reason: str) -> None:
        """Tell the server to stop work on a request (MCP "Cancellation"); never raises.

        Over 2026-07-28 HTTP the transport has already closed the response stream, which
        is the cancellation there; everywhere else a ``notifications/cancelled`` is sent.
        """
        if self.era == MODERN and self.channel.cancels_by_closing:
            return
        params: dict[str, Any] = {"requestId": request_id, "reason": reason}
        if self.era == MODERN:
            params["_meta"] = self._meta_for(self.protocol_version)
        try:
            self.transport.cancel(protocol.notification("notifications/cancelled", params),
                                  version=self.protocol_version)
        except Exception as exc:  # noqa: BLE001 - a failed courtesy must not hide the timeout
            log.debug("MCP server %s: cancellation not sent (%s)", self.name, type(exc).__name__)

    def list(self, method: str, key: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Every item of a paginated list (``tools/list`` -> ``"tools"``), following ``nextCursor``;
        empty, with no request, when the server's capabilities do not offer it (`llm_mcp.client.offered`)."""
        self.connect()
        missing = missing_capability(method, self.capabilities)
        if missing is not None:
            log.debug("MCP server %s offers no %s: %s not sent, the list is empty", self.name, missing, method)
            return []
        items: list[dict[str, Any]] = []
        seen: set[str] = set()
        cursor = None
        while True:
            page_params = dict(params or {})
            if cursor is not None:
                page_params["cursor"] = cursor
            result = self.request(method, page_params)
            page = result.get(key, [])
            if not isinstance(page, list):
                raise MCPError(f"MCP server {self.name!r} answered {method} without a list of {key}", server=self.name)
            items.extend(i for i in page if isinstance(i, dict))
            cursor = result.get("nextCursor")
            if cursor is not None and not isinstance(cursor, str):
                raise MCPError(f"MCP server {self.name!r} answered {method} with a nextCursor that is not a string",
                               server=self.name)
            if len(seen) >= MAX_PAGES:
                raise MCPError(f"MCP server {self.name!r} kept paging {method} past {MAX_PAGES} pages",
                               server=self.name)
            if not cursor or cursor in seen:
                return items
            seen.add(cursor)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification (2026-07-28: with our ``_meta``)."""
        self.connect()
        if self.era == MODERN:
            params = {**(params or {}), "_meta": self._meta_for(self.protocol_version, (params or {}).get("_meta"))}
        self.transport.notify(protocol.notification(method, params), version=self.protocol_version)

    def close(self) -> None:
        """End the session (DELETE on handshake-era HTTP) and stop the transport."""
        with self._lock:
            self.transport.close()
            if self.era != MODERN:
                self.era = None

    # -- messages from the server -------------------------------------------------------------

    def _on_message(self, message: dict[str, Any]) -> dict[str, Any] | None:
        method = message.get("method")
        if protocol.is_request(message):
            if method == "ping":
                return {"jsonrpc": "2.0", "id": message["id"], "result": {}}
            if method == "elicitation/create" and self.on_input_request is not None:
                return {"jsonrpc": "2.0", "id": message["id"], "result": self._answer_inline(message)}
            handler = self.request_handlers.get(method) if isinstance(method, str) else None
            if handler is not None:
                return self._answer_request(handler, message)
            log.debug("MCP server %s asked %r, which we do not support", self.name, method)
            return protocol.error_response(message["id"], protocol.METHOD_NOT_FOUND, "Method not supported")
        params = protocol.as_object(message.get("params"))
        if method == "notifications/progress":
            token = params.get("progressToken")
            callback = self._progress.get(token) if isinstance(token, (str, int)) else None
            if callback is not None:
                callback(params)
        elif method == "notifications/message":
            if wanted(params.get("level"), self.log_level):  # none unless asked for, and none below the level
                write_log(self._server_log, params)
        elif method and not any(method.startswith(p) for p in ("notifications/",)):
            log.debug("MCP server %s sent an unknown notification %r; ignored", self.name, method)
        for callback in self.on_notification:
            callback(message)
        scope = current_scope()
        if scope is not None:
            scope.poll()  # an event: the moment to notice a cancellation made elsewhere (raises CancelledError)
        return None

    def _answer_request(self, handler: Callable[[dict[str, Any]], dict[str, Any]],
                        message: dict[str, Any]) -> dict[str, Any]:
        """A server's request answered by one of `request_handlers` (see there for errors)."""
        try:
            result = handler(protocol.as_object(message.get("params")))
        except CancelledError:
            raise
        except MCPError as exc:
            if exc.code is None:
                raise
            return protocol.error_response(message["id"], exc.code, str(exc)[:500])
        except ValueError as exc:
            return protocol.error_response(message["id"], protocol.INVALID_PARAMS, str(exc)[:500])
        except Exception as exc:  # noqa: BLE001 - the server gets an error; its message may hold secrets
            log.warning("MCP server %s: answering %s failed (%s)", self.name, message.get("method"),
                        type(exc).__name__)
            return protocol.error_response(message["id"], protocol.INTERNAL_ERROR,
                                           f"the client could not answer {message.get('method')}")
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    def on_message(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """Handle one message the server sent that answers no request of ours (a notification,
        or a request whose reply is returned): what transports are given as ``on_message``."""
        return self._on_message(message)

    def cancel_request(self, request_id: Any, reason: str) -> None:
        """Tell the server to stop work on the request ``request_id`` (``notifications/cancelled``,
        unless closing its stream already did); never raises."""
        self._cancel(request_id, reason)

    def error_for(self, error: Any, method: str) -> MCPError:
        """The ``MCPError`` for a JSON-RPC error object the server answered ``method`` with."""
        return self._error(error, method)

    def _answer_inline(self, message: dict[str, Any]) -> dict[str, Any]:
        """A handshake-era ``elicitation/create`` answered now; a failure declines it and is
        raised from the request that was running."""
        assert self.on_input_request is not None
        try:
            return self.on_input_request(protocol.as_object(message.get("params")))
        except CancelledError:
            raise  # the chat was cancelled while a question was held: the call stops now
        except Exception as exc:  # noqa: BLE001 - raised from the call (request()), not from the reader
            self._inline_errors.append(exc)
            return {"action": "decline"}

    def _error(self, error: Any, method: str) -> MCPError:
        error = protocol.as_object(error)
        code = error.get("code") if isinstance(error.get("code"), int) else None
        required = protocol.as_object(protocol.as_object(protocol.as_object(error.get("data")).get(
            "requiredCapabilities")).get("extensions"))
        if code == protocol.MISSING_REQUIRED_CLIENT_CAPABILITY and required:
            names = sorted(printable(str(name))[:100] for name in required)
            return ExtensionRequiredError(
                f"MCP server {self.name!r} answered {method} with error {code}: it needs the client to declare "
                f"the extension(s) {', '.join(names)}, which this server class does not (add it to the "
                f"`extensions` setting, e.g. extensions = [\"tasks\"])", code=code, data=error.get("data"),
                server=self.name, extensions=names)
        return MCPError(f"MCP server {self.name!r} answered {method} with error {code}: "
                        f"{printable(str(error.get('message', ''))[:500])}", code=code, data=error.get("data"),
                        server=self.name)
