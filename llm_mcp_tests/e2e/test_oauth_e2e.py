"""Authorization end to end, with real parts only: the test authorization server (authlib) and
the MCP server that requires its tokens (llm_mcp_tests/support/oauth_servers.py) on 127.0.0.1, llm_mcp's
Django views, the encrypted ``Credential`` store, and separate Python processes racing on one
rotating refresh token (llm_mcp_tests/support/oauth_steps.py).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client

import llm_mcp
from llm_mcp.models import Credential

from llm_mcp_tests.support.processes import REPO_ROOT
from llm_mcp_tests.support.site import Site
from llm_mcp_tests.support.oauth_servers import oauth_servers
from llm_mcp_tests.support.oauth_steps import (  # noqa: F401 - servers is a fixture
    MCP_URL_ENV,
    ProtectedServer,
    connect_through_views,
    servers,
)

STEP_TIMEOUT = 90
SERVERS = {"protected": "llm_mcp_tests.support.oauth_steps.ProtectedServer"}


@pytest.fixture
def oauth_settings(settings):
    settings.LLM_MCP = {**settings.LLM_MCP, "OAUTH_SERVERS": SERVERS}
    return settings


@pytest.fixture
def user(db):
    return get_user_model().objects.create_user("alice", password="pw-for-tests")


@pytest.fixture
def browser(user) -> Client:
    client = Client(HTTP_HOST="127.0.0.1")  # a loopback callback URL may be plain http
    client.force_login(user)
    return client


def _raw_secrets() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret FROM llm_mcp_credentials")
        return [row[0] or "" for row in cursor.fetchall()]


@pytest.mark.db
@pytest.mark.django_db(transaction=True)
def test_authorize_through_the_views_call_a_tool_expire_and_refresh(servers, oauth_settings, browser, user, caplog):
    """MCP-AUTH-10, MCP-AUTH-05, MCP-AUTH-07, MCP-CRED-01: the connect view sends the browser to
    the authorization server (PKCE S256, ``resource``, this site's callback); the callback view
    finishes with ``authorize`` and redirects to ``next``; the user's token then reaches the MCP
    server; once it has expired, exactly one refresh request brings a new one; the stored
    credentials are ciphertext with no token in them."""
    caplog.set_level(logging.DEBUG)
    done = connect_through_views(browser, next_url="/after/")
    assert done["status"] == 302 and done["location"] == "/after/", done["content"]
    query = parse_qs(urlsplit(done["authorization_url"]).query)
    assert done["authorization_url"].startswith(f"{servers.issuer}/authorize?")
    assert query["code_challenge_method"] == ["S256"] and query["resource"] == [servers.mcp_url]
    assert query["redirect_uri"] == ["http://127.0.0.1/mcp/oauth/callback/"]
    [registration] = servers.registrations()  # dynamic registration, with this site's callback
    assert registration["redirect_uris"] == ["http://127.0.0.1/mcp/oauth/callback/"]
    assert [(r["grant_type"], r["status"]) for r in servers.token_requests()] == [("authorization_code", 200)]

    server = ProtectedServer(user=user)
    assert server.authorized
    assert server.call("add", a=2, b=40).text == "42"
    assert [(r["user"], r["tool"]) for r in servers.mcp_requests() if r["method"] == "tools/call"] == \
        [("user-1", "add")]

    # MCP-CRED-01: the row is the user's, and its column holds ciphertext only
    row = Credential.objects.get(key=server.oauth_flow.key)
    assert row.owner == user
    record = Credential.objects.read(row.key)
    raw = _raw_secrets()
    assert raw and all(value.startswith("gAAAAA") for value in raw)  # Fernet tokens
    assert not any(record["access_token"] in value or record["refresh_token"] in value for value in raw)

    # expire the token, at the server and in the store: the next call refreshes once
    assert servers.expire_access_tokens() == 1
    with Credential.objects.synchronize(row.key):
        stale = Credential.objects.read(row.key)
        stale["expires_at"] = time.time() - 5
        Credential.objects.write(row.key, stale)
    assert server.call("add", a=1, b=2).text == "3"
    refreshes = servers.token_requests("refresh_token")
    assert [(r["status"], r["resource"]) for r in refreshes] == [(200, servers.mcp_url)]
    fresh = Credential.objects.read(row.key)
    assert fresh["access_token"] != record["access_token"] and fresh["refresh_token"] != record["refresh_token"]
    assert server.call("add", a=3, b=4).text == "7"
    assert len(servers.token_requests("refresh_token")) == 1

    # MCP-SCOPE-02, MCP-SCOPE-03: a tool needing a scope the user did not grant is refused with
    # the server's reason and scopes; nothing asks for wider access on its own
    with pytest.raises(llm_mcp.InsufficientScopeError) as refused:
        server.call("admin_report")
    assert refused.value.scopes == ["admin"]
    assert str(refused.value) == "127.0.0.1 refused the request: Additional scopes required: admin"
    assert len(servers.token_requests()) == 2 and len(servers.authorizations()) == 1
    server.close()

    # what the app's side logged, at every level (the test authorization server's authlib logs
    # and the test's own browser stand-in at httpcore's wire level are not the app's)
    secrets = [record["access_token"], record["refresh_token"], fresh["access_token"], fresh["refresh_token"],
               parse_qs(urlsplit(done["callback_url"]).query)["code"][0]]
    app_records = [r for r in caplog.records if r.name.split(".")[0] in ("llm_mcp", "django", "httpx")]
    assert any(r.name.startswith("httpx") for r in app_records)  # the capture did see the app's requests
    assert [(r.name, r.getMessage()[:200]) for r in app_records if any(s in r.getMessage() for s in secrets)] == []


@pytest.mark.db
@pytest.mark.django_db(transaction=True)
def test_no_secret_in_the_admin_after_a_real_authorization(servers, oauth_settings, browser, user):
    """MCP-CRED-01: after a real authorization, the credential's admin pages show its key and
    owner, never a token."""
    connect_through_views(browser)
    record = Credential.objects.read(ProtectedServer(user=user).oauth_flow.key)
    admin = get_user_model().objects.create_superuser("root", "root@example.com", "pw-for-tests")
    staff = Client(HTTP_HOST="127.0.0.1")
    staff.force_login(admin)
    row = Credential.objects.get(key=ProtectedServer(user=user).oauth_flow.key)
    pages = [staff.get("/admin/llm_mcp/credential/"), staff.get(f"/admin/llm_mcp/credential/{row.pk}/change/"),
             staff.get(f"/admin/llm_mcp/credential/{row.pk}/delete/")]
    assert [page.status_code for page in pages] == [200, 200, 200]
    for page in pages:
        html = page.content.decode()
        assert record["access_token"] not in html and record["refresh_token"] not in html
        assert "gAAAAA" not in html  # nor the ciphertext
    assert row.key in pages[1].content.decode()


# -- across processes ---------------------------------------------------------------------------


@pytest.fixture
def shared_db(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Environment variables naming a migrated database several processes open (an SQLite
    file, or a fresh database on the PostgreSQL of ``make test``)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    env.pop("CELERY_BROKER_URL", None)
    env["PYTHONPATH"] = str(REPO_ROOT)
    name = None
    if os.environ.get("DJANGO_DB_ENGINE") == "postgresql":
        import psycopg

        name = f"llm_mcp_oauth_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(os.environ["LLM_MCP_TEST_POSTGRES_URL"], autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        env["DJANGO_DB_NAME"] = name
    else:
        env["DJANGO_DB_PATH"] = str(tmp_path / "shared.sqlite3")
    migrate = subprocess.run([sys.executable, "manage.py", "migrate", "--verbosity", "0"], cwd=REPO_ROOT, env=env,
                             capture_output=True, text=True, timeout=STEP_TIMEOUT)
    assert migrate.returncode == 0, migrate.stderr
    yield env
    if name is not None:
        import psycopg

        with psycopg.connect(os.environ["LLM_MCP_TEST_POSTGRES_URL"], autocommit=True) as admin:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def _step(env: dict[str, str], *args: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "llm_mcp_tests.support.oauth_steps", *args], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=STEP_TIMEOUT)
    assert done.returncode == 0, f"step {args} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return json.loads([line for line in done.stdout.splitlines() if line.startswith("{")][-1])


@pytest.mark.db
@pytest.mark.slow
def test_two_processes_share_one_rotating_refresh_token(shared_db, tmp_path):
    """MCP-CRED-06 (and MCP-CRED-07 through the Django store's ``synchronize``): a user
    connected through the views in one process; later two processes find the token expired at
    the same moment. Exactly one refresh request reaches the authorization server (which
    rotates refresh tokens and refuses a spent one), and both processes call the tool with a
    working token."""
    with oauth_servers(token_delay=0.5) as servers:  # a slow token endpoint: the race window stays open
        env = {**shared_db, MCP_URL_ENV: servers.mcp_url}
        connected = _step(env, "connect", "bob")
        assert connected["status"] == 302, connected
        before = _step(env, "state", "bob")
        assert servers.expire_access_tokens() == 1
        _step(env, "expire", "bob")

        go = tmp_path / "go"
        racers = [subprocess.Popen([sys.executable, "-m", "llm_mcp_tests.support.oauth_steps", "call", "bob", str(go)],
                                   cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                  for _ in range(2)]
        deadline = time.monotonic() + STEP_TIMEOUT
        while len(list(tmp_path.glob("go.*.ready"))) < 2:  # both imported Django and are waiting
            assert all(r.poll() is None for r in racers), [r.communicate() for r in racers]
            assert time.monotonic() < deadline
            time.sleep(0.02)
        go.write_text("go")
        results = []
        for racer in racers:
            out, err = racer.communicate(timeout=STEP_TIMEOUT)
            assert racer.returncode == 0, err
            results.append(json.loads(out.strip().splitlines()[-1]))

        assert results == [{"text": "42"}, {"text": "42"}]
        refreshes = servers.token_requests("refresh_token")
        assert [r["status"] for r in refreshes] == [200]
        calls = [r for r in servers.mcp_requests() if r["method"] == "tools/call"]
        assert [(r["user"], r["tool"], r["refused"]) for r in calls] == [("user-1", "add", False)] * 2
        after = _step(env, "state", "bob")
        assert after["access_token"] != before["access_token"] and after["refresh_token"] != before["refresh_token"]


# -- the example site in a browser ---------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_example_site_connect_button_in_a_browser(browser_page, tmp_path):
    """MCP-AUTH-10 on the real example site in headless Chromium: log in, Connect sends the
    browser through the authorization server and back; the Connections page then lists the
    protected server's tools (read with the user's token); Disconnect forgets the credentials."""
    from playwright.sync_api import expect

    with oauth_servers() as servers:
        env = {k: v for k, v in os.environ.items()
               if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "CELERY_BROKER_URL",
                            "DJANGO_DB_ENGINE") and not k.startswith("PYTEST_")}
        env.update(DJANGO_DB_PATH=str(tmp_path / "site.sqlite3"), PYTHONUNBUFFERED="1",
                   EXAMPLE_OAUTH_MCP_URL=servers.mcp_url, DJANGO_SUPERUSER_PASSWORD="pw-for-tests")
        site = Site(env, tmp_path)
        try:
            subprocess.run([sys.executable, "manage.py", "createsuperuser", "--no-input", "--username", "carol",
                            "--email", "carol@example.com"], cwd=REPO_ROOT, env=env, check=True,
                           capture_output=True, timeout=STEP_TIMEOUT)
            page = browser_page
            page.goto(site.url + "/connections/")
            row = page.locator('tr[data-server="protected"]')
            expect(row).to_contain_text("not connected")
            expect(row.get_by_role("button", name="Connect")).to_have_count(0)  # not signed in
            page.get_by_role("link", name="Log in").first.click()
            page.get_by_label("Username").fill("carol")
            page.get_by_label("Password").fill("pw-for-tests")
            page.get_by_role("button", name="Log in").click()
            expect(page).to_have_url(site.url + "/connections/")

            row.get_by_role("button", name="Connect").click()  # to the authorization server and back
            expect(page).to_have_url(site.url + "/connections/")
            expect(row.locator(".badge.approved")).to_have_text("connected")
            expect(row).to_contain_text("tools: add, admin_report")
            assert [r["status"] for r in servers.token_requests("authorization_code")] == [200]
            assert [r["redirect_uri"] for r in servers.authorizations()] == [site.url + "/mcp/oauth/callback/"]
            assert ("user-1", "tools/list") in [(r["user"], r["method"]) for r in servers.mcp_requests()]

            row.get_by_role("button", name="Disconnect").click()
            expect(row).to_contain_text("not connected")
            expect(row.get_by_role("button", name="Connect")).to_be_visible()
            assert "Traceback" not in site.output()
        finally:
            site.stop()
