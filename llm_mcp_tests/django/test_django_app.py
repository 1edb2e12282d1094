"""The Django app's parts: credentials, migrations, settings, checks and signals (issue 5)."""

from __future__ import annotations

import pathlib
import threading

import pytest
from django.contrib.auth.models import User
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

import llm_mcp
from llm_mcp import conf
from llm_mcp.models import Credential
from llm_mcp.signals import mcp_unreachable
from llm_mcp.testing.scripted_model import reply

from llm_mcp_tests.support.processes import free_port

pytestmark = [pytest.mark.db]

TOKEN = "gho_secret_token_1234567890"

WEAK_SALT = "llm_mcp.W002"  # the example project's SALT_KEY is a placeholder, so W002 is there too


@pytest.mark.django_db
def test_credentials_read_write_delete_with_an_owner():
    """MCP-CRED-04: ``Credential.objects`` is a store with read/write/delete; the owner is any model."""
    user = User.objects.create(username="grace")
    store = Credential.objects
    assert store.read("gh:1") is None
    store.write("gh:1", {"access_token": TOKEN, "expires_at": 1700000000}, owner=user)
    assert store.read("gh:1") == {"access_token": TOKEN, "expires_at": 1700000000}
    row = Credential.objects.get(key="gh:1")
    assert row.owner == user
    store.write("gh:1", {"access_token": "second"})  # replaces the data, keeps the owner
    assert store.read("gh:1") == {"access_token": "second"} and Credential.objects.get(key="gh:1").owner == user
    store.delete("gh:1")
    store.delete("gh:1")  # nothing stored: nothing happens
    assert store.read("gh:1") is None
    with store.synchronize("gh:new"):  # a key never written holds nothing, locked or not
        assert store.read("gh:new") is None
    assert store.read("gh:new") is None
    with pytest.raises(ValueError, match="non-empty"):
        store.read("")
    with pytest.raises(TypeError, match="dict"):
        store.write("gh:2", ["not", "a", "dict"])
    with pytest.raises(ValueError, match="not saved"):
        store.write("gh:2", {}, owner=User(username="unsaved"))


@pytest.mark.django_db
def test_the_raw_column_holds_no_plaintext():
    """MCP-CRED-01: the database column is Fernet ciphertext, whatever reads it."""
    Credential.objects.write("gh:raw", {"access_token": TOKEN, "refresh_token": "rt_" + TOKEN})
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret FROM llm_mcp_credentials WHERE key = %s", ["gh:raw"])
        raw = cursor.fetchone()[0]
    assert TOKEN not in raw and "access_token" not in raw
    assert raw.startswith("gAAAA")  # a Fernet token (version byte 0x80, base64)
    assert TOKEN not in repr(Credential.objects.get(key="gh:raw"))
    assert TOKEN not in str(Credential.objects.get(key="gh:raw"))


@pytest.mark.django_db(transaction=True)
def test_synchronize_makes_threads_take_turns():
    """MCP-CRED-05, MCP-CRED-06: within one process too, blocks on one key do not overlap."""
    inside: list[int] = []
    overlaps: list[bool] = []

    def refresh() -> None:
        try:
            with Credential.objects.synchronize("gh:turns"):
                inside.append(1)
                overlaps.append(len(inside) > 1)
                threading.Event().wait(0.2)
                inside.pop()
        finally:
            connection.close()

    threads = [threading.Thread(target=refresh) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert overlaps == [False, False, False]


@pytest.mark.django_db(transaction=True)
def test_migrations_create_the_tables_and_unapply_cleanly():
    """MCP-PERSIST-04, MCP-CRED-02: the app's migrations create the chat, message, tool call
    (with ``mcp_result``) and credential tables, and can be rolled back."""
    executor = MigrationExecutor(connection)
    executor.migrate([("llm_mcp", None)])
    tables = set(connection.introspection.table_names())
    assert not {"llm_mcp_chats", "llm_mcp_tool_calls", "llm_mcp_credentials"} & tables
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes("llm_mcp"))
    tables = set(connection.introspection.table_names())
    assert {"llm_mcp_chats", "llm_mcp_messages", "llm_mcp_tool_calls", "llm_mcp_credentials"} <= tables
    with connection.cursor() as cursor:
        columns = {c.name for c in connection.introspection.get_table_description(cursor, "llm_mcp_tool_calls")}
    assert {"mcp_result", "approval", "pending_questions", "request_state", "task", "tool_call_id"} <= columns


def test_settings_have_defaults_and_unknown_keys_are_reported(settings):
    """Settings are read in one place (``llm_mcp.conf``), with defaults; typos are warned about."""
    assert conf.get("TASK_POLL_INTERVAL") == 5.0
    settings.LLM_MCP = {"TASK_POLL_INTERVAL": 2, "TASK_POLL_INTERVALL": 3}
    assert conf.get("TASK_POLL_INTERVAL") == 2
    with pytest.raises(KeyError, match="no setting"):
        conf.get("NOPE")
    from llm_mcp.apps import check_settings

    assert [p.id for p in check_settings() if p.id != WEAK_SALT] == ["llm_mcp.W001"]
    del settings.SALT_KEY
    assert "llm_mcp.E001" in [p.id for p in check_settings()]
    assert all(isinstance(p, checks.CheckMessage) for p in check_settings())


