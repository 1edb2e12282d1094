"""Which client the app is at an authorization server: pre-registered, metadata document, or registered.

    client = client_for(settings, found, redirect_uri="https://app.example/callback", http=http,
                        store=store, server_name="linear")
    client.client_id, client.auth_method

The order is MCP 2026-07-28's ("Client Registration Approaches"): the app's own
registration (``oauth["client_id"]``, pinned to the first authorization server it is used
with: MCP-AUTHAPP-02), a client ID metadata document (``configure(client_id=URL)``, used
when the server says ``client_id_metadata_document_supported``), dynamic client
registration (RFC 7591) once per (authorization server, redirect URI), kept in the
credential store and reused by every user, forgotten after ``invalid_client``.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from ..config import config
from ..errors import MCPError, UnauthorizedError, from_httpx
from ..hosts import is_loopback
from . import bounded
from .discovery import Discovery
from .settings import OAuthSettings
from .store import synchronized

__all__ = ["ClientInfo", "check_pin", "client_for", "forget_registration", "pin_key", "registration_key"]

log = logging.getLogger("llm_mcp.client.oauth")

PREFERRED_AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")


@dataclass(repr=False)
class ClientInfo:
    """The client the app is at one authorization server.

        ClientInfo(client_id="abc", client_secret="s", auth_method="client_secret_basic")

    Attributes:
        client_id: the ``client_id`` to send.
        client_secret: its secret, or ``None`` (never in ``repr``).
        auth_method: how to authenticate at the token endpoint: ``client_secret_basic``,
            ``client_secret_post``, ``private_key_jwt`` or ``none``.
        private_key: a PEM string or ``cryptography`` key for ``private_key_jwt``, or ``None``.
        kind: ``"preregistered"``, ``"metadata_document"`` or ``"dynamic"``.
        registration_key: the credential store key of a dynamic registration, else ``None``.
    """

    client_id: str
    client_secret: str | None = None
    auth_method: str = "none"
    private_key: Any = None
    kind: str = "preregistered"
    registration_key: str | None = None

    def to_record(self) -> dict[str, Any]:
        """What a token record keeps to use this client again (a pre-registered client's
        secret and key stay in the settings; a registration's secret is kept)."""
        record = {"client_id": self.client_id, "auth_method": self.auth_method, "kind": self.kind}
        if self.kind == "dynamic":
            record["registration_key"] = self.registration_key
            if self.client_secret:
                record["client_secret"] = self.client_secret
        return record

    @classmethod
    def from_record(cls, record: dict[str, Any], settings: OAuthSettings) -> ClientInfo:
        """Rebuild a client from `to_record`, taking secrets from ``settings`` when it is the
        pre-registered one."""
        client = cls(client_id=str(record.get("client_id") or ""), auth_method=str(record.get("auth_method") or "none"),
                     kind=str(record.get("kind") or "preregistered"), client_secret=record.get("client_secret"),
                     registration_key=record.get("registration_key"))
        if client.kind == "preregistered" and settings.client_id == client.client_id:
            client.client_secret = settings.client_secret
            client.private_key = settings.private_key
        return client

    def __repr__(self) -> str:
        return (f"<ClientInfo {self.kind} client_id={self.client_id!r} auth_method={self.auth_method!r}"
                f"{' secret=set' if self.client_secret else ''}{' private_key=set' if self.private_key else ''}>")


def _short(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def registration_key(issuer: str, redirect_uri: str) -> str:
    """Credential store key of the dynamic registration at ``issuer`` for ``redirect_uri``."""
    return f"oauth-client:{_short(issuer + ' ' + redirect_uri)}"


def pin_key(client_id: str) -> str:
    """Credential store key recording which authorization server a pre-registered client belongs to."""
    return f"oauth-pin:{_short(client_id)}"


def check_pin(store: Any, client_id: str, issuer: str, server_name: str) -> None:
    """Record the first authorization server a pre-registered client is used with; raise
    ``MCPError`` (before anything is sent) when it is later used with another (MCP-AUTHAPP-02)."""
    key = pin_key(client_id)
    pinned = store.read(key)
    if pinned and pinned.get("issuer"):
        if pinned["issuer"] != issuer:
            raise MCPError(f"MCP server {server_name!r} names the authorization server {issuer}, but its client_id was "
                           f"registered with {pinned['issuer']}; nothing was sent. Register an app with the new "
                           "authorization server and configure its credentials", server=server_name)
        return
    store.write(key, {"issuer": issuer, "client_id": client_id})


def _token_auth_method(found: Discovery, *, secret: bool, private_key: bool) -> str:
    supported = found.metadata.get("token_endpoint_auth_methods_supported")
    if private_key:
        return "private_key_jwt"
    if not secret:
        return "none"
    if not isinstance(supported, list):
        return "client_secret_basic"  # RFC 8414 §2: the default when the list is absent
    return next((m for m in ("client_secret_basic", "client_secret_post") if m in supported), "client_secret_basic")



def application_type(redirect_uri: str) -> str:
    """``"native"`` for a loopback (or custom-scheme) redirect URI, ``"web"`` otherwise (OIDC
    Dynamic Client Registration §2, as MCP 2026-07-28 asks)."""
    parts = urlsplit(redirect_uri)
    if parts.scheme not in ("http", "https") or is_loopback(urlsplit(redirect_uri).hostname):
        return "native"
    return "web"


def client_for(settings: OAuthSettings, found: Discovery, *, redirect_uri: str | None, http: httpx.Client,
               store: Any, server_name: str, grant_types: tuple[str, ...] = ("authorization_code", "refresh_token"),
               ) -> ClientInfo:
    """The client to use with the authorization server ``found`` names, registering when needed.

    Raises ``MCPError`` when a pre-registered client belongs to another authorization server,
    or when the server offers no way in (no metadata document support, no registration
    endpoint, no ``client_id``); ``UnauthorizedError`` when registration is refused.
    """
    if settings.client_id:
        check_pin(store, settings.client_id, found.issuer, server_name)
        method = _token_auth_method(found, secret=bool(settings.client_secret), private_key=settings.private_key is not None)
        return ClientInfo(client_id=settings.client_id, client_secret=settings.client_secret, auth_method=method,
                          private_key=settings.private_key, kind="preregistered")
    if config.client_id and found.metadata.get("client_id_metadata_document_supported") is True:
        return ClientInfo(client_id=config.client_id, auth_method="none", kind="metadata_document")
    endpoint = found.registration_endpoint
    if not endpoint or redirect_uri is None:
        raise MCPError(f"MCP server {server_name!r}: its authorization server {found.issuer} takes neither client ID "
                       "metadata documents (configure client_id) nor dynamic registration; configure the oauth "
                       "client_id and client_secret of an app registered with it", server=server_name)
    key = registration_key(found.issuer, redirect_uri)
    with synchronized(store, key):  # users starting at once share one registration
        stored = store.read(key)
        if stored and stored.get("client_id"):
            return ClientInfo(client_id=stored["client_id"], client_secret=stored.get("client_secret"),
                              auth_method=stored.get("auth_method") or "none", kind="dynamic", registration_key=key)
        return register(found, redirect_uri=redirect_uri, http=http, store=store, server_name=server_name,
                        grant_types=grant_types)


def register(found: Discovery, *, redirect_uri: str, http: httpx.Client, store: Any, server_name: str,
             grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")) -> ClientInfo:
    """Register dynamically (RFC 7591) at ``found``'s registration endpoint and store the result.

    Sends ``client_name``, ``redirect_uris``, ``grant_types``, ``response_types``,
    ``token_endpoint_auth_method`` (chosen from what the server supports) and
    ``application_type``. An answer with a ``client_secret`` but no
    ``token_endpoint_auth_method`` means ``client_secret_basic``, RFC 7591's default (case C21).
    """
    supported = found.metadata.get("token_endpoint_auth_methods_supported")
    if isinstance(supported, list):
        requested = next((m for m in PREFERRED_AUTH_METHODS if m in supported), "none")
    else:
        requested = "client_secret_basic"
    body = {"client_name": config.client_name, "redirect_uris": [redirect_uri], "grant_types": list(grant_types),
            "response_types": ["code"], "token_endpoint_auth_method": requested,
            "application_type": application_type(redirect_uri)}
    endpoint = found.registration_endpoint or ""
    try:
        response = bounded.send(http, "POST", endpoint, json=body, headers={"Accept": "application/json"})
    except httpx.HTTPError as exc:
        raise from_httpx(exc, server=server_name, message=f"MCP server {server_name!r}: its authorization server "
                         f"could not be reached to register ({type(exc).__name__})") from None
    try:
        answer = json.loads(response.content) if response.content else {}
    except (ValueError, RecursionError):
        answer = {}
    if response.status_code not in (200, 201) or not isinstance(answer, dict) or not answer.get("client_id"):
        reason = _reason(answer) or f"HTTP {response.status_code}"
        raise UnauthorizedError(f"MCP server {server_name!r}: its authorization server refused to register this app: "
                                f"{reason}", server=server_name)
    secret = answer.get("client_secret") if isinstance(answer.get("client_secret"), str) else None
    method = answer.get("token_endpoint_auth_method")
    if not isinstance(method, str) or not method:
        method = "client_secret_basic" if secret else "none"
    key = registration_key(found.issuer, redirect_uri)
    record = {"client_id": str(answer["client_id"]), "auth_method": method, "issuer": found.issuer,
              "redirect_uri": redirect_uri}
    if secret:
        record["client_secret"] = secret
    store.write(key, record)
    log.info("MCP server %s: registered with %s", server_name, found.issuer)
    return ClientInfo(client_id=record["client_id"], client_secret=secret, auth_method=method, kind="dynamic",
                      registration_key=key)


def forget_registration(store: Any, client: ClientInfo) -> None:
    """Forget a dynamic registration the authorization server no longer knows (``invalid_client``),
    so the next authorization registers again (MCP-REG-05)."""
    if client.kind == "dynamic" and client.registration_key:
        store.delete(client.registration_key)


def _reason(answer: Any) -> str:
    if not isinstance(answer, dict):
        return ""
    error = answer.get("error")
    description = answer.get("error_description")
    parts = [str(p) for p in (error, description) if isinstance(p, str) and p]
    return ": ".join(parts)[:300]
