"""Discovery of an MCP server's authorization server, and every refusal on the way.

Real HTTP on 127.0.0.1 against scripted servers (``oauth_fakes.FakeServer``): cases C18-C20,
the 2025-03-26 fallbacks, and the attacks discovery must refuse (issuer mismatch, impostor
protected resource, ``javascript:`` and plain-http endpoints, no PKCE S256, redirects).
"""

from __future__ import annotations

import time
from urllib.parse import parse_qsl, urlsplit

import pytest

import llm_mcp
from llm_mcp.client.config import config, configure
from llm_mcp.client.oauth import MemoryStore

from llm_mcp_tests.support.fixtures import entered
from llm_mcp_tests.support.oauth_fakes import DEEP, FakeServer, Hostile, hostile_user_server


REDIRECT = "http://127.0.0.1:8000/callback"


@pytest.fixture
def store():
    """A fresh in-memory credential store for the test (the previous one is put back)."""
    previous, previous_id = config.credential_store, config.client_id
    fresh = MemoryStore()
    configure(credential_store=fresh, client_id=None)
    yield fresh
    configure(credential_store=previous, client_id=previous_id)


site = entered(FakeServer, name="site")
auth_site = entered(FakeServer, name="auth_site")


def as_metadata(issuer: str, **overrides):
    data = {"issuer": issuer, "authorization_endpoint": f"{issuer}/authorize", "token_endpoint": f"{issuer}/token",
            "registration_endpoint": f"{issuer}/register", "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"]}
    data.update(overrides)
    return {k: v for k, v in data.items() if v is not None}


def protect(site: FakeServer, challenge: str = 'Bearer scope="read"') -> None:
    site.route("/mcp", method="POST", status=401, headers={"WWW-Authenticate": challenge}, json={"error": "x"})


def server_for(site: FakeServer, **oauth):
    return llm_mcp.mcp(url=f"{site.url}/mcp", name="guarded", oauth={"client_id": "app", **oauth})


def query(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query))


def test_c18_path_based_protected_resource_metadata_without_resource_metadata(store, site, auth_site):
    """C18, MCP-AUTH-02: without resource_metadata in the 401, the path-based well-known URL is
    tried first and found; the root form is never asked for."""
    protect(site)
    site.route("/.well-known/oauth-protected-resource/mcp",
               json={"resource": f"{site.url}/mcp", "authorization_servers": [auth_site.url]})
    auth_site.route("/.well-known/oauth-authorization-server", json=as_metadata(auth_site.url))
    server = server_for(site)
    with pytest.raises(llm_mcp.UnauthorizedError, match="authorization_url"):
        server.tools
    url = server.authorization_url(redirect_uri=REDIRECT)
    assert url.startswith(f"{auth_site.url}/authorize?")
    assert query(url)["resource"] == f"{site.url}/mcp"
    assert "/.well-known/oauth-protected-resource/mcp" in site.paths("GET")
    assert "/.well-known/oauth-protected-resource" not in site.paths("GET")


def test_resource_metadata_from_the_challenge_comes_first(store, site, auth_site):
    """MCP-AUTH-02 (RFC 9728 §5.1): the 401's resource_metadata URL is used; no well-known URL is tried."""
    protect(site, f'Bearer resource_metadata="{site.url}/custom/prm.json"')
    site.route("/custom/prm.json", json={"resource": f"{site.url}/mcp", "authorization_servers": [auth_site.url]})
    auth_site.route("/.well-known/oauth-authorization-server", json=as_metadata(auth_site.url))
    server = server_for(site)
    with pytest.raises(llm_mcp.UnauthorizedError):
        server.tools
    assert server.authorization_url(redirect_uri=REDIRECT).startswith(f"{auth_site.url}/authorize?")
    assert site.paths("GET") == ["/custom/prm.json"]


def test_c19_issuer_with_a_path_tries_the_three_forms_in_order(store, site, auth_site):
    """C19, MCP-AUTH-02: for an issuer with a path, metadata is looked for at
    /.well-known/oauth-authorization-server/<path>, /.well-known/openid-configuration/<path>,
    then <path>/.well-known/openid-configuration, where it is found."""
    issuer = f"{auth_site.url}/tenant1"
    protect(site)
    site.route("/.well-known/oauth-protected-resource/mcp",
               json={"resource": f"{site.url}/mcp", "authorization_servers": [issuer]})
    auth_site.route("/tenant1/.well-known/openid-configuration", json=as_metadata(issuer))
    server = server_for(site)
    url = server.authorization_url(redirect_uri=REDIRECT)
    assert url.startswith(f"{issuer}/authorize?")
    assert auth_site.paths("GET") == ["/.well-known/oauth-authorization-server/tenant1",
                                      "/.well-known/openid-configuration/tenant1",
                                      "/tenant1/.well-known/openid-configuration"]


