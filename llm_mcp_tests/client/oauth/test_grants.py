"""Machine grants (llm_mcp.client.oauth.grants.fetch_token) against real HTTP servers on 127.0.0.1:
client credentials (secret, signed assertion), a workload's assertion (JWT bearer), enterprise
single sign-on (token exchange at the identity provider, then JWT bearer). What each server
received is asserted from its own records."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from joserfc import jwt
from joserfc.jwk import ECKey

import llm_mcp
from llm_mcp.client.oauth import grants
from llm_mcp.client.oauth.dpop import DPoPKey
from llm_mcp.client.oauth.grants import ENTERPRISE_EXTENSION, ID_JAG, ID_TOKEN, JWT_BEARER, TOKEN_EXCHANGE, fetch_token
from llm_mcp.client.oauth.settings import OAuthSettings

from llm_mcp_tests.support.fixtures import entered
from llm_mcp_tests.support.recording_as import RecordingAS, basic_credentials

RESOURCE = "https://mcp.example.com/mcp"
SECRET = "cc-secret-value-9876"
IDP_SECRET = "idp-secret-value-5432"


@pytest.fixture
def auth_server():
    with RecordingAS() as server:
        server.metadata = {"issuer": server.base, "token_endpoint": server.url("/token"),
                           "grant_types_supported": ["client_credentials", JWT_BEARER]}
        yield server


@pytest.fixture
def idp():
    with RecordingAS() as server:
        server.metadata = {"issuer": server.base, "token_endpoint": server.url("/oauth2/token"),
                           "grant_types_supported": [TOKEN_EXCHANGE]}
        grants._idp_metadata.clear()
        yield server
        grants._idp_metadata.clear()


http = entered(httpx.Client, name="http")


def test_client_credentials_with_a_secret_uses_basic_with_resource_and_scope(auth_server, http):
    """MCP-CC-01, MCP-CC-04 (spec note): grant_type=client_credentials, client_secret_basic by default,
    resource and scope in the body."""
    settings = OAuthSettings(grant="client_credentials", client_id="reports", client_secret=SECRET)
    token = fetch_token(settings, auth_server.metadata, resource=RESOURCE, scopes=["read", "write"], http=http)
    assert token["access_token"] == "tok-1"
    received = auth_server.requests[-1]
    assert received.path == "/token"
    assert received.form == {"grant_type": "client_credentials", "resource": RESOURCE, "scope": "read write"}
    assert basic_credentials(received.headers) == ("reports", SECRET)


def test_client_credentials_follows_the_metadata_to_client_secret_post(auth_server, http):
    auth_server.metadata["token_endpoint_auth_methods_supported"] = ["client_secret_post"]
    settings = OAuthSettings(grant="client_credentials", client_id="reports", client_secret=SECRET)
    fetch_token(settings, auth_server.metadata, resource=RESOURCE, scopes=None, http=http)
    received = auth_server.requests[-1]
    assert "authorization" not in received.headers
    assert received.form == {"grant_type": "client_credentials", "resource": RESOURCE, "client_id": "reports",
                             "client_secret": SECRET}


def test_client_credentials_with_a_private_key_signs_an_assertion(auth_server, http):
    """MCP-PKJWT-01: private_key instead of a secret; the assertion verifies with the public key and
    is addressed to the authorization server's issuer."""
    auth_server.metadata["token_endpoint_auth_methods_supported"] = ["private_key_jwt"]
    auth_server.metadata["token_endpoint_auth_signing_alg_values_supported"] = ["ES256"]
    private = ec.generate_private_key(ec.SECP256R1())
    settings = OAuthSettings(grant="client_credentials", client_id="reports", private_key=private)
    fetch_token(settings, auth_server.metadata, resource=RESOURCE, scopes=["read"], http=http)
    fetch_token(settings, auth_server.metadata, resource=RESOURCE, scopes=["read"], http=http)
    public = ECKey.import_key(private.public_key().public_bytes(serialization.Encoding.PEM,
                                                                  serialization.PublicFormat.SubjectPublicKeyInfo))
    claims = [jwt.decode(r.form["client_assertion"], public, algorithms=["ES256"]).claims for r in auth_server.requests
              if r.method == "POST"]
    assert [c["aud"] for c in claims] == [auth_server.base] * 2
    assert claims[0]["iss"] == claims[0]["sub"] == "reports"
    assert claims[0]["jti"] != claims[1]["jti"]
    form = auth_server.requests[-1].form
    assert form["grant_type"] == "client_credentials" and form["resource"] == RESOURCE and form["scope"] == "read"
    assert "authorization" not in auth_server.requests[-1].headers


