"""Token endpoint requests (llm_mcp.client.oauth.tokens): client authentication, DPoP proofs and
nonces, errors; against a real HTTP server on 127.0.0.1 that records what it received."""

from __future__ import annotations

import base64
import time
import warnings
from urllib.parse import unquote_plus

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from joserfc import jwt
from joserfc.jwk import ECKey, OKPKey, RSAKey

import llm_mcp
from llm_mcp.client.oauth.dpop import DPoPKey, access_token_hash
from llm_mcp.client.oauth.tokens import (
    CLIENT_ASSERTION_TYPE,
    ClientAuth,
    TokenRequestError,
    choose_auth_method,
    request_token,
)

from llm_mcp_tests.support.fixtures import entered
from llm_mcp_tests.support.oauth_fakes import DEEP, Hostile
from llm_mcp_tests.support.recording_as import RecordingAS


SECRET = "s3cr3t:with spaces+plus&amp"


auth_server = entered(RecordingAS, name="auth_server")
http = entered(httpx.Client, name="http")


def _pem(key) -> str:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def _verify(assertion: str, public_key, algorithm: str) -> dict:
    """The assertion's claims, verified with the public key independently of the client code."""
    importer = {rsa.RSAPublicKey: RSAKey, ec.EllipticCurvePublicKey: ECKey,
                ed25519.Ed25519PublicKey: OKPKey}
    key_class = next(cls for base, cls in importer.items() if isinstance(public_key, base))
    pem = public_key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # EdDSA: superseded by Ed25519 (RFC 9864), still what servers accept
        token = jwt.decode(assertion, key_class.import_key(pem), algorithms=[algorithm])
    assert token.header["alg"] == algorithm
    return token.claims


def test_client_secret_basic_form_encodes_id_and_secret(auth_server, http):
    """RFC 6749 §2.3.1: id and secret are form-encoded before Basic; no secret in the body."""
    client = ClientAuth(client_id="app id:1", client_secret=SECRET)
    request_token(http, auth_server.url("/token"), {"grant_type": "client_credentials", "resource": "https://r/mcp"},
                  client=client, auth_method="client_secret_basic")
    received = auth_server.requests[0]
    scheme, _, encoded = received.headers["authorization"].partition(" ")
    assert scheme == "Basic"
    user, _, password = base64.b64decode(encoded).decode().partition(":")
    assert "%3A" in user and "+" in password  # the colon and spaces were encoded, so one ':' separates them
    assert (unquote_plus(user), unquote_plus(password)) == ("app id:1", SECRET)
    assert "client_secret" not in received.form
    assert received.form == {"grant_type": "client_credentials", "resource": "https://r/mcp"}


def test_client_secret_post_sends_both_in_the_body(auth_server, http):
    client = ClientAuth(client_id="app", client_secret=SECRET)
    request_token(http, auth_server.url("/token"), {"grant_type": "client_credentials"},
                  client=client, auth_method="client_secret_post")
    received = auth_server.requests[0]
    assert "authorization" not in received.headers
    assert received.form["client_id"] == "app" and received.form["client_secret"] == SECRET


def test_none_sends_only_the_client_id(auth_server, http):
    request_token(http, auth_server.url("/token"), {"grant_type": "authorization_code", "code": "c"},
                  client=ClientAuth(client_id="public"), auth_method="none")
    received = auth_server.requests[0]
    assert received.form == {"grant_type": "authorization_code", "code": "c", "client_id": "public"}
    assert "authorization" not in received.headers


