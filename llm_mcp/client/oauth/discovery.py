"""Finding an MCP server's authorization server, with every check the spec asks for.

    found = discover(http, "https://mcp.example.com/mcp", challenge, server_name="example")
    found.issuer, found.metadata["token_endpoint"], found.resource

MCP 2026-07-28 "Authorization / Authorization Server Discovery": the protected resource
metadata (RFC 9728) comes from the ``resource_metadata`` of the 401's ``WWW-Authenticate``,
else ``/.well-known/oauth-protected-resource/<path>``, else the root form. Its first
``authorization_servers`` entry is the issuer, whose metadata (RFC 8414 / OpenID Connect
Discovery) is tried at ``/.well-known/oauth-authorization-server/<path>``,
``/.well-known/openid-configuration/<path>`` and ``<path>/.well-known/openid-configuration``
(the last two without a path). A 4xx at a well-known URL means "not here": the next form
is tried (case C20). Servers of 2025-03-26 without protected resource metadata have their
authorization server at the MCP server's origin, or, without metadata, at the default
endpoints ``/authorize``, ``/token`` and ``/register``.

Refused with [`llm_mcp.MCPError`][llm_mcp.client.errors.MCPError]: metadata whose ``issuer`` is not exactly the one its
URL was built from, protected resource metadata naming another resource, endpoints with a
scheme other than https (http only on loopback). Redirects are never followed.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from ..errors import MCPError, from_httpx
from ..hosts import is_loopback
from . import bounded

__all__ = ["Discovery", "authorization_server_urls", "check_endpoint", "discover", "discover_authorization_server",
           "protected_resource_urls", "resource_matches"]

log = logging.getLogger("llm_mcp.client.oauth")

MAX_METADATA_BYTES = 256 * 1024
"""Metadata documents larger than this are refused (bytes)."""


@dataclass
class Discovery:
    """What discovery found for one MCP server.

        found.metadata["authorization_endpoint"]

    Attributes:
        resource: the resource identifier to send as ``resource`` (RFC 8707): the protected
            resource metadata's ``resource`` exactly as published, else the MCP server's URL.
        protected_resource: the protected resource metadata (dict; ``{}`` for a 2025-03-26
            server without it).
        issuer: the authorization server's issuer identifier.
        metadata: its metadata (dict); for the 2025-03-26 fallback, the default endpoints.
        challenge: the auth-params of the 401's ``WWW-Authenticate`` (lower-cased keys).
        fallback: ``True`` when no metadata exists and the default endpoints are used.
    """

    resource: str
    protected_resource: dict[str, Any]
    issuer: str
    metadata: dict[str, Any]
    challenge: dict[str, str] = field(default_factory=dict)
    fallback: bool = False

    @property
    def token_endpoint(self) -> str:
        """The authorization server's ``token_endpoint`` URL (RFC 8414 §2), ``""`` when it gives none."""
        return str(self.metadata.get("token_endpoint") or "")

    @property
    def authorization_endpoint(self) -> str:
        """The ``authorization_endpoint`` URL (RFC 8414 §2), ``""`` when it gives none."""
        return str(self.metadata.get("authorization_endpoint") or "")

    @property
    def registration_endpoint(self) -> str | None:
        """The dynamic client registration endpoint URL (RFC 8414 §2, RFC 7591), or ``None``."""
        value = self.metadata.get("registration_endpoint")
        return str(value) if value else None

    @property
    def scopes_supported(self) -> list[str]:
        """The protected resource's ``scopes_supported`` (a list, possibly empty)."""
        value = self.protected_resource.get("scopes_supported")
        return [s for s in value if isinstance(s, str)] if isinstance(value, list) else []



def check_endpoint(url: Any, what: str, server_name: str, *, local: bool = True) -> str:
    """Return ``url`` if it is an absolute https URL (http only to a loopback host); raise
    ``MCPError`` naming ``what`` otherwise (``javascript:``, ``data:``, plain http, relative).

    ``local`` says whether the MCP server that led us here is itself on loopback. When it is
    not, a loopback ``url`` is refused too: a remote server must not aim this app's requests
    (which may carry its client secret) at services on its own machine."""
    if not isinstance(url, str) or not url:
        raise MCPError(f"MCP server {server_name!r}: the {what} is not a URL", server=server_name)
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise MCPError(f"MCP server {server_name!r}: the {what} is not an absolute http(s) URL "
                       f"(scheme {parts.scheme!r}); refused", server=server_name)
    loopback = is_loopback(parts.hostname)
    if loopback and not local:
        raise MCPError(f"MCP server {server_name!r}: the {what} is on this machine ({parts.hostname}) but the MCP "
                       "server is not; refused", server=server_name)
    if parts.scheme == "http" and not loopback:
        raise MCPError(f"MCP server {server_name!r}: the {what} ({parts.scheme}://{parts.hostname}) is not https; "
                       "refused", server=server_name)
    if parts.fragment:
        raise MCPError(f"MCP server {server_name!r}: the {what} has a fragment; refused", server=server_name)
    return url


