"""The OAuth test servers themselves (llm_mcp_tests/support/oauth_servers.py), driven with plain httpx.

These prove the test infrastructure the authorization tests rely on behaves as the RFCs say,
independently of the client under test: PKCE S256 is required and checked, refresh tokens
rotate, ``iss`` comes back on the redirect, the MCP server challenges and refuses as the MCP
authorization spec describes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import subprocess
import sys
from collections.abc import Iterator
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest

from llm_mcp_tests.support.oauth_servers import OAuthServers, oauth_servers
from llm_mcp_tests.support.processes import REPO_ROOT

REDIRECT = "http://127.0.0.1:9/callback"


@pytest.fixture
def servers() -> Iterator[OAuthServers]:
    with oauth_servers() as running:
        yield running


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def _authorize(servers: OAuthServers, client_id: str, challenge: str, **extra: str) -> dict[str, str]:
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "s-1",
              "scope": "mcp", "code_challenge": challenge, "code_challenge_method": "S256",
              "resource": servers.mcp_url, **extra}
    callback = servers.approve(f"{servers.issuer}/authorize?{urlencode(params)}")
    assert callback.startswith(REDIRECT + "?")
    return {key: values[0] for key, values in parse_qs(urlsplit(callback).query).items()}


def _code_flow(servers: OAuthServers) -> tuple[str, dict[str, object]]:
    servers.register_client("app", redirect_uris=[REDIRECT])
    verifier, challenge = _pkce()
    code = _authorize(servers, "app", challenge)["code"]
    token = httpx.post(f"{servers.issuer}/token", data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": "app",
        "code_verifier": verifier, "resource": servers.mcp_url})
    assert token.status_code == 200, token.text
    return "app", token.json()


def test_metadata_documents(servers):
    """RFC 9728 protected resource metadata names the authorization server; RFC 8414 metadata
    has the issuer it was fetched for, S256 PKCE and the RFC 9207 flag."""
    resource = httpx.get(servers.metadata_url).json()
    assert resource["resource"] == servers.mcp_url
    assert resource["authorization_servers"] == [servers.issuer]
    assert httpx.get(servers.mcp_url.replace("/mcp", "/.well-known/oauth-protected-resource")).json() == resource
    metadata = httpx.get(f"{servers.issuer}/.well-known/oauth-authorization-server").json()
    assert metadata["issuer"] == servers.issuer
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["authorization_response_iss_parameter_supported"] is True
    assert metadata["registration_endpoint"] == f"{servers.issuer}/register"


def test_issuer_with_a_path_serves_metadata_at_the_path_forms():
    with oauth_servers(issuer_path="/tenant") as servers:
        origin = servers.issuer.removesuffix("/tenant")
        assert httpx.get(f"{origin}/.well-known/oauth-authorization-server/tenant").json()["issuer"] == servers.issuer
        assert httpx.get(f"{servers.issuer}/.well-known/openid-configuration").json()["issuer"] == servers.issuer
        assert httpx.get(f"{origin}/.well-known/oauth-authorization-server").status_code == 404


def test_mcp_server_challenges_without_a_token(servers):
    response = httpx.post(servers.mcp_url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == f'Bearer resource_metadata="{servers.metadata_url}", scope="mcp"'
    bad = httpx.post(servers.mcp_url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                     headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401 and 'error="invalid_token"' in bad.headers["www-authenticate"]


def test_code_flow_with_pkce_and_iss(servers):
    client_id, token = _code_flow(servers)
    assert token["token_type"] == "Bearer" and token["refresh_token"] and token["scope"] == "mcp"
    [authorization] = servers.authorizations()
    assert authorization["code_challenge_method"] == "S256"
    _, challenge = _pkce()
    params = _authorize(servers, client_id, challenge)
    assert params["iss"] == servers.issuer and params["state"] == "s-1"


def test_wrong_code_verifier_is_refused(servers):
    servers.register_client("app", redirect_uris=[REDIRECT])
    _, challenge = _pkce()
    code = _authorize(servers, "app", challenge)["code"]
    refused = httpx.post(f"{servers.issuer}/token", data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": "app",
        "code_verifier": secrets.token_urlsafe(48)})
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"


def test_code_for_another_resource_is_refused(servers):
    """RFC 8707: the token request's ``resource`` must be the one the code was issued for."""
    servers.register_client("app", redirect_uris=[REDIRECT])
    verifier, challenge = _pkce()
    code = _authorize(servers, "app", challenge)["code"]
    refused = httpx.post(f"{servers.issuer}/token", data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": "app",
        "code_verifier": verifier, "resource": "http://127.0.0.1:9/other"})
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_target"


def test_authorization_without_pkce_or_resource_is_refused(servers):
    servers.register_client("app", redirect_uris=[REDIRECT])
    base = {"response_type": "code", "client_id": "app", "redirect_uri": REDIRECT, "state": "x"}
    assert httpx.get(f"{servers.issuer}/authorize?{urlencode({**base, 'resource': servers.mcp_url})}").status_code \
        == 400
    _, challenge = _pkce()
    no_resource = httpx.get(f"{servers.issuer}/authorize?" + urlencode(
        {**base, "code_challenge": challenge, "code_challenge_method": "S256"}))
    assert no_resource.status_code == 400 and no_resource.json()["error"] == "invalid_target"


