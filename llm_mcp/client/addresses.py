"""Which addresses a server may reach: an opt-in httpx transport for public addresses only.

The client does not check what a host name resolves to (MCP-ADDR-01): a server URL such
as ``https://mcp.example.com/mcp`` may resolve to ``127.0.0.1``, ``10.0.0.5`` or
``169.254.169.254`` (a cloud metadata service), and a site that lets its users type their
own MCP URLs would then make requests into its own network for them (server-side request
forgery). `PublicAddressesOnly` answers that threat: give it to an HTTP context
(``llm_mcp.context(transport=PublicAddressesOnly)``) and every MCP and OAuth request of the
servers built with that context connects only to public addresses.

The check is made when the connection is made, on the address actually connected to: the
name is resolved once, each address is checked (`AddressPolicy.allows`), the socket is
connected to that checked address itself (no second lookup, so a name that resolves to a
public address for a check and to a private one for the connection, "DNS rebinding", gains
nothing), and the peer address of the connected socket is checked again. TLS still
verifies the certificate against the host name.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
from collections.abc import Callable, Iterable
from typing import Any

import httpcore
import httpx

from .errors import AddressRefusedError

__all__ = ["AddressPolicy", "PublicAddressesOnly", "Resolver", "system_resolver"]

Resolver = Callable[[str, int], list[str]]
"""``resolve(host, port) -> [ip address, ...]`` in the order to try them."""


def system_resolver(host: str, port: int) -> list[str]:
    """The operating system's answer for ``host`` (``socket.getaddrinfo``), addresses in order,
    each once. Raises ``OSError`` when the name does not resolve."""
    found: list[str] = []
    for *_, address in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        ip = str(address[0])
        if ip not in found:
            found.append(ip)
    return found


NAT64 = ipaddress.ip_network("64:ff9b::/96")
"""The well-known NAT64 prefix (RFC 6052): its addresses stand for the IPv4 address in their last 32 bits."""


class AddressPolicy:
    """Decides whether an IP address may be connected to: public (globally routable) unicast
    addresses only, plus the networks in ``allow``.

        policy = AddressPolicy(allow=["10.20.0.0/16"])   # also your own MCP servers' network
        policy.allows("93.184.216.34")     # True
        policy.allows("127.0.0.1")         # False: loopback
        policy.reason("169.254.169.254")   # "link-local"

    Refused: loopback, private (RFC 1918, fc00::/7), site-local (fec0::/10), link-local (169.254/16, fe80::/10, the
    cloud metadata services), shared address space (100.64/10), unspecified, multicast,
    reserved and documentation ranges, and IPv6 addresses that embed a refused IPv4 address
    (``::ffff:127.0.0.1``, 6to4, Teredo, NAT64 ``64:ff9b::/96``).

    Raises ``TypeError`` when ``allow`` is a single string or holds something other than network
    strings, ``ValueError`` for a string that is not a network.

    Attributes:
        allow: networks allowed even though they are not public (``ipaddress`` networks).
    """

    def __init__(self, *, allow: Iterable[str] = ()):
        if isinstance(allow, (str, bytes)):
            raise TypeError(f"allow takes a list of networks such as [{allow!r}], not a string")
        allow = list(allow)
        for network in allow:
            if not isinstance(network, (str, ipaddress.IPv4Network, ipaddress.IPv6Network)):
                raise TypeError(f"allow: {network!r} ({type(network).__name__}) is not a network string "
                                "such as \"10.20.0.0/16\"")
        self.allow = [ipaddress.ip_network(network, strict=False) for network in allow]

    def reason(self, ip: str) -> str | None:
        """Why ``ip`` is refused (``"loopback"``, ``"private"``, ...), or ``None`` when it is allowed."""
        try:
            address = ipaddress.ip_address(ip.split("%", 1)[0])
        except ValueError:
            return "not an IP address"
        if any(address in network for network in self.allow):
            return None
        if isinstance(address, ipaddress.IPv6Address):
            embedded = address.ipv4_mapped or address.sixtofour or (address.teredo[1] if address.teredo else None)
            if embedded is None and address in NAT64:  # a NAT64 gateway would connect to the IPv4 inside
                embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
            if embedded is not None:
                inner = self.reason(str(embedded))
                return f"{inner} (inside an IPv6 address)" if inner else None
        labels = ("loopback", "link_local", "unspecified", "multicast", "reserved", "private")
        if isinstance(address, ipaddress.IPv6Address):
            labels += ("site_local",)  # fec0::/10: deprecated (RFC 3879), yet "global" to ipaddress
        for label in labels:
            if getattr(address, f"is_{label}"):
                return label.replace("_", "-")
        if not address.is_global:
            return "not public"
        return None

    def allows(self, ip: str) -> bool:
        """Whether a connection to ``ip`` is allowed (a decision only: nothing is connected)."""
        return self.reason(ip) is None


class _GuardedBackend(httpcore.NetworkBackend):
    """httpcore's synchronous backend, connecting only to addresses the policy allows."""

    def __init__(self, policy: AddressPolicy, resolve: Resolver):
        self.policy = policy
        self.resolve = resolve
        self.inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        try:
            addresses = self.resolve(host, port)
        except OSError as exc:
            raise httpcore.ConnectError(f"{host} does not resolve: {exc}") from None
        refused: list[str] = []
        failure: Exception | None = None
        for ip in addresses:
            reason = self.policy.reason(ip)
            if reason is not None:
                refused.append(f"{ip} ({reason})")
                continue
            try:
                stream = self.inner.connect_tcp(ip, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
                continue
            peer = stream.get_extra_info("socket").getpeername()[0]
            reason = self.policy.reason(peer)
            if reason is not None:  # cannot happen for a literal address; checked all the same
                stream.close()
                refused.append(f"{peer} ({reason})")
                continue
            return stream
        if failure is not None:
            raise failure
        raise AddressRefusedError(f"{host} resolves only to addresses this connection may not reach: "
                                  f"{', '.join(refused) or 'none'}", request_sent=False)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        raise AddressRefusedError("a Unix socket is not a public address", request_sent=False)

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


class PublicAddressesOnly(httpx.HTTPTransport):
    """An httpx transport that connects only to public IP addresses (see `AddressPolicy`).

        ctx = llm_mcp.context(transport=PublicAddressesOnly)          # one per httpx client
        ctx = llm_mcp.context(transport=lambda: PublicAddressesOnly(allow=["10.20.0.0/16"]))
        server = ctx.mcp(url=row.endpoint, name=f"user_{row.pk}")

    A refused connection raises [`AddressRefusedError`][llm_mcp.client.errors.AddressRefusedError]
    (a `ConnectionError` that `is_refusal`: retrying will not help) naming the host and the
    refused addresses; nothing was sent. Proxies are not supported (the proxy's address would be
    checked, not the server's).

    Args:
        allow: networks to allow although they are not public (``"10.20.0.0/16"``).
        resolve: ``resolve(host, port) -> [ip, ...]`` (default `system_resolver`); tests pass
            their own to control name resolution.
        verify: the TLS context (default: the client's shared one, certifi's roots).
        limits: ``httpx.Limits`` for the connection pool.
        http2: whether to offer HTTP/2.
    """

    def __init__(self, *, allow: Iterable[str] = (), resolve: Resolver = system_resolver,
                 verify: ssl.SSLContext | None = None, limits: httpx.Limits | None = None, http2: bool = False):
        from .transports.http import shared_ssl_context

        limits = limits or httpx.Limits(max_connections=100, max_keepalive_connections=20)
        super().__init__(verify=verify or shared_ssl_context(), limits=limits, http2=http2)
        self.policy = AddressPolicy(allow=allow)
        self._pool = httpcore.ConnectionPool(
            ssl_context=verify or shared_ssl_context(), max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections, keepalive_expiry=limits.keepalive_expiry,
            http1=True, http2=http2, network_backend=_GuardedBackend(self.policy, resolve))