def _split(url: str) -> tuple[str, str]:
    """``(origin, path without a trailing slash)`` of a URL."""
    parts = urlsplit(url)
    origin = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    return origin, parts.path.rstrip("/")


def protected_resource_urls(server_url: str, challenge: dict[str, str]) -> list[str]:
    """Where to look for protected resource metadata, in order (RFC 9728 §3, §5)."""
    urls = []
    if challenge.get("resource_metadata"):
        urls.append(challenge["resource_metadata"])
    origin, path = _split(server_url)
    if path:
        urls.append(f"{origin}/.well-known/oauth-protected-resource{path}")
    urls.append(f"{origin}/.well-known/oauth-protected-resource")
    return list(dict.fromkeys(urls))


def authorization_server_urls(issuer: str) -> list[str]:
    """Where to look for an issuer's metadata, in the spec's order (RFC 8414 §3.1, OIDC Discovery)."""
    origin, path = _split(issuer)
    if path:
        return [f"{origin}/.well-known/oauth-authorization-server{path}",
                f"{origin}/.well-known/openid-configuration{path}",
                f"{origin}{path}/.well-known/openid-configuration"]
    return [f"{origin}/.well-known/oauth-authorization-server", f"{origin}/.well-known/openid-configuration"]


def resource_matches(resource: str, server_url: str) -> bool:
    """Whether a protected resource identifier covers the MCP server's URL: same scheme, host
    and port, and its path is the server's path or a parent of it (RFC 9728 §3.3, §7.3)."""
    try:
        ours, theirs = urlsplit(server_url), urlsplit(resource)
        if (ours.scheme.lower(), (ours.hostname or "").lower(), ours.port) != \
                (theirs.scheme.lower(), (theirs.hostname or "").lower(), theirs.port):
            return False
    except ValueError:
        return False
    if theirs.query or theirs.fragment:
        return False
    mine, prefix = ours.path.rstrip("/"), theirs.path.rstrip("/")
    return not prefix or mine == prefix or mine.startswith(prefix + "/")


def _fetch_json(http: httpx.Client, url: str, server_name: str) -> dict[str, Any] | None:
    """GET a metadata document: the JSON object, or ``None`` when it is not there (any 3xx,
    4xx or 5xx, a body that is not a JSON object, or one over `MAX_METADATA_BYTES`).
    Redirects are not followed; the whole answer is read within the client's timeout."""
    try:
        response = bounded.send(http, "GET", url, max_bytes=MAX_METADATA_BYTES, headers={"Accept": "application/json"})
    except bounded.TooLarge:
        log.warning("MCP server %s: metadata at %s is too large; ignored", server_name, _origin(url))
        return None
    except httpx.HTTPError as exc:
        raise from_httpx(exc, server=server_name, message=f"MCP server {server_name!r}: {_origin(url)} could not be "
                         f"reached for metadata ({type(exc).__name__})", timeout_message=f"MCP server "
                         f"{server_name!r}: {_origin(url)} did not answer a metadata request in time") from None
    if response.status_code != 200:
        if 300 <= response.status_code < 400:
            log.warning("MCP server %s: %s answered a metadata request with a redirect; not followed", server_name,
                        _origin(url))
        return None
    try:
        body = json.loads(response.content)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
        return None
    return body if isinstance(body, dict) else None


