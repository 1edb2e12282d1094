"""The Django side of authorization: the ``LLM_MCP`` OAuth settings and their checks, the client
configured from them, and llm_mcp's connect / callback / disconnect views against the real test
authorization server (llm_mcp_tests/support/oauth_servers.py): sessions, users, replays, refusals, mix-ups.
"""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import httpx
import pytest
from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.test import Client
from django.urls import reverse

from llm_mcp import conf
from llm_mcp.apps import check_settings
from llm_mcp.client.config import config
from llm_mcp.client.oauth.store import MemoryStore
from llm_mcp.models import Credential

from llm_mcp_tests.support.oauth_servers import oauth_servers
from llm_mcp_tests.support.oauth_steps import (  # noqa: F401 - servers is a fixture
    MCP_URL_ENV,
    ProtectedServer,
    servers,
)
from llm_mcp_tests.support.stores import RecordingStore

WEAK_SALT = "llm_mcp.W002"  # the example project's SALT_KEY is a placeholder, so W002 is there too


pytestmark = [pytest.mark.db]  # credentials and sessions in the database: run on PostgreSQL too

SERVERS = {"protected": "llm_mcp_tests.support.oauth_steps.ProtectedServer"}
CALLBACK = "http://127.0.0.1/mcp/oauth/callback/"


# -- settings ----------------------------------------------------------------------------------


def test_oauth_settings_have_defaults():
    assert conf.get("CREDENTIAL_STORE") == "llm_mcp.models.Credential.objects"
    assert conf.DEFAULTS["OAUTH_SERVERS"] == {} and conf.DEFAULTS["CLIENT_ID"] is None
    assert conf.get("OAUTH_REDIRECT_URL") == "/"
    assert conf.credential_store() is Credential.objects
    assert config.credential_store is Credential.objects  # wired in AppConfig.ready()


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("CREDENTIAL_STORE", "credentials", "dotted path of a credential store"),
    ("CREDENTIAL_STORE", 42, "dotted path of a credential store"),
    ("CLIENT_ID", "http://app.example.com/client.json", "https URL"),
    ("CLIENT_ID", "https://app.example.com", "https URL"),
    ("CLIENT_NAME", "  ", "non-empty string"),
    ("OAUTH_SERVERS", {"lin ear": "myapp.mcp.Linear"}, "server classes by URL name"),
    ("OAUTH_SERVERS", {"linear": "Linear"}, "server classes by URL name"),
    ("OAUTH_SERVERS", ["myapp.mcp.Linear"], "server classes by URL name"),
    ("OAUTH_REDIRECT_URL", "", "a path, URL or URL pattern name"),
])
def test_wrong_oauth_settings_are_refused_by_name(settings, name, value, expected):
    settings.LLM_MCP = {name: value}
    with pytest.raises(ImproperlyConfigured, match=rf"LLM_MCP\['{name}'\] must be .*{expected}"):
        conf.get(name)
    assert [p.id for p in check_settings() if p.id != WEAK_SALT] == ["llm_mcp.E002"]


def test_paths_that_name_nothing_are_reported_by_the_checks(settings):
    settings.LLM_MCP = {"CREDENTIAL_STORE": "llm_mcp_tests.support.stores.Missing",
                        "OAUTH_SERVERS": {"gone": "no_such_module_anywhere.Server",
                                          "bad": "llm_mcp_tests.support.stores.RecordingStore"}}
    found = [p for p in check_settings() if p.id != WEAK_SALT]
    assert [p.id for p in found] == ["llm_mcp.E003", "llm_mcp.E004", "llm_mcp.E004"]
    assert "'llm_mcp_tests.support.stores.Missing' names nothing" in found[0].msg
    assert "no module 'no_such_module_anywhere'" in found[1].msg
    assert "neither an llm_mcp.MCP subclass nor a function(request)" in found[2].msg
    settings.LLM_MCP = {"CREDENTIAL_STORE": "llm_mcp_tests.support.stores.NotAStore"}
    with pytest.raises(ImproperlyConfigured, match="is not a credential store .*lacks write, delete"):
        conf.credential_store()