@pytest.mark.parametrize("status", [401, 403])
def test_c20_a_well_known_url_answering_401_or_403_means_try_the_next(store, site, auth_site, status):
    """C20: a CDN answering 401/403 at a well-known URL is "not here": discovery goes on to the next form."""
    protect(site)
    site.route("/.well-known/oauth-protected-resource/mcp", status=status, json={"error": "denied"})
    site.route("/.well-known/oauth-protected-resource",
               json={"resource": f"{site.url}/mcp", "authorization_servers": [auth_site.url]})
    auth_site.route("/.well-known/oauth-authorization-server", status=status, json={"error": "denied"})
    auth_site.route("/.well-known/openid-configuration", json=as_metadata(auth_site.url))
    server = server_for(site)
    assert server.authorization_url(redirect_uri=REDIRECT).startswith(f"{auth_site.url}/authorize?")
    assert site.paths("GET") == ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
    assert auth_site.paths("GET") == ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]


def test_2025_03_26_metadata_at_the_mcp_servers_origin(store, site):
    """MCP-AUTH-02 (2025-03-26 back-compat): without protected resource metadata, the authorization
    server is the MCP server's origin, and ``resource`` is the MCP server's URL."""
    protect(site, "Bearer")
    site.route("/.well-known/oauth-authorization-server",
               json=as_metadata(site.url, authorization_endpoint=f"{site.url}/oauth/authorize"))
    url = server_for(site).authorization_url(redirect_uri=REDIRECT)
    assert url.startswith(f"{site.url}/oauth/authorize?")
    assert query(url)["resource"] == f"{site.url}/mcp"


def test_2025_03_26_default_endpoints_without_any_metadata(store, site):
    """MCP-AUTH-02 (2025-03-26 back-compat): no metadata anywhere: /authorize, /token and /register at the origin."""
    protect(site, "Bearer")
    site.route("/register", method="POST", status=201, json={"client_id": "registered-1"})
    server = llm_mcp.mcp(url=f"{site.url}/mcp", name="old", oauth={})
    url = server.authorization_url(redirect_uri=REDIRECT)
    assert url.startswith(f"{site.url}/authorize?")
    assert query(url)["client_id"] == "registered-1"
    assert "/register" in site.paths("POST")


def test_metadata_whose_issuer_differs_is_refused(store, site, auth_site):
    """MCP-AUTH-03 (attack: issuer mismatch): metadata naming another issuer raises MCPError, and none of
    its endpoints is used."""
    protect(site)
    site.route("/.well-known/oauth-protected-resource/mcp",
               json={"resource": f"{site.url}/mcp", "authorization_servers": [auth_site.url]})
    auth_site.route("/.well-known/oauth-authorization-server",
                    json=as_metadata("https://attacker.example.com",
                                     registration_endpoint=f"{auth_site.url}/register"))
    server = llm_mcp.mcp(url=f"{site.url}/mcp", name="guarded", oauth={})
    with pytest.raises(llm_mcp.MCPError, match="attacker.example.com") as info:
        server.authorization_url(redirect_uri=REDIRECT)
    assert not isinstance(info.value, llm_mcp.UnauthorizedError)
    assert auth_site.paths("POST") == []


def test_metadata_issuer_differing_only_by_a_trailing_slash_is_refused(store, site, auth_site):
    """MCP-AUTH-03: the issuer comparison is exact (no normalisation)."""
    protect(site)
    site.route("/.well-known/oauth-protected-resource/mcp",
               json={"resource": f"{site.url}/mcp", "authorization_servers": [auth_site.url]})
    auth_site.route("/.well-known/oauth-authorization-server", json=as_metadata(auth_site.url + "/"))
    with pytest.raises(llm_mcp.MCPError, match="issuer"):
        server_for(site).authorization_url(redirect_uri=REDIRECT)


def test_impostor_protected_resource_is_refused(store, site, auth_site):
    """Attack: protected resource metadata naming another resource raises MCPError before the
    authorization server is contacted."""
    protect(site)
    site.route("/.well-known/oauth-protected-resource/mcp",
               json={"resource": "https://evil.example.com/mcp", "authorization_servers": [auth_site.url]})
    auth_site.route("/.well-known/oauth-authorization-server", json=as_metadata(auth_site.url))
    server = server_for(site)
    with pytest.raises(llm_mcp.MCPError, match="another resource"):
        server.tools
    with pytest.raises(llm_mcp.MCPError, match="another resource"):
        server.authorization_url(redirect_uri=REDIRECT)
    assert auth_site.requests == []


