"""Tokens without a user: client credentials, a workload's assertion, enterprise single sign-on.

    settings = server.oauth_settings()        # evaluated now: a rotating assertion is read again
    token = fetch_token(settings, metadata, resource="https://mcp.example.com/mcp", scopes=["read"],
                        http=http, server_name="reports")

No user signs in and nothing is redirected. The flow calls `fetch_token` when the MCP
server answers 401, and again before the token expires; each call evaluates nothing itself,
so the caller passes settings evaluated for this request (a callable ``assertion`` or
``id_token`` is then read again for every token).

- ``grant="client_credentials"``: OAuth 2.1 §4.2, authenticated with the secret (basic or
  post, as the server's metadata allows) or a signed assertion (``private_key``); extension
  ``io.modelcontextprotocol/oauth-client-credentials``.
- ``assertion``: the JWT bearer grant (RFC 7523 §2.1) with the workload's token, no client
  authentication unless a ``client_id`` is given (SEP-1933, workload identity federation).
- ``identity_provider``: enterprise-managed authorization (extension
  ``io.modelcontextprotocol/enterprise-managed-authorization``): an RFC 8693 token exchange
  of the user's ID token for an ID-JAG at the identity provider, then the JWT bearer grant
  with that ID-JAG at the MCP server's authorization server.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import httpx

from llm_mcp.client import state
from llm_mcp.client.errors import MCPError
from llm_mcp.client.oauth.discovery import discover_authorization_server
from llm_mcp.client.oauth.tokens import ClientAuth, choose_auth_method, request_token
from llm_mcp.client.transports.http import shared_ssl_context

if TYPE_CHECKING:
    from llm_mcp.client.oauth.dpop import DPoPKey
    from llm_mcp.client.oauth.settings import OAuthSettings

__all__ = [
    "CLIENT_CREDENTIALS_EXTENSION",
    "ENTERPRISE_EXTENSION",
    "ID_JAG",
    "ID_TOKEN",
    "JWT_BEARER",
    "TOKEN_EXCHANGE",
    "extensions_for",
    "fetch_token",
    "identity_provider_metadata",
]

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
"""``grant_type`` of the JWT bearer grant (RFC 7523 §2.1)."""

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
"""``grant_type`` of a token exchange (RFC 8693 §2.1)."""

ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
"""The token type of an Identity Assertion JWT Authorization Grant."""

ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
"""The token type of an OpenID Connect ID token (RFC 8693 §3)."""

CLIENT_CREDENTIALS_EXTENSION = "io.modelcontextprotocol/oauth-client-credentials"
ENTERPRISE_EXTENSION = "io.modelcontextprotocol/enterprise-managed-authorization"

IDP_METADATA_TTL = 3600
"""Seconds an identity provider's metadata is reused before it is fetched again."""

_idp_metadata = state.idp_metadata
_idp_lock = threading.Lock()


def extensions_for(oauth: Mapping[str, Any] | None,
                   evaluate: Callable[[str, Any], Any] | None = None) -> dict[str, dict[str, Any]]:
    """The MCP extensions a server's ``oauth`` setting uses.

        extensions_for({"grant": "client_credentials", "client_id": "reports"})
        # {"io.modelcontextprotocol/oauth-client-credentials": {}}

    The result is the ``extensions`` capability map
    (MCP ``ClientCapabilities.extensions``): ``grant="client_credentials"`` -> the OAuth client
    credentials extension, ``identity_provider`` -> enterprise-managed authorization. Only a
    ``grant`` given as a callable or method name is evaluated (with ``evaluate(key, value)``)."""
    if not isinstance(oauth, Mapping):
        return {}
    declared: dict[str, dict[str, Any]] = {}
    grant = oauth.get("grant")
    if grant is not None and not isinstance(grant, str) and evaluate is not None:
        grant = evaluate("grant", grant)
    elif isinstance(grant, str) and grant != "client_credentials" and evaluate is not None:
        grant = evaluate("grant", grant)  # the name of a method returning the grant
    if grant == "client_credentials":
        declared[CLIENT_CREDENTIALS_EXTENSION] = {}
    if oauth.get("identity_provider") is not None:
        declared[ENTERPRISE_EXTENSION] = {}
    return declared


