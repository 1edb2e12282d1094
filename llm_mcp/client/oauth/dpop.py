"""DPoP: tokens bound to a key the client holds (RFC 9449).

    key = DPoPKey.generate()                                   # an ES256 key pair
    headers["DPoP"] = key.proof("POST", token_endpoint)         # a proof for one request
    store.write(cred_key, {..., "dpop_key": key.to_dict()})     # kept with the credentials

The MCP extension ``io.modelcontextprotocol/auth/dpop`` (SEP-1932, not finalized) is what the
conformance suite tests: a server requires DPoP through its ``WWW-Authenticate: DPoP``
challenge, its protected resource metadata (``dpop_bound_access_tokens_required``), or its
authorization server's metadata (``dpop_signing_alg_values_supported``). A key, once created,
is stored with the owner's credentials and reused by later requests and processes.
"""

from __future__ import annotations

import base64
import hashlib
import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
from joserfc import jwt
from joserfc.jwk import ECKey

__all__ = ["DPoPKey", "access_token_hash", "content_digest", "htu", "nonce_challenge", "required"]

ALGORITHM = "ES256"
"""The signing algorithm of the keys we create (P-256, the one every DPoP server supports)."""


def htu(url: str) -> str:
    """The ``htu`` claim for a request URL: the URL without its query and fragment (RFC 9449 §4.2).

        htu("https://mcp.example.com/mcp?x=1#f")   # "https://mcp.example.com/mcp"
    """
    parts = urlsplit(str(url))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def origin(url: str) -> str:
    """``scheme://host[:port]`` of a URL: the key under which a server's nonce is remembered."""
    parts = urlsplit(str(url))
    return f"{parts.scheme}://{parts.netloc}".lower()


