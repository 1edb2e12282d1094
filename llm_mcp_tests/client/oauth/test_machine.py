"""Tokens without a user, through the public API (``llm_mcp.MCP`` with ``oauth``), against a real
authorization server, identity provider and MCP server on 127.0.0.1 (llm_mcp_tests.support.machine_servers):
client credentials, signed client assertions, workload assertions, enterprise single sign-on."""

from __future__ import annotations

import itertools
import time
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from joserfc import jwt
from joserfc.jwk import ECKey

import llm_mcp
from llm_mcp.client.config import config, configure
from llm_mcp.client.oauth import credential_key, grants
from llm_mcp.client.oauth.grants import CLIENT_CREDENTIALS_EXTENSION, ENTERPRISE_EXTENSION, ID_JAG, JWT_BEARER
from llm_mcp.client.oauth.store import MemoryStore

from llm_mcp_tests.support.machine_servers import ProtectedMCP
from llm_mcp_tests.support.recording_as import RecordingAS, basic_credentials


SECRET = "reports-secret-1f2e3d"
IDP_SECRET = "okta-secret-4c5b6a"


@pytest.fixture(autouse=True)
def store():
    before = config.credential_store
    fresh = MemoryStore()
    configure(credential_store=fresh)
    grants._idp_metadata.clear()
    yield fresh
    configure(credential_store=before)
    grants._idp_metadata.clear()


@pytest.fixture
def protected(authority):
    with ProtectedMCP(authority) as server:
        yield server


def _expire_soon(store: MemoryStore) -> None:
    """Make every stored token look about to expire (30 seconds left), as time passing would."""
    for key in list(store._data):
        record = store.read(key)
        if record.get("access_token"):
            record["expires_at"] = int(time.time()) + 30
            store.write(key, record)


def _reports(url: str, **oauth):
    class Reports(llm_mcp.MCP):
        pass

    Reports.url = url
    Reports.oauth = {"grant": "client_credentials", "client_id": "reports", "client_secret": SECRET, **oauth}
    return Reports


def test_client_credentials_work_without_a_user_or_redirect(authority, protected):
    """MCP-CC-01: ``Reports().tools`` works with no user and no redirect."""
    reports = _reports(protected.url)()
    assert [tool.name for tool in reports.tools] == ["add"]
    assert reports.call("add", a=2, b=3).text == "5"
    (request,) = authority.token_requests()
    assert request.form == {"grant_type": "client_credentials", "resource": protected.url}
    assert basic_credentials(request.headers) == ("reports", SECRET)
    assert not [r for r in authority.auth_server.requests if r.path == "/authorize"]
    assert all(r["authorization"] == "Bearer at-1" for r in protected.requests if r["status"] is None)


def test_no_token_up_front_first_on_401_and_a_new_one_before_expiry(authority, protected, store):
    """MCP-CC-02: nothing is fetched when the server object is built; the first token follows the MCP
    server's first 401; a token about to expire is replaced before a request, without a 401."""
    reports = _reports(protected.url)()
    assert authority.token_requests() == [] and protected.requests == []
    reports.tools
    assert len(authority.token_requests()) == 1
    first = protected.requests[0]
    assert first["status"] == 401 and first["authorization"] is None
    reports.call("add", a=1, b=1)
    assert len(authority.token_requests()) == 1  # still valid: reused
    seen = len(protected.requests)
    _expire_soon(store)
    assert reports.call("add", a=1, b=2).text == "3"
    assert len(authority.token_requests()) == 2
    later = protected.requests[seen:]
    assert later and all(r["status"] is None and r["authorization"] == "Bearer at-2" for r in later)