def test_settings_configure_the_client(settings):
    """MCP-CRED-04, MCP-REG-01 (Django): ``CREDENTIAL_STORE`` (a class is built), ``CLIENT_ID``
    and ``CLIENT_NAME`` reach ``llm_mcp.client.config``; ``None`` keeps credentials in memory."""
    settings.LLM_MCP = {"CREDENTIAL_STORE": "llm_mcp_tests.support.stores.RecordingStore",
                        "CLIENT_ID": "https://app.example.com/mcp/oauth/client.json", "CLIENT_NAME": "Example"}
    assert isinstance(config.credential_store, RecordingStore)
    assert (config.client_id, config.client_name) == ("https://app.example.com/mcp/oauth/client.json", "Example")
    settings.LLM_MCP = {"CLIENT_ID": "http://127.0.0.1:8000/mcp/oauth/client.json"}  # loopback: development
    assert config.client_id == "http://127.0.0.1:8000/mcp/oauth/client.json"
    settings.LLM_MCP = {"CREDENTIAL_STORE": None}
    assert isinstance(config.credential_store, MemoryStore) and config.client_id is None
    settings.LLM_MCP = {"CREDENTIAL_STORE": "nothing.here"}  # reported by the checks; the client keeps its store
    assert isinstance(config.credential_store, MemoryStore)


def test_settings_are_restored_after_a_test():
    assert config.credential_store is Credential.objects and config.client_id is None


# -- the views ---------------------------------------------------------------------------------


@pytest.fixture
def oauth_settings(settings):
    settings.LLM_MCP = {**settings.LLM_MCP, "OAUTH_SERVERS": {
        **SERVERS, "by-function": "llm_mcp_tests.support.oauth_steps.protected_for",
        "unowned": "llm_mcp_tests.support.oauth_steps.Unowned"}}
    return settings


def _browser(user: Any) -> Client:
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    return client


@pytest.fixture
def alice(db):
    return get_user_model().objects.create_user("alice")


@pytest.fixture
def bob(db):
    return get_user_model().objects.create_user("bob")


def _start(client: Client, name: str = "protected", next_url: str | None = "/back/") -> str:
    """POST the connect form; return the authorization URL it redirects to."""
    response = client.post(reverse("llm_mcp:oauth_connect", args=[name]), {"next": next_url} if next_url else {})
    assert response.status_code == 302, response.content[:1000]
    return response["Location"]


def _approve(authorization_url: str, **extra: str) -> str:
    """Follow the authorization URL as the browser would; return the callback path and query."""
    url = authorization_url + ("&" + urlencode(extra) if extra else "")
    answer = httpx.get(url, follow_redirects=False, timeout=30)
    assert answer.status_code == 302, answer.text
    parts = urlsplit(answer.headers["location"])
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == CALLBACK
    return urlunsplit(("", "", parts.path, parts.query, ""))


@pytest.mark.django_db(transaction=True)
def test_connect_and_callback_connect_the_signed_in_user(servers, oauth_settings, alice, bob):
    """MCP-AUTH-10: connect redirects to the authorization server with this site's callback;
    the callback finishes with ``authorize`` and redirects to ``next``; the credentials are the
    signed-in user's (another user's server is not authorized)."""
    client = _browser(alice)
    url = _start(client)
    query = parse_qs(urlsplit(url).query)
    assert url.startswith(f"{servers.issuer}/authorize?") and query["redirect_uri"] == [CALLBACK]
    finished = client.get(_approve(url))
    assert (finished.status_code, finished["Location"]) == (302, "/back/")
    assert ProtectedServer(user=alice).authorized and not ProtectedServer(user=bob).authorized
    assert Credential.objects.get(key=ProtectedServer(user=alice).oauth_flow.key).owner == alice
    assert client.session["llm_mcp_oauth"] == {}  # the state was used up


@pytest.mark.django_db(transaction=True)
def test_a_function_can_build_the_server(servers, oauth_settings, alice):
    client = _browser(alice)
    assert client.get(_approve(_start(client, "by-function")))["Location"] == "/back/"
    assert ProtectedServer(user=alice).authorized


