"""The authorization state of one server: tokens on every request, 401s, refresh, and the user's round trip.

    auth = OAuth(server_name="linear", url="https://mcp.linear.app/mcp", settings=lambda: settings,
                 owner=lambda: user)
    url = auth.authorization_url(redirect_uri="https://app.example/callback")   # send the user there
    auth.authorize(request.GET)                                                 # in the callback

`OAuth` is an ``httpx.Auth``: the HTTP and SSE transports send every MCP request
through it. It adds the owner's access token; refreshes it shortly before it expires (one
refresh per credential key at a time: a thread lock in the process and the store's
``synchronize(key)`` across processes, so a rotating refresh token is spent once); on a 401
it refreshes once, then discovers the authorization server (``discovery``) and either fetches
a token itself (grants without a user) or raises [`llm_mcp.UnauthorizedError`][llm_mcp.client.errors.UnauthorizedError] asking
the app to send the user to `OAuth.authorization_url`.

Authorization code with PKCE S256 (OAuth 2.1 §4.1, RFC 7636), ``resource`` (RFC 8707) on
the authorization and token requests, ``iss`` checked exactly (RFC 9207). The pending
authorization (state, verifier, redirect URI, issuer) is kept in the credential store, so
the callback may run in another process.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import secrets
import threading
import time
from collections.abc import Generator, Mapping
from typing import Any, Callable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx

from .. import protocol
from ..config import config
from ..errors import MCPError, UnauthorizedError, from_httpx
from ..hosts import is_loopback
from ..transports.http import parse_challenge, shared_ssl_context
from . import bounded
from . import dpop as dpop_module
from .discovery import Discovery, _cut, check_endpoint, discover, require_pkce
from .registration import ClientInfo, check_pin, client_for, forget_registration
from .settings import OAuthSettings
from .store import synchronized
from .tokens import ClientAuth, TokenRequestError, request_token

__all__ = ["OAuth", "credential_key", "owner_identity"]

log = logging.getLogger("llm_mcp.client.oauth")

REFRESH_MARGIN = 60.0
"""Seconds before ``expires_at`` at which a token counts as expired and is refreshed (at most a
quarter of the token's lifetime)."""

MAX_PENDING = 5
"""Authorizations one owner may have started and not finished (older ones are forgotten)."""

PENDING_LIFETIME = 3600.0
"""Seconds a started authorization stays valid for its callback."""

MAX_KEY = 255


def owner_identity(owner: Any) -> str:
    """A stable text identity of an owner: ``"<app_label.model>:<pk>"`` for objects that look
    like Django models (``_meta.label_lower`` and ``pk``; no Django import), ``str(owner)``
    otherwise, ``"-"`` for none. Raises ``ValueError`` for a model instance without a pk and
    for an anonymous user (``is_anonymous`` true, as Django's ``AnonymousUser``): every visitor
    would share its credentials."""
    if owner is None:
        return "-"
    if getattr(owner, "is_anonymous", False) is True:
        raise ValueError("the oauth owner is an anonymous user: credentials need a signed-in user (every anonymous "
                         "visitor would share them)")
    meta = getattr(owner, "_meta", None)
    label = getattr(meta, "label_lower", None)
    if isinstance(label, str) and hasattr(owner, "pk"):
        if owner.pk is None:
            raise ValueError(f"the oauth owner ({label}) is not saved yet: it has no primary key to file "
                             "credentials under")
        return f"{label}:{owner.pk}"
    return str(owner)


def canonical_url(url: str) -> str:
    """The MCP server URL as a resource identifier: scheme and host lower-cased, no fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, parts.query, ""))


def credential_key(url: str, owner: Any) -> str:
    """The credential store key of one owner's tokens for one MCP server (at most 255 characters).

    Keys are stored in clear (the Django model's ``key`` column), so a query in the URL, which
    may carry an API key, is kept as a SHA-256 digest: ``oauth:<url without query>?#<digest>|<owner>``."""
    parts = urlsplit(canonical_url(url))
    where = canonical_url(url)
    if parts.query:
        digest = hashlib.sha256(parts.query.encode()).hexdigest()[:32]
        where = urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")) + f"?#{digest}"
    key = f"oauth:{where}|{owner_identity(owner)}"
    if len(key) > MAX_KEY:
        key = "oauth:" + hashlib.sha256(key.encode()).hexdigest()
    return key


def _store_owner(owner: Any) -> Any:
    """What to pass a store as ``owner``: model-like objects only (the Django store files them)."""
    return owner if getattr(getattr(owner, "_meta", None), "label_lower", None) else None


def _first(value: Any) -> str | None:
    """A callback parameter as text: ``QueryDict``/``parse_qs`` lists give their first item."""
    if isinstance(value, (list, tuple)):
        value = value[0] if value else None
    return value if isinstance(value, str) else None


CALLBACK_PARAMETERS = ("state", "code", "iss", "error", "error_description")
"""Callback parameters that must appear at most once (RFC 6749 §3.1)."""


def _repeated(params: Mapping[str, Any]) -> str | None:
    """The first of `CALLBACK_PARAMETERS` that ``params`` carries more than once: a list of
    several values (``parse_qs``) or several in a ``getlist`` (Django's ``QueryDict``)."""
    getlist = getattr(params, "getlist", None)
    for name in CALLBACK_PARAMETERS:
        values = getlist(name) if callable(getlist) else params.get(name)
        if isinstance(values, (list, tuple)) and len(values) > 1:
            return name
    return None


def _challenge(value: str | None) -> dict[str, str]:
    return parse_challenge(value or "")


class OAuth(httpx.Auth):
    """OAuth for one server object: an ``httpx.Auth`` plus the user's authorization round trip.

        auth = OAuth(server_name="linear", url=url, settings=server.oauth_settings, owner=lambda: user)
        httpx.Client(auth=auth)            # or pass it to HTTPTransport(auth=...)
        auth.authorized                    # True once the owner has tokens

    Attributes:
        server_name: the server's name, for messages and logs.
        url: the MCP endpoint URL.
        settings: a callable returning the evaluated `OAuthSettings` (called when a token
            is requested or an authorization starts, so rotating values are read again).
        owner: a callable returning the owner (an input's value, an object, or ``None``).
        timeout: seconds for each request to a metadata, registration or token endpoint.
        capabilities: a callable returning the client capabilities the server is told about
            (``{"extensions": {...}}``), declared on the unauthenticated probe too.
        http_context: the `llm_mcp.client.httpcontext.HTTPContext` every metadata,
            registration and token request goes through, or ``None`` (the global settings).

    Secrets (tokens, verifiers, client secrets) never appear in its ``repr``, logs or messages.
    """

    requires_request_body = False
    requires_response_body = False

    def __init__(self, *, server_name: str, url: str, settings: Callable[[], OAuthSettings],
                 owner: Callable[[], Any] | None = None, timeout: float = 30.0,
                 capabilities: Callable[[], dict[str, Any]] | None = None, http_context: Any = None):
        self.server_name = server_name
        self.http_context = http_context
        self.url = url
        self.settings = settings
        self.owner = owner or (lambda: None)
        self.timeout = timeout
        self.capabilities = capabilities or dict
        self._lock = threading.RLock()
        self._found: Discovery | None = None
        self._challenge: dict[str, str] | None = None
        self._challenge_raw: str = ""
        self._http_client: httpx.Client | None = None
        self._dpop_keys: dict[str, dpop_module.DPoPKey] = {}

    # -- plumbing -----------------------------------------------------------------------------

    @property
    def store(self) -> Any:
        """The credential store (``llm_mcp.client.config.config.credential_store``, read each time)."""
        return config.credential_store

    @property
    def http(self) -> httpx.Client:
        """The client for metadata, registration and token requests (never follows redirects)."""
        with self._lock:
            if self._http_client is None:
                self._http_client = (self.http_context.client(timeout=self.timeout) if self.http_context is not None
                                     else httpx.Client(verify=shared_ssl_context(), follow_redirects=False,
                                                       timeout=self.timeout))
            return self._http_client

    @property
    def key(self) -> str:
        """The credential store key of the current owner's tokens for this server."""
        return credential_key(self.url, self.owner())

    def close(self) -> None:
        """Close the HTTP client used for metadata and token requests."""
        with self._lock:
            if self._http_client is not None:
                self._http_client.close()
                self._http_client = None

    def __repr__(self) -> str:
        return f"<OAuth {self.server_name!r}>"

    # -- the public round trip ------------------------------------------------------------------

    @property
    def authorized(self) -> bool:
        """Whether the owner has stored tokens for this server (an access or refresh token)."""
        record = self.store.read(self.key) or {}
        return bool(record.get("access_token") or record.get("refresh_token"))

    def deauthorize(self) -> None:
        """Forget the owner's tokens (and any authorization they started) for this server."""
        self.store.delete(self.key)

    def authorization_url(self, *, redirect_uri: str | None = None, scopes: list[str] | str | None = None) -> str:
        """The URL to send the owner to, to authorize this app (authorization code + PKCE S256).

            url = auth.authorization_url(redirect_uri="https://app.example/callback")

        Args:
            redirect_uri: where the authorization server sends the user back (https, or http
                on loopback); default: the ``oauth`` ``redirect_uri`` setting.
            scopes: scopes to ask for this time, overriding the ``scopes`` setting and the
                server's (an app stepping up after [`InsufficientScopeError`][llm_mcp.client.errors.InsufficientScopeError]).

        The URL carries ``response_type=code``, ``client_id``, ``redirect_uri``, ``state``,
        ``code_challenge`` (S256), ``scope`` (when there is one), ``resource`` and the
        ``authorization_params``. Discovers and registers when needed.

        Raises ``ValueError`` for a bad redirect URI or a grant without a user, ``MCPError``
        for the discovery refusals (issuer mismatch, impostor resource, no S256, unsafe
        endpoints) and a pinned client used with another authorization server,
        ``UnauthorizedError`` when registration is refused.
        """
        settings = self.settings()
        if settings.machine:
            raise ValueError(f"MCP server {self.server_name!r} gets its tokens without a user (grant "
                             f"{settings.grant!r}); there is no authorization URL")
        redirect_uri = redirect_uri or settings.redirect_uri
        if not redirect_uri:
            raise ValueError("authorization_url needs a redirect_uri (or the oauth redirect_uri setting)")
        _check_redirect_uri(redirect_uri)
        owner = self.owner()
        key = credential_key(self.url, owner)  # before anything is sent: an owner may be refused
        found = self.discovery()
        require_pkce(found, self.server_name)
        client = client_for(settings, found, redirect_uri=redirect_uri, http=self.http, store=self.store,
                            server_name=self.server_name)
        requested = self._scopes(settings, found, scopes)
        verifier = secrets.token_urlsafe(64)[:96]
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode()
        state = secrets.token_urlsafe(32)
        pending = {"state": state, "verifier": verifier, "redirect_uri": redirect_uri, "issuer": found.issuer,
                   "iss_required": found.metadata.get("authorization_response_iss_parameter_supported") is True,
                   "token_endpoint": found.token_endpoint, "resource": found.resource, "scope": requested,
                   "client": client.to_record(), "started_at": time.time(),
                   "dpop": self._dpop_required(found)}
        with synchronized(self.store, key):
            record = self.store.read(key) or {}
            waiting = {s: p for s, p in (record.get("pending") or {}).items()
                       if isinstance(p, dict) and time.time() - float(p.get("started_at") or 0) < PENDING_LIFETIME}
            waiting[state] = pending
            record["pending"] = dict(sorted(waiting.items(), key=lambda kv: kv[1]["started_at"])[-MAX_PENDING:])
            self.store.write(key, record, owner=_store_owner(owner))
        params = {"response_type": "code", "client_id": client.client_id, "redirect_uri": redirect_uri,
                  "state": state, "code_challenge": challenge, "code_challenge_method": "S256"}
        if requested:
            params["scope"] = " ".join(requested)
        params["resource"] = found.resource
        params.update(settings.authorization_params)
        parts = urlsplit(found.authorization_endpoint)
        query = parse_qsl(parts.query, keep_blank_values=True) + list(params.items())
        return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))

    def authorize(self, params: Mapping[str, Any]) -> None:
        """Finish an authorization with the callback's query parameters, and store the tokens.

            auth.authorize(request.GET)      # {"code": ..., "state": ..., "iss": ...}

        Checks that ``state`` belongs to an authorization this owner started here, and that
        ``iss`` (when present, or when the server promised it) is exactly the issuer it was
        started with (RFC 9207); then exchanges the code with the PKCE verifier and ``resource``.

        Raises ``MCPError`` when the callback belongs to another authorization (unknown
        ``state``, another or a missing ``iss``) or repeats a parameter (RFC 6749 §3.1),
        ``UnauthorizedError`` when the authorization
        server refused (an ``error`` in the callback, or a refused code exchange).
        """
        repeated = _repeated(params)
        if repeated:
            raise MCPError(f"MCP server {self.server_name!r}: the callback repeats {repeated}; refused (RFC 6749 "
                           "§3.1: a parameter appears at most once)", server=self.server_name)
        state = _first(params.get("state"))
        owner = self.owner()
        key = credential_key(self.url, owner)
        with synchronized(self.store, key):
            record = self.store.read(key) or {}
            waiting = record.get("pending") or {}
            pending = waiting.pop(state, None) if state else None
            if pending is not None:
                record["pending"] = waiting
                self.store.write(key, record, owner=_store_owner(owner))
        if not isinstance(pending, dict) or time.time() - float(pending.get("started_at") or 0) > PENDING_LIFETIME:
            raise MCPError(f"MCP server {self.server_name!r}: this callback does not belong to an authorization "
                           "started here (its state is unknown or expired)", server=self.server_name)
        iss = _first(params.get("iss"))
        if iss is not None and iss != pending["issuer"]:
            raise MCPError(f"MCP server {self.server_name!r}: the callback comes from the issuer {_cut(iss)!r}, not "
                           f"{pending['issuer']!r}, which this authorization was started with (RFC 9207); refused",
                           server=self.server_name)
        if iss is None and pending.get("iss_required"):
            raise MCPError(f"MCP server {self.server_name!r}: the callback lacks the iss parameter its authorization "
                           "server promised (RFC 9207); refused", server=self.server_name)
        error = _first(params.get("error"))
        if error:
            description = _first(params.get("error_description"))
            reason = f"{error}: {description}" if description else error
            reason = "".join(char if char.isprintable() else " " for char in reason)  # one line, for logs
            raise UnauthorizedError(f"{urlsplit(pending['issuer']).hostname} refused the authorization: "
                                    f"{reason[:300]}", server=self.server_name)
        code = _first(params.get("code"))
        if not code:
            raise MCPError(f"MCP server {self.server_name!r}: the callback carries no code", server=self.server_name)
        settings = self.settings()
        client = ClientInfo.from_record(pending.get("client") or {}, settings)
        if client.kind == "preregistered":
            check_pin(self.store, client.client_id, pending["issuer"], self.server_name)
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": pending["redirect_uri"],
                "code_verifier": pending["verifier"], "resource": pending.get("resource")}
        dpop_key = self._new_dpop_key() if pending.get("dpop") else None
        token = self._request_token(pending["token_endpoint"], form, client, pending["issuer"], dpop_key)
        with synchronized(self.store, key):
            record = self.store.read(key) or {}
            record.update(self._token_fields(token, requested=pending.get("scope")))
            record.update({"issuer": pending["issuer"], "token_endpoint": pending["token_endpoint"],
                           "resource": pending.get("resource"), "client": client.to_record()})
            if dpop_key is not None:
                record["dpop_key"] = dpop_key.to_dict()
            else:
                record.pop("dpop_key", None)
            self.store.write(key, record, owner=_store_owner(owner))

    # -- discovery ------------------------------------------------------------------------------

    def discovery(self, *, fresh: bool = False) -> Discovery:
        """What discovery found for this server (cached; ``fresh`` runs it again). Without a 401
        seen yet, an unauthenticated probe request fetches the server's challenge first."""
        with self._lock:
            if self._found is not None and not fresh:
                return self._found
            challenge = self._challenge
        if challenge is None:
            challenge = self._probe()
        found = discover(self.http, self.url, challenge, server_name=self.server_name)
        with self._lock:
            self._found = found
        return found

    def _probe(self) -> dict[str, str]:
        """POST ``server/discover`` without credentials to read the server's 401 challenge (with
        the ``_meta`` every 2026-07-28 request carries: version, client info and capabilities)."""
        meta = {protocol.META_PROTOCOL_VERSION: protocol.LATEST, protocol.META_CLIENT_INFO: protocol.CLIENT_INFO,
                protocol.META_CLIENT_CAPABILITIES: self.capabilities()}
        message = protocol.request("server/discover", {"_meta": meta})
        try:
            response = bounded.send(self.http, "POST", self.url, content=protocol.encode(message), headers={
                "Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                "MCP-Protocol-Version": protocol.LATEST, "Mcp-Method": "server/discover"})
        except httpx.HTTPError as exc:
            raise from_httpx(exc, server=self.server_name, message=f"MCP server {self.server_name!r} could not be "
                             f"reached ({type(exc).__name__})") from None
        raw = response.headers.get("www-authenticate", "") if response.status_code == 401 else ""
        challenge = _challenge(raw)
        with self._lock:
            self._challenge, self._challenge_raw = challenge, raw
        return challenge

    def _scopes(self, settings: OAuthSettings, found: Discovery, override: list[str] | str | None) -> list[str]:
        """The scopes to ask for: the call's, else the ``scopes`` setting (exactly), else the
        challenged ones, else the resource's ``scopes_supported``, else none; ``offline_access``
        is added to derived scopes when the authorization server lists it (SEP-2207)."""
        if override is not None:
            return override.split() if isinstance(override, str) else [str(s) for s in override]
        if settings.scopes is not None:
            return list(settings.scopes)
        challenged = (found.challenge.get("scope") or "").split()
        scopes = challenged or found.scopes_supported
        if scopes:
            supported = found.metadata.get("scopes_supported")
            if isinstance(supported, list) and "offline_access" in supported and "offline_access" not in scopes:
                scopes = [*scopes, "offline_access"]
        return scopes

    # -- tokens ---------------------------------------------------------------------------------

    @staticmethod
    def _token_fields(token: dict[str, Any], *, requested: list[str] | None = None) -> dict[str, Any]:
        now = time.time()
        expires_at = token.get("expires_at")
        fields = {"access_token": token["access_token"], "token_type": token.get("token_type") or "Bearer",
                  "expires_at": expires_at, "obtained_at": now,
                  "lifetime": expires_at - now if isinstance(expires_at, (int, float)) else None}
        if token.get("refresh_token"):
            fields["refresh_token"] = token["refresh_token"]
        scope = token.get("scope")
        fields["scope"] = scope.split() if isinstance(scope, str) else list(requested or [])
        return fields

    def _request_token(self, endpoint: str, form: dict[str, Any], client: ClientInfo, issuer: str,
                       dpop_key: dpop_module.DPoPKey | None) -> dict[str, Any]:
        """One token request as ``client``; an ``invalid_client`` refusal forgets a dynamic
        registration so the next authorization registers again (MCP-REG-05)."""
        check_endpoint(endpoint, "token endpoint", self.server_name, local=is_loopback(urlsplit(self.url).hostname))
        auth = ClientAuth(client_id=client.client_id, client_secret=client.client_secret,
                          private_key=client.private_key)
        try:
            return request_token(self.http, endpoint, form, client=auth, auth_method=client.auth_method,
                                 dpop=dpop_key, server_name=urlsplit(issuer).hostname or self.server_name,
                                 issuer=issuer)
        except TokenRequestError as exc:
            if exc.error == "invalid_client":
                forget_registration(self.store, client)
            raise

    @staticmethod
    def _expiring(record: dict[str, Any]) -> bool:
        """Whether the record's token expires within the margin: `REFRESH_MARGIN`, or a
        quarter of the token's lifetime when that is shorter (a 20-second token is used for 15)."""
        expires_at = record.get("expires_at")
        if not isinstance(expires_at, (int, float)):
            return False
        margin = REFRESH_MARGIN
        lifetime = record.get("lifetime")
        if isinstance(lifetime, (int, float)) and lifetime > 0:
            margin = min(margin, lifetime / 4)
        return time.time() >= expires_at - margin

    def refresh(self, record: dict[str, Any], *, force: bool = False) -> dict[str, Any] | None:
        """Refresh the owner's token, once per key at a time; returns the record with the new
        token, or ``None`` when there is none to be had (no refresh token, or it was refused:
        the tokens are then forgotten).

        Threads (and, through the store's ``synchronize``, processes) take turns; one that
        waited while another refreshed finds the new token and uses it, spending nothing.
        """
        stale = record.get("access_token")
        owner = self.owner()
        key = credential_key(self.url, owner)
        with synchronized(self.store, key):
            current = self.store.read(key) or {}
            if current.get("access_token") and current.get("access_token") != stale:
                return current  # another thread or process refreshed meanwhile
            if not force and not self._expiring(current):
                return current
            refresh_token = current.get("refresh_token")
            if not refresh_token or not current.get("token_endpoint"):
                return None
            settings = self.settings()
            client = ClientInfo.from_record(current.get("client") or {}, settings)
            form = {"grant_type": "refresh_token", "refresh_token": refresh_token, "resource": current.get("resource")}
            try:
                token = self._request_token(current["token_endpoint"], form, client, current.get("issuer") or "",
                                            self._record_dpop(current))
            except TokenRequestError as exc:
                log.info("MCP server %s: the refresh token was refused (%s); the owner must authorize again",
                         self.server_name, exc.error)
                self._forget_tokens(current)
                self.store.write(key, current, owner=_store_owner(owner))
                return None
            current.update(self._token_fields(token, requested=current.get("scope")))
            self.store.write(key, current, owner=_store_owner(owner))
            return current

    @staticmethod
    def _forget_tokens(record: dict[str, Any]) -> None:
        for field_name in ("access_token", "refresh_token", "expires_at", "token_type", "obtained_at", "lifetime"):
            record.pop(field_name, None)

    def _drop(self, stale: str | None) -> None:
        """Forget tokens the server refused (when no one replaced them meanwhile)."""
        owner = self.owner()
        key = credential_key(self.url, owner)
        with synchronized(self.store, key):
            current = self.store.read(key)
            if current and current.get("access_token") == stale:
                self._forget_tokens(current)
                self.store.write(key, current, owner=_store_owner(owner))

    def _machine_token(self, found: Discovery, settings: OAuthSettings, stale: str | None) -> dict[str, Any]:
        """Fetch a token without a user (B's grants), once per key at a time; store and return it."""
        from . import grants

        owner = self.owner()
        key = credential_key(self.url, owner)
        with synchronized(self.store, key):
            current = self.store.read(key) or {}
            if current.get("access_token") and current.get("access_token") != stale \
                    and not self._expiring(current):
                return current
            if settings.client_id:
                check_pin(self.store, settings.client_id, found.issuer, self.server_name)
            dpop_key = self._record_dpop(current)
            if dpop_key is None and self._dpop_required(found):
                dpop_key = self._new_dpop_key()
            scopes = self._scopes(settings, found, None)
            token = grants.fetch_token(settings, found.metadata, resource=found.resource, scopes=scopes,
                                       http=self.http, dpop=dpop_key)
            current.update(self._token_fields(token, requested=scopes))
            current.pop("refresh_token", None) if not token.get("refresh_token") else None
            current.update({"issuer": found.issuer, "token_endpoint": found.token_endpoint,
                            "resource": found.resource, "grant": settings.grant})
            if dpop_key is not None:
                current["dpop_key"] = dpop_key.to_dict()
            self.store.write(key, current, owner=_store_owner(owner))
            return current

    # -- DPoP -----------------------------------------------------------------------------------

    def _dpop_required(self, found: Discovery) -> bool:
        with self._lock:
            raw = self._challenge_raw
        return dpop_module.required(challenge=raw, resource_metadata=found.protected_resource,
                                    server_metadata=found.metadata)

    def _new_dpop_key(self) -> dpop_module.DPoPKey:
        key = dpop_module.DPoPKey.generate()
        with self._lock:
            self._dpop_keys[key.thumbprint] = key
        return key

    def _record_dpop(self, record: dict[str, Any]) -> dpop_module.DPoPKey | None:
        """The DPoP key stored with a record (one object per key in this process, keeping nonces)."""
        data = record.get("dpop_key")
        if not isinstance(data, dict):
            return None
        loaded = dpop_module.DPoPKey.from_dict(data)
        with self._lock:
            return self._dpop_keys.setdefault(loaded.thumbprint, loaded)

    def _bound_key(self, record: dict[str, Any]) -> dpop_module.DPoPKey | None:
        """The DPoP key the record's access token is bound to: the stored key when the
        authorization server answered ``token_type: DPoP``; ``None`` for a ``Bearer`` token, even
        when the client asked for a bound one (RFC 9449 §5: the client honours the token type)."""
        if str(record.get("token_type") or "").lower() != "dpop":
            return None
        return self._record_dpop(record)

    # -- httpx.Auth -----------------------------------------------------------------------------

    def _apply(self, request: httpx.Request, record: dict[str, Any] | None) -> str | None:
        """Put the record's access token on ``request``; returns the token (or ``None``)."""
        token = (record or {}).get("access_token")
        if not token:
            request.headers.pop("Authorization", None)
            return None
        key = self._bound_key(record or {})
        if key is not None:
            request.headers["Authorization"] = f"DPoP {token}"
            url = str(request.url)
            try:
                body = request.content or None  # bound into the proof (content_digest) when we have it
            except httpx.RequestNotRead:
                body = None
            request.headers["DPoP"] = key.proof(request.method, url, access_token=token, nonce=key.nonce_for(url),
                                                body=body)
        else:
            request.headers["Authorization"] = f"Bearer {token}"
            request.headers.pop("DPoP", None)
        return token

    def _current(self) -> dict[str, Any] | None:
        """The owner's token record, refreshed first when it is about to expire."""
        record = self.store.read(self.key)
        if not record or not record.get("access_token"):
            return record
        if self._expiring(record):
            if record.get("refresh_token"):
                return self.refresh(record)
            settings = self.settings()
            if settings.machine:
                return self._machine_token(self.discovery(), settings, record.get("access_token"))
        return record

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        record = self._current()
        token = self._apply(request, record)
        response = yield request
        response = yield from self._dpop_nonce_retry(request, response, record)
        if response.status_code != 401:
            return
        raw = response.headers.get("www-authenticate", "")
        with self._lock:
            self._challenge, self._challenge_raw = _challenge(raw), raw
        if token:
            fresh = self.refresh(record or {}, force=True) if (record or {}).get("refresh_token") else None
            if fresh is not None and fresh.get("access_token") and fresh.get("access_token") != token:
                self._apply(request, fresh)
                response = yield request
                if response.status_code != 401:
                    return
                raw = response.headers.get("www-authenticate", "")
                with self._lock:
                    self._challenge, self._challenge_raw = _challenge(raw), raw
                token = fresh.get("access_token")
            self._drop(token)
        found = self.discovery(fresh=True)
        settings = self.settings()
        if settings.machine:
            record = self._machine_token(found, settings, token)
            self._apply(request, record)
            response = yield request
            yield from self._dpop_nonce_retry(request, response, record)
            return  # a second 401 reaches the transport, which raises UnauthorizedError
        raise UnauthorizedError(f"MCP server {self.server_name!r} needs the owner's authorization: send them to "
                                "authorization_url(redirect_uri=...) and finish with authorize(callback params)",
                                server=self.server_name, www_authenticate=raw or None)

    def _dpop_nonce_retry(self, request: httpx.Request, response: httpx.Response,
                          record: dict[str, Any] | None) -> Generator[httpx.Request, httpx.Response, httpx.Response]:
        """Retry once with the server's nonce when a DPoP-bound request is answered
        ``use_dpop_nonce`` (RFC 9449 §9); returns the final response."""
        key = self._bound_key(record or {})
        if key is None:
            return response
        nonce = dpop_module.nonce_challenge(response)
        if nonce is None:
            key.remember_nonce(str(request.url), response.headers.get("DPoP-Nonce"))
            return response
        key.remember_nonce(str(request.url), nonce)
        self._apply(request, record)
        response = yield request
        key.remember_nonce(str(request.url), response.headers.get("DPoP-Nonce"))
        return response


def _check_redirect_uri(redirect_uri: str) -> None:
    """Refuse a redirect URI that is not absolute https (http only on loopback) or has a fragment."""
    parts = urlsplit(redirect_uri)
    if parts.scheme not in ("https", "http") or not parts.hostname or parts.fragment:
        raise ValueError(f"redirect_uri must be an absolute https URL without a fragment, not {redirect_uri!r}")

    if parts.scheme == "http" and not is_loopback(parts.hostname):
        raise ValueError("redirect_uri must use https (plain http only for localhost)")