def test_a_refusal_raises_unauthorized_with_the_reason_and_no_secret(authority, protected):
    """MCP-CC-03: the authorization server's reason reaches the app; the secret reaches no message."""
    authority.check = lambda received: (401, {"error": "invalid_client",
                                              "error_description": "the client is suspended"}, {})
    reports = _reports(protected.url)()
    with pytest.raises(llm_mcp.UnauthorizedError, match="invalid_client: the client is suspended") as caught:
        reports.tools
    for text in (str(caught.value), repr(caught.value), repr(reports), repr(reports.oauth_settings())):
        assert SECRET not in text


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_every_request_declares_the_client_credentials_extension(authority, era):
    """MCP-CC-04: ``io.modelcontextprotocol/oauth-client-credentials`` in the client capabilities'
    ``extensions`` of every modern request (``_meta``), and of ``initialize`` in the handshake era."""
    with ProtectedMCP(authority, era=era) as protected:
        reports = _reports(protected.url)()
        reports.call("add", a=1, b=2)
        declared = protected.declared_extensions()
        bodies = [r["body"] for r in protected.requests if isinstance(r["body"], dict)]
        requests = [b for b in bodies if "id" in b]
        if era == "modern":
            assert len(requests) >= 3 and declared == [{CLIENT_CREDENTIALS_EXTENSION: {}}] * len(requests)
        else:
            initializes = [b for b in requests if b["method"] == "initialize"]
            assert initializes and all(b["params"]["capabilities"]["extensions"] == {CLIENT_CREDENTIALS_EXTENSION: {}}
                                       for b in initializes)
        assert {CLIENT_CREDENTIALS_EXTENSION: {}} in declared
        assert ENTERPRISE_EXTENSION not in str(declared)


def test_a_user_app_declares_no_machine_extension():
    class Linear(llm_mcp.MCP):
        url = "https://mcp.example.com/mcp"
        inputs = ["user"]
        oauth = {"owner": "user"}

    # Questions are declared on 2026-07-28 by default (docs/questions.md); no extension is.
    assert "extensions" not in Linear(user="u").declared_capabilities("modern")
    assert Linear(user="u").declared_capabilities("handshake") == {}


def _public_key(private) -> ECKey:
    return ECKey.import_key(private.public_key().public_bytes(serialization.Encoding.PEM,
                                                              serialization.PublicFormat.SubjectPublicKeyInfo))


def test_client_credentials_with_a_private_key(authority, protected):
    """MCP-PKJWT-01 (through the server): a PEM ``private_key`` replaces the secret; each token request
    carries a new assertion, verified with the public key."""
    authority.auth_server.metadata["token_endpoint_auth_methods_supported"] = ["private_key_jwt"]
    private = ec.generate_private_key(ec.SECP256R1())
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    reports = _reports(protected.url, client_secret=None, private_key=pem)()
    reports.tools
    (request,) = authority.token_requests()
    claims = jwt.decode(request.form["client_assertion"], _public_key(private), algorithms=["ES256"]).claims
    assert claims["iss"] == claims["sub"] == "reports" and claims["aud"] == authority.issuer
    assert "authorization" not in request.headers and "client_secret" not in request.form


def test_private_key_works_for_authorization_code_apps_on_code_and_refresh(authority, protected, store):
    """MCP-PKJWT-02: an authorization-code app with ``private_key``: the code exchange and the refresh
    are authenticated with signed assertions (different ``jti``), no secret."""
    authority.auth_server.metadata["token_endpoint_auth_methods_supported"] = ["private_key_jwt", "none"]
    authority.refresh = True
    private = ec.generate_private_key(ec.SECP256R1())

    class Owner:
        def __str__(self) -> str:
            return "owner-7"

    class Linear(llm_mcp.MCP):
        url = protected.url
        inputs = ["user"]
        oauth = {"owner": "user", "client_id": "linear-app", "private_key": private}

    linear = Linear(user=Owner())
    with pytest.raises(llm_mcp.UnauthorizedError):
        linear.tools
    redirect_uri = "http://127.0.0.1:9/callback"
    url = linear.authorization_url(redirect_uri=redirect_uri)
    answer = httpx.get(url, follow_redirects=False)
    callback = {k: v[0] for k, v in parse_qs(urlsplit(answer.headers["location"]).query).items()}
    linear.authorize(callback)
    assert linear.call("add", a=2, b=2).text == "4"
    _expire_soon(store)
    assert linear.call("add", a=3, b=2).text == "5"
    code, refresh = authority.token_requests()
    assert code.form["grant_type"] == "authorization_code" and refresh.form["grant_type"] == "refresh_token"
    public = _public_key(private)
    claims = [jwt.decode(r.form["client_assertion"], public, algorithms=["ES256"]).claims for r in (code, refresh)]
    assert all(c["iss"] == c["sub"] == "linear-app" and c["aud"] == authority.issuer for c in claims)
    assert claims[0]["jti"] != claims[1]["jti"]
    assert all("client_secret" not in r.form and "authorization" not in r.headers for r in (code, refresh))