def test_a_parent_resource_on_the_same_origin_covers_the_server(store, site, auth_site):
    """RFC 9728 §3.3: root metadata naming the origin as the resource covers /mcp; ``resource`` is sent
    exactly as published."""
    protect(site)
    site.route("/.well-known/oauth-protected-resource",
               json={"resource": site.url, "authorization_servers": [auth_site.url]})
    auth_site.route("/.well-known/oauth-authorization-server", json=as_metadata(auth_site.url))
    assert query(server_for(site).authorization_url(redirect_uri=REDIRECT))["resource"] == site.url


@pytest.mark.parametrize("endpoint", ["javascript:alert(document.cookie)//", "data:text/html,hi",
                                      "http://auth.example.com/authorize", "/relative/authorize"])
def test_unsafe_authorization_endpoint_is_refused(store, site, auth_site, endpoint):
    """Attack: a ``javascript:`` (or data:, plain-http non-loopback, relative) authorization endpoint raises
    MCPError; no URL is handed to the app."""
    protect(site)
    site.route("/.well-known/oauth-protected-resource/mcp",
               json={"resource": f"{site.url}/mcp", "authorization_servers": [auth_site.url]})
    auth_site.route("/.well-known/oauth-authorization-server",
                    json=as_metadata(auth_site.url, authorization_endpoint=endpoint))
    with pytest.raises(llm_mcp.MCPError, match="authorization_endpoint"):
        server_for(site).authorization_url(redirect_uri=REDIRECT)


def test_plain_http_token_endpoint_off_loopback_is_refused(store, site, auth_site):
    """Non-HTTPS endpoints are refused (loopback excepted): a token endpoint on http://example.com."""
    protect(site)
    site.route("/.well-known/oauth-protected-resource/mcp",
               json={"resource": f"{site.url}/mcp", "authorization_servers": [auth_site.url]})
    auth_site.route("/.well-known/oauth-authorization-server",
                    json=as_metadata(auth_site.url, token_endpoint="http://tokens.example.com/token"))
    with pytest.raises(llm_mcp.MCPError, match="not https"):
        server_for(site).authorization_url(redirect_uri=REDIRECT)


def test_an_authorization_server_named_over_plain_http_is_refused(store, site):
    """The authorization server itself must be https (off loopback)."""
    protect(site)
    site.route("/.well-known/oauth-protected-resource/mcp",
               json={"resource": f"{site.url}/mcp", "authorization_servers": ["http://auth.example.com"]})
    with pytest.raises(llm_mcp.MCPError, match="not https"):
        server_for(site).authorization_url(redirect_uri=REDIRECT)


@pytest.mark.parametrize("methods", [None, ["plain"]])
def test_authorization_server_without_s256_is_refused(store, site, auth_site, methods):
    """MCP-AUTH-02: PKCE S256 is required; without it in code_challenge_methods_supported, MCPError."""
    protect(site)
    site.route("/.well-known/oauth-protected-resource/mcp",
               json={"resource": f"{site.url}/mcp", "authorization_servers": [auth_site.url]})
    auth_site.route("/.well-known/oauth-authorization-server",
                    json=as_metadata(auth_site.url, code_challenge_methods_supported=methods))
    with pytest.raises(llm_mcp.MCPError, match="S256"):
        server_for(site).authorization_url(redirect_uri=REDIRECT)


def test_redirect_from_the_mcp_server_is_refused(store, site, auth_site):
    """Attack: the MCP server answering with a redirect (to steal the token) raises MCPError; nothing
    reaches the redirect's target."""
    site.route("/mcp", method="POST", status=307, headers={"Location": f"{auth_site.url}/steal"})
    server = server_for(site)
    with pytest.raises(llm_mcp.MCPError, match="redirect"):
        server.tools
    assert auth_site.requests == []


def test_redirect_at_discovery_is_not_followed(store, site, auth_site):
    """Redirects at discovery are never followed: the redirect's target gets no request."""
    protect(site)
    site.route("/.well-known/oauth-protected-resource/mcp", status=302,
               headers={"Location": f"{auth_site.url}/prm"})
    auth_site.route("/prm", json={"resource": f"{site.url}/mcp", "authorization_servers": [auth_site.url]})
    auth_site.route("/.well-known/oauth-authorization-server", json=as_metadata(auth_site.url))
    site.route("/.well-known/oauth-authorization-server", json=as_metadata(site.url))
    url = server_for(site).authorization_url(redirect_uri=REDIRECT)
    assert auth_site.requests == []
    assert url.startswith(f"{site.url}/authorize?")  # the 2025-03-26 fallback, at the MCP server's origin