@pytest.mark.django_db(transaction=True)
def test_callback_from_another_session_or_user_is_refused(servers, oauth_settings, alice, bob):
    """MCP-AUTH-10 (CSRF): a callback is finished only in the session that started it, for the
    same user; a refused callback stores nothing and spends nothing at the authorization server,
    and the right session can still finish it afterwards."""
    client = _browser(alice)
    callback = _approve(_start(client))
    for other in (_browser(alice), _browser(bob)):  # another browser of alice's, then bob's
        refused = other.get(callback)
        assert refused.status_code == 400
        assert "not started here" in refused.content.decode()
    assert not ProtectedServer(user=alice).authorized and not ProtectedServer(user=bob).authorized
    assert servers.token_requests() == []
    assert client.get(callback)["Location"] == "/back/"
    assert ProtectedServer(user=alice).authorized and not ProtectedServer(user=bob).authorized


@pytest.mark.django_db(transaction=True)
def test_a_callback_is_used_once(servers, oauth_settings, alice):
    client = _browser(alice)
    callback = _approve(_start(client))
    assert client.get(callback).status_code == 302
    again = client.get(callback)
    assert again.status_code == 400 and "not started here" in again.content.decode()
    assert [r["grant_type"] for r in servers.token_requests()] == ["authorization_code"]


def test_login_is_required(client, oauth_settings):
    for response in (client.get(reverse("llm_mcp:oauth_connect", args=["protected"])),
                     client.get(reverse("llm_mcp:oauth_callback") + "?state=x&code=y"),
                     client.post(reverse("llm_mcp:oauth_disconnect", args=["protected"]))):
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=")


@pytest.mark.django_db
def test_only_listed_servers_can_be_connected(oauth_settings, alice):
    """A URL names a server of ``OAUTH_SERVERS``, never an import path."""
    client = _browser(alice)
    assert client.get(reverse("llm_mcp:oauth_connect", args=["llm_mcp_tests.support.oauth_steps.ProtectedServer"])) \
        .status_code == 404
    assert client.get(reverse("llm_mcp:oauth_connect", args=["nope"])).status_code == 404
    with pytest.raises(ImproperlyConfigured, match="must declare oauth = {'owner': '<input>'}"):
        client.get(reverse("llm_mcp:oauth_connect", args=["unowned"]))


@pytest.mark.django_db(transaction=True)
def test_an_unsafe_next_is_replaced(servers, oauth_settings, alice, settings):
    client = _browser(alice)
    for unsafe in ("https://evil.example/", "//evil.example/x", "javascript:alert(1)"):
        assert client.get(_approve(_start(client, next_url=unsafe)))["Location"] == "/"
    settings.LLM_MCP = {**settings.LLM_MCP, "OAUTH_REDIRECT_URL": "connections"}
    assert client.get(_approve(_start(client, next_url=None)))["Location"] == "/connections/"
    assert client.get(_approve(_start(client, next_url="/chats/1/?tab=x")))["Location"] == "/chats/1/?tab=x"


@pytest.mark.django_db(transaction=True)
def test_a_refusal_is_shown_not_raised(servers, oauth_settings, alice):
    """The user declined at the authorization server: a page says so (400), nothing is stored."""
    client = _browser(alice)
    page = client.get(_approve(_start(client), test_deny="1"))
    assert page.status_code == 400
    html = page.content.decode()
    assert "protected was not connected" in html and "access_denied" in html and 'href="/back/"' in html
    assert not ProtectedServer(user=alice).authorized


@pytest.mark.django_db(transaction=True)
def test_a_mixed_up_issuer_is_refused_and_the_code_is_not_shown(servers, oauth_settings, alice, caplog):
    """MCP-AUTH-06 through the views: a callback whose ``iss`` names another issuer raises
    ``MCPError`` in ``authorize``, shown as a 400 page; the code is not exchanged, and it
    appears neither on the page nor in the log."""
    client = _browser(alice)
    callback = _approve(_start(client))
    parts = urlsplit(callback)
    params = {k: v[0] for k, v in parse_qs(parts.query).items()}
    params["iss"] = "https://attacker.example"
    page = client.get(f"{parts.path}?{urlencode(params)}")
    assert page.status_code == 400
    html = page.content.decode()
    assert "MCPError" in html and "attacker.example" in html
    assert params["code"] not in html and params["code"] not in caplog.text
    assert servers.token_requests() == [] and not ProtectedServer(user=alice).authorized