def test_a_workload_assertion_is_read_again_for_every_token(authority, protected, store):
    """MCP-WIF-01, MCP-WIF-02: ``assertion`` (a method name) with the JWT bearer grant, no client_id or
    secret, and evaluated again for each token request, so a rotated platform token is used."""
    rotations = itertools.count(1)

    class Workload(llm_mcp.MCP):
        url = protected.url
        oauth = {"assertion": "platform_token"}

        def platform_token(self) -> str:
            return f"platform-jwt-{next(rotations)}"

    workload = Workload()
    workload.tools
    _expire_soon(store)
    workload.call("add", a=1, b=1)
    first, second = authority.token_requests()
    for request, expected in ((first, "platform-jwt-1"), (second, "platform-jwt-2")):
        assert request.form == {"grant_type": JWT_BEARER, "assertion": expected, "resource": protected.url}
        assert "authorization" not in request.headers


def test_a_workload_assertion_refusal_is_not_retried(authority, protected):
    authority.check = lambda received: (400, {"error": "invalid_grant", "error_description": "expired"}, {})
    workload = llm_mcp.mcp(url=protected.url, name="workload", oauth={"assertion": lambda: "stale.jwt.x"})
    with pytest.raises(llm_mcp.UnauthorizedError, match="invalid_grant: expired"):
        workload.tools
    assert len(authority.token_requests()) == 1


@pytest.fixture
def idp():
    with RecordingAS() as server:
        server.metadata = {"issuer": server.base, "token_endpoint": server.url("/token"),
                           "token_endpoint_auth_methods_supported": ["client_secret_post"]}

        def exchange(received):
            if received.form.get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange":
                return (400, {"error": "unsupported_grant_type"}, {})
            return (200, {"access_token": f"jag({received.form['subject_token']})", "issued_token_type": ID_JAG,
                          "token_type": "N_A"}, {})

        server.handler = exchange
        yield server


class User:
    def __init__(self, pk: int, id_token: str):
        self.pk, self.id_token = pk, id_token

    def __str__(self) -> str:
        return f"user-{self.pk}"


def _wiki(url: str, idp_issuer: str):
    class Wiki(llm_mcp.MCP):
        inputs = ["user"]
        oauth = {"owner": "user", "client_id": "wiki-app", "client_secret": SECRET,
                 "identity_provider": {"issuer": idp_issuer, "client_id": "okta-app",
                                       "client_secret": lambda: IDP_SECRET, "id_token": "current_id_token"}}

        def current_id_token(self) -> str:
            return self.user.id_token

    Wiki.url = url
    return Wiki


def test_enterprise_sso_exchanges_the_current_id_token_without_a_redirect(authority, protected, idp, store):
    """MCP-SSO-01, MCP-SSO-02, MCP-SSO-04: the identity provider's values (callables, method names);
    ID token -> ID-JAG at the identity provider -> access token at the MCP server's authorization
    server; no authorization screen; every new token uses the ID token current at that moment."""
    user = User(1, "id-token-1")
    wiki = _wiki(protected.url, idp.base)(user=user)
    assert wiki.call("add", a=2, b=5).text == "7"
    user.id_token = "id-token-2"
    _expire_soon(store)
    wiki.call("add", a=1, b=1)
    exchanges = [r for r in idp.requests if r.method == "POST"]
    assert [r.form["subject_token"] for r in exchanges] == ["id-token-1", "id-token-2"]
    for request in exchanges:
        assert request.form["audience"] == authority.issuer and request.form["resource"] == protected.url
        assert request.form["requested_token_type"] == ID_JAG
        assert request.form["client_id"] == "okta-app" and request.form["client_secret"] == IDP_SECRET
    bearer = authority.token_requests()
    assert [r.form["assertion"] for r in bearer] == ["jag(id-token-1)", "jag(id-token-2)"]
    assert all(r.form["grant_type"] == JWT_BEARER and basic_credentials(r.headers) == ("wiki-app", SECRET) for r in bearer)
    assert not [r for r in authority.auth_server.requests + idp.requests if r.path == "/authorize"]


