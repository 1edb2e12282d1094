"""How a server is reached: `Connection`, a collaborator of ``llm_mcp.MCP``.

It evaluates the connection settings (``url``, ``command``, ``env``, ``directory``,
``transport``, ``timeout``, ``headers``, ``bearer_token``) when they are needed and builds
the protocol [`Client`][llm_mcp.Client] on first use: Streamable HTTP (falling
back to HTTP+SSE) for a ``url``, a process for a ``command``, or the custom ``transport``.
``headers`` and ``bearer_token`` are evaluated per request, once per call: the requests of
one call (question rounds, a retry) and its outage check share one evaluation.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from typing import TYPE_CHECKING, Any, Callable

from .. import context
from ..param_headers import HEADER_TOKEN
from ..session import Client
from .settings import check_url

if TYPE_CHECKING:
    from ..context import CallContext
    from ..httpcontext import HTTPContext
    from ..transports.base import Transport
    from .auth import Authorization
    from .settings import ServerSettings

__all__ = ["DEFAULT_TIMEOUT", "Connection"]

DEFAULT_TIMEOUT = 60.0
"""Seconds a request may take when a server sets no ``timeout``."""

_FIELD_VALUE = re.compile(r"^[\t\x20-\x7e]*$")


def _header_name(name: Any, setting: str) -> str:
    if not isinstance(name, str) or not HEADER_TOKEN.match(name):
        raise ValueError(f"{setting}: {name!r} is not a valid HTTP header name")
    return name


def _header_text(value: Any, setting: str) -> str:
    text = str(value)
    if not _FIELD_VALUE.match(text):
        raise ValueError(f"{setting} has characters an HTTP header cannot carry (line breaks or non-ASCII)")
    return text


class Connection:
    """The connection settings of one server and its protocol client.

    Attributes:
        settings: the server's settings.
        auth: the server's `Authorization` (its flow goes
            to the HTTP transports).
        name: returns the server's name.
        declared: returns the client capabilities for an era (``"modern"``, ``"handshake"``).
        on_client: runs once with the client just built (questions wire themselves in).
        headers: returns the HTTP headers evaluated now (the server's ``http_headers``, which a
            subclass may extend), see `request_headers`.
        process_spec: returns ``(argv, env)`` for a process start (the server's ``process_spec``).
    """

    def __init__(self, settings: ServerSettings, auth: Authorization, *, name: Callable[[], str],
                 declared: Callable[[str], dict[str, Any]], on_client: Callable[[Client], None],
                 headers: Callable[[], dict[str, str]], process_spec: Callable[[], tuple[list[str], dict[str, str]]],
                 http_context: HTTPContext | None = None):
        self.settings = settings
        self.http_context = http_context
        self.auth = auth
        self._headers = headers
        self._process_spec = process_spec
        self._name = name
        self._declared = declared
        self._on_client = on_client
        self._lock = threading.RLock()

    client: Client
    """The protocol client, built on first use (no I/O until a request): see `__getattr__`."""

    def __getattr__(self, name: str) -> Any:
        # ``client`` not built yet (or forgotten): build it. Once built it is a plain attribute,
        # read on every call without a property's Python frame.
        if name != "client":
            raise AttributeError(f"'Connection' object has no attribute {name!r}")
        with self._lock:
            client = self.__dict__.get("client")
            if client is None:
                client = self._build()
                self._on_client(client)  # wired before other threads can see it (they read it without the lock)
                self.client = client
            return client

    @property
    def built(self) -> bool:
        """Whether the client was built (nothing is built, nor contacted, before the first use)."""
        return "client" in self.__dict__

    def forget(self) -> None:
        """Drop the client without closing it: in a forked child, its connection (sockets, a
        stdio process's pipes) is the parent's. The next use builds a new one."""
        with self._lock:
            self.__dict__.pop("client", None)

    def close(self) -> None:
        """Close the client (the next request reconnects)."""
        with self._lock:
            client = self.__dict__.get("client")
            if client is not None:
                client.close()

    @functools.cached_property
    def fixed_address(self) -> tuple[str, Any] | None:
        """``("url", url)`` or ``("command", argv tuple)`` when the server is reached at an
        address written out as a literal, the same for every object of its class; ``None`` for
        a computed ``url``/``command`` (a callable or a method name) or a ``transport``. Read
        once per server object: declared values do not change."""
        settings = self.settings
        if settings.option("transport") is not None:
            return None
        for setting in ("url", "command"):
            value = settings.option(setting)
            if value is not None:
                if callable(value) or settings.names_method(value):
                    return None
                return setting, value if isinstance(value, str) else tuple(value)
        return None

    # -- settings evaluated ---------------------------------------------------------------------

    def endpoint(self) -> str:
        """The ``url`` setting evaluated now and checked (see `check_url`)."""
        return check_url(self.settings.value("url"), allow_http=bool(self.settings.option("allow_http")))

    def timeout(self) -> float:
        """Seconds a request may take: the ``timeout`` setting, else `DEFAULT_TIMEOUT`."""
        return float(self.settings.value("timeout") or DEFAULT_TIMEOUT)

    def http_headers(self) -> dict[str, str]:
        """The headers sent with every HTTP request: ``headers`` then ``Authorization``, evaluated now.

        Raises ``ValueError`` naming the setting (never the value) for a header name that
        is not an HTTP token, or a value with line breaks or characters outside ASCII.
        """
        settings = self.settings
        headers = settings.value("headers") or {}
        if not isinstance(headers, dict):
            raise ValueError(f"{self._name()}: headers must be a dict, not {type(headers).__name__}")
        result = {}
        for key, raw in headers.items():
            value = settings.evaluate(f"headers[{key!r}]", raw)
            if value is not None:
                result[_header_name(key, "headers")] = _header_text(value, f"headers[{key!r}]")
        token = settings.value("bearer_token")
        if token:
            result["Authorization"] = "Bearer " + _header_text(token, "bearer_token")
        return result

    def request_headers(self, call: CallContext | None = None) -> dict[str, str]:
        """The server's headers once per call (``call``, default: the current call context,
        remembers them), evaluated afresh outside a call (a listing). What the transports send."""
        call = call or context.current()
        if call is None:
            return self._headers()
        return dict(call.remember(("headers", id(self)), self._headers))

    def env_values(self) -> dict[str, Any]:
        """The ``env`` setting with every value evaluated now; ``None`` values left out.

        Raises ``ValueError`` when ``env`` is not a dict."""
        env = self.settings.value("env") or {}
        if not isinstance(env, dict):
            raise ValueError(f"{self._name()}: env must be a dict, not {type(env).__name__}")
        values = {k: self.settings.evaluate(f"env[{k!r}]", v) for k, v in env.items()}
        return {k: v for k, v in values.items() if v is not None}

    def process_spec(self) -> tuple[list[str], dict[str, str]]:
        """``(argv, env)`` for a stdio process, evaluated now (at each process start)."""
        from ..transports.stdio import child_environment

        command = self.settings.value("command")
        argv = command.split() if isinstance(command, str) else [str(part) for part in command or ()]
        if not argv:
            raise ValueError(f"{self._name()}: command is empty")
        return argv, child_environment(self.env_values())

    # -- building the client ----------------------------------------------------------------------

    def _build(self) -> Client:
        name, settings = self._name(), self.settings
        timeout = self.timeout()
        log_level = settings.option("log_level")
        if settings.option("transport") is not None:
            transport: Transport = settings.value("transport")
            return Client(transport, name=name, timeout=timeout, declared=self._declared, log_level=log_level)
        if settings.option("url") is not None:
            from ..transports.http import HTTPTransport
            from ..transports.sse import SSETransport

            url = self.endpoint()
            auth = self.auth.flow
            ctx = self.http_context
            http = HTTPTransport(url, name=name, headers=self.request_headers, timeout=timeout, auth=auth,
                                 http_context=ctx)
            return Client(http, name=name, timeout=timeout, era_key=url, declared=self._declared, log_level=log_level,
                          legacy_transport=lambda: SSETransport(url, name=name, headers=self.request_headers,
                                                                timeout=timeout, auth=auth, http_context=ctx))
        from ..transports.stdio import StdioTransport

        directory = settings.value("directory")
        if directory and not os.path.isdir(directory):
            raise ValueError(f"{name}: directory {str(directory)!r} does not exist")
        stdio = StdioTransport(self._process_spec, name=name, directory=str(directory) if directory else None,
                               timeout=timeout)
        return Client(stdio, name=name, timeout=timeout, declared=self._declared, log_level=log_level)
