"""The user's authorization (authorization code + PKCE), tokens, refresh, scopes, registration, stores.

Against the real test authorization server (authlib) and the token-checking MCP server of
``oauth_servers.py`` on 127.0.0.1, plus scripted peers (``oauth_fakes.py``) for case C21.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

import llm_mcp
from llm_mcp.client.config import Config, config, configure
from llm_mcp.client.oauth import MemoryStore, credential_key
from llm_mcp.client.oauth.settings import RESERVED_PARAMS

from llm_mcp_tests.support.oauth_fakes import FakeServer
from llm_mcp_tests.support.oauth_servers import OAuthServers, oauth_servers
from llm_mcp_tests.support.stores import RecordingStore


REDIRECT = "http://127.0.0.1:8000/callback"


class User:
    """Looks like a saved Django model instance (``_meta.label_lower`` and ``pk``), without Django."""

    class _meta:  # noqa: N801 - the name Django models use
        label_lower = "auth.user"

    def __init__(self, pk: int, name: str):
        self.pk, self.name = pk, name


@pytest.fixture
def store():
    previous, previous_id, previous_name = config.credential_store, config.client_id, config.client_name
    fresh = MemoryStore()
    configure(credential_store=fresh, client_id=None)
    yield fresh
    configure(credential_store=previous, client_id=previous_id, client_name=previous_name)


@pytest.fixture(scope="module")
def servers():
    with oauth_servers() as running:
        yield running


def make_class(servers: OAuthServers, **oauth: Any) -> type[llm_mcp.MCP]:
    class Protected(llm_mcp.MCP):
        url = servers.mcp_url
        inputs = ["user"]

    Protected.oauth = {"owner": "user", **oauth}
    return Protected


def callback_params(callback_url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(callback_url).query))


def connect(server: llm_mcp.MCP, servers: OAuthServers, *, user: str = "user-1", **kwargs: Any) -> dict[str, str]:
    """Run the whole round trip for ``server``; returns the authorization URL's parameters."""
    url = server.authorization_url(redirect_uri=kwargs.pop("redirect_uri", REDIRECT), **kwargs)
    server.authorize(callback_params(servers.approve(url, user=user)))
    return dict(parse_qsl(urlsplit(url).query))


# -- 18.1 authorization code on behalf of a user ------------------------------------------------


def test_owner_names_whose_credentials_are_used(store, servers):
    """MCP-AUTH-01: credentials are stored and looked up per owner (an input's value)."""
    Protected = make_class(servers)
    alice, bob = Protected(user=User(1, "alice")), Protected(user=User(2, "bob"))
    connect(alice, servers, user="alice")
    assert alice.authorized and not bob.authorized
    assert store.read(credential_key(servers.mcp_url, User(1, "alice")))["access_token"]
    assert credential_key(servers.mcp_url, User(1, "x")).endswith("|auth.user:1")
    assert credential_key(servers.mcp_url, User(1, "x")) != credential_key(servers.mcp_url, User(2, "x"))
    before = len(servers.mcp_requests())
    assert alice.call("add", a=2, b=3).text == "5"
    assert {r["user"] for r in servers.mcp_requests()[before:]} == {"alice"}
    with pytest.raises(llm_mcp.UnauthorizedError):
        bob.call("add", a=1, b=1)


def test_inline_server_owner_is_an_object(store, servers):
    """MCP-AUTH-01: on an inline server, ``owner`` is the object itself."""
    server = llm_mcp.mcp(url=servers.mcp_url, name="inline", oauth={"owner": User(7, "carol")})
    connect(server, servers, user="carol")
    assert store.read(credential_key(servers.mcp_url, User(7, "carol")))
    assert server.call("add", a=1, b=1).text == "2"


def test_discovers_registers_and_uses_pkce(store):
    """MCP-AUTH-02: a 401 leads to discovery; the client registers (no client configured) and the code
    exchange passes the server's PKCE S256 check (the server refuses a code without the right verifier)."""
    with oauth_servers() as servers:
        server = make_class(servers)(user=User(1, "a"))
        with pytest.raises(llm_mcp.UnauthorizedError):
            server.tools
        params = connect(server, servers)
        assert params["code_challenge_method"] == "S256" and len(params["code_challenge"]) == 43
        assert len(servers.registrations()) == 1
        assert [(t["grant_type"], t["status"]) for t in servers.token_requests()] == [("authorization_code", 200)]


def test_authorization_url_carries_every_parameter(store, servers):
    """MCP-AUTH-04: client_id, redirect_uri, state, the S256 challenge, the scope and resource (RFC 8707)."""
    server = make_class(servers)(user=User(1, "a"))
    url = server.authorization_url(redirect_uri=REDIRECT)
    params = dict(parse_qsl(urlsplit(url).query))
    assert url.startswith(f"{servers.issuer}/authorize?")
    registered = servers.registrations()[-1]
    assert params["response_type"] == "code"
    assert params["client_id"] and registered["redirect_uris"] == [REDIRECT]
    assert params["redirect_uri"] == REDIRECT
    assert len(params["state"]) >= 32
    assert params["code_challenge_method"] == "S256"
    assert params["scope"] == "mcp"  # the 401's challenged scope
    assert params["resource"] == servers.mcp_url


def test_authorize_exchanges_the_code_and_stores_credentials(store, servers):
    """MCP-AUTH-05: authorize exchanges the code (with the verifier and resource) and stores the tokens."""
    server = make_class(servers)(user=User(3, "a"))
    before = len(servers.token_requests())
    connect(server, servers)
    exchange = servers.token_requests()[before:]
    assert [(t["grant_type"], t["resource"], t["status"]) for t in exchange] == \
        [("authorization_code", servers.mcp_url, 200)]
    record = store.read(credential_key(servers.mcp_url, User(3, "a")))
    assert record["access_token"] and record["refresh_token"] and record["issuer"] == servers.issuer
    assert record["pending"] == {}