def test_client_credentials_refusal_raises_unauthorized_with_the_reason(auth_server, http):
    """MCP-CC-03: the authorization server's reason, no secret."""
    auth_server.answers.append((401, {"error": "invalid_client", "error_description": "client is disabled"}, {}))
    settings = OAuthSettings(grant="client_credentials", client_id="reports", client_secret=SECRET)
    with pytest.raises(llm_mcp.UnauthorizedError, match="invalid_client: client is disabled") as caught:
        fetch_token(settings, auth_server.metadata, resource=RESOURCE, scopes=None, http=http, server_name="reports")
    assert SECRET not in str(caught.value) and SECRET not in repr(caught.value) and SECRET not in repr(settings)


def test_workload_assertion_uses_the_jwt_bearer_grant_without_a_client(auth_server, http):
    """MCP-WIF-01: grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer with assertion=..., no client_id
    or secret."""
    settings = OAuthSettings(assertion="workload.jwt.token")
    token = fetch_token(settings, auth_server.metadata, resource=RESOURCE, scopes=["read"], http=http)
    assert token["access_token"] == "tok-1"
    received = auth_server.requests[-1]
    assert received.form == {"grant_type": JWT_BEARER, "assertion": "workload.jwt.token", "resource": RESOURCE,
                             "scope": "read"}
    assert "authorization" not in received.headers


def test_workload_assertion_refusal_raises_unauthorized_and_is_not_retried(auth_server, http):
    auth_server.answers.append((400, {"error": "invalid_grant", "error_description": "JWT assertion is expired"}, {}))
    with pytest.raises(llm_mcp.UnauthorizedError, match="invalid_grant: JWT assertion is expired"):
        fetch_token(OAuthSettings(assertion="old.jwt.token"), auth_server.metadata, resource=RESOURCE, scopes=None,
                    http=http)
    assert [r.method for r in auth_server.requests] == ["POST"]


def _id_jag_handler(idp: RecordingAS, audience_seen: list):
    def handle(received):
        if received.form.get("grant_type") != TOKEN_EXCHANGE:
            return (400, {"error": "unsupported_grant_type"}, {})
        audience_seen.append(received.form.get("audience"))
        jag = f"id-jag-for-{received.form['subject_token']}"
        return (200, {"access_token": jag, "issued_token_type": ID_JAG, "token_type": "N_A", "expires_in": 300}, {})
    return handle


def test_enterprise_sso_exchanges_the_id_token_then_uses_the_id_jag(auth_server, idp, http):
    """MCP-SSO-01, MCP-SSO-02: RFC 8693 token exchange at the identity provider (discovered from its
    issuer) with the provider's client, then the JWT bearer grant at the MCP server's authorization
    server with the outer client; no redirect anywhere."""
    audiences: list = []
    idp.handler = _id_jag_handler(idp, audiences)
    settings = OAuthSettings(client_id="wiki", client_secret=SECRET, identity_provider={
        "issuer": idp.base, "client_id": "okta-app", "client_secret": IDP_SECRET, "id_token": "user-id-token-1"})
    token = fetch_token(settings, auth_server.metadata, resource=RESOURCE, scopes=["docs.read"], http=http)
    assert token["access_token"] == "tok-1"
    exchange = [r for r in idp.requests if r.method == "POST"]
    assert len(exchange) == 1 and exchange[0].path == "/oauth2/token"
    assert exchange[0].form == {"grant_type": TOKEN_EXCHANGE, "requested_token_type": ID_JAG,
                                "audience": auth_server.base, "resource": RESOURCE, "scope": "docs.read",
                                "subject_token": "user-id-token-1", "subject_token_type": ID_TOKEN}
    assert basic_credentials(exchange[0].headers) == ("okta-app", IDP_SECRET)
    assert any(r.method == "GET" and r.path.startswith("/.well-known/") for r in idp.requests)
    bearer = [r for r in auth_server.requests if r.method == "POST"]
    assert len(bearer) == 1
    assert bearer[0].form == {"grant_type": JWT_BEARER, "assertion": "id-jag-for-user-id-token-1",
                              "resource": RESOURCE, "scope": "docs.read"}
    assert basic_credentials(bearer[0].headers) == ("wiki", SECRET)
    assert all(r.method != "GET" or r.path.startswith("/.well-known/") for r in idp.requests + auth_server.requests)


def test_enterprise_sso_uses_the_current_id_token_for_every_token(auth_server, idp, http):
    """MCP-SSO-04 (at the grant level): each fetch sends the id_token the settings carry now."""
    idp.handler = _id_jag_handler(idp, [])
    for id_token in ("first-id-token", "second-id-token"):
        settings = OAuthSettings(identity_provider={"issuer": idp.base, "client_id": "okta-app", "id_token": id_token})
        fetch_token(settings, auth_server.metadata, resource=RESOURCE, scopes=None, http=http)
    assert [r.form["subject_token"] for r in idp.requests if r.method == "POST"] == ["first-id-token",
                                                                                      "second-id-token"]
    assert [r.form["assertion"] for r in auth_server.requests if r.method == "POST"] == [
        "id-jag-for-first-id-token", "id-jag-for-second-id-token"]
    # a provider client without a secret identifies itself in the body (auth method none)
    assert next(r for r in idp.requests if r.method == "POST").form["client_id"] == "okta-app"


