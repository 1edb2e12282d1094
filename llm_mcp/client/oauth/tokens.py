"""Requests to an authorization server's token endpoint: client authentication, DPoP, errors.

    client = ClientAuth(client_id="reports", client_secret=secret)
    token = request_token(http, "https://as.example.com/token", {"grant_type": "client_credentials"},
                          client=client, auth_method="client_secret_basic", server_name="as.example.com")

Every grant (authorization code, refresh, client credentials, JWT bearer, token exchange) goes
through `request_token`. RFC 6749 §2.3 and §5, RFC 7523 §2.2 (``private_key_jwt``),
RFC 9449 §5 and §8 (DPoP proofs and nonces).
"""

from __future__ import annotations

import base64
import math
import time
import uuid
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote_plus, urlsplit

import httpx
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from joserfc import jwt
from joserfc.jwk import ECKey, OKPKey, RSAKey

from llm_mcp.client.errors import (
    ConnectionError,
    MCPError,
    TokenRequestError,
    from_httpx,
)
from llm_mcp.client.oauth import bounded

if TYPE_CHECKING:
    from llm_mcp.client.oauth.dpop import DPoPKey

__all__ = [
    "ASSERTION_LIFETIME",
    "AUTH_METHODS",
    "CLIENT_ASSERTION_TYPE",
    "ClientAuth",
    "TokenRequestError",
    "choose_auth_method",
    "client_assertion",
    "load_private_key",
    "request_token",
]

CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
"""``client_assertion_type`` of a signed client assertion (RFC 7523 §2.2)."""

ASSERTION_LIFETIME = 60
"""Seconds a client assertion stays valid after it is signed."""

AUTH_METHODS = ("client_secret_basic", "client_secret_post", "private_key_jwt", "none")
"""The token endpoint authentication methods we speak (RFC 7591 §2 names)."""

_CURVE_ALGORITHMS = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}


@dataclass(frozen=True, repr=False)
class ClientAuth:
    """A client's registration with one authorization server.

        ClientAuth(client_id="reports", client_secret="s3cret")
        ClientAuth(client_id="reports", private_key=pem_string)    # private_key_jwt
        ClientAuth(client_id="https://app.example.com/client.json") # a public client

    Attributes:
        client_id: the client identifier (``str``).
        client_secret: the shared secret, or ``None``.
        private_key: a PEM string/bytes or a ``cryptography`` private key (RSA, EC P-256/384/521,
            Ed25519) for signed client assertions, or ``None``.

    ``repr`` shows the client ID only.
    """

    client_id: str
    client_secret: str | None = None
    private_key: Any = field(default=None)

    def __post_init__(self) -> None:
        if not isinstance(self.client_id, str) or not self.client_id:
            raise ValueError("client_id must be a non-empty string")
        if self.client_secret is not None and not isinstance(self.client_secret, str):
            raise ValueError("client_secret must be a string")

    def __repr__(self) -> str:
        extras = ""
        if self.client_secret is not None:
            extras += ", client_secret=<hidden>"
        if self.private_key is not None:
            extras += ", private_key=<hidden>"
        return f"ClientAuth(client_id={self.client_id!r}{extras})"


def choose_auth_method(client: ClientAuth | None, supported: Iterable[str] | None) -> str:
    """The token endpoint authentication method for ``client`` at a server.

        choose_auth_method(ClientAuth(client_id="c", client_secret="s"), ["client_secret_post"])
        # -> "client_secret_post"; None (no metadata) -> "client_secret_basic"

    ``supported`` is the server's ``token_endpoint_auth_methods_supported`` (``None`` means the
    RFC 8414 default, ``client_secret_basic``): ``private_key_jwt`` with a key, basic or post with a secret
    (basic preferred), ``none`` without either. Raises ``ValueError`` when the server supports no
    method the client can use."""
    if client is None:
        return "none"
    offered = list(supported) if supported is not None else ["client_secret_basic"]
    if client.private_key is not None:
        if supported is None or "private_key_jwt" in offered:
            return "private_key_jwt"
        raise ValueError("the authorization server does not accept private_key_jwt client authentication")
    if client.client_secret is not None:
        for method in ("client_secret_basic", "client_secret_post"):
            if method in offered:
                return method
        raise ValueError("the authorization server accepts neither client_secret_basic nor client_secret_post")
    return "none"


