"""DPoP (RFC 9449): when a server requires it, and what the client sends then."""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import ECKey

import llm_mcp
from llm_mcp.client.config import config, configure
from llm_mcp.client.oauth.dpop import DPoPKey, required

from llm_mcp_tests.support.machine_servers import AS_NONCE, RS_NONCE, Authority, ProtectedMCP
from llm_mcp_tests.support.recording_as import RecordingAS
from llm_mcp_tests.support.stores import FileStore


def test_required_by_the_challenge_scheme_or_the_resource_metadata():
    """MCP-DPOP-01: the 401 challenge (``WWW-Authenticate: DPoP ...``) or the protected resource's
    ``dpop_bound_access_tokens_required`` asks for DPoP."""
    assert required(challenge='DPoP resource_metadata="https://mcp.example.com/.well-known/x"')
    assert required(challenge='Bearer realm="mcp", DPoP algs="ES256"')
    assert required(challenge="dpop")
    assert required(resource_metadata={"dpop_bound_access_tokens_required": True})
    assert not required(resource_metadata={"dpop_bound_access_tokens_required": False})
    assert not required(challenge='Bearer error="invalid_token", error_description="x, DPoP required"')
    assert not required(challenge='Bearer realm="a\\"b, DPoP c"')
    assert not required(challenge=None, resource_metadata=None)


def test_an_authorization_server_that_merely_supports_dpop_does_not_require_it():
    """An authorization server advertising ``dpop_signing_alg_values_supported`` can bind tokens; a
    resource server that challenges with Bearer only would refuse DPoP tokens, so Bearer stays."""
    assert not required(challenge='Bearer resource_metadata="https://x"',
                        server_metadata={"dpop_signing_alg_values_supported": ["ES256"]})


# --------------------------------------------------------------------------- end to end

SECRET = "dpop-client-secret-77"
ROOT = Path(__file__).resolve().parents[3]


def _reports(url: str) -> llm_mcp.MCP:
    return llm_mcp.mcp(url=url, name="reports",
                       oauth={"grant": "client_credentials", "client_id": "reports", "client_secret": SECRET})


def _ath(token: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(token.encode()).digest()).rstrip(b"=").decode()


def _claims(proof: str) -> dict:
    """A proof's claims, verified with the key its own header carries (independently of the client)."""
    header = jwt.decode(proof, ECKey.import_key(_header_jwk(proof)), algorithms=["ES256"]).header
    return jwt.decode(proof, ECKey.import_key(header["jwk"]), algorithms=["ES256"]).claims


def _header_jwk(proof: str) -> dict:
    import json

    first = proof.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(first + "=" * (-len(first) % 4)))["jwk"]


@pytest.mark.parametrize("trigger", ["challenge", "resource-metadata"])
def test_a_server_requiring_dpop_gets_bound_tokens_and_signed_requests(authority, store, trigger):
    """MCP-DPOP-01, MCP-DPOP-03: the ``DPoP`` challenge or ``dpop_bound_access_tokens_required`` makes the
    client create a key, prove it at the token endpoint (the token is bound to its thumbprint), and
    send ``Authorization: DPoP <token>`` with a fresh proof (htm, htu, ath, jti) on every MCP request."""
    with ProtectedMCP(authority, dpop=trigger == "challenge", dpop_in_metadata=trigger == "resource-metadata") as mcp:
        reports = _reports(mcp.url)
        assert reports.call("add", a=20, b=22).text == "42"
        (token_request,) = authority.token_requests()
        assert "dpop" in token_request.headers and authority.proof_errors == []
        (token, issued), = authority.tokens.items()
        assert issued["jkt"] is not None
        served = [r for r in mcp.requests if r["status"] is None]
        assert len(served) >= 2 and mcp.proof_errors == []
        assert all(r["authorization"] == f"DPoP {token}" and r["jkt"] == issued["jkt"] for r in served)
        claims = [_claims(r["dpop"]) for r in served]
        assert all(c["ath"] == _ath(token) and c["htu"] == mcp.url and c["htm"] == "POST" for c in claims)
        digests = ["sha-256=:" + base64.b64encode(hashlib.sha256(r["raw"]).digest()).decode() + ":" for r in served]
        assert [c["content_digest"] for c in claims] == digests  # each proof names its own message
        assert len({c["jti"] for c in claims}) == len(claims)
        assert abs(claims[0]["iat"] - time.time()) < 120


def test_a_server_that_does_not_ask_for_dpop_gets_bearer_tokens(authority, store):
    """No DPoP without a reason: a Bearer challenge and plain metadata keep plain bearer tokens."""
    authority.auth_server.metadata["dpop_signing_alg_values_supported"] = ["ES256"]
    with ProtectedMCP(authority) as mcp:
        _reports(mcp.url).call("add", a=1, b=1)
        assert "dpop" not in authority.token_requests()[0].headers
        assert all(r["authorization"].startswith("Bearer ") and r["dpop"] is None
                   for r in mcp.requests if r["status"] is None)


def test_the_key_is_stored_with_the_credentials_and_reused(authority, store):
    """MCP-DPOP-02 (same process): the private JWK is in the owner's credential record; another server
    object reads it and keeps signing with it, without a new token."""
    with ProtectedMCP(authority, dpop=True) as mcp:
        _reports(mcp.url).call("add", a=1, b=1)
        (record,) = [store.read(key) for key in store._data if store.read(key).get("access_token")]
        stored = DPoPKey.from_dict(record["dpop_key"])
        (issued,) = authority.tokens.values()
        assert stored.thumbprint == issued["jkt"] and "d" in record["dpop_key"]
        seen = len(mcp.requests)
        _reports(mcp.url).call("add", a=2, b=2)
        assert len(authority.token_requests()) == 1
        assert {r["jkt"] for r in mcp.requests[seen:] if r["status"] is None} == {issued["jkt"]}