def test_wrong_state_is_refused(store, servers):
    """MCP-AUTH-06: a callback whose state belongs to no authorization started here raises MCPError; no code
    exchange happens."""
    server = make_class(servers)(user=User(1, "a"))
    params = callback_params(servers.approve(server.authorization_url(redirect_uri=REDIRECT)))
    before = len(servers.token_requests())
    with pytest.raises(llm_mcp.MCPError, match="state"):
        server.authorize({**params, "state": "forged"})
    with pytest.raises(llm_mcp.MCPError, match="state"):
        server.authorize({k: v for k, v in params.items() if k != "state"})
    assert len(servers.token_requests()) == before


def test_callback_of_another_owners_authorization_is_refused(store, servers):
    """MCP-AUTH-06: Bob's callback cannot finish Alice's authorization (each owner has its own state)."""
    Protected = make_class(servers)
    alice, bob = Protected(user=User(1, "alice")), Protected(user=User(2, "bob"))
    alice.authorization_url(redirect_uri=REDIRECT)
    bobs = callback_params(servers.approve(bob.authorization_url(redirect_uri=REDIRECT), user="bob"))
    with pytest.raises(llm_mcp.MCPError):
        alice.authorize(bobs)
    assert not alice.authorized


def test_mix_up_iss_naming_another_issuer_is_refused(store, servers):
    """MCP-AUTH-06 (attack: mix-up, RFC 9207): an iss naming another issuer raises MCPError and the code is
    never sent anywhere; the comparison is exact (a trailing slash is another issuer)."""
    server = make_class(servers)(user=User(1, "a"))
    for wrong in ("https://evil.example.com", servers.issuer + "/"):
        params = callback_params(servers.approve(server.authorization_url(redirect_uri=REDIRECT)))
        before = len(servers.token_requests())
        with pytest.raises(llm_mcp.MCPError, match="issuer") as info:
            server.authorize({**params, "iss": wrong})
        assert not isinstance(info.value, llm_mcp.UnauthorizedError)
        assert len(servers.token_requests()) == before
    assert not server.authorized


def test_missing_iss_is_refused_when_the_server_promised_it(store, servers):
    """MCP-AUTH-06 (RFC 9207 §2.4): the server advertises authorization_response_iss_parameter_supported,
    so a callback without iss is refused."""
    server = make_class(servers)(user=User(1, "a"))
    params = callback_params(servers.approve(server.authorization_url(redirect_uri=REDIRECT)))
    del params["iss"]
    with pytest.raises(llm_mcp.MCPError, match="iss"):
        server.authorize(params)


def test_a_refused_authorization_raises_unauthorized(store, servers):
    """MCP-AUTH-06: an ``error`` in the callback (the user said no) raises UnauthorizedError with the reason."""
    server = make_class(servers)(user=User(1, "a"))
    url = server.authorization_url(redirect_uri=REDIRECT)
    state = dict(parse_qsl(urlsplit(url).query))["state"]
    with pytest.raises(llm_mcp.UnauthorizedError, match="access_denied"):
        server.authorize({"error": "access_denied", "state": state, "iss": servers.issuer})


def test_the_callback_may_run_in_another_server_object(store, servers):
    """The pending authorization lives in the credential store: a new server object (another request,
    another process) finishes it."""
    Protected = make_class(servers)
    url = Protected(user=User(5, "a")).authorization_url(redirect_uri=REDIRECT)
    later = Protected(user=User(5, "a"))
    later.authorize(callback_params(servers.approve(url)))
    assert later.authorized


def test_every_request_sends_the_owners_token(store, servers):
    """MCP-AUTH-07: once authorized, every MCP request carries the owner's token (the MCP server
    accepted each one)."""
    server = make_class(servers)(user=User(1, "a"))
    connect(server, servers, user="dora")
    before = len(servers.mcp_requests())
    server.refresh_tools()
    server.call("add", a=1, b=2)
    server.call("add", a=3, b=4)
    seen = servers.mcp_requests()[before:]
    assert [r["tool"] for r in seen if r["method"] == "tools/call"] == ["add", "add"]
    assert {r["user"] for r in seen} == {"dora"}


def test_a_token_about_to_expire_is_refreshed_before_use(store, servers):
    """MCP-AUTH-07: an expiring token is refreshed before the request (refresh_token grant, with resource)."""
    server = make_class(servers)(user=User(1, "a"))
    connect(server, servers)
    key = credential_key(servers.mcp_url, User(1, "a"))
    record = store.read(key)
    store.write(key, {**record, "expires_at": 1})
    before = len(servers.token_requests("refresh_token"))
    assert server.call("add", a=1, b=1).text == "2"
    refreshes = servers.token_requests("refresh_token")[before:]
    assert [(r["status"], r["resource"]) for r in refreshes] == [(200, servers.mcp_url)]
    fresh = store.read(key)
    assert fresh["access_token"] != record["access_token"] and fresh["refresh_token"] != record["refresh_token"]


def test_a_token_the_server_refuses_is_refreshed_once(store, servers):
    """MCP-AUTH-07: a 401 for a stored token refreshes it once and sends the request again."""
    server = make_class(servers)(user=User(1, "a"))
    connect(server, servers)
    servers.expire_access_tokens()
    before = len(servers.token_requests("refresh_token"))
    assert server.call("add", a=2, b=2).text == "4"
    assert len(servers.token_requests("refresh_token")) == before + 1


def test_a_refused_refresh_forgets_the_tokens(store, servers):
    """MCP-AUTH-07/08: when the refresh token is refused, the owner must authorize again."""
    server = make_class(servers)(user=User(1, "a"))
    connect(server, servers)
    key = credential_key(servers.mcp_url, User(1, "a"))
    store.write(key, {**store.read(key), "refresh_token": "spent", "expires_at": 1})
    servers.expire_access_tokens()
    with pytest.raises(llm_mcp.UnauthorizedError, match="authorization_url"):
        server.call("add", a=1, b=1)
    assert not server.authorized


def test_authorized_reflects_stored_credentials(store, servers):
    """MCP-AUTH-08: ``authorized`` is False before, True after authorize."""
    server = make_class(servers)(user=User(1, "a"))
    assert server.authorized is False
    server.authorization_url(redirect_uri=REDIRECT)
    assert server.authorized is False  # a started authorization is not one
    connect(server, servers)
    assert server.authorized is True