def load_private_key(private_key: Any) -> RSAKey | ECKey | OKPKey:
    """``private_key`` (PEM ``str``/``bytes`` or a ``cryptography`` private key) as a JOSE key.

        key = load_private_key(Path("client-key.pem").read_text())   # an ECKey, RSAKey or OKPKey
        key = load_private_key(ec.generate_private_key(ec.SECP256R1()))

    Raises ``ValueError`` naming the problem (never the key)."""
    key = private_key
    if isinstance(key, str):
        key = key.encode("utf-8")
    if isinstance(key, bytes):
        try:
            key = serialization.load_pem_private_key(key, password=None)
        except (ValueError, TypeError):
            raise ValueError("private_key is not an unencrypted PEM private key") from None
    if isinstance(key, rsa.RSAPrivateKey):
        return RSAKey.import_key(key)
    if isinstance(key, ec.EllipticCurvePrivateKey):
        if key.curve.name not in _CURVE_ALGORITHMS:
            raise ValueError(f"private_key uses the unsupported curve {key.curve.name}")
        return ECKey.import_key(key)
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return OKPKey.import_key(key)
    raise ValueError("private_key must be a PEM string or an RSA, EC or Ed25519 private key from cryptography")


def _algorithm(key: RSAKey | ECKey | OKPKey, allowed: Iterable[str] | None) -> str:
    """The JWS algorithm for ``key``, honouring a server's list of allowed ones when given."""
    if isinstance(key, ECKey):
        candidates = [{"P-256": "ES256", "P-384": "ES384", "P-521": "ES512"}[key.curve_name]]
    elif isinstance(key, OKPKey):
        candidates = ["EdDSA", "Ed25519"]
    else:
        candidates = ["RS256", "PS256", "RS384", "PS384", "RS512", "PS512"]
    allowed = list(allowed) if allowed else None
    for candidate in candidates:
        if allowed is None or candidate in allowed:
            return candidate
    raise ValueError(f"the authorization server accepts no signing algorithm this key supports ({', '.join(allowed or [])})")


def client_assertion(client: ClientAuth, audience: str, *, algorithms: Iterable[str] | None = None,
                     lifetime: int = ASSERTION_LIFETIME) -> str:
    """A newly signed client assertion JWT for ``client`` (RFC 7523 §3).

        assertion = client_assertion(ClientAuth(client_id="reports", private_key=pem),
                                     "https://auth.example.com")
        form["client_assertion"] = assertion

    Claims: ``iss`` = ``sub`` = the
    client ID, ``aud`` = ``audience`` (the authorization server's issuer), ``iat``, ``exp``
    (``lifetime`` seconds later) and a unique ``jti``. The algorithm follows the key (RS256,
    ES256/384/512, EdDSA), or the first the server allows (``algorithms``)."""
    key = load_private_key(client.private_key)
    alg = _algorithm(key, algorithms)
    now = int(time.time())
    claims = {"iss": client.client_id, "sub": client.client_id, "aud": audience, "iat": now,
              "exp": now + lifetime, "jti": uuid.uuid4().hex}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # joserfc flags EdDSA as superseded by Ed25519 (RFC 9864)
        return jwt.encode({"alg": alg, "typ": "JWT"}, claims, key, algorithms=[alg])


def _basic(client: ClientAuth) -> str:
    """``Authorization: Basic`` for a client (RFC 6749 §2.3.1: both parts form-encoded first)."""
    raw = f"{quote_plus(client.client_id)}:{quote_plus(client.client_secret or '')}"
    return "Basic " + base64.b64encode(raw.encode("utf-8")).decode("ascii")


