"""Review of issue 6 (OAuth) as a user and as an attacker: each test is a bug found and fixed.

Real servers on 127.0.0.1 (``machine_servers``, ``oauth_servers``, ``oauth_fakes``), no mocks.
"""

from __future__ import annotations

import time

import pytest

import llm_mcp
from llm_mcp.client.config import config, configure
from llm_mcp.client.oauth import MemoryStore, credential_key
from llm_mcp.client.oauth.grants import CLIENT_CREDENTIALS_EXTENSION
from llm_mcp_tests.machine_servers import Authority, ProtectedMCP
from llm_mcp_tests.recording_as import RecordingAS

SECRET = "review-client-secret-31"


@pytest.fixture
def store():
    before = config.credential_store
    fresh = MemoryStore()
    configure(credential_store=fresh)
    yield fresh
    configure(credential_store=before)


@pytest.fixture
def authority():
    with RecordingAS() as auth_server:
        yield Authority(auth_server)


def _reports(url: str) -> llm_mcp.MCP:
    return llm_mcp.mcp(url=url, name="reports",
                       oauth={"grant": "client_credentials", "client_id": "reports", "client_secret": SECRET})


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


def test_the_probe_before_any_401_declares_the_client(authority, store):
    """MCP 2026-07-28 ``_meta`` on every request: the unauthenticated ``server/discover`` probe the
    flow sends to read the challenge (here: a stored client-credentials token about to expire,
    in a server object that has seen no 401 yet) carries ``clientInfo`` and the client
    capabilities, with the extension the grant uses."""
    with ProtectedMCP(authority) as mcp:
        _reports(mcp.url).call("add", a=1, b=1)
        key = credential_key(mcp.url, None)
        record = store.read(key)
        record["expires_at"] = time.time()  # expiring: the next request first fetches a new token
        store.write(key, record)
        before = len(mcp.requests)
        assert _reports(mcp.url).call("add", a=2, b=2).text == "4"
        probes = [r["body"] for r in mcp.requests[before:] if (r["body"] or {}).get("method") == "server/discover"
                  and not r["authorization"]]
        assert probes, "no unauthenticated probe was sent"
        meta = probes[0]["params"]["_meta"]
        assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "llm_mcp"
        assert meta["io.modelcontextprotocol/clientCapabilities"] == {"extensions": {CLIENT_CREDENTIALS_EXTENSION: {}}}


def test_the_oauth_package_exports_what_the_docs_name():
    """docs/authorization.md names ``TokenRequestError`` (with ``.error``, ``.error_description``,
    ``.status``) and the DPoP key: both are importable from ``llm_mcp.client.oauth``."""
    from llm_mcp.client import oauth

    assert issubclass(oauth.TokenRequestError, llm_mcp.UnauthorizedError)
    assert oauth.DPoPKey.generate().thumbprint
    assert {"TokenRequestError", "DPoPKey"} <= set(oauth.__all__)