def test_deauthorize_forgets_the_credentials(store, servers):
    """MCP-AUTH-09: deauthorize deletes the owner's credentials; authorized is False and requests 401 again."""
    server = make_class(servers)(user=User(1, "a"))
    connect(server, servers)
    server.deauthorize()
    assert server.authorized is False
    assert store.read(credential_key(servers.mcp_url, User(1, "a"))) is None
    with pytest.raises(llm_mcp.UnauthorizedError):
        server.call("add", a=1, b=1)


def test_oauth_setting_is_checked(servers):
    """Unknown keys and contradictory combinations raise ValueError naming the key."""
    with pytest.raises(ValueError, match="unknown keys.*colour"):
        llm_mcp.mcp(url=servers.mcp_url, oauth={"colour": "blue"})
    with pytest.raises(ValueError, match="client_secret or private_key"):
        llm_mcp.mcp(url=servers.mcp_url, oauth={"client_id": "a", "client_secret": "s", "private_key": "k"})
    with pytest.raises(ValueError, match="bearer_token"):
        llm_mcp.mcp(url=servers.mcp_url, oauth={}, bearer_token="t")
    with pytest.raises(ValueError, match="needs a url"):
        llm_mcp.mcp(command=["true"], oauth={})
    with pytest.raises(ValueError, match="not one of the inputs"):
        class Wrong(llm_mcp.MCP):
            url = servers.mcp_url
            inputs = ["user"]
            oauth = {"owner": "account"}
        Wrong(user=None)
    with pytest.raises(ValueError, match="redirect_uri"):
        llm_mcp.mcp(url=servers.mcp_url, oauth={}).authorization_url()
    with pytest.raises(ValueError, match="https"):
        llm_mcp.mcp(url=servers.mcp_url, oauth={}).authorization_url(redirect_uri="http://app.example.com/cb")


# -- 18.2 pre-registered apps ------------------------------------------------------------------


def test_pre_registered_app_registers_nothing(store):
    """MCP-AUTHAPP-01: client_id and client_secret are used (client_secret_basic) and nothing is registered."""
    with oauth_servers() as servers:
        servers.register_client("slack-app", secret="s3cret-value", redirect_uris=[REDIRECT])
        server = make_class(servers, client_id="slack-app", client_secret="s3cret-value")(user=User(1, "a"))
        params = connect(server, servers)
        assert params["client_id"] == "slack-app"
        assert servers.registrations() == []
        assert [(t["client_id"], t["auth"], t["status"]) for t in servers.token_requests()] == \
            [("slack-app", "basic", 200)]
        assert server.call("add", a=1, b=2).text == "3"


def test_pre_registered_app_is_pinned_to_its_first_authorization_server(store):
    """MCP-AUTHAPP-02: after the app's credentials were used with one authorization server, an MCP server
    naming another raises MCPError and that other server receives neither the client_id nor the secret."""
    with oauth_servers() as first, oauth_servers() as second:
        for running in (first, second):
            running.register_client("app", secret="s3cret-value", redirect_uris=[REDIRECT])
        connect(make_class(first, client_id="app", client_secret="s3cret-value")(user=User(1, "a")), first)
        other = make_class(second, client_id="app", client_secret="s3cret-value")(user=User(1, "a"))
        with pytest.raises(llm_mcp.MCPError, match="registered with") as info:
            other.authorization_url(redirect_uri=REDIRECT)
        assert first.issuer in str(info.value) and "s3cret" not in str(info.value)
        assert second.authorizations() == [] and second.token_requests() == [] and second.registrations() == []


def test_client_credentials_may_be_callables_or_method_names(store):
    """MCP-AUTHAPP-03: client_id and client_secret as a callable and as a method name."""
    with oauth_servers() as servers:
        servers.register_client("computed", secret="from-a-method", redirect_uris=[REDIRECT])

        class Computed(llm_mcp.MCP):
            url = servers.mcp_url
            inputs = ["user"]
            oauth = {"owner": "user", "client_id": lambda self: "computed", "client_secret": "secret_for"}

            def secret_for(self):
                return "from-a-method"

        server = Computed(user=User(1, "a"))
        assert connect(server, servers)["client_id"] == "computed"
        assert [(t["client_id"], t["status"]) for t in servers.token_requests()] == [("computed", 200)]


# -- 18.3 extra authorization parameters ---------------------------------------------------------


def test_authorization_params_are_added(store, servers):
    """MCP-AUTHPARAM-01: authorization_params appear on the authorization URL."""
    server = make_class(servers, authorization_params={"access_type": "offline", "prompt": "consent"})(user=User(1, "a"))
    params = dict(parse_qsl(urlsplit(server.authorization_url(redirect_uri=REDIRECT)).query))
    assert params["access_type"] == "offline" and params["prompt"] == "consent"


def test_authorization_params_may_be_a_callable_or_method_name(store, servers):
    """MCP-AUTHPARAM-02: a callable (given the server) and a method name."""
    class ByMethod(llm_mcp.MCP):
        url = servers.mcp_url
        inputs = ["user"]
        oauth = {"owner": "user", "authorization_params": "extra"}

        def extra(self):
            return {"login_hint": self.user.name}

    by_lambda = make_class(servers, authorization_params=lambda server: {"login_hint": "lambda"})(user=User(1, "a"))
    for server, hint in ((ByMethod(user=User(2, "erin")), "erin"), (by_lambda, "lambda")):
        params = dict(parse_qsl(urlsplit(server.authorization_url(redirect_uri=REDIRECT)).query))
        assert params["login_hint"] == hint


@pytest.mark.parametrize("name", sorted(RESERVED_PARAMS))
def test_authorization_params_the_client_sets_raise(store, servers, name):
    """MCP-AUTHPARAM-03: client_id, state, scope, response_type, redirect_uri, code_challenge,
    code_challenge_method and resource raise ValueError, as a literal (at construction) and from a callable."""
    assert {"client_id", "state", "scope", "response_type", "redirect_uri", "code_challenge",
            "code_challenge_method", "resource"} == set(RESERVED_PARAMS)
    with pytest.raises(ValueError, match=name):
        make_class(servers, authorization_params={name: "x"})(user=User(1, "a"))
    server = make_class(servers, authorization_params=lambda: {name: "x"})(user=User(1, "a"))
    with pytest.raises(ValueError, match=name):
        server.authorization_url(redirect_uri=REDIRECT)