def _authenticate(form: dict[str, str], headers: dict[str, str], client: ClientAuth | None, auth_method: str,
                  audience: str, algorithms: Iterable[str] | None) -> None:
    if auth_method not in AUTH_METHODS:
        raise ValueError(f"unknown token endpoint authentication method {auth_method!r}")
    if client is None:
        if auth_method != "none":
            raise ValueError(f"{auth_method} needs a client")
        return
    if auth_method == "client_secret_basic":
        if client.client_secret is None:
            raise ValueError("client_secret_basic needs a client_secret")
        form.pop("client_id", None)
        headers["Authorization"] = _basic(client)
    elif auth_method == "client_secret_post":
        if client.client_secret is None:
            raise ValueError("client_secret_post needs a client_secret")
        form["client_id"] = client.client_id
        form["client_secret"] = client.client_secret
    elif auth_method == "private_key_jwt":
        if client.private_key is None:
            raise ValueError("private_key_jwt needs a private_key")
        form.pop("client_id", None)  # the assertion's sub names the client (RFC 7523 §3; oauth-client-credentials)
        form["client_assertion_type"] = CLIENT_ASSERTION_TYPE
        form["client_assertion"] = client_assertion(client, audience, algorithms=algorithms)
    else:
        form["client_id"] = client.client_id


def _host(url: str) -> str:
    return urlsplit(url).hostname or url


MAX_REASON = 300
"""Characters of a server's ``error``/``error_description`` kept in messages."""