@pytest.mark.slow
def test_the_key_is_reused_by_another_process(authority, tmp_path):
    """MCP-DPOP-02 (across processes): a second process with the same credential store signs with the
    stored key and presents the stored token; no new token is requested."""
    before = config.credential_store
    configure(credential_store=FileStore(tmp_path / "credentials.json"))
    try:
        with ProtectedMCP(authority, dpop=True) as mcp:
            _reports(mcp.url).call("add", a=1, b=1)
            (issued,) = authority.tokens.values()
            seen = len(mcp.requests)
            script = (
                "import sys, llm_mcp\n"
                "from llm_mcp.client.config import configure\n"
                "from llm_mcp_tests.support.stores import FileStore\n"
                "configure(credential_store=FileStore(sys.argv[1]))\n"
                "server = llm_mcp.mcp(url=sys.argv[2], name='reports', oauth={'grant': 'client_credentials',"
                " 'client_id': 'reports', 'client_secret': sys.argv[3]})\n"
                "print(server.call('add', a=5, b=6).text)\n"
            )
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            run = subprocess.run([sys.executable, "-c", script, str(tmp_path / "credentials.json"), mcp.url, SECRET],
                                 capture_output=True, text=True, timeout=120, env=env, cwd=ROOT, check=False)
            assert run.returncode == 0, run.stderr[-2000:]
            assert run.stdout.strip() == "11"
            assert len(authority.token_requests()) == 1
            later = mcp.requests[seen:]
            assert later and all(r["status"] is None and r["jkt"] == issued["jkt"] for r in later)
    finally:
        configure(credential_store=before)


def test_nonces_from_the_authorization_server_and_the_mcp_server_are_honoured(store):
    """MCP-DPOP-01 with nonces (RFC 9449 §8, §9): ``use_dpop_nonce`` at the token endpoint and at the MCP
    server is answered by one retry carrying the server's nonce; later requests carry it from the start."""
    with RecordingAS() as auth_server:
        authority = Authority(auth_server, require_nonce=True)
        with ProtectedMCP(authority, dpop=True, require_nonce=True) as mcp:
            reports = _reports(mcp.url)
            reports.call("add", a=1, b=2)
            first, second = authority.token_requests()
            assert "nonce" not in _claims(first.headers["dpop"]) and _claims(second.headers["dpop"])["nonce"] == AS_NONCE
            statuses = [r["status"] for r in mcp.requests]
            assert statuses.count(401) == 2  # the first request (no token yet), then the one use_dpop_nonce
            nonce_refusal = next(i for i, r in enumerate(mcp.requests) if r["status"] == 401 and r["dpop"])
            assert "nonce" not in _claims(mcp.requests[nonce_refusal]["dpop"])
            after = mcp.requests[nonce_refusal + 1:]
            assert after and all(r["status"] is None and _claims(r["dpop"])["nonce"] == RS_NONCE for r in after)
            reports.call("add", a=2, b=2)
            assert [r["status"] for r in mcp.requests].count(401) == 2


def test_an_authorization_code_app_binds_its_code_exchange_and_refresh(store):
    """MCP-DPOP-01 for a user's app: the code exchange and the refresh carry proofs of the same key."""
    with RecordingAS() as auth_server:
        authority = Authority(auth_server, refresh=True)
        auth_server.metadata["token_endpoint_auth_methods_supported"] = ["client_secret_basic"]
        with ProtectedMCP(authority, dpop=True) as mcp:
            linear = llm_mcp.mcp(url=mcp.url, name="linear",
                                 oauth={"client_id": "linear-app", "client_secret": SECRET})
            with pytest.raises(llm_mcp.UnauthorizedError):
                linear.connect()
            answer = httpx.get(linear.authorization_url(redirect_uri="http://127.0.0.1:9/cb"), follow_redirects=False)
            linear.authorize({k: v[0] for k, v in parse_qs(urlsplit(answer.headers["location"]).query).items()})
            linear.call("add", a=1, b=1)
            for key in list(store._data):
                record = store.read(key)
                if record.get("access_token"):
                    record["expires_at"] = int(time.time()) + 30
                    store.write(key, record)
            linear.call("add", a=1, b=2)
            code, refresh = authority.token_requests()
            assert refresh.form["grant_type"] == "refresh_token"
            thumbprints = {ECKey.import_key(_header_jwk(r.headers["dpop"])).thumbprint() for r in (code, refresh)}
            assert len(thumbprints) == 1
            assert {t["jkt"] for t in authority.tokens.values()} == thumbprints
            assert mcp.proof_errors == [] and authority.proof_errors == []


def test_a_bearer_token_issued_to_a_dpop_request_is_sent_as_bearer(authority, store):
    """MCP-DPOP-03, RFC 9449 §5: the client asked for a DPoP-bound token (the resource's metadata
    requires DPoP) but the authorization server ignored the proof and answered
    ``token_type: Bearer``: the token is then a bearer token and goes out as ``Bearer``, without
    a proof (the resource server refuses the ``DPoP`` scheme for an unbound token)."""
    authority.bind_dpop = False
    with ProtectedMCP(authority, dpop_in_metadata=True) as mcp:
        assert _reports(mcp.url).call("add", a=2, b=3).text == "5"
        assert "dpop" in authority.token_requests()[0].headers  # the client did ask for a bound token
        (token,) = authority.tokens
        served = [r for r in mcp.requests if r["status"] is None]
        assert served and all(r["authorization"] == f"Bearer {token}" and r["dpop"] is None for r in served)