@pytest.mark.django_db(transaction=True)
def test_a_refused_code_exchange_is_a_page_and_the_next_connect_registers_again(servers, oauth_settings, alice):
    """MCP-REG-05 through the views: the authorization server forgot the app's registration, so
    the code exchange is refused (``invalid_client``): a 400 page that shows neither the code
    nor the client secret; the next Connect registers again and succeeds."""
    client = _browser(alice)
    callback = _approve(_start(client))
    [registered] = [c for c in servers.state.clients.values() if c.metadata.get("_dynamic")]
    servers.forget_clients()
    page = client.get(callback)
    html = page.content.decode()
    assert page.status_code == 400 and "protected was not connected" in html and "invalid_client" in html
    code = parse_qs(urlsplit(callback).query)["code"][0]
    assert code not in html and (registered.client_secret or "-") not in html
    assert not ProtectedServer(user=alice).authorized
    assert client.get(_approve(_start(client)))["Location"] == "/back/"
    assert len(servers.registrations()) == 2 and ProtectedServer(user=alice).authorized


@pytest.mark.django_db(transaction=True)
def test_an_unreachable_server_is_a_page_not_a_500(oauth_settings, alice, monkeypatch):
    monkeypatch.setenv(MCP_URL_ENV, "http://127.0.0.1:9/mcp")  # nothing listens on port 9
    page = _browser(alice).post(reverse("llm_mcp:oauth_connect", args=["protected"]), {"next": "/x/"})
    assert page.status_code in (400, 502)
    assert "protected cannot be connected" in page.content.decode()


@pytest.mark.django_db(transaction=True)
def test_disconnect_forgets_the_credentials(servers, oauth_settings, alice):
    """MCP-AUTH-09 through the views: POST only, then ``authorized`` is False."""
    client = _browser(alice)
    client.get(_approve(_start(client)))
    assert ProtectedServer(user=alice).authorized
    url = reverse("llm_mcp:oauth_disconnect", args=["protected"])
    assert client.get(url).status_code == 405
    assert client.post(url, {"next": "/bye/"})["Location"] == "/bye/"
    assert not ProtectedServer(user=alice).authorized
    assert not Credential.objects.filter(key=ProtectedServer(user=alice).oauth_flow.key).exists()