def test_no_client_sends_the_form_as_given(auth_server, http):
    """The JWT bearer grant of a workload authenticates no client (MCP-WIF-01)."""
    form = {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": "a.b.c"}
    request_token(http, auth_server.url("/token"), form, client=None, auth_method="none")
    assert auth_server.requests[0].form == form
    assert "authorization" not in auth_server.requests[0].headers


@pytest.mark.parametrize("kind", ["rsa-pem", "ec-pem", "ec-object", "ec384-object", "ed25519-pem", "rsa-object"])
def test_private_key_jwt_signs_a_new_short_lived_assertion_each_time(auth_server, http, kind):
    """MCP-PKJWT-01: a PEM string or a cryptography key; each token request carries a newly signed,
    short-lived assertion with a unique jti, iss = sub = client_id, aud = the issuer."""
    if kind.startswith("rsa"):
        private, algorithm = rsa.generate_private_key(public_exponent=65537, key_size=2048), "RS256"
    elif kind.startswith("ec384"):
        private, algorithm = ec.generate_private_key(ec.SECP384R1()), "ES384"
    elif kind.startswith("ec"):
        private, algorithm = ec.generate_private_key(ec.SECP256R1()), "ES256"
    else:
        private, algorithm = ed25519.Ed25519PrivateKey.generate(), "EdDSA"
    client = ClientAuth(client_id="reports", private_key=_pem(private) if kind.endswith("pem") else private)
    issuer = auth_server.base
    for _ in range(2):
        before = int(time.time())
        request_token(http, auth_server.url("/token"), {"grant_type": "client_credentials"},
                      client=client, auth_method="private_key_jwt", issuer=issuer)
        after = int(time.time())
        form = auth_server.requests[-1].form
        assert form["client_assertion_type"] == CLIENT_ASSERTION_TYPE
        claims = _verify(form["client_assertion"], private.public_key(), algorithm)
        assert claims["iss"] == claims["sub"] == "reports"
        assert claims["aud"] == issuer
        assert before <= claims["iat"] <= after
        assert 0 < claims["exp"] - claims["iat"] <= 300
    first, second = (_verify(r.form["client_assertion"], private.public_key(), algorithm)
                     for r in auth_server.requests)
    assert first["jti"] != second["jti"]
    assert auth_server.requests[0].form["client_assertion"] != auth_server.requests[1].form["client_assertion"]
    assert "client_secret" not in auth_server.requests[0].form and "client_id" not in auth_server.requests[0].form


def test_private_key_jwt_honours_the_servers_algorithms(auth_server, http):
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    request_token(http, auth_server.url("/token"), {"grant_type": "client_credentials"},
                  client=ClientAuth(client_id="r", private_key=private), auth_method="private_key_jwt",
                  issuer=auth_server.base, signing_algorithms=["PS256"])
    claims = _verify(auth_server.requests[0].form["client_assertion"], private.public_key(), "PS256")
    assert claims["iss"] == "r"


def test_bad_private_keys_are_refused_without_echoing_them(http):
    with pytest.raises(ValueError, match="PEM") as caught:
        request_token(http, "http://127.0.0.1:9/token", {"grant_type": "client_credentials"},
                      client=ClientAuth(client_id="r", private_key="-----BEGIN PRIVATE KEY-----\nnot-a-key\n"),
                      auth_method="private_key_jwt")
    assert "not-a-key" not in str(caught.value)
    with pytest.raises(ValueError, match="curve"):
        request_token(http, "http://127.0.0.1:9/token", {"grant_type": "client_credentials"},
                      client=ClientAuth(client_id="r", private_key=ec.generate_private_key(ec.SECP256K1())),
                      auth_method="private_key_jwt")


def test_expires_at_is_added_in_epoch_seconds(auth_server, http):
    auth_server.answers.append((200, {"access_token": "a", "token_type": "Bearer", "expires_in": 120,
                                      "refresh_token": "r", "scope": "x"}, {}))
    before = time.time()
    token = request_token(http, auth_server.url("/token"), {"grant_type": "client_credentials"},
                          client=ClientAuth(client_id="c", client_secret="s"), auth_method="client_secret_post")
    after = time.time()
    assert int(before) + 120 <= token["expires_at"] <= int(after) + 120
    assert token["refresh_token"] == "r" and token["scope"] == "x" and token["access_token"] == "a"
    auth_server.answers.append((200, {"access_token": "b", "token_type": "Bearer"}, {}))
    token = request_token(http, auth_server.url("/token"), {"grant_type": "client_credentials"},
                          client=ClientAuth(client_id="c", client_secret="s"), auth_method="client_secret_post")
    assert token["expires_at"] is None


def test_a_refusal_raises_unauthorized_with_the_servers_reason_and_no_secret(auth_server, http):
    """MCP-CC-03: the authorization server's error and error_description; a secret it echoes is hidden."""
    auth_server.answers.append((401, {"error": "invalid_client",
                                      "error_description": f"unknown client or secret {SECRET}"}, {}))
    client = ClientAuth(client_id="reports", client_secret=SECRET)
    with pytest.raises(llm_mcp.UnauthorizedError) as caught:
        request_token(http, auth_server.url("/token"), {"grant_type": "client_credentials"},
                      client=client, auth_method="client_secret_basic", server_name="as.test")
    error = caught.value
    assert isinstance(error, TokenRequestError)
    assert error.error == "invalid_client" and error.status == 401
    assert str(error) == "as.test refused the token request: invalid_client: unknown client or secret [redacted]"
    assert SECRET not in repr(error) and SECRET not in str(error.error_description)
    assert SECRET not in repr(client) and "reports" in repr(client)


def test_a_refusal_without_json_still_raises_unauthorized(auth_server, http):
    auth_server.answers.append((400, b"nope", {}))
    with pytest.raises(llm_mcp.UnauthorizedError, match="HTTP 400"):
        request_token(http, auth_server.url("/token"), {"grant_type": "client_credentials"},
                      client=None, auth_method="none")


@pytest.mark.parametrize("answer", [
    (200, b"<html>hello</html>", {}),
    (200, {"token_type": "Bearer"}, {}),
    (200, ["access_token"], {}),
    (200, {"access_token": "a", "expires_in": "soon"}, {}),
])
def test_a_malformed_answer_raises_mcp_error(auth_server, http, answer):
    auth_server.answers.append(answer)
    with pytest.raises(llm_mcp.MCPError) as caught:
        request_token(http, auth_server.url("/token"), {"grant_type": "client_credentials"},
                      client=None, auth_method="none")
    assert not isinstance(caught.value, llm_mcp.UnauthorizedError)


def test_a_server_error_raises_connection_error(auth_server, http):
    auth_server.answers.append((503, {"error": "temporarily_unavailable"}, {"Retry-After": "7"}))
    with pytest.raises(llm_mcp.ConnectionError) as caught:
        request_token(http, auth_server.url("/token"), {"grant_type": "client_credentials"},
                      client=None, auth_method="none")
    assert caught.value.status == 503 and caught.value.retry_after == 7


def test_an_unreachable_endpoint_raises_connection_error(http, free_tcp_port):
    with pytest.raises(llm_mcp.ConnectionError, match="could not be reached"):
        request_token(http, f"http://127.0.0.1:{free_tcp_port}/token", {"grant_type": "client_credentials"},
                      client=None, auth_method="none")


def test_unusable_auth_methods_raise_value_error(http):
    with pytest.raises(ValueError, match="client_secret"):
        request_token(http, "http://127.0.0.1:9/token", {}, client=ClientAuth(client_id="c"),
                      auth_method="client_secret_basic")
    with pytest.raises(ValueError, match="unknown"):
        request_token(http, "http://127.0.0.1:9/token", {}, client=None, auth_method="magic")


def test_choose_auth_method_follows_the_servers_metadata():
    secret = ClientAuth(client_id="c", client_secret="s")
    assert choose_auth_method(secret, None) == "client_secret_basic"
    assert choose_auth_method(secret, ["client_secret_post"]) == "client_secret_post"
    assert choose_auth_method(secret, ["client_secret_post", "client_secret_basic"]) == "client_secret_basic"
    assert choose_auth_method(ClientAuth(client_id="c", private_key="k"), ["private_key_jwt"]) == "private_key_jwt"
    assert choose_auth_method(ClientAuth(client_id="c"), ["none"]) == "none"
    assert choose_auth_method(None, None) == "none"
    with pytest.raises(ValueError, match="private_key_jwt"):
        choose_auth_method(ClientAuth(client_id="c", private_key="k"), ["client_secret_basic"])
    with pytest.raises(ValueError, match="neither"):
        choose_auth_method(secret, ["private_key_jwt"])


def test_dpop_token_request_carries_a_verifiable_proof(auth_server, http):
    """MCP-DPOP-01 (token requests): a proof with htm, htu, iat, jti and the public key, no ath."""
    key = DPoPKey.generate()
    token = request_token(http, auth_server.url("/token?x=1"), {"grant_type": "client_credentials"},
                          client=None, auth_method="none", dpop=key)
    assert token["access_token"] == "tok-1"
    proof = auth_server.requests[0].headers["dpop"]
    header = jwt.decode(proof, ECKey.import_key(key.public_jwk), algorithms=["ES256"]).header
    claims = jwt.decode(proof, ECKey.import_key(header["jwk"]), algorithms=["ES256"]).claims
    assert header["typ"] == "dpop+jwt" and "d" not in header["jwk"]
    assert claims["htm"] == "POST" and claims["htu"] == auth_server.url("/token")
    assert abs(claims["iat"] - time.time()) < 60 and claims["jti"]
    assert "ath" not in claims and "nonce" not in claims
    assert ECKey.import_key(header["jwk"]).thumbprint() == key.thumbprint


def test_dpop_use_nonce_is_retried_once_with_the_servers_nonce(auth_server, http):
    """MCP-DPOP-01: use_dpop_nonce at the authorization server (RFC 9449 §8): one retry with the nonce,
    a new proof (new jti), and the nonce reused by the next request."""
    auth_server.answers.append((400, {"error": "use_dpop_nonce"}, {"DPoP-Nonce": "n-1"}))
    key = DPoPKey.generate()
    request_token(http, auth_server.url("/token"), {"grant_type": "client_credentials"},
                  client=None, auth_method="none", dpop=key)
    assert len(auth_server.requests) == 2
    first, second = (jwt.decode(r.headers["dpop"], ECKey.import_key(key.public_jwk), algorithms=["ES256"]).claims
                     for r in auth_server.requests)
    assert "nonce" not in first and second["nonce"] == "n-1" and first["jti"] != second["jti"]
    request_token(http, auth_server.url("/token"), {"grant_type": "client_credentials"},
                  client=None, auth_method="none", dpop=key)
    third = jwt.decode(auth_server.requests[2].headers["dpop"], ECKey.import_key(key.public_jwk),
                       algorithms=["ES256"]).claims
    assert third["nonce"] == "n-1"


def test_dpop_nonce_demanded_twice_is_a_refusal(auth_server, http):
    auth_server.answers.extend([(400, {"error": "use_dpop_nonce"}, {"DPoP-Nonce": "n-1"}),
                                (400, {"error": "use_dpop_nonce"}, {"DPoP-Nonce": "n-2"})])
    with pytest.raises(llm_mcp.UnauthorizedError, match="use_dpop_nonce"):
        request_token(http, auth_server.url("/token"), {"grant_type": "client_credentials"},
                      client=None, auth_method="none", dpop=DPoPKey.generate())
    assert len(auth_server.requests) == 2


def test_dpop_key_round_trips_through_a_dict_and_hides_its_private_part():
    """MCP-DPOP-02 (the key is JSON-able for the credential store)."""
    import json

    key = DPoPKey.generate()
    again = DPoPKey.from_dict(json.loads(json.dumps(key.to_dict())))
    assert again.thumbprint == key.thumbprint
    assert key.to_dict()["d"] not in repr(key)
    proof = again.proof("GET", "https://mcp.example.com/mcp?q#f", access_token="tok")
    claims = jwt.decode(proof, ECKey.import_key(key.public_jwk), algorithms=["ES256"]).claims
    assert claims["htu"] == "https://mcp.example.com/mcp" and claims["ath"] == access_token_hash("tok")
    expected = base64.urlsafe_b64encode(__import__("hashlib").sha256(b"tok").digest()).rstrip(b"=").decode()
    assert claims["ath"] == expected
    with pytest.raises(ValueError):
        DPoPKey.from_dict({"kty": "EC"})


def test_a_refusal_reason_is_printable_and_bounded(auth_server, http):
    auth_server.answers.append((400, {"error": "invalid_grant", "error_description": "line\nbreak " + "x" * 1000}, {}))
    with pytest.raises(TokenRequestError) as caught:
        request_token(http, auth_server.url("/token"), {"grant_type": "client_credentials"},
                      client=None, auth_method="none")
    message = str(caught.value)
    assert "\n" not in message and "line break" in message
    assert len(caught.value.error_description) == 303 and caught.value.error_description.endswith("...")


def test_a_dripping_token_endpoint_times_out(store):
    """The same bound at the token endpoint (client credentials): ``llm_mcp.ConnectionError``
    (``timed_out``), not a request held for as long as the server likes."""
    with Hostile(path="/token", mode="drip") as hostile:
        reports = llm_mcp.mcp(url=hostile.url, name="hostile", timeout=2,
                              oauth={"grant": "client_credentials", "client_id": "reports", "client_secret": SECRET})
        started = time.monotonic()
        with pytest.raises(llm_mcp.ConnectionError) as info:
            reports.tools
        assert time.monotonic() - started < 30
        assert info.value.timed_out


@pytest.mark.parametrize("body", [DEEP[:40_000] + DEEP[-40_000:], b'{"access_token": "t", "expires_in": 1e400}',
                                  b'{"access_token": "t", "expires_in": NaN}'],
                         ids=["deep", "infinite-lifetime", "nan-lifetime"])
def test_a_malformed_token_answer_is_an_mcp_error(store, body):
    """A token answer nested too deep to parse, or whose ``expires_in`` is infinite or NaN
    (Python's JSON parser accepts both), raises ``llm_mcp.MCPError`` saying what is wrong,
    not ``RecursionError``/``OverflowError``/``ValueError``."""
    with Hostile(path="/token", mode="bytes", body=body) as hostile:
        reports = llm_mcp.mcp(url=hostile.url, name="hostile", timeout=5,
                              oauth={"grant": "client_credentials", "client_id": "reports", "client_secret": SECRET})
        with pytest.raises(llm_mcp.MCPError, match="token endpoint"):
            reports.tools