# -- 18.4 scopes -------------------------------------------------------------------------------


def test_explicit_scopes_are_requested_exactly(store, servers):
    """MCP-SCOPE-01: ``scopes`` overrides the server's defaults, exactly."""
    server = make_class(servers, scopes=["admin", "mcp"])(user=User(1, "a"))
    assert connect(server, servers)["scope"] == "admin mcp"
    assert server.call("admin_report").text == "all systems nominal"


def test_scopes_default_to_the_challenge_then_scopes_supported_then_none(store):
    """MCP-SCOPE-01 (spec note): the challenged scope, else the resource's scopes_supported, else no scope."""
    with FakeServer() as site:
        metadata = {"issuer": site.url, "authorization_endpoint": f"{site.url}/authorize",
                    "token_endpoint": f"{site.url}/token", "code_challenge_methods_supported": ["S256"]}
        site.route("/.well-known/oauth-authorization-server", json=metadata)
        cases = [('Bearer scope="files:read"', ["a", "b"], "files:read"), ("Bearer", ["a", "b"], "a b"),
                 ("Bearer", None, None)]
        for number, (challenge, supported, expected) in enumerate(cases):
            site.route("/mcp", method="POST", status=401, headers={"WWW-Authenticate": challenge})
            prm = {"resource": f"{site.url}/mcp", "authorization_servers": [site.url]}
            if supported:
                prm["scopes_supported"] = supported
            site.route("/.well-known/oauth-protected-resource/mcp", json=prm)
            server = llm_mcp.mcp(url=f"{site.url}/mcp", name=f"s{number}", oauth={"client_id": "app"})
            params = dict(parse_qsl(urlsplit(server.authorization_url(redirect_uri=REDIRECT)).query))
            assert params.get("scope") == expected, challenge


def test_insufficient_scope_raises_with_reason_and_scopes(store, servers):
    """MCP-SCOPE-02: a 403 insufficient_scope raises InsufficientScopeError (a ForbiddenError) with the
    message "<host> refused the request: <reason>" and ``.scopes``."""
    server = make_class(servers)(user=User(1, "a"))
    connect(server, servers)
    with pytest.raises(llm_mcp.InsufficientScopeError) as info:
        server.call("admin_report")
    assert isinstance(info.value, llm_mcp.ForbiddenError)
    assert str(info.value) == "127.0.0.1 refused the request: Additional scopes required: admin"
    assert info.value.scopes == ["admin"]


def test_the_client_never_widens_its_scopes_by_itself(store, servers):
    """MCP-SCOPE-03: after a 403 no authorization or token request is made for more scopes; the app steps up
    itself through authorization_url(scopes=...)."""
    server = make_class(servers)(user=User(1, "a"))
    connect(server, servers)
    tokens, authorizations = len(servers.token_requests()), len(servers.authorizations())
    for _ in range(2):
        with pytest.raises(llm_mcp.InsufficientScopeError):
            server.call("admin_report")
    assert len(servers.token_requests()) == tokens and len(servers.authorizations()) == authorizations
    assert dict(parse_qsl(urlsplit(server.authorization_url(redirect_uri=REDIRECT)).query))["scope"] == "mcp"
    assert connect(server, servers, scopes=["mcp", "admin"])["scope"] == "mcp admin"
    assert server.call("admin_report").text == "all systems nominal"


# -- 19 storing credentials ----------------------------------------------------------------------


def test_credentials_are_kept_in_memory_by_default():
    """MCP-CRED-03: without configuration the store is an in-memory MemoryStore."""
    fresh = Config()
    assert isinstance(fresh.credential_store, MemoryStore)
    assert fresh.credential_store is fresh.credential_store


def test_any_object_with_read_write_delete_is_a_store(servers):
    """MCP-CRED-04: configure(credential_store=...) takes any object with read/write/delete, and all
    credential I/O goes through it; an object lacking one is refused."""
    custom = RecordingStore()
    previous = config.credential_store
    configure(credential_store=custom)
    try:
        server = make_class(servers)(user=User(9, "a"))
        connect(server, servers)
        key = credential_key(servers.mcp_url, User(9, "a"))
        assert custom.data[key]["access_token"]
        assert server.call("add", a=1, b=1).text == "2"
        assert ("read", key) in custom.calls and ("write", key) in custom.calls
        assert any(k.startswith("oauth-client:") for _, k in custom.calls)  # the registration too
        server.deauthorize()
        assert custom.calls[-1] == ("delete", key) and key not in custom.data
    finally:
        configure(credential_store=previous)
    with pytest.raises(ValueError, match="delete"):
        configure(credential_store=type("Half", (), {"read": lambda s, k: None, "write": lambda s, k, d: None})())


def expire(store: Any, key: str) -> None:
    store.write(key, {**store.read(key), "expires_at": 1})