def _client(client_id: str | None, client_secret: str | None = None, private_key: Any = None) -> ClientAuth | None:
    if client_id is None:
        return None
    return ClientAuth(client_id=client_id, client_secret=client_secret, private_key=private_key)


def _scope_and_resource(form: dict[str, str], resource: str | None, scopes: list[str] | None) -> dict[str, str]:
    if resource:
        form["resource"] = resource
    if scopes:
        form["scope"] = " ".join(scopes)
    return form


def _outer_request(settings: OAuthSettings, metadata: Mapping[str, Any], form: dict[str, str], *,
                   http: httpx.Client | None, dpop: DPoPKey | None, server_name: str | None) -> dict[str, Any]:
    """A token request at the MCP server's authorization server, authenticated as the settings'
    client (when there is one) the way its metadata allows. Enterprise-managed authorization
    without a pre-registered client identifies the app by its client ID metadata document when
    one is configured and the authorization server supports them (the extension's §5)."""
    client = _client(settings.client_id, settings.client_secret, settings.private_key)
    if client is None and settings.identity_provider is not None \
            and metadata.get("client_id_metadata_document_supported") is True:
        from llm_mcp.client.config import config

        if config.client_id:
            client = ClientAuth(client_id=config.client_id)
    try:
        method = choose_auth_method(client, metadata.get("token_endpoint_auth_methods_supported"))
    except ValueError as error:
        raise MCPError(f"{server_name or 'authorization server'}: {error}", server=server_name) from None
    return request_token(http, _token_endpoint(metadata, server_name), form, client=client, auth_method=method,
                         dpop=dpop, server_name=server_name, issuer=metadata.get("issuer"),
                         signing_algorithms=metadata.get("token_endpoint_auth_signing_alg_values_supported"))


def _token_endpoint(metadata: Mapping[str, Any], server_name: str | None) -> str:
    endpoint = metadata.get("token_endpoint")
    if not isinstance(endpoint, str) or not endpoint:
        raise MCPError(f"{server_name or 'authorization server'}: the authorization server metadata has no "
                       "token_endpoint", server=server_name)
    return endpoint


def identity_provider_metadata(http: httpx.Client | None, issuer: str, *, server_name: str | None = None) -> dict[str, Any]:
    """An identity provider's metadata (RFC 8414 / OpenID Connect Discovery, from its issuer,
    with the issuer checked), reused for `IDP_METADATA_TTL` seconds.

        identity_provider_metadata(http, "https://acme.okta.com")["token_endpoint"]

    Raises ``llm_mcp.MCPError`` when no metadata is found or it names another issuer."""
    with _idp_lock:
        cached = _idp_metadata.get(issuer)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
    name = server_name or "identity provider"
    if http is None:
        with httpx.Client(verify=shared_ssl_context(), follow_redirects=False, timeout=30.0) as own:
            metadata = discover_authorization_server(own, issuer, server_name=name).metadata
    else:
        metadata = discover_authorization_server(http, issuer, server_name=name).metadata
    with _idp_lock:
        _idp_metadata[issuer] = (time.monotonic() + IDP_METADATA_TTL, metadata)
    return metadata


