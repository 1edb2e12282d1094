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
from llm_mcp_tests.support.machine_servers import Authority, ProtectedMCP
from llm_mcp_tests.support.recording_as import RecordingAS

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
        assert meta["io.modelcontextprotocol/clientCapabilities"]["extensions"] == {CLIENT_CREDENTIALS_EXTENSION: {}}
        served = [r["body"] for r in mcp.requests[before:] if r["status"] is None and "id" in (r["body"] or {})]
        assert served and all(meta["io.modelcontextprotocol/clientCapabilities"]
                              == b["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] for b in served)


def test_the_oauth_package_exports_what_the_docs_name():
    """docs/authorization.md names ``TokenRequestError`` (with ``.error``, ``.error_description``,
    ``.status``) and the DPoP key: both are importable from ``llm_mcp.client.oauth``."""
    from llm_mcp.client import oauth

    assert issubclass(oauth.TokenRequestError, llm_mcp.UnauthorizedError)
    assert oauth.DPoPKey.generate().thumbprint
    assert {"TokenRequestError", "DPoPKey"} <= set(oauth.__all__)


# -- the Django connect view -------------------------------------------------------------------

@pytest.fixture
def oauth_servers_for_views(monkeypatch, settings):
    """The test authorization and MCP servers, listed as ``protected`` in ``OAUTH_SERVERS``."""
    from llm_mcp_tests.support.oauth_servers import oauth_servers
    from llm_mcp_tests.support.oauth_steps import MCP_URL_ENV

    with oauth_servers() as running:
        monkeypatch.setenv(MCP_URL_ENV, running.mcp_url)
        settings.LLM_MCP = {**settings.LLM_MCP,
                            "OAUTH_SERVERS": {"protected": "llm_mcp_tests.support.oauth_steps.ProtectedServer"}}
        yield running


@pytest.fixture
def alice(db):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user("alice")


def _browser(user):
    """A Django test client signed in as ``user`` (host 127.0.0.1, as the callback URL has)."""
    from django.test import Client

    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    return client


@pytest.mark.db
@pytest.mark.django_db(transaction=True)
def test_a_get_of_the_connect_view_changes_nothing_and_offers_the_post_form(oauth_servers_for_views, alice):
    """MCP-AUTH-10: the connect view acts on POST only (it may register a client and starts an
    authorization). A GET, such as a link or a cross-site ``<img>``, registers nothing, stores
    nothing and redirects nowhere: it answers a page with the CSRF-protected POST form, carrying
    a safe ``next``."""
    servers = oauth_servers_for_views
    from django.urls import reverse

    from llm_mcp.views import SESSION_KEY

    client = _browser(alice)
    url = reverse("llm_mcp:oauth_connect", args=["protected"])
    page = client.get(url, {"next": "/back/"})
    html = page.content.decode()
    assert page.status_code == 200
    assert f'<form method="post" action="{url}">' in html and "csrfmiddlewaretoken" in html
    assert 'name="next" value="/back/"' in html
    assert servers.registrations() == [] and servers.mcp_requests() == []
    assert SESSION_KEY not in client.session
    assert 'value="https://evil.example/"' not in client.get(url, {"next": "https://evil.example/"}).content.decode()
    started = client.post(url, {"next": "/back/"})
    assert started.status_code == 302 and started["Location"].startswith(servers.issuer)


# -- whose credentials -------------------------------------------------------------------------


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


# -- the callback ------------------------------------------------------------------------------


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


# -- hostile metadata and token endpoints ------------------------------------------------------


class Hostile:
    """An MCP server, its protected resource metadata and its authorization server on one
    127.0.0.1 port, where one document misbehaves: ``drip`` (headers, then a byte every 0.2 s
    for two minutes), ``huge`` (20 MB in 64 KiB chunks), or fixed ``bytes``.

    Attributes:
        url: the MCP endpoint (``/mcp``, always 401 with ``resource_metadata``).
        sent: bytes of the misbehaving body written before the client hung up.
    """

    HUGE = 20 * 1024 * 1024

    def __init__(self, *, path: str, mode: str, body: bytes = b"") -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.sent = 0
        self.finished = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _json(self, status: int, data: dict, headers: dict | None = None) -> None:
                import json

                payload = json.dumps(data).encode()
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", "Content-Length": str(len(payload)),
                                    **(headers or {})}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            def _hostile(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if mode == "bytes":
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    if mode == "drip":
                        for _ in range(600):
                            self.wfile.write(b" ")
                            self.wfile.flush()
                            outer.sent += 1
                            time.sleep(0.2)
                    else:
                        chunk = b" " * 65536
                        while outer.sent < outer.HUGE:
                            self.wfile.write(chunk)
                            outer.sent += len(chunk)
                except OSError:
                    pass
                finally:
                    outer.finished.set()
                    self.close_connection = True

            def _route(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                base = outer.base
                if self.path == path:
                    self._hostile()
                elif self.path == "/mcp":
                    self._json(401, {"error": "invalid_token"},
                               {"WWW-Authenticate": f'Bearer resource_metadata="{base}/prm"'})
                elif self.path == "/prm":
                    self._json(200, {"resource": f"{base}/mcp", "authorization_servers": [base]})
                elif self.path == "/.well-known/oauth-authorization-server":
                    self._json(200, {"issuer": base, "token_endpoint": f"{base}/token",
                                     "authorization_endpoint": f"{base}/authorize",
                                     "registration_endpoint": f"{base}/register",
                                     "code_challenge_methods_supported": ["S256"]})
                else:
                    self._json(404, {"error": "not_found"})

            do_GET = do_POST = _route

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.url = f"{self.base}/mcp"

    def __enter__(self) -> Hostile:
        import threading

        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _user_server(url: str) -> llm_mcp.MCP:
    return llm_mcp.mcp(url=url, name="hostile", timeout=2, oauth={"owner": "review"})


@pytest.mark.parametrize("path", ["/prm", "/.well-known/oauth-authorization-server"])
def test_a_dripping_metadata_document_times_out(store, path):
    """Timeouts are bounded: a metadata host that sends a byte every 0.2 s (each read well within
    the 2-second timeout, for two minutes in all) is given up after the timeout for the whole
    answer, with ``llm_mcp.ConnectionError`` (``timed_out``)."""
    with Hostile(path=path, mode="drip") as hostile:
        started = time.monotonic()
        with pytest.raises(llm_mcp.ConnectionError) as info:
            _user_server(hostile.url).authorization_url(redirect_uri="http://127.0.0.1:8000/callback")
        assert time.monotonic() - started < 30  # generous: the drip alone lasts 120 s
        assert info.value.timed_out


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


def test_an_endless_metadata_document_is_not_read_to_its_end(store):
    """A protected resource metadata document of 20 MB (a stream without end, for all the client
    knows) is abandoned once it passes the size cap (256 KiB): the server could not finish
    sending it, and the client did not keep it."""
    with Hostile(path="/prm", mode="huge") as hostile, pytest.raises(llm_mcp.MCPError):
        _user_server(hostile.url).authorization_url(redirect_uri="http://127.0.0.1:8000/callback")
    assert hostile.finished.wait(30)
    assert hostile.sent < Hostile.HUGE


DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize("path", ["/prm", "/.well-known/oauth-authorization-server"])
def test_deeply_nested_metadata_is_not_a_recursion_error(store, path):
    """Metadata nested deeper than Python's JSON parser recurses is a document that is not
    there (``MCPError`` naming the problem), not a ``RecursionError`` escaping the library."""
    with Hostile(path=path, mode="bytes", body=DEEP) as hostile, pytest.raises(llm_mcp.MCPError):
        _user_server(hostile.url).authorization_url(redirect_uri="http://127.0.0.1:8000/callback")


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
            _user_server(f"{site.url}/mcp").authorization_url(redirect_uri="http://127.0.0.1:8000/callback")
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


@pytest.mark.db
@pytest.mark.django_db(transaction=True)
def test_a_failed_callback_logs_one_line(oauth_servers_for_views, alice, caplog):
    """The callback's ``error_description`` comes from the URL: a line break in it must not
    forge extra lines in the site's log (the page still shows the description)."""
    from urllib.parse import parse_qs, urlencode, urlsplit

    from django.urls import reverse

    client = _browser(alice)
    started = client.post(reverse("llm_mcp:oauth_connect", args=["protected"]), {"next": "/back/"})
    state = parse_qs(urlsplit(started["Location"]).query)["state"][0]
    forged = "denied\nCRITICAL django.security: forged line\r\nmore"
    with caplog.at_level("INFO", logger="llm_mcp"):
        page = client.get(reverse("llm_mcp:oauth_callback") + "?" + urlencode(
            {"state": state, "error": "access_denied", "error_description": forged,
             "iss": oauth_servers_for_views.issuer}))
    assert page.status_code == 400 and "forged line" in page.content.decode()
    logged = [r.getMessage() for r in caplog.records if r.name.startswith("llm_mcp")]
    assert logged and all("\n" not in line and "\r" not in line for line in logged)


@pytest.mark.db
@pytest.mark.django_db(transaction=True)
def test_a_declined_authorization_is_finished_by_the_client(oauth_servers_for_views, alice):
    """MCP-AUTH-06 on error responses: the view hands an ``error`` callback to ``authorize``
    like any other, so its ``iss`` is checked (RFC 9207 covers error responses too: an error
    from another issuer is a mix-up, shown as such) and the waiting authorization, with its
    PKCE verifier, is forgotten rather than left in the credential store."""
    from urllib.parse import parse_qs, urlencode, urlsplit

    from django.urls import reverse

    from llm_mcp_tests.support.oauth_steps import ProtectedServer

    servers = oauth_servers_for_views
    client = _browser(alice)

    def declined(**overrides: str):
        started = client.post(reverse("llm_mcp:oauth_connect", args=["protected"]), {"next": "/back/"})
        state = parse_qs(urlsplit(started["Location"]).query)["state"][0]
        query = {"error": "access_denied", "state": state, "iss": servers.issuer, **overrides}
        return client.get(reverse("llm_mcp:oauth_callback") + "?" + urlencode(query))

    page = declined()
    assert page.status_code == 400 and "access_denied" in page.content.decode()
    record = config.credential_store.read(ProtectedServer(user=alice).oauth_flow.key)
    assert record is not None and record.get("pending") == {}
    mixed = declined(iss="https://attacker.example")
    assert mixed.status_code == 400 and "RFC 9207" in mixed.content.decode()
    assert not ProtectedServer(user=alice).authorized


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