def test_enterprise_sso_refusal_at_the_identity_provider_stops_there(auth_server, idp, http):
    """MCP-SSO-03: a refusal at the identity provider raises UnauthorizedError; nothing reaches the
    authorization server."""
    idp.answers.append((400, {"error": "access_denied", "error_description": "policy forbids this server"}, {}))
    settings = OAuthSettings(identity_provider={"issuer": idp.base, "client_id": "okta-app",
                                                "client_secret": IDP_SECRET, "id_token": "tok"})
    with pytest.raises(llm_mcp.UnauthorizedError, match="access_denied: policy forbids this server") as caught:
        fetch_token(settings, auth_server.metadata, resource=RESOURCE, scopes=None, http=http)
    assert "identity provider" in str(caught.value) and IDP_SECRET not in str(caught.value)
    assert not [r for r in auth_server.requests if r.method == "POST"]


def test_enterprise_sso_refusal_at_the_authorization_server(auth_server, idp, http):
    """MCP-SSO-03: a refusal of the ID-JAG raises UnauthorizedError too."""
    idp.handler = _id_jag_handler(idp, [])
    auth_server.answers.append((400, {"error": "invalid_grant", "error_description": "ID-JAG audience mismatch"}, {}))
    settings = OAuthSettings(client_id="wiki", client_secret=SECRET,
                             identity_provider={"issuer": idp.base, "client_id": "okta-app", "id_token": "tok"})
    with pytest.raises(llm_mcp.UnauthorizedError, match="invalid_grant: ID-JAG audience mismatch"):
        fetch_token(settings, auth_server.metadata, resource=RESOURCE, scopes=None, http=http)


def test_enterprise_sso_refuses_an_identity_provider_whose_metadata_names_another_issuer(auth_server, idp, http):
    idp.metadata["issuer"] = "https://evil.example.com"
    settings = OAuthSettings(identity_provider={"issuer": idp.base, "client_id": "okta-app", "id_token": "tok"})
    with pytest.raises(llm_mcp.MCPError, match="issuer"):
        fetch_token(settings, auth_server.metadata, resource=RESOURCE, scopes=None, http=http)
    assert not [r for r in idp.requests if r.method == "POST"]


def test_dpop_bound_machine_token_request_carries_a_proof(auth_server, http):
    """MCP-DPOP-01 (token requests of machine grants): the proof names the token endpoint."""
    key = DPoPKey.generate()
    settings = OAuthSettings(grant="client_credentials", client_id="reports", client_secret=SECRET)
    fetch_token(settings, auth_server.metadata, resource=RESOURCE, scopes=None, http=http, dpop=key)
    proof = auth_server.requests[-1].headers["dpop"]
    claims = jwt.decode(proof, ECKey.import_key(key.public_jwk), algorithms=["ES256"]).claims
    assert claims["htm"] == "POST" and claims["htu"] == auth_server.url("/token")
    assert abs(claims["iat"] - time.time()) < 60


def test_settings_without_a_machine_grant_are_refused(auth_server, http):
    with pytest.raises(ValueError, match="no machine grant"):
        fetch_token(OAuthSettings(), auth_server.metadata, resource=RESOURCE, scopes=None, http=http)


def test_extensions_follow_the_declaration():
    assert grants.extensions_for({"grant": "client_credentials", "client_id": "x"}) == {
        "io.modelcontextprotocol/oauth-client-credentials": {}}
    assert grants.extensions_for({"identity_provider": {"issuer": "https://idp"}}) == {ENTERPRISE_EXTENSION: {}}
    assert grants.extensions_for({"owner": "user"}) == {}
    assert grants.extensions_for(None) == {}
    assert json.dumps(grants.extensions_for({"grant": "client_credentials"}))


def test_enterprise_sso_without_a_registration_names_the_client_metadata_document(auth_server, idp, http):
    """Enterprise-managed authorization, extension §5: without an outer client_id, the app's client ID
    metadata document URL identifies it at an authorization server that supports those documents."""
    from llm_mcp.client.config import config, configure

    idp.handler = _id_jag_handler(idp, [])
    auth_server.metadata["client_id_metadata_document_supported"] = True
    before = config.client_id
    configure(client_id="https://app.example.com/oauth/client.json")
    try:
        settings = OAuthSettings(identity_provider={"issuer": idp.base, "client_id": "okta-app", "id_token": "t"})
        fetch_token(settings, auth_server.metadata, resource=RESOURCE, scopes=None, http=http)
    finally:
        configure(client_id=before)
    form = auth_server.requests[-1].form
    assert form["grant_type"] == JWT_BEARER and form["client_id"] == "https://app.example.com/oauth/client.json"
    assert "authorization" not in auth_server.requests[-1].headers
