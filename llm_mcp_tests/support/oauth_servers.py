"""A real OAuth authorization server and an MCP server that requires its tokens, on 127.0.0.1.

    with oauth_servers(access_token_lifetime=3600) as servers:
        servers.mcp_url            # http://127.0.0.1:P/mcp: 401 + WWW-Authenticate without a valid token
        servers.issuer             # http://127.0.0.1:Q (RFC 8414 metadata at /.well-known/oauth-authorization-server)
        servers.token_requests()   # every request the token endpoint received, in order

Built for the tests of issue 6 (authorization) with authlib's server side:

* the authorization server (``http.server``, a thread): authorization code with PKCE S256
  (required), auto-approving the user (``user-1``, or ``test_user=NAME`` added to the
  authorization URL; ``test_deny=1`` refuses), RFC 9207 ``iss`` on every redirect back,
  refresh tokens with rotation (a spent refresh token is refused with ``invalid_grant``),
  client credentials, dynamic client registration (RFC 7591), metadata (RFC 8414),
  resource indicators (RFC 8707: ``resource`` is recorded on codes and tokens and checked
  by the MCP server), client ID metadata documents when ``client_id_metadata_documents=True``.
* the MCP server (the ``llm_mcp.testing`` kit over Streamable HTTP, uvicorn in a thread)
  behind :class:`TokenGate`: ``401`` with ``WWW-Authenticate: Bearer resource_metadata=...``
  without a valid token, ``403`` ``insufficient_scope`` for a tool whose scope the token lacks,
  and the protected resource metadata (RFC 9728) at the path-based and root well-known URLs.

Both run in this process by default and share their token table, so the MCP server checks
tokens without a network round trip. ``python -m llm_mcp_tests.support.oauth_servers`` runs them
in a process of their own (prints one JSON line with the URLs); tests then read the logs over
HTTP: ``GET {issuer}/_test/log`` and ``POST {issuer}/_test/expire`` / ``/_test/forget-clients``.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import secrets
import socket
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qsl, urlencode, urlsplit

from authlib.oauth2 import AuthorizationServer as _AuthorizationServer
from authlib.oauth2.rfc6749 import JsonPayload, JsonRequest, OAuth2Request, grants
from authlib.oauth2.rfc6749.errors import OAuth2Error
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc9207 import IssuerParameter

from llm_mcp.testing import Server, Tool
from llm_mcp.testing.serve import read_body, send_json

from llm_mcp_tests.support.asgi import replay

__all__ = [
    "ADMIN_SCOPE",
    "BASE_SCOPE",
    "AuthState",
    "Client",
    "OAuthServers",
    "TokenGate",
    "TokenRecord",
    "main",
    "oauth_servers",
]

BASE_SCOPE = "mcp"
"""The scope every tool needs (advertised in the 401 challenge and in ``scopes_supported``)."""
ADMIN_SCOPE = "admin"
"""The extra scope the ``admin_report`` tool needs (403 ``insufficient_scope`` without it)."""
DEFAULT_USER = "user-1"


# --------------------------------------------------------------------------- the shared state


@dataclass
class Client:
    """A registered OAuth client (authlib's ``ClientMixin``).

    Attributes: client_id, client_secret (``None`` for public clients), redirect_uris,
    grant_types, token_endpoint_auth_method, scope (allowed scopes, space-separated),
    metadata (what the client registered, as sent)."""

    client_id: str
    client_secret: str | None = None
    redirect_uris: list[str] = field(default_factory=list)
    grant_types: list[str] = field(default_factory=lambda: ["authorization_code", "refresh_token"])
    token_endpoint_auth_method: str = "client_secret_basic"
    scope: str = f"{BASE_SCOPE} {ADMIN_SCOPE}"
    metadata: dict[str, Any] = field(default_factory=dict)

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        return self.redirect_uris[0] if self.redirect_uris else None

    def get_allowed_scope(self, scope: str | None) -> str:
        if not scope:
            return ""
        allowed = set(self.scope.split())
        return " ".join(s for s in scope.split() if s in allowed)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri in self.redirect_uris

    def check_client_secret(self, client_secret: str) -> bool:
        return self.client_secret is not None and secrets.compare_digest(self.client_secret, client_secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return endpoint != "token" or method == self.token_endpoint_auth_method

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.grant_types


@dataclass
class AuthorizationCode:
    """An issued authorization code (authlib's ``AuthorizationCodeMixin``)."""

    code: str
    client_id: str
    redirect_uri: str
    scope: str
    user: str
    resource: str | None
    code_challenge: str | None
    code_challenge_method: str | None
    issued_at: float = field(default_factory=time.time)

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


@dataclass
class TokenRecord:
    """An issued token pair (authlib's ``TokenMixin``).

    Attributes: access_token, refresh_token (or ``None``), client_id, user (the subject; the
    client ID for client credentials), scope (space-separated), resource (RFC 8707, or
    ``None``), expires_at (epoch seconds), revoked (the refresh token was spent),
    access_revoked (the access token was expired by a test)."""

    access_token: str
    refresh_token: str | None
    client_id: str
    user: str
    scope: str
    resource: str | None
    expires_at: float
    revoked: bool = False
    access_revoked: bool = False

    def check_client(self, client: Client) -> bool:
        return client.client_id == self.client_id

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return int(self.expires_at - time.time())

    def is_expired(self) -> bool:
        return self.access_revoked or time.time() >= self.expires_at

    def is_revoked(self) -> bool:
        return self.revoked

    def get_user(self) -> str:
        return self.user

    @property
    def scopes(self) -> set[str]:
        return set(self.scope.split())


class AuthState:
    """What the authorization server knows, shared with the MCP server (same process).

        state.check_access_token("abc", resource="http://127.0.0.1:P/mcp")  # TokenRecord or None
        state.log       # token requests: [{"grant_type", "client_id", "status", "error", ...}]

    All access goes through ``lock`` (the token endpoint handles one request at a time, so
    a rotating refresh token can only be spent once)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.clients: dict[str, Client] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.tokens: dict[str, TokenRecord] = {}  # by access token
        self.refresh_tokens: dict[str, TokenRecord] = {}
        self.log: list[dict[str, Any]] = []  # token requests
        self.registrations: list[dict[str, Any]] = []  # dynamic registration requests (the metadata sent)
        self.authorizations: list[dict[str, Any]] = []  # authorization requests (their query parameters)
        self.mcp_requests: list[dict[str, Any]] = []  # requests the MCP server let through

    def check_access_token(self, token: str, *, resource: str | None) -> TokenRecord | None:
        """The live token record for ``token``, or ``None`` (unknown, expired, or for another
        resource when it was bound to one)."""
        with self.lock:
            record = self.tokens.get(token)
            if record is None or record.is_expired():
                return None
            if record.resource is not None and resource is not None and record.resource.rstrip("/") != \
                    resource.rstrip("/"):
                return None
            return record

    def expire_access_tokens(self) -> int:
        """Make every access token issued so far invalid (refresh tokens stay usable); returns how many."""
        with self.lock:
            live = [record for record in self.tokens.values() if not record.access_revoked]
            for record in live:
                record.access_revoked = True
            return len(live)

    def forget_clients(self) -> None:
        """Forget every dynamically registered client (an authorization server that lost its
        registrations: the next token request with them gets ``invalid_client``)."""
        with self.lock:
            for client_id in [cid for cid, client in self.clients.items() if client.metadata.get("_dynamic")]:
                del self.clients[client_id]

    def snapshot(self) -> dict[str, Any]:
        """The logs as JSON-able data (what ``GET /_test/log`` answers)."""
        with self.lock:
            return {"token_requests": list(self.log), "registrations": list(self.registrations),
                    "authorizations": list(self.authorizations), "mcp_requests": list(self.mcp_requests)}


# --------------------------------------------------------------------------- authlib's side


class _Payload(BasicOAuth2Payload):
    def __init__(self, query: dict[str, str], form: dict[str, str], lists: dict[str, list[str]]) -> None:
        super().__init__({**query, **form})
        self._datalist = lists


class _Request(OAuth2Request):
    """An OAuth2Request from what ``http.server`` parsed."""

    def __init__(self, method: str, uri: str, headers: Mapping[str, str], query: list[tuple[str, str]],
                 form: list[tuple[str, str]]) -> None:
        super().__init__(method, uri, headers=headers)
        lists: dict[str, list[str]] = {}
        for key, value in [*query, *form]:
            lists.setdefault(key, []).append(value)
        self._args, self._form = dict(query), dict(form)
        self.payload = _Payload(self._args, self._form, lists)

    @property
    def args(self) -> dict[str, str]:
        return self._args

    @property
    def form(self) -> dict[str, str]:
        return self._form


class _JsonPayload(JsonPayload):
    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    @property
    def data(self) -> dict[str, Any]:
        return self._data


class _JsonRequest(JsonRequest):
    def __init__(self, method: str, uri: str, headers: Mapping[str, str], data: dict[str, Any]) -> None:
        super().__init__(method, uri, headers)
        self.payload = _JsonPayload(data)


class _Response:
    def __init__(self, status: int, body: Any, headers: list[tuple[str, str]]) -> None:
        self.status, self.body, self.headers = status, body, list(headers)

    @property
    def location(self) -> str | None:
        return next((v for k, v in self.headers if k.lower() == "location"), None)

    @location.setter
    def location(self, value: str) -> None:
        self.headers = [(k, v) for k, v in self.headers if k.lower() != "location"] + [("Location", value)]


class _Issuer(IssuerParameter):
    def __init__(self, issuer: str) -> None:
        self.issuer = issuer

    def get_issuer(self) -> str:
        return self.issuer


class InvalidTargetError(OAuth2Error):
    """RFC 8707 section 2: the requested resource is not the one the grant was for."""

    error = "invalid_target"


class _AuthorizationCodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = ["client_secret_basic", "client_secret_post", "none"]

    def save_authorization_code(self, code: str, request: OAuth2Request) -> None:
        data = request.payload.data
        self.server.state.codes[code] = AuthorizationCode(
            code=code, client_id=request.client.client_id, redirect_uri=data.get("redirect_uri", ""),
            scope=request.client.get_allowed_scope(data.get("scope") or ""), user=request.user,
            resource=data.get("resource"), code_challenge=data.get("code_challenge"),
            code_challenge_method=data.get("code_challenge_method"))

    def query_authorization_code(self, code: str, client: Client) -> AuthorizationCode | None:
        found = self.server.state.codes.get(code)
        if found is None or found.client_id != client.client_id or time.time() - found.issued_at > 600:
            return None
        resource = self.request.payload.data.get("resource")
        if found.resource is not None and resource is not None and resource != found.resource:
            raise InvalidTargetError("'resource' differs from the authorization request's")
        return found

    def delete_authorization_code(self, authorization_code: AuthorizationCode) -> None:
        self.server.state.codes.pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code: AuthorizationCode) -> str:
        return authorization_code.user


class _RefreshTokenGrant(grants.RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = ["client_secret_basic", "client_secret_post", "none"]
    INCLUDE_NEW_REFRESH_TOKEN = True  # rotation: every refresh returns a new refresh token

    def authenticate_refresh_token(self, refresh_token: str) -> TokenRecord | None:
        record = self.server.state.refresh_tokens.get(refresh_token)
        if record is None or record.revoked:
            return None
        return record

    def authenticate_user(self, refresh_token: TokenRecord) -> str:
        return refresh_token.user

    def revoke_old_credential(self, refresh_token: TokenRecord) -> None:
        if self.server.rotate_refresh_tokens:
            refresh_token.revoked = True


class _ClientCredentialsGrant(grants.ClientCredentialsGrant):
    TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = ["client_secret_basic", "client_secret_post"]


class _Registration(ClientRegistrationEndpoint):
    def authenticate_token(self, request: Any) -> bool:
        return True  # open registration

    def get_server_metadata(self) -> dict[str, Any]:
        return self.server.metadata()

    def generate_client_secret(self, request: Any) -> str | None:
        method = request.payload.data.get("token_endpoint_auth_method", "client_secret_basic")
        return None if method == "none" else secrets.token_urlsafe(24)

    def save_client(self, client_info: dict[str, Any], client_metadata: dict[str, Any], request: Any) -> Client:
        data = request.payload.data
        client = Client(
            client_id=client_info["client_id"], client_secret=client_info.get("client_secret"),
            redirect_uris=list(client_metadata.get("redirect_uris") or []),
            grant_types=list(client_metadata.get("grant_types") or ["authorization_code", "refresh_token"]),
            token_endpoint_auth_method=client_metadata.get("token_endpoint_auth_method", "client_secret_basic"),
            metadata={**data, "_dynamic": True})
        with self.server.state.lock:
            self.server.state.clients[client.client_id] = client
            self.server.state.registrations.append(dict(data))
        return client


class TestAuthorizationServer(_AuthorizationServer):
    """authlib's ``AuthorizationServer`` over the in-memory :class:`AuthState`."""

    def __init__(self, state: AuthState, issuer: str, *, access_token_lifetime: int, rotate_refresh_tokens: bool,
                 client_id_metadata_documents: bool, scopes: list[str]) -> None:
        super().__init__(scopes_supported=scopes)
        self.state, self.issuer = state, issuer
        self.access_token_lifetime = access_token_lifetime
        self.rotate_refresh_tokens = rotate_refresh_tokens
        self.client_id_metadata_documents = client_id_metadata_documents
        self.register_token_generator("default", BearerTokenGenerator(
            access_token_generator=lambda **_: secrets.token_urlsafe(24),
            refresh_token_generator=lambda **_: secrets.token_urlsafe(32),
            expires_generator=lambda client, grant_type: self.access_token_lifetime))
        self.register_grant(_AuthorizationCodeGrant, [CodeChallenge(required=True)])
        self.register_grant(_RefreshTokenGrant)
        self.register_grant(_ClientCredentialsGrant)
        self.register_endpoint(_Registration)
        self.register_extension(lambda server: _Issuer(issuer)(server))

    def endpoint(self, name: str) -> str:
        return f"{self.issuer}/{name}"

    def metadata(self) -> dict[str, Any]:
        """RFC 8414 authorization server metadata."""
        data: dict[str, Any] = {
            "issuer": self.issuer,
            "authorization_endpoint": self.endpoint("authorize"),
            "token_endpoint": self.endpoint("token"),
            "registration_endpoint": self.endpoint("register"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
            "scopes_supported": list(self.scopes_supported or []),
            "authorization_response_iss_parameter_supported": True,
        }
        if self.client_id_metadata_documents:
            data["client_id_metadata_document_supported"] = True
        return data

    def query_client(self, client_id: str) -> Client | None:
        with self.state.lock:
            client = self.state.clients.get(client_id)
        if client is None and self.client_id_metadata_documents and client_id.startswith(("https://", "http://")):
            client = self._client_from_document(client_id)
        return client

    def _client_from_document(self, url: str) -> Client | None:
        import httpx

        try:
            document = httpx.get(url, timeout=10).json()
        except (httpx.HTTPError, ValueError):
            return None
        if not isinstance(document, dict) or document.get("client_id") != url:
            return None
        return Client(client_id=url, redirect_uris=list(document.get("redirect_uris") or []),
                      token_endpoint_auth_method="none", metadata=document)

    def save_token(self, token: dict[str, Any], request: OAuth2Request) -> None:
        data = request.payload.data
        resource = data.get("resource")
        if request.authorization_code is not None:
            resource = request.authorization_code.resource
        elif request.refresh_token is not None:
            resource = request.refresh_token.resource
        record = TokenRecord(access_token=token["access_token"], refresh_token=token.get("refresh_token"),
                             client_id=request.client.client_id, user=request.user or request.client.client_id,
                             scope=token.get("scope", ""), resource=resource,
                             expires_at=time.time() + token.get("expires_in", self.access_token_lifetime))
        self.state.tokens[record.access_token] = record
        if record.refresh_token:
            self.state.refresh_tokens[record.refresh_token] = record

    def create_oauth2_request(self, request: OAuth2Request) -> OAuth2Request:
        return request

    def create_json_request(self, request: JsonRequest) -> JsonRequest:
        return request

    def handle_response(self, status: int, body: Any, headers: list[tuple[str, str]]) -> _Response:
        return _Response(status, body, headers)

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass


class _ASHandler(BaseHTTPRequestHandler):
    """Routes of the authorization server; ``self.server.oauth`` is the TestAuthorizationServer."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    @property
    def oauth(self) -> TestAuthorizationServer:
        return self.server.oauth  # type: ignore[attr-defined]

    def _send(self, response: _Response) -> None:
        body = response.body
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        data = (body or "").encode() if isinstance(body, str) else (body or b"")
        self.send_response(response.status)
        names = {k.lower() for k, _ in response.headers}
        for key, value in response.headers:
            self.send_header(key, value)
        if data and "content-type" not in names:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _json(self, status: int, body: Any) -> None:
        self._send(_Response(status, body, [("Content-Type", "application/json"), ("Cache-Control", "no-store")]))

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _route(self) -> tuple[str, list[tuple[str, str]]]:
        parts = urlsplit(self.path)
        return parts.path, parse_qsl(parts.query, keep_blank_values=True)

    def do_GET(self) -> None:
        path, query = self._route()
        prefix = urlsplit(self.oauth.issuer).path
        well_known = {f"/.well-known/oauth-authorization-server{prefix}",
                      f"/.well-known/openid-configuration{prefix}", f"{prefix}/.well-known/openid-configuration"}
        if path in well_known:
            self._json(200, self.oauth.metadata())
        elif path == f"{prefix}/authorize":
            self._authorize(query)
        elif path == f"{prefix}/_test/log":
            self._json(200, self.oauth.state.snapshot())
        else:
            self._json(404, {"error": "not_found"})

    def do_POST(self) -> None:
        path, query = self._route()
        prefix = urlsplit(self.oauth.issuer).path
        body = self._body()
        if path == f"{prefix}/token":
            self._token(query, body)
        elif path == f"{prefix}/register":
            self._register(body)
        elif path == f"{prefix}/_test/expire":
            self._json(200, {"expired": self.oauth.state.expire_access_tokens()})
        elif path == f"{prefix}/_test/forget-clients":
            self.oauth.state.forget_clients()
            self._json(200, {"forgotten": True})
        else:
            self._json(404, {"error": "not_found"})

    def _request(self, query: list[tuple[str, str]], form: list[tuple[str, str]]) -> _Request:
        return _Request(self.command, self.oauth.issuer + self.path, dict(self.headers.items()), query, form)

    def _authorize(self, query: list[tuple[str, str]]) -> None:
        params = dict(query)
        state = self.oauth.state
        with state.lock:
            state.authorizations.append({k: v for k, v in params.items()})
        if self.server.require_pkce and params.get("code_challenge_method") != "S256":  # type: ignore[attr-defined]
            self._json(400, {"error": "invalid_request", "error_description": "PKCE with S256 is required"})
            return
        if self.server.require_resource and not params.get("resource"):  # type: ignore[attr-defined]
            self._json(400, {"error": "invalid_target", "error_description": "'resource' (RFC 8707) is required"})
            return
        request = self._request(query, [])
        try:
            grant = self.oauth.get_consent_grant(request)
        except OAuth2Error as error:
            self._json(400, dict(error.get_body()))
            return
        user = None if params.get("test_deny") else params.get("test_user") or DEFAULT_USER
        with state.lock:
            response = self.oauth.create_authorization_response(request, grant_user=user, grant=grant)
        self._send(response)

    def _token(self, query: list[tuple[str, str]], body: bytes) -> None:
        form = parse_qsl(body.decode(), keep_blank_values=True)
        params = dict(form)
        entry: dict[str, Any] = {"grant_type": params.get("grant_type"), "resource": params.get("resource"),
                                 "scope": params.get("scope"), "client_id": params.get("client_id"),
                                 "auth": "basic" if (self.headers.get("Authorization") or "").lower()
                                 .startswith("basic ") else ("post" if "client_secret" in params else "none"),
                                 "time": time.time()}
        if entry["auth"] == "basic" and not entry["client_id"]:
            with contextlib.suppress(ValueError, UnicodeDecodeError):
                decoded = base64.b64decode(self.headers["Authorization"].split(None, 1)[1]).decode()
                entry["client_id"] = decoded.partition(":")[0]
        with self.oauth.state.lock:  # one token request at a time: a refresh token is spent once
            if self.server.token_delay:  # type: ignore[attr-defined]
                time.sleep(self.server.token_delay)  # type: ignore[attr-defined]
            response = self.oauth.create_token_response(self._request(query, form))
            entry["status"] = response.status
            if isinstance(response.body, dict) and "error" in response.body:
                entry["error"] = response.body["error"]
            self.oauth.state.log.append(entry)
        self._send(response)

    def _register(self, body: bytes) -> None:
        try:
            data = json.loads(body or b"{}")
        except ValueError:
            self._json(400, {"error": "invalid_client_metadata", "error_description": "not JSON"})
            return
        if not isinstance(data, dict):
            self._json(400, {"error": "invalid_client_metadata", "error_description": "not a JSON object"})
            return
        request = _JsonRequest("POST", self.oauth.endpoint("register"), dict(self.headers.items()), data)
        response = self.oauth.create_endpoint_response("client_registration", request)
        if isinstance(response.body, dict):  # RFC 7591: absent, not null (a public client has no secret)
            response.body = {k: v for k, v in response.body.items() if v is not None}
        self._send(response)


# --------------------------------------------------------------------------- the MCP server


class Add(Tool):
    name = "add"
    description = "Adds two numbers."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "required": ["a", "b"]}

    def call(self) -> dict[str, Any]:
        total = self.arguments["a"] + self.arguments["b"]
        return self.respond_with(content=self.text_content(text=str(total)))


class AdminReport(Tool):
    name = "admin_report"
    description = "A report only tokens with the admin scope may read."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    def call(self) -> dict[str, Any]:
        return self.respond_with(content=self.text_content(text="all systems nominal"))


TOOL_SCOPES = {"admin_report": [ADMIN_SCOPE]}
"""Extra scopes a tool needs, by tool name (every tool needs ``BASE_SCOPE``)."""


class TokenGate:
    """ASGI middleware: the MCP app behind bearer tokens the :class:`AuthState` issued.

        app = TokenGate(build_http_app(server.build()), state, resource="http://127.0.0.1:P/mcp")

    * ``/.well-known/oauth-protected-resource/mcp`` and ``/.well-known/oauth-protected-resource``:
      the protected resource metadata (RFC 9728).
    * ``/mcp`` without a valid token: 401, ``WWW-Authenticate: Bearer resource_metadata="...",
      scope="mcp"`` (and ``error="invalid_token"`` when a token was sent).
    * ``tools/call`` of a tool in ``tool_scopes`` whose scopes the token lacks: 403,
      ``WWW-Authenticate: Bearer error="insufficient_scope", scope="...", error_description=...``.
    Spec: MCP 2026-07-28 "Authorization", RFC 6750 section 3, RFC 9728.
    """

    def __init__(self, app: Any, state: AuthState, *, resource: str, issuer: str,
                 tool_scopes: Mapping[str, list[str]] = TOOL_SCOPES) -> None:
        self.app, self.state, self.resource, self.issuer = app, state, resource, issuer
        self.tool_scopes = dict(tool_scopes)
        parts = urlsplit(resource)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.path = parts.path or "/"
        self.metadata_url = f"{self.origin}/.well-known/oauth-protected-resource{self.path}"

    def metadata(self) -> dict[str, Any]:
        return {"resource": self.resource, "authorization_servers": [self.issuer],
                "scopes_supported": [BASE_SCOPE, ADMIN_SCOPE], "bearer_methods_supported": ["header"]}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        if path in (f"/.well-known/oauth-protected-resource{self.path}", "/.well-known/oauth-protected-resource"):
            await send_json(send, 200, self.metadata())
            return
        if path.rstrip("/") != self.path.rstrip("/"):
            await self.app(scope, receive, send)
            return
        authorization = _header(scope, b"authorization") or ""
        kind, _, token = authorization.partition(" ")
        record = (self.state.check_access_token(token.strip(), resource=self.resource)
                  if kind.lower() == "bearer" and token.strip() else None)
        if record is None or BASE_SCOPE not in record.scopes:
            challenge = f'Bearer resource_metadata="{self.metadata_url}", scope="{BASE_SCOPE}"'
            if token:
                challenge += ', error="invalid_token", error_description="The access token is not valid"'
            await send_json(send, 401, {"error": "invalid_token" if token else "unauthorized"},
                           [(b"www-authenticate", challenge.encode())])
            return
        body = b""
        if scope["method"] == "POST":
            body = await read_body(receive)
        message: Any = None
        with contextlib.suppress(ValueError):
            message = json.loads(body) if body else None
        method = message.get("method") if isinstance(message, dict) else None
        tool = (message.get("params") or {}).get("name") if method == "tools/call" else None
        missing = [s for s in self.tool_scopes.get(tool or "", []) if s not in record.scopes]
        with self.state.lock:
            self.state.mcp_requests.append({"user": record.user, "client_id": record.client_id, "method": method,
                                            "tool": tool, "refused": bool(missing)})
        if missing:
            wanted = " ".join(missing)
            challenge = (f'Bearer error="insufficient_scope", scope="{wanted}", resource_metadata='
                         f'"{self.metadata_url}", error_description="Additional scopes required: {wanted}"')
            await send_json(send, 403, {"error": "insufficient_scope"}, [(b"www-authenticate", challenge.encode())])
            return
        await self.app(scope, replay(body, receive) if scope["method"] == "POST" else receive, send)


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


# --------------------------------------------------------------------------- running both


def _bound_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


class OAuthServers:
    """The authorization server and the protected MCP server, started together.

        servers = OAuthServers(access_token_lifetime=3600).start()
        servers.issuer, servers.mcp_url, servers.metadata_url
        servers.register_client("app", secret="s3cret", redirect_uris=[...])   # a pre-registered client
        servers.token_requests(grant_type="refresh_token")                     # what the token endpoint got
        servers.expire_access_tokens()                                         # every access token so far
        servers.stop()

    Args (all keyword):
        access_token_lifetime: seconds an access token lives (``expires_in``).
        rotate_refresh_tokens: each refresh returns a new refresh token and spends the old one.
        token_delay: seconds the token endpoint waits before answering (inside its lock), to
            widen a race between clients.
        issuer_path: a path for the issuer (``"/tenant"``: issuer ``http://127.0.0.1:Q/tenant``).
        client_id_metadata_documents: advertise and accept client ID metadata documents.
        era: the MCP server's protocol era (``"auto"``, ``"modern"``, ``"handshake"``).
        tool_scopes: extra scopes per tool name (default :data:`TOOL_SCOPES`).
        require_resource: authorization requests without ``resource`` (RFC 8707) are refused
            (``invalid_target``); the spec requires clients to send it. PKCE S256 is always required.
    """

    def __init__(self, *, access_token_lifetime: int = 3600, rotate_refresh_tokens: bool = True,
                 token_delay: float = 0.0, issuer_path: str = "", client_id_metadata_documents: bool = False,
                 era: str = "auto", tool_scopes: Mapping[str, list[str]] = TOOL_SCOPES,
                 require_resource: bool = True) -> None:
        if issuer_path and (not issuer_path.startswith("/") or issuer_path.endswith("/")):
            raise ValueError(f"issuer_path must start with / and not end with one, not {issuer_path!r}")
        self.state = AuthState()
        self.options = {"access_token_lifetime": access_token_lifetime,
                        "rotate_refresh_tokens": rotate_refresh_tokens,
                        "client_id_metadata_documents": client_id_metadata_documents}
        self.token_delay, self.issuer_path, self.era = token_delay, issuer_path, era
        self.tool_scopes = dict(tool_scopes)
        self.require_resource = require_resource
        self.issuer = self.mcp_url = self.metadata_url = ""
        self.oauth: TestAuthorizationServer | None = None
        self._http: ThreadingHTTPServer | None = None
        self._uvicorn: Any = None
        self._threads: list[threading.Thread] = []

    def start(self) -> OAuthServers:
        import uvicorn

        from llm_mcp.testing.serve import build_http_app

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _ASHandler)
        mcp_socket = _bound_socket()
        self.issuer = f"http://127.0.0.1:{self._http.server_address[1]}{self.issuer_path}"
        self.mcp_url = f"http://127.0.0.1:{mcp_socket.getsockname()[1]}/mcp"
        self.metadata_url = f"http://127.0.0.1:{mcp_socket.getsockname()[1]}/.well-known/oauth-protected-resource/mcp"
        self.oauth = TestAuthorizationServer(self.state, self.issuer, scopes=[BASE_SCOPE, ADMIN_SCOPE],
                                             **self.options)
        self._http.daemon_threads = True
        self._http.oauth = self.oauth  # type: ignore[attr-defined]
        self._http.token_delay = self.token_delay  # type: ignore[attr-defined]
        self._http.require_pkce = True  # type: ignore[attr-defined]
        self._http.require_resource = self.require_resource  # type: ignore[attr-defined]
        thread = threading.Thread(target=self._http.serve_forever, name="oauth-test-as", daemon=True)
        thread.start()
        self._threads.append(thread)

        kit = Server("oauth-protected", tools=[Add, AdminReport])
        app = TokenGate(build_http_app(kit.build(), self.era), self.state, resource=self.mcp_url,
                        issuer=self.issuer, tool_scopes=self.tool_scopes)
        config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
        self._uvicorn = uvicorn.Server(config)
        thread = threading.Thread(target=self._uvicorn.run, kwargs={"sockets": [mcp_socket]},
                                  name="oauth-test-mcp", daemon=True)
        thread.start()
        self._threads.append(thread)
        deadline = time.monotonic() + 20
        while not self._uvicorn.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the protected MCP test server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        """Stop both servers (idempotent)."""
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None
        for thread in self._threads:
            thread.join(timeout=10)
        self._threads.clear()

    def __enter__(self) -> OAuthServers:  # noqa: PYI034
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- for tests

    def register_client(self, client_id: str, *, secret: str | None = None, redirect_uris: list[str] = (),
                        grant_types: list[str] | None = None, auth_method: str | None = None,
                        scope: str = f"{BASE_SCOPE} {ADMIN_SCOPE}") -> Client:
        """Pre-register a client (``auth_method`` defaults to ``client_secret_basic`` with a
        secret, ``none`` without one; ``grant_types`` to authorization code + refresh, or
        client credentials when there is a secret and no redirect URI)."""
        if grant_types is None:
            grant_types = ["client_credentials"] if secret and not redirect_uris else \
                ["authorization_code", "refresh_token"]
        client = Client(client_id=client_id, client_secret=secret, redirect_uris=list(redirect_uris),
                        grant_types=list(grant_types),
                        token_endpoint_auth_method=auth_method or ("client_secret_basic" if secret else "none"),
                        scope=scope)
        with self.state.lock:
            self.state.clients[client_id] = client
        return client

    def token_requests(self, grant_type: str | None = None) -> list[dict[str, Any]]:
        """The token endpoint's requests so far (optionally of one ``grant_type``), each
        ``{"grant_type", "client_id", "auth", "resource", "scope", "status", "error"?, "time"}``."""
        with self.state.lock:
            return [dict(e) for e in self.state.log if grant_type is None or e["grant_type"] == grant_type]

    def registrations(self) -> list[dict[str, Any]]:
        """The client metadata of every dynamic registration, as sent."""
        with self.state.lock:
            return [dict(r) for r in self.state.registrations]

    def authorizations(self) -> list[dict[str, Any]]:
        """The query parameters of every authorization request."""
        with self.state.lock:
            return [dict(a) for a in self.state.authorizations]

    def mcp_requests(self) -> list[dict[str, Any]]:
        """Requests the MCP server accepted a token for: ``{"user", "client_id", "method", "tool", "refused"}``."""
        with self.state.lock:
            return [dict(r) for r in self.state.mcp_requests]

    def expire_access_tokens(self) -> int:
        """Make every access token issued so far invalid at the MCP server; returns how many."""
        return self.state.expire_access_tokens()

    def forget_clients(self) -> None:
        """Forget dynamic registrations (the next use of one gets ``invalid_client``)."""
        self.state.forget_clients()

    def approve(self, authorization_url: str, *, user: str = DEFAULT_USER) -> str:
        """Follow ``authorization_url`` as the user's browser would, auto-approved for ``user``;
        return the callback URL the authorization server redirects to (with ``code``, ``state``, ``iss``)."""
        import httpx

        url = authorization_url + ("&" if "?" in authorization_url else "?") + urlencode({"test_user": user})
        response = httpx.get(url, follow_redirects=False, timeout=10)
        if response.status_code != 302:
            raise RuntimeError(f"the authorization server answered {response.status_code}: {response.text[:500]}")
        return response.headers["location"]


@contextlib.contextmanager
def oauth_servers(**options: Any) -> Iterator[OAuthServers]:
    """Start :class:`OAuthServers` with ``options`` and stop them afterwards."""
    servers = OAuthServers(**options).start()
    try:
        yield servers
    finally:
        servers.stop()


def main(argv: list[str] | None = None) -> int:
    """``python -m llm_mcp_tests.support.oauth_servers [--lifetime S] [--token-delay S]``: run both
    servers until killed; prints ``{"issuer", "mcp_url", "metadata_url"}`` as one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lifetime", type=int, default=3600, help="access token lifetime, seconds")
    parser.add_argument("--token-delay", type=float, default=0.0, help="token endpoint delay, seconds")
    parser.add_argument("--no-rotation", action="store_true", help="keep refresh tokens valid after use")
    parser.add_argument("--client-id-metadata-documents", action="store_true")
    parser.add_argument("--era", default="auto")
    args = parser.parse_args(argv)
    servers = OAuthServers(access_token_lifetime=args.lifetime, token_delay=args.token_delay,
                           rotate_refresh_tokens=not args.no_rotation,
                           client_id_metadata_documents=args.client_id_metadata_documents, era=args.era).start()
    print(json.dumps({"issuer": servers.issuer, "mcp_url": servers.mcp_url, "metadata_url": servers.metadata_url}),
          flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        servers.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