def _cut(value: Any, limit: int = 200) -> Any:
    """A foreign value for a message: strings longer than ``limit`` characters are cut."""
    return value[:limit] + "..." if isinstance(value, str) and len(value) > limit else value


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def discover(http: httpx.Client, server_url: str, challenge: dict[str, str], *, server_name: str) -> Discovery:
    """Find the protected resource metadata and the authorization server of an MCP server.

    Args:
        http: the client to fetch metadata with (it must not follow redirects).
        server_url: the MCP endpoint URL.
        challenge: the auth-params of its 401's ``WWW-Authenticate`` (``{}`` when none).
        server_name: for messages.

    Raises ``MCPError`` for the refusals in the module docstring (and when the protected
    resource metadata names no authorization server), ``ConnectionError`` when a metadata
    host cannot be reached.
    """
    prm: dict[str, Any] | None = None
    local = is_loopback(urlsplit(server_url).hostname)
    for url in protected_resource_urls(server_url, challenge):
        if url == challenge.get("resource_metadata"):
            try:
                check_endpoint(url, "resource_metadata URL", server_name, local=local)
            except MCPError:
                log.warning("MCP server %s named a resource_metadata URL that is not https, or is on this machine "
                            "while the server is not; ignored", server_name)
                continue
        prm = _fetch_json(http, url, server_name)
        if prm is not None:
            break
    if prm is None:  # 2025-03-26: the authorization server lives at the MCP server's origin
        origin, _ = _split(server_url)
        found = discover_authorization_server(http, origin, server_name=server_name, allow_fallback=True, local=local)
        found.resource = server_url
        found.challenge = dict(challenge)
        return found
    resource = prm.get("resource")
    if not isinstance(resource, str) or not resource_matches(resource, server_url):
        raise MCPError(f"MCP server {server_name!r}: its protected resource metadata names another resource "
                       f"({_cut(resource)!r}); refused", server=server_name)
    servers = prm.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
        raise MCPError(f"MCP server {server_name!r}: its protected resource metadata names no authorization server",
                       server=server_name)
    issuer = check_endpoint(servers[0], "authorization server", server_name, local=local)
    found = discover_authorization_server(http, issuer, server_name=server_name, local=local)
    found.resource = resource
    found.protected_resource = prm
    found.challenge = dict(challenge)
    return found


def discover_authorization_server(http: httpx.Client, issuer: str, *, server_name: str,
                                  allow_fallback: bool = False, local: bool = True) -> Discovery:
    """The metadata of the authorization server ``issuer`` (RFC 8414), checked.

    With ``allow_fallback`` (2025-03-26 servers), no metadata at all means the default
    endpoints under ``issuer``. Raises ``MCPError`` when no metadata is found (without the
    fallback), when its ``issuer`` differs from ``issuer`` in any character, or when an
    endpoint is not https (http only on loopback), and, unless ``local``, when the issuer or
    an endpoint is on loopback (see `check_endpoint`).
    """
    check_endpoint(issuer, "authorization server", server_name, local=local)
    for url in authorization_server_urls(issuer):
        metadata = _fetch_json(http, url, server_name)
        if metadata is None:
            continue
        if metadata.get("issuer") != issuer:
            raise MCPError(f"MCP server {server_name!r}: the authorization server metadata at {url} names the issuer "
                           f"{_cut(metadata.get('issuer'))!r}, not {issuer!r}; refused (RFC 8414 §3.3)", server=server_name)
        check_metadata(metadata, server_name, local=local)
        return Discovery(resource="", protected_resource={}, issuer=issuer, metadata=metadata)
    if not allow_fallback:
        raise MCPError(f"MCP server {server_name!r}: the authorization server {issuer} publishes no metadata",
                       server=server_name)
    origin, _ = _split(issuer)
    metadata = {"issuer": issuer, "authorization_endpoint": f"{origin}/authorize", "token_endpoint": f"{origin}/token",
                "registration_endpoint": f"{origin}/register", "code_challenge_methods_supported": ["S256"],
                "response_types_supported": ["code"]}
    return Discovery(resource="", protected_resource={}, issuer=issuer, metadata=metadata, fallback=True)


def check_metadata(metadata: dict[str, Any], server_name: str, *, local: bool = True) -> None:
    """Refuse authorization server metadata with an endpoint that is not https (http on
    loopback only), has another scheme (``javascript:``), or, unless ``local``, is on
    loopback; raises ``MCPError``."""
    for key, value in metadata.items():
        if key.endswith("_endpoint") or key in ("jwks_uri",):
            if value is None:
                continue
            check_endpoint(value, f"authorization server's {key}", server_name, local=local)
    if not metadata.get("token_endpoint"):
        raise MCPError(f"MCP server {server_name!r}: the authorization server metadata has no token_endpoint",
                       server=server_name)


def require_pkce(found: Discovery, server_name: str) -> None:
    """Refuse an authorization server that does not advertise PKCE ``S256`` (MCP 2026-07-28,
    "Authorization Code Protection"); raises ``MCPError``."""
    methods = found.metadata.get("code_challenge_methods_supported")
    if not isinstance(methods, list) or "S256" not in methods:
        raise MCPError(f"MCP server {server_name!r}: its authorization server {found.issuer} does not advertise PKCE "
                       "S256 (code_challenge_methods_supported); refused", server=server_name)
    if not found.authorization_endpoint:
        raise MCPError(f"MCP server {server_name!r}: its authorization server {found.issuer} has no "
                       "authorization_endpoint", server=server_name)