def test_threads_refreshing_one_grant_take_turns(store):
    """MCP-CRED-05: threads needing a refresh at once cause one refresh request; the others use its token
    (the server rotates refresh tokens and refuses a spent one)."""
    with oauth_servers(token_delay=0.3) as servers:
        server = make_class(servers)(user=User(1, "a"))
        connect(server, servers)
        server.tools
        expire(store, credential_key(servers.mcp_url, User(1, "a")))
        results, errors = [], []
        barrier = threading.Barrier(6)

        def call() -> None:
            twin = make_class(servers)(user=User(1, "a"))  # separate server objects, one credential key
            barrier.wait()
            try:
                results.append(twin.call("add", a=1, b=1).text)
            except Exception as exc:  # noqa: BLE001 - collected for the assertion
                errors.append(exc)

        threads = [threading.Thread(target=call) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert errors == [] and results == ["2"] * 6
        assert [r["status"] for r in servers.token_requests("refresh_token")] == [200]


class SynchronizingStore(MemoryStore):
    """A MemoryStore whose synchronize(key) records when it is held (as a shared store would)."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[str] = []
        self.held: set[str] = set()

    @contextlib.contextmanager
    def synchronize(self, key):
        with super().synchronize(key):
            self.events.append(f"enter {key}")
            self.held.add(key)
            try:
                yield
            finally:
                self.held.discard(key)
                self.events.append(f"exit {key}")

    def write(self, key, data, *, owner=None):
        if key.startswith("oauth:") and data.get("access_token"):
            self.events.append(f"write {key} held={key in self.held}")
        super().write(key, data, owner=owner)


def test_refresh_runs_inside_the_stores_synchronize(servers):
    """MCP-CRED-07: with a store that has synchronize(key), the refresh (read, token request, write) runs
    while the key is held."""
    custom = SynchronizingStore()
    previous = config.credential_store
    configure(credential_store=custom)
    try:
        server = make_class(servers)(user=User(4, "a"))
        connect(server, servers)
        key = credential_key(servers.mcp_url, User(4, "a"))
        expire(custom, key)
        custom.events.clear()
        before = len(servers.token_requests("refresh_token"))
        assert server.call("add", a=1, b=1).text == "2"
        assert len(servers.token_requests("refresh_token")) == before + 1
        assert custom.events[:3] == [f"enter {key}", f"write {key} held=True", f"exit {key}"]
    finally:
        configure(credential_store=previous)


# -- 20 client registration ----------------------------------------------------------------------


def test_client_id_and_client_name_settings(store):
    """MCP-REG-01: configure(client_id=<document URL>, client_name=...) sets them; a client_id that is not an
    https URL with a path is refused."""
    configure(client_id="https://app.example.com/oauth/client.json", client_name="Example")
    assert (config.client_id, config.client_name) == ("https://app.example.com/oauth/client.json", "Example")
    for bad in ("http://app.example.com/client.json", "https://app.example.com", "not a url"):
        with pytest.raises(ValueError, match="client_id"):
            configure(client_id=bad)


def test_metadata_document_is_used_when_supported(store):
    """MCP-REG-02, MCP-REG-03: with client_id configured and the server supporting metadata documents, the
    URL is the client_id and nothing is registered; the document (client_id = its URL, redirect_uris with the
    callback) is what the authorization server fetched and accepted."""
    with FakeServer() as app, oauth_servers(client_id_metadata_documents=True) as servers:
        configure(client_id=f"{app.url}/oauth/client.json", client_name="Example")
        app.route("/oauth/client.json", json=config.client_metadata_document([REDIRECT]))
        server = make_class(servers)(user=User(1, "a"))
        assert connect(server, servers)["client_id"] == f"{app.url}/oauth/client.json"
        assert servers.registrations() == []
        assert "/oauth/client.json" in app.paths("GET")
        assert server.call("add", a=1, b=1).text == "2"
        document = config.client_metadata_document([REDIRECT])
        assert document["client_id"] == config.client_id and REDIRECT in document["redirect_uris"]


def test_metadata_document_is_not_used_without_support(store, servers):
    """MCP-REG-02: a server that does not advertise client_id_metadata_document_supported gets a registration."""
    configure(client_id="https://app.example.com/oauth/client.json")
    server = make_class(servers)(user=User(1, "a"))
    params = dict(parse_qsl(urlsplit(server.authorization_url(redirect_uri=REDIRECT)).query))
    assert params["client_id"] != config.client_id


def test_dynamic_registration_once_per_server_and_redirect_uri(store):
    """MCP-REG-04: one registration per (authorization server, redirect URI), reused for later users, with
    application_type native for loopback and web otherwise."""
    with oauth_servers() as servers:
        Protected = make_class(servers)
        connect(Protected(user=User(1, "a")), servers)
        connect(Protected(user=User(2, "b")), servers)
        assert len(servers.registrations()) == 1
        Protected(user=User(3, "c")).authorization_url(redirect_uri="https://app.example.com/oauth/callback")
        registered = servers.registrations()
        assert [(r["redirect_uris"], r["application_type"]) for r in registered] == \
            [([REDIRECT], "native"), (["https://app.example.com/oauth/callback"], "web")]
        assert registered[0]["grant_types"] == ["authorization_code", "refresh_token"]


def test_registration_forgotten_by_the_server_is_made_again(store):
    """MCP-REG-05: an invalid_client answer forgets the registration; the next authorization registers again."""
    with oauth_servers() as servers:
        server = make_class(servers)(user=User(1, "a"))
        connect(server, servers)
        servers.forget_clients()
        expire(store, credential_key(servers.mcp_url, User(1, "a")))
        with pytest.raises(llm_mcp.UnauthorizedError):
            server.call("add", a=1, b=1)
        assert servers.token_requests("refresh_token")[-1]["error"] == "invalid_client"
        connect(server, servers)
        assert len(servers.registrations()) == 2
        assert server.call("add", a=1, b=1).text == "2"


def test_c21_registration_secret_without_auth_method_means_basic(store):
    """C21: a registration answered with a client_secret and no token_endpoint_auth_method: the code exchange
    authenticates with client_secret_basic (RFC 7591 §2 default)."""
    with FakeServer() as site:
        site.route("/mcp", method="POST", status=401, headers={"WWW-Authenticate": "Bearer"})
        site.route("/.well-known/oauth-protected-resource/mcp",
                   json={"resource": f"{site.url}/mcp", "authorization_servers": [site.url]})
        site.route("/.well-known/oauth-authorization-server", json={
            "issuer": site.url, "authorization_endpoint": f"{site.url}/authorize", "token_endpoint": f"{site.url}/token",
            "registration_endpoint": f"{site.url}/register", "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"]})
        site.route("/register", method="POST", status=201, json={"client_id": "dcr-client", "client_secret": "dcr-secret"})
        site.route("/token", method="POST", json={"access_token": "at-1", "token_type": "Bearer", "expires_in": 3600})
        server = llm_mcp.mcp(url=f"{site.url}/mcp", name="c21", oauth={})
        state = dict(parse_qsl(urlsplit(server.authorization_url(redirect_uri=REDIRECT)).query))["state"]
        server.authorize({"code": "the-code", "state": state})
        token_request = next(r for r in site.requests if r.path == "/token")
        import base64

        assert token_request.headers["authorization"] == "Basic " + base64.b64encode(b"dcr-client:dcr-secret").decode()
        assert "client_secret" not in token_request.form
        assert token_request.form["code"] == "the-code" and token_request.form["resource"] == f"{site.url}/mcp"
        assert server.authorized


# -- secrets ---------------------------------------------------------------------------------------


def test_secrets_stay_out_of_logs_reprs_and_messages(store, servers, caplog):
    """Tokens, refresh tokens, client secrets and PKCE verifiers never reach logs, repr or error messages."""
    servers.register_client("quiet-app", secret="very-secret-client-value", redirect_uris=[REDIRECT])
    caplog.set_level(logging.DEBUG)
    server = make_class(servers, client_id="quiet-app", client_secret="very-secret-client-value")(user=User(1, "a"))
    connect(server, servers)
    server.call("add", a=1, b=1)
    servers.expire_access_tokens()
    server.call("add", a=1, b=1)
    with pytest.raises(llm_mcp.InsufficientScopeError) as refused:
        server.call("admin_report")
    record = store.read(credential_key(servers.mcp_url, User(1, "a")))
    secrets = [record["access_token"], record["refresh_token"], "very-secret-client-value"]
    url = server.authorization_url(redirect_uri=REDIRECT)
    pending = store.read(credential_key(servers.mcp_url, User(1, "a")))["pending"]
    secrets += [p["verifier"] for p in pending.values()]
    client_side = [r for r in caplog.records if not r.name.startswith("authlib")]  # authlib is the test server
    assert any(r.name.startswith("httpx") for r in client_side)
    shown = "\n".join(r.getMessage() for r in client_side) + repr(server) + repr(server.oauth_flow) + \
        repr(store) + repr(server.oauth_settings()) + str(refused.value) + url
    for secret in secrets:
        assert secret not in shown
    with pytest.raises(llm_mcp.MCPError) as info:
        server.authorize({"code": "x", "state": "nope"})
    assert all(secret not in str(info.value) for secret in secrets)


@pytest.mark.slow
def test_processes_refreshing_one_grant_take_turns_through_synchronize(tmp_path):
    """MCP-CRED-07, MCP-CRED-05: two worker processes sharing a file store whose synchronize(key) takes a
    file lock need a refresh at once: exactly one refresh request reaches the authorization server (which
    rotates refresh tokens and refuses a spent one), and both workers succeed."""
    import os
    import subprocess
    import sys

    from llm_mcp_tests.support.stores import FileStore

    shared = FileStore(str(tmp_path / "credentials.json"))
    previous = config.credential_store
    configure(credential_store=shared)
    try:
        with oauth_servers(token_delay=0.5) as servers:
            server = llm_mcp.mcp(url=servers.mcp_url, name="main", oauth={"owner": "shared-owner"})
            connect(server, servers)
            expire(shared, credential_key(servers.mcp_url, "shared-owner"))
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
            workers = [subprocess.Popen([sys.executable, "-m", "llm_mcp_tests.support.stores", shared.path,
                                         servers.mcp_url, "shared-owner"], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
            outputs = [worker.communicate(timeout=120) for worker in workers]
            assert [w.returncode for w in workers] == [0, 0], [err[-2000:] for _, err in outputs]
            assert [out.strip() for out, _ in outputs] == ["42", "42"]
            assert [r["status"] for r in servers.token_requests("refresh_token")] == [200]
    finally:
        configure(credential_store=previous)


def test_users_starting_at_once_share_one_registration(store):
    """MCP-REG-04: owners starting their first authorization at the same moment cause one registration."""
    with oauth_servers() as servers:
        Protected = make_class(servers)
        barrier = threading.Barrier(4)
        urls, errors = [], []

        def start(number: int) -> None:
            server = Protected(user=User(number, f"u{number}"))
            barrier.wait()
            try:
                urls.append(server.authorization_url(redirect_uri=REDIRECT))
            except Exception as exc:  # noqa: BLE001 - collected for the assertion
                errors.append(exc)

        threads = [threading.Thread(target=start, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert errors == [] and len(urls) == 4
        assert len(servers.registrations()) == 1
        assert len({dict(parse_qsl(urlsplit(u).query))["client_id"] for u in urls}) == 1


def test_memory_store_keeps_copies_and_refuses_non_dicts():
    """MCP-CRED-03: the in-memory store hands out copies (a caller's edits do not leak in), refuses data that
    is not a dict, and shows no data in its repr."""
    memory = MemoryStore()
    data = {"access_token": "secret-token", "nested": {"a": 1}}
    memory.write("k", data, owner="someone")
    data["nested"]["a"] = 2
    copy = memory.read("k")
    copy["access_token"] = "changed"
    assert memory.read("k") == {"access_token": "secret-token", "nested": {"a": 1}}
    assert memory.owners["k"] == "someone" and "secret-token" not in repr(memory)
    with pytest.raises(TypeError):
        memory.write("k", ["not", "a", "dict"])
    memory.delete("k")
    memory.delete("k")
    assert memory.read("k") is None and len(memory) == 0


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_both_protocol_eras_carry_the_token(store, era):
    """MCP-AUTH-07: a 2026-07-28 server and a server reached through the initialize handshake both get the
    owner's token on every request (the handshake, the initialized notification, tools/list, tools/call)."""
    with oauth_servers(era=era) as servers:
        server = make_class(servers)(user=User(1, "a"))
        with pytest.raises(llm_mcp.UnauthorizedError):
            server.tools
        connect(server, servers, user="erin")
        assert server.call("add", a=5, b=6).text == "11"
        expected = "2026-07-28" if era == "modern" else server.protocol_version
        assert server.protocol_version == expected and (era == "modern") == (expected == "2026-07-28")
        methods = [r["method"] for r in servers.mcp_requests()]
        assert "tools/call" in methods and ("initialize" in methods) == (era == "handshake")
        assert {r["user"] for r in servers.mcp_requests()} == {"erin"}


def fake_authorization_server(site: FakeServer, **metadata: Any) -> None:
    """An MCP server and its authorization server on one scripted site (token endpoint answers any code)."""
    site.route("/mcp", method="POST", status=401, headers={"WWW-Authenticate": "Bearer"})
    site.route("/.well-known/oauth-protected-resource/mcp",
               json={"resource": f"{site.url}/mcp", "authorization_servers": [site.url]})
    site.route("/.well-known/oauth-authorization-server", json={
        "issuer": site.url, "authorization_endpoint": f"{site.url}/authorize", "token_endpoint": f"{site.url}/token",
        "code_challenge_methods_supported": ["S256"], **metadata})
    site.route("/token", method="POST", json={"access_token": "at-1", "token_type": "Bearer", "expires_in": 3600})


@pytest.mark.parametrize(("iss", "accepted"), [(None, True), ("same", True), ("https://evil.example.com", False)])
def test_iss_when_the_server_does_not_advertise_it(store, iss, accepted):
    """MCP-AUTH-06 (MCP 2026-07-28 "Authorization Response Validation"): without
    authorization_response_iss_parameter_supported, an absent iss proceeds, and a present one is still
    compared exactly (a mismatch is refused before the code is sent)."""
    with FakeServer() as site:
        fake_authorization_server(site)
        server = llm_mcp.mcp(url=f"{site.url}/mcp", name="quiet", oauth={"client_id": "app"})
        state = dict(parse_qsl(urlsplit(server.authorization_url(redirect_uri=REDIRECT)).query))["state"]
        params = {"code": "c", "state": state}
        if iss is not None:
            params["iss"] = site.url if iss == "same" else iss
        if accepted:
            server.authorize(params)
            assert server.authorized
        else:
            with pytest.raises(llm_mcp.MCPError, match="issuer"):
                server.authorize(params)
            assert "/token" not in site.paths("POST")


def test_an_error_response_from_another_issuer_is_not_acted_on(store, servers):
    """MCP-AUTH-06: an error callback whose iss names another issuer raises MCPError (a mix-up), not the
    UnauthorizedError an honest refusal gives; its error_description is not shown."""
    server = make_class(servers)(user=User(1, "a"))
    state = dict(parse_qsl(urlsplit(server.authorization_url(redirect_uri=REDIRECT)).query))["state"]
    with pytest.raises(llm_mcp.MCPError) as info:
        server.authorize({"error": "access_denied", "error_description": "click evil.example.com to retry",
                          "state": state, "iss": "https://evil.example.com"})
    assert not isinstance(info.value, llm_mcp.UnauthorizedError)
    assert "click" not in str(info.value)


def test_short_lived_tokens_are_used_for_most_of_their_life(store, servers):
    """MCP-AUTH-07: the refresh margin is 60 s, or a quarter of a shorter token's lifetime: a 20-second token
    with 15 s left is used as it is; one with 4 s of its 20 left is refreshed first."""
    import time

    server = make_class(servers)(user=User(1, "a"))
    connect(server, servers)
    key = credential_key(servers.mcp_url, User(1, "a"))
    now = time.time()
    before = len(servers.token_requests("refresh_token"))
    store.write(key, {**store.read(key), "lifetime": 20, "expires_at": now + 15})
    server.call("add", a=1, b=1)
    assert len(servers.token_requests("refresh_token")) == before
    store.write(key, {**store.read(key), "lifetime": 20, "expires_at": now + 4})
    server.call("add", a=1, b=1)
    assert len(servers.token_requests("refresh_token")) == before + 1


def test_legacy_http_sse_requests_carry_the_token(store, raw_http):
    """MCP-AUTH-07: on a 2024-11-05 HTTP+SSE server the owner's token goes on every request: the probes,
    the event stream's GET and every POST to the announced endpoint."""
    url = raw_http.url("c22_rel")
    server = llm_mcp.mcp(url=url, name="legacy", oauth={"owner": "olga"})
    store.write(credential_key(url, "olga"), {"access_token": "stored-token-1", "token_type": "Bearer"})
    with server:
        assert server.echo(message="hi").text == "hi"
    log = raw_http.log()
    assert {e["method"] for e in log} >= {"GET", "POST"}
    for entry in log:
        assert ["authorization", "Bearer stored-token-1"] in entry["headers"], (entry["method"], entry["path"])


@pytest.mark.parametrize(("supported", "expected"), [(None, "basic"), (["client_secret_post"], "post"),
                                                     (["client_secret_basic", "client_secret_post"], "basic")])
def test_pre_registered_secret_goes_as_the_server_allows(store, supported, expected):
    """MCP-AUTHAPP-01: the app's secret is sent with client_secret_basic (preferred, and the default when the
    metadata lists nothing) or client_secret_post when that is all the server takes."""
    with FakeServer() as site:
        extra = {"token_endpoint_auth_methods_supported": supported} if supported else {}
        fake_authorization_server(site, **extra)
        server = llm_mcp.mcp(url=f"{site.url}/mcp", name="app", oauth={"client_id": "app-1", "client_secret": "pw-1"})
        state = dict(parse_qsl(urlsplit(server.authorization_url(redirect_uri=REDIRECT)).query))["state"]
        server.authorize({"code": "c", "state": state})
        sent = next(r for r in site.requests if r.path == "/token")
        if expected == "basic":
            import base64

            assert sent.headers["authorization"] == "Basic " + base64.b64encode(b"app-1:pw-1").decode()
            assert "client_secret" not in sent.form
        else:
            assert "authorization" not in sent.headers
            assert (sent.form["client_id"], sent.form["client_secret"]) == ("app-1", "pw-1")
        assert "/register" not in site.paths("POST")


def test_the_oauth_package_exports_what_the_docs_name():
    """docs/authorization.md names ``TokenRequestError`` (with ``.error``, ``.error_description``,
    ``.status``) and the DPoP key: both are importable from ``llm_mcp.client.oauth``."""
    from llm_mcp.client import oauth

    assert issubclass(oauth.TokenRequestError, llm_mcp.UnauthorizedError)
    assert oauth.DPoPKey.generate().thumbprint
    assert {"TokenRequestError", "DPoPKey"} <= set(oauth.__all__)


class _Anonymous:
    """What Django's ``request.user`` is for a visitor who has not signed in (no import needed):
    ``pk`` is ``None`` and every anonymous visitor's ``str`` is the same."""

    pk = None
    is_anonymous = True

    def __str__(self) -> str:
        return "AnonymousUser"


@pytest.mark.parametrize("user", [None, _Anonymous()], ids=["none", "anonymous"])
def test_an_owner_input_without_a_user_is_refused_not_shared(store, user):
    """MCP-CRED-02: credentials are per owner. A server whose ``oauth["owner"]`` names an input
    given ``None`` (the user was not passed) or an anonymous visitor must not file tokens under
    a key every such caller shares (one visitor's authorization would serve all of them): it
    raises ``ValueError`` naming the owner, and nothing is stored or sent."""

    class Linear(llm_mcp.MCP):
        url = "https://mcp.linear.example/mcp"
        inputs = ["user"]
        oauth = {"owner": "user"}

    server = Linear(user=user)
    with pytest.raises(ValueError, match="oauth owner"):
        server.authorization_url(redirect_uri="https://app.example/callback")
    with pytest.raises(ValueError, match="oauth owner"):
        server.authorized
    with pytest.raises(ValueError, match="oauth owner"):
        server.tools
    assert store.read(credential_key(Linear.url, None)) is None


def test_an_explicit_none_owner_is_refused_but_no_owner_is_the_application(store):
    """``oauth={"owner": None}`` (a lookup that found no one) is refused; leaving ``owner`` out
    is how credentials belong to the application as a whole."""
    with pytest.raises(ValueError, match="oauth owner"):
        llm_mcp.mcp(url="https://mcp.example/mcp", oauth={"owner": None}).authorized
    assert llm_mcp.mcp(url="https://mcp.example/mcp", oauth={}).authorized is False


@pytest.fixture(scope="module")
def user_servers():
    from llm_mcp_tests.support.oauth_servers import oauth_servers

    with oauth_servers() as running:
        yield running


def _protected(servers) -> type[llm_mcp.MCP]:
    class Protected(llm_mcp.MCP):
        url = servers.mcp_url
        inputs = ["user"]
        oauth = {"owner": "user"}

    return Protected


def _callback(servers, server) -> dict[str, str]:
    from urllib.parse import parse_qsl, urlsplit

    url = server.authorization_url(redirect_uri="http://127.0.0.1:8000/callback")
    return dict(parse_qsl(urlsplit(servers.approve(url)).query))


@pytest.mark.parametrize("name", ["iss", "code", "state"])
def test_a_callback_repeating_a_parameter_is_refused(store, user_servers, name):
    """MCP-AUTH-06, RFC 6749 §3.1 (parameters MUST NOT be repeated): a callback carrying
    ``iss`` (or ``code``, ``state``) twice is refused with ``MCPError`` whichever copy is right
    and wherever it sits: a ``parse_qs`` dict of lists or Django's ``QueryDict`` (whose ``get``
    returns the last copy). No code is exchanged."""
    from urllib.parse import parse_qs, urlencode

    from django.http import QueryDict

    server = _protected(user_servers)(user="review-dup")
    params = _callback(user_servers, server)
    forged = {"iss": "https://evil.example", "code": "forged-code", "state": "forged-state"}[name]
    pairs = [*params.items(), (name, forged)] if name != "iss" else [(name, forged), *params.items()]
    before = len(user_servers.token_requests())
    for shape in (parse_qs(urlencode(pairs)), QueryDict(urlencode(pairs))):
        with pytest.raises(llm_mcp.MCPError, match=f"repeats {name}") as info:
            server.authorize(shape)
        assert not isinstance(info.value, llm_mcp.UnauthorizedError)
    assert len(user_servers.token_requests()) == before and not server.authorized
    server.authorize(params)  # the genuine callback still finishes the authorization
    assert server.authorized


def test_a_huge_iss_is_not_copied_into_the_error(store, user_servers):
    """Bad input names the problem without carrying a megabyte of it: a huge ``iss`` is cut in
    the ``MCPError`` message."""
    server = _protected(user_servers)(user="review-huge")
    params = _callback(user_servers, server)
    with pytest.raises(llm_mcp.MCPError, match="issuer") as info:
        server.authorize({**params, "iss": "https://evil.example/" + "x" * 1_000_000})
    assert len(str(info.value)) < 1000


class DictStore:
    """A credential store of the app's own, as docs/authorization.md describes one: ``read``,
    ``write(key, data, owner=None)`` and ``delete``, no ``synchronize``."""

    def __init__(self) -> None:
        self.data: dict[str, dict] = {}

    def read(self, key: str) -> dict | None:
        return self.data.get(key)

    def write(self, key: str, data: dict, owner: object = None) -> None:
        self.data[key] = dict(data)

    def delete(self, key: str) -> None:
        self.data.pop(key, None)


def test_a_secret_in_the_server_url_stays_out_of_credential_keys(user_servers):
    """Credential keys are stored in clear (the Django model's ``key`` column, listed in the
    admin): an API key in the MCP server URL's query must not be copied into them. The key still tells servers apart (another query is another key)."""
    store = DictStore()
    before = config.credential_store
    configure(credential_store=store)
    try:
        url = user_servers.mcp_url + "?api_key=key-in-url-55"

        class Keyed(llm_mcp.MCP):
            inputs = ["user"]
            oauth = {"owner": "user"}

        Keyed.url = url
        server = Keyed(user="review-keyed")
        server.authorize(_callback(user_servers, server))
        assert server.authorized and [t.name for t in server.tools] == ["add", "admin_report"]
        assert store.data and all("key-in-url-55" not in key for key in store.data)
        assert credential_key(url, "a") != credential_key(url.replace("55", "56"), "a")
        assert credential_key(user_servers.mcp_url, "a") == f"oauth:{user_servers.mcp_url}|a"
    finally:
        configure(credential_store=before)


def test_a_declined_callbacks_reason_is_one_line(store, user_servers):
    """The callback's ``error_description`` is the authorization server's (or whoever crafted the
    URL's) text: ``UnauthorizedError`` carries it on one line, cut, so a log line of it is one
    line."""
    server = _protected(user_servers)(user="review-declined")
    params = _callback(user_servers, server)
    declined = {"state": params["state"], "iss": params["iss"], "error": "access_denied",
                "error_description": "no\nCRITICAL forged\r\n" + "y" * 5000}
    with pytest.raises(llm_mcp.UnauthorizedError, match="access_denied: no CRITICAL forged") as info:
        server.authorize(declined)
    assert "\n" not in str(info.value) and "\r" not in str(info.value) and len(str(info.value)) < 1000