def _scrub(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret sent in the request replaced (a server may echo one back),
    control characters turned into spaces, and cut to `MAX_REASON` characters."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    text = "".join(char if char.isprintable() else " " for char in text)
    return text if len(text) <= MAX_REASON else text[:MAX_REASON] + "..."


_SECRET_FIELDS = ("client_secret", "client_assertion", "assertion", "subject_token", "actor_token", "code",
                  "code_verifier", "refresh_token", "password")


def request_token(http: httpx.Client | None, endpoint: str, form: Mapping[str, str], *,
                  client: ClientAuth | None, auth_method: str, dpop: DPoPKey | None = None,
                  server_name: str | None = None, issuer: str | None = None,
                  signing_algorithms: Iterable[str] | None = None) -> dict[str, Any]:
    """POST ``form`` to the token ``endpoint``, authenticated as ``client``, and return the token.

        token = request_token(http, metadata["token_endpoint"],
                              {"grant_type": "refresh_token", "refresh_token": rt, "resource": url},
                              client=client, auth_method="client_secret_basic", issuer=metadata["issuer"])

    Args:
        http: the ``httpx.Client`` to send with (``None``: a short-lived one of our own).
        endpoint: the token endpoint URL.
        form: the grant's parameters (``grant_type``, ``resource``, ``scope``...); never mutated.
        client: the client's registration, or ``None`` when the grant authenticates no client
            (the JWT bearer grant of a workload).
        auth_method: one of `AUTH_METHODS` (see `choose_auth_method`).
        dpop: a DPoP key: every attempt carries a new proof, and a ``use_dpop_nonce`` refusal is
            retried once with the server's nonce (RFC 9449 §8).
        server_name: the name used in error messages (default: the endpoint's host).
        issuer: the authorization server's issuer, the ``aud`` of a client assertion (RFC 7523
            §3; default: the token endpoint URL).
        signing_algorithms: the server's ``token_endpoint_auth_signing_alg_values_supported``.

    Returns:
        The server's JSON answer (``access_token``, ``token_type``, ``expires_in``,
        ``refresh_token``, ``scope``...) plus ``expires_at``: epoch seconds (``int``) when the
        server gave ``expires_in``, else ``None``.

    Raises:
        TokenRequestError: (an ``llm_mcp.UnauthorizedError``) the server refused (RFC 6749 §5.2
            ``error``/``error_description`` in the message, attributes as sent; no secret).
        llm_mcp.ConnectionError: the server could not be reached, or answered 5xx/429.
        llm_mcp.MCPError: the answer was not a token (not JSON, no ``access_token``).
        ValueError: the client cannot use ``auth_method``.
    """
    name = server_name or _host(endpoint)
    owns_http = http is None
    if http is None:
        from llm_mcp.client.transports.http import shared_ssl_context

        http = httpx.Client(verify=shared_ssl_context(), follow_redirects=False, timeout=30.0)
    try:
        nonce_retried = False
        while True:
            body = {key: str(value) for key, value in form.items() if value is not None}
            headers = {"Accept": "application/json"}
            _authenticate(body, headers, client, auth_method, issuer or endpoint, signing_algorithms)
            if dpop is not None:
                headers["DPoP"] = dpop.proof("POST", endpoint)
            secrets = [body.get(key) for key in _SECRET_FIELDS] + [client.client_secret if client else None]
            try:
                response = bounded.send(http, "POST", endpoint, data=body, headers=headers)
            except bounded.TooLarge:
                raise MCPError(f"{name}: the token endpoint's answer is too large", server=name) from None
            except httpx.HTTPError as error:
                raise from_httpx(error, server=name, message=f"{name}: the token endpoint could not be reached "
                                 f"({type(error).__name__})", timeout_message=f"{name}: the token request timed out"
                                 ) from None
            if dpop is not None and not nonce_retried:
                from llm_mcp.client.oauth.dpop import nonce_challenge

                nonce = nonce_challenge(response)
                if nonce is not None:
                    dpop.remember_nonce(endpoint, nonce)
                    nonce_retried = True
                    continue
            if dpop is not None:
                dpop.remember_nonce(endpoint, response.headers.get("DPoP-Nonce"))
            return _token_from(response, name, secrets)
    finally:
        if owns_http:
            http.close()


def _token_from(response: httpx.Response, name: str, secrets: list[str | None]) -> dict[str, Any]:
    """The token in a token endpoint's answer, or the error it stands for."""
    status = response.status_code
    try:
        data = response.json()
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
        data = None
    if status >= 500 or status == 429:
        retry_after = response.headers.get("Retry-After")
        raise ConnectionError(f"{name}: the token endpoint answered HTTP {status}", server=name, status=status,
                              retry_after=float(retry_after) if retry_after and retry_after.isdigit() else None)
    if status != 200:
        if isinstance(data, dict) and isinstance(data.get("error"), str):
            error = _scrub(data["error"], secrets)
            raw = data.get("error_description")
            description = _scrub(raw, secrets) if isinstance(raw, str) else None
            reason = f"{error}: {description}" if description else error
            raise TokenRequestError(f"{name} refused the token request: {reason}", server=name, error=error,
                                    error_description=description, status=status)
        if status in (400, 401, 403):
            raise TokenRequestError(f"{name} refused the token request: HTTP {status}", server=name,
                                    error="invalid_request", error_description=None, status=status)
        raise MCPError(f"{name}: the token endpoint answered HTTP {status}", server=name)
    if not isinstance(data, dict):
        raise MCPError(f"{name}: the token endpoint's answer is not a JSON object", server=name)
    token = data.get("access_token")
    if not isinstance(token, str) or not token:
        raise MCPError(f"{name}: the token endpoint's answer has no access_token", server=name)
    if not isinstance(data.get("token_type", "Bearer"), str):
        raise MCPError(f"{name}: the token endpoint's answer has a malformed token_type", server=name)
    expires_in = data.get("expires_in")
    if isinstance(expires_in, str) and expires_in.isdigit():
        expires_in = int(expires_in)
    if expires_in is not None and (isinstance(expires_in, bool) or not isinstance(expires_in, (int, float))
                                   or not math.isfinite(expires_in)):
        raise MCPError(f"{name}: the token endpoint's answer has a malformed expires_in", server=name)
    token_data = dict(data)
    token_data["expires_at"] = int(time.time() + expires_in) if expires_in is not None else None
    return token_data