def test_enterprise_sso_refusals_raise_unauthorized(authority, protected, idp):
    """MCP-SSO-03: a refusal by the identity provider, then one by the authorization server."""
    exchange = idp.handler
    idp.handler = lambda received: (400, {"error": "access_denied", "error_description": "not for this user"}, {})
    wiki = _wiki(protected.url, idp.base)(user=User(2, "id-token"))
    with pytest.raises(llm_mcp.UnauthorizedError, match="access_denied: not for this user") as caught:
        wiki.tools
    assert IDP_SECRET not in str(caught.value) and "id-token" not in str(caught.value)
    assert authority.token_requests() == []
    idp.handler = exchange
    authority.check = lambda received: (400, {"error": "invalid_grant", "error_description": "bad ID-JAG"}, {})
    with pytest.raises(llm_mcp.UnauthorizedError, match="invalid_grant: bad ID-JAG"):
        _wiki(protected.url, idp.base)(user=User(3, "id-token")).tools


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_every_request_declares_the_enterprise_extension(authority, idp, era):
    """MCP-SSO-05: ``io.modelcontextprotocol/enterprise-managed-authorization`` on every request."""
    with ProtectedMCP(authority, era=era) as protected:
        _wiki(protected.url, idp.base)(user=User(4, "id-token")).call("add", a=1, b=1)
        declared = protected.declared_extensions()
        if era == "modern":
            assert len(declared) >= 3 and all(d == {ENTERPRISE_EXTENSION: {}} for d in declared)
        else:
            initializes = [r["body"] for r in protected.requests
                           if isinstance(r["body"], dict) and r["body"].get("method") == "initialize"]
            assert initializes and all(b["params"]["capabilities"]["extensions"] == {ENTERPRISE_EXTENSION: {}}
                                       for b in initializes)


def test_client_credentials_against_the_authlib_authorization_server():
    """MCP-CC-01, MCP-CC-03 against authlib's server side (llm_mcp_tests.support.oauth_servers): the secret it
    checks is accepted, a wrong one is refused with its reason."""
    from llm_mcp_tests.support.oauth_servers import oauth_servers

    with oauth_servers() as servers:
        servers.register_client("reports", secret=SECRET)
        reports = _reports(servers.mcp_url)()
        assert reports.call("add", a=2, b=3).text == "5"
        (request,) = servers.token_requests(grant_type="client_credentials")
        assert request["client_id"] == "reports" and request["status"] == 200
        assert request["resource"] == servers.mcp_url
        assert {r["client_id"] for r in servers.mcp_requests()} == {"reports"}
        wrong = _reports(servers.mcp_url, client_id="reports", client_secret="not-the-secret")
        configure(credential_store=MemoryStore())  # no token stored yet (the fixture restores the store)
        with pytest.raises(llm_mcp.UnauthorizedError, match="invalid_client") as caught:
            wrong().tools
        assert "not-the-secret" not in str(caught.value)


def test_the_probe_before_any_401_declares_the_client(authority, store):
    """MCP 2026-07-28 ``_meta`` on every request: the unauthenticated ``server/discover`` probe the
    flow sends to read the challenge (here: a stored client-credentials token about to expire,
    in a server object that has seen no 401 yet) carries ``clientInfo`` and the client
    capabilities, with the extension the grant uses."""
    with ProtectedMCP(authority) as mcp:
        _reports(mcp.url)().call("add", a=1, b=1)
        key = credential_key(mcp.url, None)
        record = store.read(key)
        record["expires_at"] = time.time()  # expiring: the next request first fetches a new token
        store.write(key, record)
        before = len(mcp.requests)
        assert _reports(mcp.url)().call("add", a=2, b=2).text == "4"
        probes = [r["body"] for r in mcp.requests[before:] if (r["body"] or {}).get("method") == "server/discover"
                  and not r["authorization"]]
        assert probes, "no unauthenticated probe was sent"
        meta = probes[0]["params"]["_meta"]
        assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "llm_mcp"
        assert meta["io.modelcontextprotocol/clientCapabilities"]["extensions"] == {CLIENT_CREDENTIALS_EXTENSION: {}}
        served = [r["body"] for r in mcp.requests[before:] if r["status"] is None and "id" in (r["body"] or {})]
        assert served and all(meta["io.modelcontextprotocol/clientCapabilities"]
                              == b["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] for b in served)