def _id_jag(settings: OAuthSettings, metadata: Mapping[str, Any], *, resource: str | None, scopes: list[str] | None,
            http: httpx.Client | None, server_name: str | None) -> str:
    """Step 1 of enterprise-managed authorization: the user's ID token exchanged at the identity
    provider for an ID-JAG addressed to the MCP server's authorization server."""
    provider = settings.identity_provider or {}
    id_token = provider.get("id_token")
    if not isinstance(id_token, str) or not id_token:
        raise ValueError("oauth identity_provider id_token must evaluate to a non-empty string")
    issuer = provider.get("issuer")
    if not isinstance(issuer, str) or not issuer:
        raise ValueError("oauth identity_provider issuer must evaluate to a non-empty string")
    audience = metadata.get("issuer")
    if not isinstance(audience, str) or not audience:
        raise MCPError(f"{server_name or 'authorization server'}: the authorization server metadata has no issuer",
                       server=server_name)
    idp = identity_provider_metadata(http, issuer, server_name=server_name)
    client = _client(provider.get("client_id"), provider.get("client_secret"))
    try:
        method = choose_auth_method(client, idp.get("token_endpoint_auth_methods_supported"))
    except ValueError as error:
        raise MCPError(f"identity provider {issuer}: {error}", server=server_name) from None
    form = _scope_and_resource({
        "grant_type": TOKEN_EXCHANGE,
        "requested_token_type": ID_JAG,
        "audience": audience,
        "subject_token": id_token,
        "subject_token_type": ID_TOKEN,
    }, resource, scopes)
    answer = request_token(http, _token_endpoint(idp, server_name), form, client=client, auth_method=method,
                           server_name=f"identity provider {httpx.URL(issuer).host}", issuer=issuer)
    issued = answer.get("issued_token_type")
    if issued is not None and issued != ID_JAG:
        raise MCPError(f"identity provider {issuer} issued a {issued!r}, not an ID-JAG", server=server_name)
    return answer["access_token"]


def fetch_token(settings: OAuthSettings, metadata: Mapping[str, Any], *, resource: str | None,
                scopes: list[str] | None, http: httpx.Client | None, dpop: DPoPKey | None = None,
                server_name: str | None = None) -> dict[str, Any]:
    """A new token for a machine grant (no user, no redirect).

        token = fetch_token(settings, discovery.metadata, resource=discovery.resource,
                            scopes=["read"], http=http, server_name="reports")

    Args:
        settings: the server's ``oauth`` setting, evaluated for this request
            (``settings.machine`` is true).
        metadata: the MCP server's authorization server metadata (RFC 8414).
        resource: the MCP server's resource identifier (RFC 8707), sent with every request.
        scopes: the scopes to ask for (``scope``), or ``None``.
        http: the ``httpx.Client`` to use (``None``: a short-lived one).
        dpop: the DPoP key tokens are bound to, or ``None`` (the identity provider's exchange is
            never DPoP-bound).
        server_name: the MCP server's name, for messages.

    Returns:
        The token endpoint's answer with ``expires_at`` (see `request_token`).

    Raises:
        llm_mcp.UnauthorizedError: the authorization server or the identity provider refused,
            with its ``error`` and ``error_description``.
        llm_mcp.MCPError: malformed answers or metadata, an unusable client authentication.
        ValueError: settings that name no machine grant.
    """
    if settings.identity_provider is not None:
        id_jag = _id_jag(settings, metadata, resource=resource, scopes=scopes, http=http, server_name=server_name)
        form = _scope_and_resource({"grant_type": JWT_BEARER, "assertion": id_jag}, resource, scopes)
        return _outer_request(settings, metadata, form, http=http, dpop=dpop, server_name=server_name)
    if settings.assertion is not None:
        if not isinstance(settings.assertion, str) or not settings.assertion:
            raise ValueError("oauth assertion must evaluate to a non-empty string")
        form = _scope_and_resource({"grant_type": JWT_BEARER, "assertion": settings.assertion}, resource, scopes)
        return _outer_request(settings, metadata, form, http=http, dpop=dpop, server_name=server_name)
    if settings.grant == "client_credentials":
        if settings.client_id is None:
            raise ValueError("oauth grant='client_credentials' needs a client_id")
        form = _scope_and_resource({"grant_type": "client_credentials"}, resource, scopes)
        return _outer_request(settings, metadata, form, http=http, dpop=dpop, server_name=server_name)
    raise ValueError("these oauth settings name no machine grant (client_credentials, assertion, identity_provider)")
