"""HTTP contexts: the httpx settings one group of servers connects with.

    ctx = llm_mcp.context(transport=PublicAddressesOnly)            # MCP-ADDR-02
    server = ctx.mcp(url=row.endpoint, name=f"user_{row.pk}", oauth={"owner": row})
    linear = Linear(user=request.user, context=ctx)

Every MCP request of those servers (Streamable HTTP and the 2024-11-05 HTTP+SSE transport)
and every OAuth request their authorization makes (metadata discovery, registration, token
and refresh requests) goes through an ``httpx.Client`` the context builds (MCP-ADDR-03).
Servers built without a context, and chats' model providers, keep the global settings
(MCP-ADDR-04). Redirects are never followed, whatever the context.
"""

from __future__ import annotations

import functools
import threading
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    import ssl

    import httpx

    from .server.base import MCP

__all__ = ["HTTPContext", "context"]


class HTTPContext:
    """The httpx settings of a group of servers. Build one with `context`.

    Attributes:
        transport: an ``httpx.BaseTransport`` shared by every client of the context, a
            callable (such as a transport class) returning a new one per client, or ``None``.
        proxy: a proxy URL (or ``httpx.Proxy``) for every request, or ``None``.
        mounts: httpx ``mounts`` (URL pattern -> transport), or ``None``.
        verify: a TLS context (or a CA bundle path, or ``False``), or ``None`` for the
            client's shared TLS context.
        cert: a client certificate, as httpx takes it, or ``None``.
        limits: ``httpx.Limits`` for each client's connection pool, or ``None``.
        trust_env: whether httpx reads proxy and TLS settings from the environment.
    """

    def __init__(self, *, transport: httpx.BaseTransport | Callable[[], httpx.BaseTransport] | None = None,
                 proxy: Any = None, mounts: dict[str, httpx.BaseTransport | None] | None = None,
                 verify: ssl.SSLContext | str | bool | None = None, cert: Any = None,
                 limits: httpx.Limits | None = None, trust_env: bool = True):
        if transport is not None and proxy is not None:
            raise ValueError("context(): give a transport or a proxy, not both (httpx ignores the proxy when a "
                             "transport is given)")
        ignored = [name for name, value in (("verify", verify), ("cert", cert), ("limits", limits)) if value is not None]
        if transport is not None and ignored:
            raise ValueError(f"context(): httpx ignores {', '.join(ignored)} when a transport is given; give "
                             f"{', '.join(ignored)} to the transport itself (PublicAddressesOnly(verify=..., "
                             "limits=...) in a lambda)")
        if transport is not None and not (_is_transport(transport) or callable(transport)):
            raise TypeError(f"context(transport=...) takes an httpx transport or a callable returning one, not "
                            f"{type(transport).__name__}")
        _check_types(proxy=proxy, mounts=mounts, verify=verify, cert=cert, limits=limits, trust_env=trust_env)
        self.transport = transport
        self.proxy = proxy
        self.mounts = mounts
        self.verify = verify
        self.cert = cert
        self.limits = limits
        self.trust_env = trust_env
        self._lock = threading.Lock()

    def client(self, *, timeout: float | httpx.Timeout) -> httpx.Client:
        """A new ``httpx.Client`` with this context's settings, never following redirects.
        Closing it leaves a shared ``transport`` open (the context owns that one)."""
        import httpx

        from .transports.http import shared_ssl_context

        options: dict[str, Any] = {"follow_redirects": False, "timeout": timeout, "trust_env": self.trust_env,
                                   "verify": shared_ssl_context() if self.verify is None else self.verify}
        if self.cert is not None:
            options["cert"] = self.cert
        if self.limits is not None:
            options["limits"] = self.limits
        if self.proxy is not None:
            options["proxy"] = self.proxy
        if self.mounts is not None:
            options["mounts"] = self.mounts
        if _is_transport(self.transport):
            options["transport"] = _shared_class()(self.transport)
        elif self.transport is not None:
            built = self.transport()
            if not isinstance(built, httpx.BaseTransport):
                raise TypeError(f"context(transport=...) returned {type(built).__name__}, not an httpx transport")
            options["transport"] = built
        return httpx.Client(**options)

    def mcp(self, **options: Any) -> MCP:
        """``llm_mcp.mcp(**options)`` connecting through this context."""
        from .server.base import mcp

        return mcp(context=self, **options)

    def close(self) -> None:
        """Close a shared ``transport`` (clients built since close it no more)."""
        if _is_transport(self.transport):
            self.transport.close()

    def __repr__(self) -> str:
        shown = {k: v for k, v in (("transport", self.transport), ("proxy", "..." if self.proxy else None),
                                   ("limits", self.limits)) if v is not None}
        return f"<HTTPContext {shown}>"


def _check_types(**settings: Any) -> None:
    """Refuse a setting of the wrong type now, rather than as an AttributeError from inside httpx
    on the first request. Raises ``TypeError`` naming the setting."""
    import ssl

    import httpx

    accepted: dict[str, tuple[tuple[type, ...], str]] = {
        "proxy": ((str, httpx.Proxy, httpx.URL), "a proxy URL or an httpx.Proxy"),
        "mounts": ((dict,), "a dict of URL pattern -> httpx transport"),
        "verify": ((ssl.SSLContext, str, bool), "an ssl.SSLContext, a CA bundle path or a bool"),
        "cert": ((str, tuple), "a certificate path or a (cert, key[, password]) tuple"),
        "limits": ((httpx.Limits,), "an httpx.Limits"),
        "trust_env": ((bool,), "a bool"),
    }
    for name, value in settings.items():
        types, wanted = accepted[name]
        if value is not None and not isinstance(value, types):
            raise TypeError(f"context({name}=...) takes {wanted}, not {type(value).__name__}")


def _is_transport(value: Any) -> bool:
    """Whether ``value`` is an httpx transport (httpx is imported only to check one)."""
    if value is None or isinstance(value, type):
        return False
    import httpx

    return isinstance(value, httpx.BaseTransport)


@functools.cache
def _shared_class() -> type:
    """A context's shared transport as one client sees it: closing the client leaves it open.
    Built on first use, so that importing this module loads no httpx."""
    import httpx

    class Shared(httpx.BaseTransport):
        def __init__(self, inner: httpx.BaseTransport):
            self.inner = inner

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            return self.inner.handle_request(request)

        def close(self) -> None:
            pass

    return Shared


def context(**settings: Any) -> HTTPContext:
    """An `HTTPContext`: the httpx settings (``transport``, ``proxy``, ``mounts``, ``verify``,
    ``cert``, ``limits``, ``trust_env``) of the servers built with it (``ctx.mcp(url=...)``,
    ``MyServer(..., context=ctx)``). Raises ``TypeError`` for an unknown keyword or a transport
    of the wrong type, ``ValueError`` for a transport together with a proxy, ``verify``, ``cert``
    or ``limits`` (httpx would ignore those: they belong to the transport)."""
    return HTTPContext(**settings)