def test_connect_disconnect_need_csrf_tokens(oauth_settings, alice):
    client = Client(HTTP_HOST="127.0.0.1", enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.post(reverse("llm_mcp:oauth_connect", args=["protected"])).status_code == 403
    assert client.post(reverse("llm_mcp:oauth_disconnect", args=["protected"])).status_code == 403


def test_client_metadata_document(client, settings):
    """MCP-REG-03: the document's ``client_id`` is exactly ``CLIENT_ID``, and ``redirect_uris``
    lists this site's callback on that origin."""
    assert client.get(reverse("llm_mcp:oauth_client_metadata")).status_code == 404
    settings.LLM_MCP = {"CLIENT_ID": "https://app.example.com/mcp/oauth/client.json", "CLIENT_NAME": "Example"}
    document = client.get(reverse("llm_mcp:oauth_client_metadata")).json()
    assert document["client_id"] == "https://app.example.com/mcp/oauth/client.json"
    assert document["redirect_uris"] == ["https://app.example.com/mcp/oauth/callback/"]
    assert document["client_name"] == "Example" and document["token_endpoint_auth_method"] == "none"
    assert reverse("llm_mcp:oauth_client_metadata") == urlsplit(document["client_id"]).path


@pytest.mark.django_db(transaction=True)
def test_the_site_identifies_itself_by_its_metadata_document(live_server, settings, monkeypatch, alice):
    """MCP-REG-02, MCP-REG-03 through the views: with ``CLIENT_ID`` pointing at the site's own
    ``llm_mcp:oauth_client_metadata`` and an authorization server that supports metadata
    documents, the authorization URL's ``client_id`` is that URL, nothing is registered, the
    authorization server fetches the document from the site (its ``redirect_uris`` must list
    the callback), and the user ends up connected."""
    host = urlsplit(live_server.url).netloc
    client_id = f"http://{host}{reverse('llm_mcp:oauth_client_metadata')}"
    with oauth_servers(client_id_metadata_documents=True) as servers:
        monkeypatch.setenv(MCP_URL_ENV, servers.mcp_url)
        settings.LLM_MCP = {**settings.LLM_MCP, "OAUTH_SERVERS": SERVERS, "CLIENT_ID": client_id}
        client = Client(HTTP_HOST=host)
        client.force_login(alice)
        url = _start(client)
        assert parse_qs(urlsplit(url).query)["client_id"] == [client_id]
        answer = httpx.get(url, follow_redirects=False, timeout=30)
        assert answer.status_code == 302, answer.text
        callback = urlsplit(answer.headers["location"])
        assert f"{callback.scheme}://{callback.netloc}{callback.path}" == f"http://{host}/mcp/oauth/callback/"
        assert client.get(f"{callback.path}?{callback.query}")["Location"] == "/back/"
        assert servers.registrations() == []
        assert [(r["client_id"], r["status"]) for r in servers.token_requests()] == [(client_id, 200)]
        assert ProtectedServer(user=alice).call("add", a=20, b=22).text == "42"


# -- stored credentials --------------------------------------------------------------------------


def _fernet(secret_key: str, salt: str) -> Fernet:
    kdf = PBKDF2HMAC(algorithm=hashes.SHA256(), length=32, salt=salt.encode(), iterations=100_000)
    return Fernet(base64.urlsafe_b64encode(kdf.derive(secret_key.encode())))


@pytest.mark.django_db(transaction=True)
def test_stored_tokens_are_encrypted_with_keys_from_secret_key_and_salt_key(servers, oauth_settings, alice, settings):
    """MCP-CRED-01, MCP-CRED-02: what the callback stored is, in the column, a Fernet token
    under a key derived (PBKDF2-SHA256) from ``SECRET_KEY`` and ``SALT_KEY``, computed here
    independently; another salt cannot read it."""
    client = _browser(alice)
    client.get(_approve(_start(client)))
    key = ProtectedServer(user=alice).oauth_flow.key
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret FROM llm_mcp_credentials WHERE key = %s", [key])
        raw = cursor.fetchone()[0]
    stored = Credential.objects.read(key)
    assert stored["access_token"] not in raw and stored["refresh_token"] not in raw and "token" not in raw
    decrypted = json.loads(_fernet(settings.SECRET_KEY, settings.SALT_KEY).decrypt(raw.encode()))
    assert decrypted["access_token"] == stored["access_token"]
    with pytest.raises(InvalidToken):
        _fernet(settings.SECRET_KEY, settings.SALT_KEY + "-other").decrypt(raw.encode())
    with pytest.raises(InvalidToken):
        _fernet(settings.SECRET_KEY + "-other", settings.SALT_KEY).decrypt(raw.encode())


# -- the example site's Connections page -------------------------------------------------------


@pytest.mark.django_db
def test_connections_page_without_servers_or_login(client, settings, alice):
    settings.LLM_MCP = {**settings.LLM_MCP, "OAUTH_SERVERS": {}}
    assert "No server needs authorization here" in client.get("/connections/").content.decode()
    settings.LLM_MCP = {**settings.LLM_MCP, "OAUTH_SERVERS": SERVERS}
    html = client.get("/connections/").content.decode()
    assert 'data-server="protected"' in html and "Log in</a> to connect" in html
    assert "/mcp/oauth/protected/connect/" not in html
    html = _browser(alice).get("/connections/").content.decode()
    assert 'action="/mcp/oauth/protected/connect/"' in html and "not connected" in html


@pytest.mark.django_db(transaction=True)
def test_connections_page_lists_a_connected_servers_tools(servers, settings, alice):
    settings.LLM_MCP = {**settings.LLM_MCP, "OAUTH_SERVERS": SERVERS}
    client = _browser(alice)
    client.get(_approve(_start(client)))
    html = client.get("/connections/").content.decode()
    assert "tools: add, admin_report" in html and 'action="/mcp/oauth/protected/disconnect/"' in html


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