def test_denied_authorization_redirects_with_error_and_iss(servers):
    servers.register_client("app", redirect_uris=[REDIRECT])
    _, challenge = _pkce()
    params = _authorize(servers, "app", challenge, test_deny="1")
    assert params["error"] == "access_denied" and params["iss"] == servers.issuer and "code" not in params


def test_refresh_tokens_rotate(servers):
    client_id, token = _code_flow(servers)
    form = {"grant_type": "refresh_token", "refresh_token": token["refresh_token"], "client_id": client_id}
    first = httpx.post(f"{servers.issuer}/token", data=form)
    assert first.status_code == 200 and first.json()["refresh_token"] != token["refresh_token"]
    again = httpx.post(f"{servers.issuer}/token", data=form)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert [(r["grant_type"], r["status"]) for r in servers.token_requests()] == [
        ("authorization_code", 200), ("refresh_token", 200), ("refresh_token", 400)]


def test_tokens_reach_the_mcp_server_and_scopes_are_enforced(servers):
    _, token = _code_flow(servers)
    headers = {"Authorization": f"Bearer {token['access_token']}", "MCP-Protocol-Version": "2025-06-18",
               "Accept": "application/json, text/event-stream"}
    init = httpx.post(servers.mcp_url, headers=headers, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    assert init.status_code == 200, init.text
    headers["Mcp-Session-Id"] = init.headers["mcp-session-id"]
    refused = httpx.post(servers.mcp_url, headers=headers, json={
        "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "admin_report", "arguments": {}}})
    assert refused.status_code == 403
    challenge = refused.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="admin"' in challenge
    assert servers.expire_access_tokens() == 1
    expired = httpx.post(servers.mcp_url, headers=headers, json={"jsonrpc": "2.0", "id": 3, "method": "ping"})
    assert expired.status_code == 401
    assert [(r["user"], r["method"], r["refused"]) for r in servers.mcp_requests()] == [
        ("user-1", "initialize", False), ("user-1", "tools/call", True)]


def test_a_token_for_another_resource_is_refused():
    with oauth_servers() as first, oauth_servers() as second:
        _, token = _code_flow(first)
        assert first.state.check_access_token(token["access_token"], resource=first.mcp_url) is not None
        assert first.state.check_access_token(token["access_token"], resource=second.mcp_url) is None


def test_client_credentials_and_dynamic_registration(servers):
    servers.register_client("reports", secret="s3cret")
    basic = httpx.post(f"{servers.issuer}/token", auth=("reports", "s3cret"),
                       data={"grant_type": "client_credentials", "scope": "mcp", "resource": servers.mcp_url})
    assert basic.status_code == 200 and "refresh_token" not in basic.json()
    wrong = httpx.post(f"{servers.issuer}/token", auth=("reports", "wrong"), data={"grant_type": "client_credentials"})
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"

    registered = httpx.post(f"{servers.issuer}/register", json={
        "redirect_uris": [REDIRECT], "client_name": "app", "application_type": "web",
        "token_endpoint_auth_method": "none"})
    assert registered.status_code == 201, registered.text
    assert "client_secret" not in registered.json()
    assert servers.registrations()[0]["application_type"] == "web"
    client_id = registered.json()["client_id"]
    verifier, challenge = _pkce()
    code = _authorize(servers, client_id, challenge)["code"]
    servers.forget_clients()
    forgotten = httpx.post(f"{servers.issuer}/token", data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": client_id,
        "code_verifier": verifier})
    assert forgotten.status_code in (400, 401) and forgotten.json()["error"] == "invalid_client"


@pytest.mark.slow
def test_servers_run_in_a_process_of_their_own():
    """``python -m llm_mcp_tests.support.oauth_servers`` prints the URLs; the logs and the expiry are
    reachable over HTTP (``/_test/log``, ``/_test/expire``)."""
    process = subprocess.Popen([sys.executable, "-m", "llm_mcp_tests.support.oauth_servers", "--lifetime", "120"],
                               cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        urls = json.loads(process.stdout.readline())
        metadata = httpx.get(f"{urls['issuer']}/.well-known/oauth-authorization-server", timeout=10).json()
        assert metadata["issuer"] == urls["issuer"]
        assert httpx.post(urls["mcp_url"], json={"jsonrpc": "2.0", "id": 1, "method": "ping"}).status_code == 401
        refused = httpx.post(metadata["token_endpoint"], data={"grant_type": "client_credentials"},
                             auth=("nobody", "x"))
        assert refused.status_code == 401
        log = httpx.get(f"{urls['issuer']}/_test/log").json()
        assert [(r["grant_type"], r["client_id"], r["status"]) for r in log["token_requests"]] == [
            ("client_credentials", "nobody", 401)]
        assert httpx.post(f"{urls['issuer']}/_test/expire").json() == {"expired": 0}
    finally:
        process.terminate()
        process.wait(timeout=10)