def access_token_hash(access_token: str) -> str:
    """The ``ath`` claim: base64url (no padding) of the SHA-256 of the ASCII access token (RFC 9449 §4.2).

        claims["ath"] == access_token_hash(token)
    """
    digest = hashlib.sha256(access_token.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def content_digest(body: bytes) -> str:
    """The ``content_digest`` claim of an MCP request's proof: ``sha-256=:<base64 SHA-256>:`` of
    the raw body (RFC 9530 §2 syntax; MCP DPoP profile draft, SEP-1932).

        content_digest(b'{"jsonrpc":"2.0","method":"tools/list","id":1}')
    """
    return "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode("ascii") + ":"


class DPoPKey:
    """A DPoP key pair (ES256) with the nonces servers handed out for it.

        key = DPoPKey.generate()
        proof = key.proof("POST", "https://mcp.example.com/mcp", access_token=token)
        same = DPoPKey.from_dict(key.to_dict())                 # e.g. read back from a store

    Attributes:
        thumbprint: the public key's JWK SHA-256 thumbprint (RFC 7638), what ``cnf.jkt`` of a
            bound token names.
        public_jwk: the public key as a JWK dict (what each proof's header carries).
        nonces: the last ``DPoP-Nonce`` each origin (``scheme://host:port``) sent, a dict.

    The private key never appears in ``repr``. RFC 9449 (DPoP).
    """

    def __init__(self, key: ECKey):
        if not isinstance(key, ECKey) or key.curve_name != "P-256" or not key.is_private:
            raise ValueError("a DPoP key must be a private EC P-256 key")
        self._key = key
        self.nonces: dict[str, str] = {}
        self._lock = threading.Lock()

    @classmethod
    def generate(cls) -> DPoPKey:
        """A new random key pair."""
        return cls(ECKey.generate_key("P-256", private=True))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DPoPKey:
        """The key a `to_dict` dict holds. Raises ``ValueError`` for anything else."""
        try:
            key = ECKey.import_key(dict(data))
        except Exception as error:  # noqa: BLE001 - joserfc raises several types for malformed JWKs
            raise ValueError(f"not a DPoP key: {type(error).__name__}") from None
        return cls(key)

    def to_dict(self) -> dict[str, str]:
        """The private key as a JSON-able JWK dict, to keep with the credentials."""
        return dict(self._key.as_dict(private=True))

    @property
    def public_jwk(self) -> dict[str, str]:
        """The public key as a JWK dict (RFC 7517), the ``jwk`` header of each DPoP proof (RFC 9449 §4.2)."""
        return dict(self._key.as_dict(private=False))

    @property
    def thumbprint(self) -> str:
        """The public key's JWK SHA-256 thumbprint (RFC 7638), base64url without padding."""
        return self._key.thumbprint()

    def nonce_for(self, url: str) -> str | None:
        """The nonce last received from ``url``'s origin, or ``None``."""
        with self._lock:
            return self.nonces.get(origin(url))

    def remember_nonce(self, url: str, nonce: str | None) -> bool:
        """Keep ``nonce`` (a ``DPoP-Nonce`` header value) for ``url``'s origin; returns whether it
        is new (a retry with it may succeed)."""
        if not nonce:
            return False
        with self._lock:
            fresh = self.nonces.get(origin(url)) != nonce
            self.nonces[origin(url)] = nonce
            return fresh

    def proof(self, method: str, url: str, *, access_token: str | None = None, nonce: str | None = None,
              body: bytes | None = None) -> str:
        """A new DPoP proof JWT for one request: ``htm``, ``htu`` (no query or fragment), ``iat``,
        a unique ``jti``, ``ath`` when ``access_token`` is given, ``nonce`` when given (else the
        origin's remembered nonce, if any). RFC 9449 §4.2. With ``body`` (the bytes of an MCP
        request), also ``content_digest`` (`content_digest`), which the MCP DPoP profile
        draft asks for so a proof cannot be replayed with another JSON-RPC message."""
        claims: dict[str, Any] = {
            "jti": uuid.uuid4().hex,
            "htm": method.upper(),
            "htu": htu(url),
            "iat": int(time.time()),
        }
        if access_token is not None:
            claims["ath"] = access_token_hash(access_token)
        nonce = nonce if nonce is not None else self.nonce_for(url)
        if nonce:
            claims["nonce"] = nonce
        if body is not None:
            claims["content_digest"] = content_digest(body)
        header = {"typ": "dpop+jwt", "alg": ALGORITHM, "jwk": self.public_jwk}
        return jwt.encode(header, claims, self._key, algorithms=[ALGORITHM])

    def __repr__(self) -> str:
        return f"DPoPKey(thumbprint={self.thumbprint!r})"


def nonce_challenge(response: Any) -> str | None:
    """The nonce to retry with, when a server answered ``use_dpop_nonce``; else ``None``.

        nonce = nonce_challenge(response)
        if nonce is not None: key.remember_nonce(url, nonce)   # and send the request again

    ``response`` (an ``httpx.Response``) asks to retry with one when it is a 400/401
    carrying ``DPoP-Nonce`` whose error is ``use_dpop_nonce`` (JSON body at an authorization
    server, ``WWW-Authenticate`` at a resource server). RFC 9449 §8, §9."""
    nonce = response.headers.get("DPoP-Nonce")
    if not nonce or response.status_code not in (400, 401):
        return None
    challenge = response.headers.get("WWW-Authenticate", "")
    if "use_dpop_nonce" in challenge:
        return nonce
    try:
        body = response.json()
    except (ValueError, RecursionError, httpx.ResponseNotRead):  # an unread stream: the challenge decides
        return None
    if isinstance(body, dict) and body.get("error") == "use_dpop_nonce":
        return nonce
    return None


def required(*, challenge: str | None = None, resource_metadata: Mapping[str, Any] | None = None,
             server_metadata: Mapping[str, Any] | None = None) -> bool:
    """Whether tokens for this server must be DPoP-bound.

        required(challenge='DPoP resource_metadata="https://mcp.example.com/.well-known/..."')  # True
        required(resource_metadata={"dpop_bound_access_tokens_required": True})               # True

    True when its ``WWW-Authenticate`` challenge uses
    the ``DPoP`` scheme (RFC 9449 §7.1), or its protected resource metadata sets
    ``dpop_bound_access_tokens_required`` (RFC 9728 §2).

    ``server_metadata`` (the authorization server's) is accepted but does not decide: its
    ``dpop_signing_alg_values_supported`` says the authorization server *can* bind tokens
    (RFC 9449 §5.1), and a resource server that only knows ``Bearer`` would refuse them.
    """
    if challenge and any(scheme.lower() == "dpop" for scheme in _schemes(challenge)):
        return True
    return bool(resource_metadata and resource_metadata.get("dpop_bound_access_tokens_required") is True)


def _schemes(challenge: str) -> list[str]:
    """The auth-scheme names of a ``WWW-Authenticate`` value (``Bearer x=1, DPoP y="a, b"`` ->
    ``["Bearer", "DPoP"]``): a name starts the value or follows a comma, outside quoted strings,
    and is not followed by ``=`` (RFC 9110 §11.6.1)."""
    pieces, current, quoted, escaped = [], [], False, False
    for char in challenge:
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
            current.append(char)
        elif char == '"':
            quoted = True
            current.append(char)
        elif char == ",":
            pieces.append("".join(current))
            current = []
        else:
            current.append(char)
    pieces.append("".join(current))
    schemes = []
    for piece in pieces:
        word = piece.strip().split(" ", 1)[0]
        if word and "=" not in word and '"' not in word:
            schemes.append(word)
    return schemes