@pytest.mark.parametrize("path", ["/prm", "/.well-known/oauth-authorization-server"])
def test_a_dripping_metadata_document_times_out(store, path):
    """Timeouts are bounded: a metadata host that sends a byte every 0.2 s (each read well within
    the 2-second timeout, for two minutes in all) is given up after the timeout for the whole
    answer, with ``llm_mcp.ConnectionError`` (``timed_out``)."""
    with Hostile(path=path, mode="drip") as hostile:
        started = time.monotonic()
        with pytest.raises(llm_mcp.ConnectionError) as info:
            hostile_user_server(hostile.url).authorization_url(redirect_uri="http://127.0.0.1:8000/callback")
        assert time.monotonic() - started < 30  # generous: the drip alone lasts 120 s
        assert info.value.timed_out


def test_an_endless_metadata_document_is_not_read_to_its_end(store):
    """A protected resource metadata document of 20 MB (a stream without end, for all the client
    knows) is abandoned once it passes the size cap (256 KiB): the server could not finish
    sending it, and the client did not keep it."""
    with Hostile(path="/prm", mode="huge") as hostile, pytest.raises(llm_mcp.MCPError):
        hostile_user_server(hostile.url).authorization_url(redirect_uri="http://127.0.0.1:8000/callback")
    assert hostile.finished.wait(30)
    assert hostile.sent < Hostile.HUGE


@pytest.mark.parametrize("path", ["/prm", "/.well-known/oauth-authorization-server"])
def test_deeply_nested_metadata_is_not_a_recursion_error(store, path):
    """Metadata nested deeper than Python's JSON parser recurses is a document that is not
    there (``MCPError`` naming the problem), not a ``RecursionError`` escaping the library."""
    with Hostile(path=path, mode="bytes", body=DEEP) as hostile, pytest.raises(llm_mcp.MCPError):
        hostile_user_server(hostile.url).authorization_url(redirect_uri="http://127.0.0.1:8000/callback")


@pytest.mark.parametrize("document", ["resource", "issuer"])
def test_a_huge_foreign_identifier_is_cut_in_the_refusal(store, document):
    """The refusals name what they refuse without copying 200 KB of it: a protected resource
    metadata ``resource`` or an authorization server ``issuer`` that is another (huge) value
    raises ``MCPError`` with a message of reasonable length."""
    from llm_mcp_tests.support.oauth_fakes import FakeServer

    huge = "https://evil.example/" + "x" * 200_000
    with FakeServer() as site:
        site.route("/mcp", method="POST", status=401, headers={"WWW-Authenticate": "Bearer"}, json={})
        site.route("/.well-known/oauth-protected-resource/mcp", json={
            "resource": huge if document == "resource" else f"{site.url}/mcp", "authorization_servers": [site.url]})
        site.route("/.well-known/oauth-authorization-server", json={
            "issuer": huge if document == "issuer" else site.url, "token_endpoint": f"{site.url}/token",
            "authorization_endpoint": f"{site.url}/authorize", "code_challenge_methods_supported": ["S256"]})
        with pytest.raises(llm_mcp.MCPError, match="refused") as info:
            hostile_user_server(f"{site.url}/mcp").authorization_url(redirect_uri="http://127.0.0.1:8000/callback")
        assert len(str(info.value)) < 1000


def test_desc_05_allow_http_never_relaxes_oauth(store, site, auth_site):
    """MCP-DESC-05: a server reached over plain http off loopback (``allow_http=True``; its name
    resolves to the fake site through a context with a controlled resolver) still needs an https
    authorization server: a plain-http one is refused, and nothing is sent to it."""
    from llm_mcp.client.addresses import PublicAddressesOnly

    port = urlsplit(site.url).port
    names = {"mcp.example.test": ["127.0.0.1"], "auth.example.test": ["127.0.0.1"]}
    ctx = llm_mcp.context(transport=lambda: PublicAddressesOnly(allow=["127.0.0.1/32"],
                                                                resolve=lambda host, _: names[host]))
    url = f"http://mcp.example.test:{port}/mcp"
    protect(site)
    site.route("/.well-known/oauth-protected-resource/mcp",
               json={"resource": url, "authorization_servers": [f"http://auth.example.test:{urlsplit(auth_site.url).port}"]})
    auth_site.route("/.well-known/oauth-authorization-server", json=as_metadata(auth_site.url))
    server = ctx.mcp(url=url, name="plain", allow_http=True, oauth={"client_id": "app"})
    with pytest.raises(llm_mcp.MCPError, match="not https"):
        server.authorization_url(redirect_uri=REDIRECT)
    assert "/.well-known/oauth-protected-resource/mcp" in site.paths("GET")  # the server itself was reached
    assert auth_site.paths() == []
    server.close()
