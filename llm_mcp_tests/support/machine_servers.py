"""Servers for the machine-grant and DPoP tests (helper B), on 127.0.0.1.

    with RecordingAS() as auth_server, Authority(auth_server) as authority, ProtectedMCP(authority) as mcp:
        class Reports(llm_mcp.MCP):
            url = mcp.url
            oauth = {"grant": "client_credentials", "client_id": "reports", "client_secret": "s"}
        Reports().tools
        authority.token_requests()      # what the token endpoint received
        mcp.requests                    # what the MCP server received (headers, JSON body, status)

* :class:`Authority` turns a :class:`~llm_mcp_tests.support.recording_as.RecordingAS` into an
  authorization server: metadata (RFC 8414), an authorization endpoint that approves at once
  (redirect with ``code``, ``state`` and ``iss``), a token endpoint issuing opaque tokens, bound
  to the DPoP proof's key when the request carries one (RFC 9449 §5; the proof is verified),
  optionally demanding a DPoP nonce (§8), and a ``check`` hook to refuse requests.
* :class:`ProtectedMCP`: the ``llm_mcp.testing`` kit over Streamable HTTP (uvicorn, a thread)
  behind the authority's tokens: protected resource metadata (RFC 9728), ``401`` with a
  ``Bearer`` or ``DPoP`` challenge, DPoP-bound tokens accepted only with a valid proof (``htm``,
  ``htu``, ``ath``, ``content_digest`` of a POST body, key thumbprint = the token's, fresh ``jti``;
  optionally a server nonce, §9).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import itertools
import json
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, ClassVar, Self
from urllib.parse import urlencode

from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey

from llm_mcp.testing import Server, Tool
from llm_mcp.testing.serve import read_body, send_json

from llm_mcp_tests.support.asgi import replay
from llm_mcp_tests.support.recording_as import Answer, Recorded, RecordingAS

__all__ = ["AS_NONCE", "RS_NONCE", "Authority", "ProtectedMCP", "verify_proof"]

AS_NONCE = "as-nonce-1"
RS_NONCE = "rs-nonce-1"


def _b64_sha256(text: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode("ascii")).digest()).rstrip(b"=").decode()


def verify_proof(proof: str | None, *, method: str, url: str, access_token: str | None = None,
                 body: bytes | None = None) -> dict[str, Any]:
    """A DPoP proof checked as RFC 9449 §4.3 asks (and, given ``body``, its ``content_digest`` as
    the MCP DPoP profile draft asks); returns ``{"claims", "jkt"}``. Raises ``ValueError`` naming
    the failed check."""
    if not proof or "," in proof:
        raise ValueError("missing or repeated DPoP header")
    # the header first, unverified, to find the key; then the signature with that key
    segments = proof.split(".")
    if len(segments) != 3:
        raise ValueError("not a compact JWS")
    header = json.loads(base64.urlsafe_b64decode(segments[0] + "=" * (-len(segments[0]) % 4)))
    if header.get("typ") != "dpop+jwt" or header.get("alg") != "ES256":
        raise ValueError("typ/alg")
    public = header.get("jwk") or {}
    if "d" in public:
        raise ValueError("private key in the proof")
    key = ECKey.import_key(public)
    try:
        claims = jwt.decode(proof, key, algorithms=["ES256"]).claims
    except JoseError as error:
        raise ValueError(f"signature: {error}") from None
    if claims.get("htm") != method:
        raise ValueError("htm")
    if claims.get("htu") != url:
        raise ValueError(f"htu {claims.get('htu')!r} != {url!r}")
    if not isinstance(claims.get("jti"), str) or not claims["jti"]:
        raise ValueError("jti")
    if not isinstance(claims.get("iat"), int) or abs(claims["iat"] - time.time()) > 300:
        raise ValueError("iat")
    if access_token is not None and claims.get("ath") != _b64_sha256(access_token):
        raise ValueError("ath")
    if body is not None:
        expected = "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode() + ":"
        if claims.get("content_digest") != expected:
            raise ValueError("content_digest")
    return {"claims": claims, "jkt": key.thumbprint()}


class Authority:
    """Tokens issued at a :class:`RecordingAS` (see the module docstring).

    Attributes:
        tokens: issued access tokens -> ``{"jkt": thumbprint or None, "form": the request's form}``.
        expires_in: seconds (``expires_in``) of each new token.
        refresh: whether to issue refresh tokens (and accept ``grant_type=refresh_token``).
        require_nonce: demand the DPoP nonce :data:`AS_NONCE` (``use_dpop_nonce`` first).
        bind_dpop: bind tokens to the proof's key (``False``: ignore proofs, issue Bearer tokens).
        check: ``callable(Recorded) -> Answer | None``: an answer refuses the token request.
        proof_errors: why proofs were refused (strings).
    """

    def __init__(self, auth_server: RecordingAS, *, expires_in: int = 3600, refresh: bool = False,
                 require_nonce: bool = False, metadata: dict[str, Any] | None = None) -> None:
        self.auth_server = auth_server
        self.tokens: dict[str, dict[str, Any]] = {}
        self.expires_in = expires_in
        self.refresh = refresh
        self.require_nonce = require_nonce
        self.bind_dpop = True
        self.check: Callable[[Recorded], Answer | None] | None = None
        self.proof_errors: list[str] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        base = auth_server.base
        auth_server.metadata = {
            "issuer": base, "token_endpoint": f"{base}/token", "authorization_endpoint": f"{base}/authorize",
            "response_types_supported": ["code"], "code_challenge_methods_supported": ["S256"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials",
                                      "urn:ietf:params:oauth:grant-type:jwt-bearer"],
            "authorization_response_iss_parameter_supported": True,
            **(metadata or {}),
        }
        auth_server.handler = self._token
        auth_server.get_handler = self._authorize

    @property
    def issuer(self) -> str:
        return self.auth_server.base

    def token_requests(self) -> list[Recorded]:
        return [r for r in self.auth_server.requests if r.method == "POST" and r.path == "/token"]

    def _authorize(self, received: Recorded) -> Answer | None:
        if received.path != "/authorize":
            return None
        query = {"code": f"code-{next(self._ids)}", "state": received.form.get("state", ""), "iss": self.issuer}
        return (302, b"", {"Location": f"{received.form['redirect_uri']}?{urlencode(query)}"})

    def _token(self, received: Recorded) -> Answer | None:
        if received.path != "/token":
            return None
        jkt = None
        if "dpop" in received.headers and self.bind_dpop:
            try:
                checked = verify_proof(received.headers["dpop"], method="POST", url=f"{self.issuer}/token")
            except ValueError as error:
                self.proof_errors.append(str(error))
                return (400, {"error": "invalid_dpop_proof", "error_description": str(error)}, {})
            jkt = checked["jkt"]
            if self.require_nonce and checked["claims"].get("nonce") != AS_NONCE:
                return (400, {"error": "use_dpop_nonce", "error_description": "nonce required"},
                        {"DPoP-Nonce": AS_NONCE})
        if self.check is not None:
            refusal = self.check(received)
            if refusal is not None:
                return refusal
        with self._lock:
            number = next(self._ids)
            token = f"at-{number}"
            self.tokens[token] = {"jkt": jkt, "form": dict(received.form)}
        body: dict[str, Any] = {"access_token": token, "token_type": "DPoP" if jkt else "Bearer",
                                "expires_in": self.expires_in}
        if self.refresh:
            body["refresh_token"] = f"rt-{number}"
        return (200, body, {"Cache-Control": "no-store"})


class _Add(Tool):
    name = "add"
    description = "Adds two numbers."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {"a": {"type": "number"},
                                                                              "b": {"type": "number"}},
                                              "required": ["a", "b"]}

    def call(self) -> dict[str, Any]:
        total = self.arguments["a"] + self.arguments["b"]
        return self.respond_with(content=self.text_content(text=str(total)))


class ProtectedMCP:
    """The kit's MCP server behind the :class:`Authority`'s tokens (see the module docstring).

    Attributes:
        url: the MCP endpoint, ``http://127.0.0.1:P/mcp``.
        requests: what reached ``/mcp``, in order: dicts with ``authorization``, ``dpop`` (headers
            or ``None``), ``body`` (parsed JSON or ``None``), ``status`` (what the gate answered,
            ``None`` when passed to the MCP server), ``jkt`` (the verified proof's thumbprint).
        proof_errors: why proofs were refused.
    """

    def __init__(self, authority: Authority, *, era: str = "auto", dpop: bool = False,
                 dpop_in_metadata: bool = False, require_nonce: bool = False) -> None:
        self.authority = authority
        self.era, self.dpop, self.dpop_in_metadata, self.require_nonce = era, dpop, dpop_in_metadata, require_nonce
        self.requests: list[dict[str, Any]] = []
        self.proof_errors: list[str] = []
        self._jtis: set[str] = set()
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}/mcp"
        self.metadata_url = self.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
        self._uvicorn: Any = None
        self._thread: threading.Thread | None = None

    def declared_extensions(self) -> list[dict[str, Any] | None]:
        """Per JSON-RPC request (not notification) that reached ``/mcp``, answered or refused, the
        ``extensions`` the client declared (``_meta`` client capabilities of a modern request, or
        ``initialize``'s capabilities); ``None`` for one that declares none (handshake-era requests
        after ``initialize``)."""
        found: list[dict[str, Any] | None] = []
        for request in self.requests:
            body = request["body"]
            if not isinstance(body, dict) or "id" not in body:
                continue
            params = body.get("params") or {}
            if body.get("method") == "initialize":
                found.append((params.get("capabilities") or {}).get("extensions"))
                continue
            meta = params.get("_meta") or {}
            capabilities = meta.get("io.modelcontextprotocol/clientCapabilities")
            found.append(capabilities.get("extensions") if isinstance(capabilities, dict) else None)
        return found

    def _challenge(self, extra: str = "") -> list[tuple[bytes, bytes]]:
        scheme = "DPoP" if self.dpop else "Bearer"
        value = f'{scheme} resource_metadata="{self.metadata_url}"' + (f", {extra}" if extra else "")
        return [(b"www-authenticate", value.encode())]

    async def _gate(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        if scope["path"] in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
            metadata = {"resource": self.url, "authorization_servers": [self.authority.issuer]}
            if self.dpop_in_metadata:
                metadata["dpop_bound_access_tokens_required"] = True
            await send_json(send, 200, metadata)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        body = await read_body(receive) if scope["method"] == "POST" else b""
        parsed = None
        with contextlib.suppress(ValueError):
            parsed = json.loads(body) if body else None
        entry = {"authorization": headers.get("authorization"), "dpop": headers.get("dpop"), "body": parsed,
                 "status": None, "jkt": None, "method": scope["method"], "raw": body}
        self.requests.append(entry)
        scheme, _, token = (headers.get("authorization") or "").partition(" ")
        record = self.authority.tokens.get(token.strip())
        if record is None:
            entry["status"] = 401
            await send_json(send, 401, {"error": "invalid_token"}, self._challenge())
            return
        if record["jkt"] is None and not self.dpop and scheme.lower() != "bearer":
            self.proof_errors.append(f"scheme {scheme} for a bearer token")  # RFC 9449 §7.2
            entry["status"] = 401
            await send_json(send, 401, {"error": "invalid_token"}, self._challenge('error="invalid_token"'))
            return
        if record["jkt"] is not None or self.dpop:
            try:
                if scheme != "DPoP" or record["jkt"] is None:
                    raise ValueError(f"scheme {scheme} for a {'bound' if record['jkt'] else 'bearer'} token")
                checked = verify_proof(headers.get("dpop"), method=scope["method"], url=self.url, access_token=token,
                                       body=body if scope["method"] == "POST" else None)
                if checked["jkt"] != record["jkt"]:
                    raise ValueError("the proof's key is not the token's")
                if checked["claims"]["jti"] in self._jtis:
                    raise ValueError("jti replayed")
                self._jtis.add(checked["claims"]["jti"])
                entry["jkt"] = checked["jkt"]
            except ValueError as error:
                self.proof_errors.append(str(error))
                entry["status"] = 401
                await send_json(send, 401, {"error": "invalid_token"}, self._challenge('error="invalid_token"'))
                return
            if self.require_nonce and checked["claims"].get("nonce") != RS_NONCE:
                entry["status"] = 401
                await send_json(send, 401, {"error": "use_dpop_nonce"},
                               [*self._challenge('error="use_dpop_nonce"'), (b"dpop-nonce", RS_NONCE.encode())])
                return
        await self._app(scope, replay(body, receive), send)

    def __enter__(self) -> Self:
        import uvicorn

        from llm_mcp.testing.serve import build_http_app

        kit = Server("machine-protected", tools=[_Add])
        self._app = build_http_app(kit.build(), self.era)
        config = uvicorn.Config(self._gate, log_level="warning", lifespan="on", timeout_graceful_shutdown=1,
                                interface="asgi3")
        self._uvicorn = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._uvicorn.run, kwargs={"sockets": [self._socket]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._uvicorn.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the MCP test server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self._uvicorn.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._socket.close()