@pytest.mark.django_db
def test_unreachable_servers_send_the_django_signal(model):
    """MCP-DOWN-04: ``llm_mcp.signals.mcp_unreachable`` carries the server name, the error class
    and the HTTP status (``None`` here: nothing answered), never the message."""
    heard: list[dict] = []

    def receiver(sender, **kwargs):
        heard.append(kwargs)

    mcp_unreachable.connect(receiver)
    try:
        model.add(reply("The server is down."))
        down = llm_mcp.mcp(url=f"http://127.0.0.1:{free_port()}/mcp", name="down")
        chat = llm_mcp.chat("gpt-test", "openai", base_url=model.openai_base_url, api_key="k").with_mcp(down)
        assert chat.ask("hi").content == "The server is down."
    finally:
        mcp_unreachable.disconnect(receiver)
    assert [{k: v for k, v in event.items() if k != "signal"} for event in heard] == [
        {"server": "down", "error_class": "ConnectionError", "status": None}]


@pytest.mark.django_db(transaction=True)
def test_credential_errors_name_the_problem(settings):
    with pytest.raises(TypeError, match="owner must be a saved model instance"):
        Credential.objects.write("k:1", {"a": 1}, owner="alice")
    with pytest.raises(TypeError, match="credentials for 'k:1' cannot be stored"):
        Credential.objects.write("k:1", {"when": pathlib.Path("/")})
    Credential.objects.write("k:2", {"access_token": "tok"})
    settings.SALT_KEY = "another-salt"  # the keys changed, with no fallback
    Credential._meta.get_field("secret").__dict__.pop("keys", None)
    Credential._meta.get_field("secret").__dict__.pop("f", None)
    try:
        with pytest.raises(ValueError, match="cannot be decrypted with the current SECRET_KEY"):
            Credential.objects.read("k:2")
        del settings.SALT_KEY
        with pytest.raises(ImproperlyConfigured, match="SALT_KEY is not set"):
            Credential.objects.read("k:2")
    finally:
        Credential._meta.get_field("secret").__dict__.pop("keys", None)
        Credential._meta.get_field("secret").__dict__.pop("f", None)


@pytest.mark.django_db(transaction=True)
def test_setting_values_are_checked(settings):
    settings.LLM_MCP = {"TURN_LOCK_TIMEOUT": "ten", "PROVIDER_OPTIONS": "openai"}
    with pytest.raises(ImproperlyConfigured, match=r"LLM_MCP\['TURN_LOCK_TIMEOUT'\] must be a positive number"):
        conf.get("TURN_LOCK_TIMEOUT")
    from llm_mcp.apps import check_settings

    found = [p for p in check_settings() if p.id != WEAK_SALT]
    assert [p.id for p in found] == ["llm_mcp.E002", "llm_mcp.E002"]
    assert "PROVIDER_OPTIONS" in found[1].msg or "PROVIDER_OPTIONS" in found[0].msg
    settings.LLM_MCP = ["PROVIDER_OPTIONS"]
    assert [p.msg for p in check_settings() if p.id != WEAK_SALT] == ["settings.LLM_MCP must be a dict, not list"]
    settings.SALT_KEY = 42
    assert any("SALT_KEY must be a non-empty string" in p.msg for p in check_settings())


@pytest.mark.parametrize("origin", ["https://Apps.example.com", "https://apps.example.com:443",
                                    "http://localhost:80", "https://apps.example.com\n", "http://localhost:8000/"])
def test_apps_sandbox_origin_is_as_a_browser_writes_it(settings, origin):
    """APPS_SANDBOX_ORIGIN must be spelled as the browser spells the origin (lower case, no default port,
    no trailing line break): the page's script compares it with each message's ``event.origin``, so
    any other spelling left every App on "Loading" (and the sandbox page on 404)."""
    settings.LLM_MCP = {"APPS_SANDBOX_ORIGIN": origin}
    with pytest.raises(ImproperlyConfigured, match=r"APPS_SANDBOX_ORIGIN'\] must be an origin"):
        conf.get("APPS_SANDBOX_ORIGIN")
    settings.LLM_MCP = {"APPS_SANDBOX_ORIGIN": "http://localhost:8000"}
    assert conf.get("APPS_SANDBOX_ORIGIN") == "http://localhost:8000"


def test_check_warns_when_the_sandbox_origin_is_set_without_its_middleware(settings):
    """W004: APPS_SANDBOX_ORIGIN set but AppsSandboxMiddleware missing, so the whole site (its login
    page too) is served on the Apps' origin, where a session would belong to every App."""
    from llm_mcp.apps import check_settings

    middleware = "llm_mcp.middleware.AppsSandboxMiddleware"
    settings.LLM_MCP = {"APPS_SANDBOX_ORIGIN": "http://localhost:8000"}
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if m != middleware]
    found = {p.id: p for p in check_settings()}
    assert "llm_mcp.W004" in found and middleware in found["llm_mcp.W004"].hint
    settings.MIDDLEWARE = [middleware, *settings.MIDDLEWARE]
    assert "llm_mcp.W004" not in [p.id for p in check_settings()]
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if m != middleware]
    settings.LLM_MCP = {}
    assert "llm_mcp.W004" not in [p.id for p in check_settings()]
