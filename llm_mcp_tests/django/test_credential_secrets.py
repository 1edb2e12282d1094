"""Credentials never leave encrypted: dumpdata/loaddata, the SALT_KEY check, debug pages."""

from __future__ import annotations

import io
import json
import socket

import pytest
from cryptography.fernet import Fernet, MultiFernet
from django.core.management import call_command
from django.test import Client

from llm_mcp.apps import check_settings
from llm_mcp.models import Credential
from llm_mcp_tests.support import failing_views

pytestmark = [pytest.mark.django_db, pytest.mark.db]

SECRETS = {"access_token": "at-3c1f-plaintext-must-not-leak", "refresh_token": "rt-99e0-plaintext-must-not-leak",
           "client_secret": "cs-51ab-plaintext-must-not-leak"}


def _fernet_of_the_field() -> MultiFernet:
    """The field's own keys, derived independently of the field (PBKDF2 of SECRET_KEY with SALT_KEY)."""
    import base64

    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC
    from django.conf import settings

    salts = settings.SALT_KEY if isinstance(settings.SALT_KEY, list) else [settings.SALT_KEY]
    keys = [base64.urlsafe_b64encode(PBKDF2HMAC(algorithm=hashes.SHA256(), length=32, salt=salt.encode(),
                                                iterations=100_000).derive(settings.SECRET_KEY.encode()))
            for salt in salts]
    return MultiFernet([Fernet(key) for key in keys])


def test_dumpdata_writes_ciphertext_and_loaddata_reads_it_back(tmp_path):
    Credential.objects.write("linear:user:1", SECRETS)
    out = io.StringIO()
    call_command("dumpdata", "llm_mcp.credential", stdout=out)
    dumped = out.getvalue()
    for value in SECRETS.values():
        assert value not in dumped
    [row] = json.loads(dumped)
    ciphertext = row["fields"]["secret"]
    assert json.loads(_fernet_of_the_field().decrypt(ciphertext.encode())) == SECRETS  # the same keys open it
    fixture = tmp_path / "credentials.json"
    fixture.write_text(dumped)
    Credential.objects.all().delete()
    call_command("loaddata", str(fixture), stdout=io.StringIO())
    assert Credential.objects.read("linear:user:1") == SECRETS
    stored = Credential.objects.filter(key="linear:user:1").values_list("secret", flat=True)
    from django.db import connection

    with connection.cursor() as cursor:  # the column itself, bypassing the field
        cursor.execute("SELECT secret FROM llm_mcp_credentials")
        [(column,)] = cursor.fetchall()
    assert all(value not in column for value in SECRETS.values())
    assert list(stored) and json.loads(_fernet_of_the_field().decrypt(column.encode())) == SECRETS


def _forget_the_fields_keys() -> None:
    Credential._meta.get_field("secret").__dict__.pop("keys", None)
    Credential._meta.get_field("secret").__dict__.pop("f", None)


def test_loaddata_under_other_keys_refuses_the_fixture_instead_of_storing_it_wrapped(tmp_path, settings):
    """A dump loaded after SALT_KEY changed (no fallback) used to be saved encrypted a second time: the
    row then held the old ciphertext as its "plaintext", and even restoring the old key as a fallback
    could not read it. Now loaddata names the problem and writes nothing; with the old key kept, it loads."""
    from django.core.serializers.base import DeserializationError

    Credential.objects.write("linear:user:1", SECRETS)
    out = io.StringIO()
    call_command("dumpdata", "llm_mcp.credential", stdout=out)
    fixture = tmp_path / "credentials.json"
    fixture.write_text(out.getvalue())
    Credential.objects.all().delete()
    old_salt = settings.SALT_KEY
    settings.SALT_KEY = "n7Q2-vW9x-Lp4K-r8Zt-another-one"
    _forget_the_fields_keys()
    try:
        with pytest.raises(DeserializationError, match="cannot be decrypted with the current SECRET_KEY and SALT_KEY"):
            call_command("loaddata", str(fixture), stdout=io.StringIO())
        assert not Credential.objects.exists()
        settings.SALT_KEY = ["n7Q2-vW9x-Lp4K-r8Zt-another-one", old_salt]  # the old key kept for reading
        _forget_the_fields_keys()
        call_command("loaddata", str(fixture), stdout=io.StringIO())
        assert Credential.objects.read("linear:user:1") == SECRETS
    finally:
        _forget_the_fields_keys()


def test_other_serializers_write_ciphertext_too():
    from django.core import serializers

    Credential.objects.write("k", SECRETS)
    for fmt in ("json", "xml", "python"):
        text = str(serializers.serialize(fmt, Credential.objects.all()))
        assert all(value not in text for value in SECRETS.values()), fmt


@pytest.mark.parametrize(("salt", "reason"), [
    ("a", "has 1 characters"),
    ("short-but-random", None),
    ("xxxxxxxxxxxxxxxxxxxxxxxx", "repeats one or two characters"),
    ("llm-mcp-example-salt-change-me", "looks like a placeholder"),
    ("django-insecure-0123456789abcdef", "looks like a placeholder"),
    ("S-A-L-T-K-E-Y-!-!-!-!-!-!-!", "looks like a placeholder"),
    (["n7Q2-vW9x-Lp4K-r8Zt-3mYs", "a"], "SALT_KEY[1] has 1 characters"),
    ("n7Q2-vW9x-Lp4K-r8Zt-3mYs", None),
])
def test_weak_or_default_looking_salt_keys_are_warned_about(settings, salt, reason):
    settings.SALT_KEY = salt
    found = {p.id: p for p in check_settings()}
    if reason is None:
        assert "llm_mcp.W002" not in found
    else:
        assert reason in found["llm_mcp.W002"].msg
        for value in (salt if isinstance(salt, list) else [salt]):
            if len(value) > 1:
                assert value not in found["llm_mcp.W002"].msg  # the key itself is never printed


def test_a_salt_key_equal_to_the_secret_key_is_warned_about(settings):
    settings.SECRET_KEY = settings.SALT_KEY = "n7Q2-vW9x-Lp4K-r8Zt-3mYs-Qe1a"
    assert "is the same as SECRET_KEY" in {p.id: p for p in check_settings()}["llm_mcp.W002"].msg


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _debug_page(settings, reporter_filter: str | None = None) -> str:
    settings.DEBUG = True
    settings.ROOT_URLCONF = "llm_mcp_tests.support.failing_views"
    if reporter_filter is not None:
        from django.views import debug

        settings.DEFAULT_EXCEPTION_REPORTER_FILTER = reporter_filter
        debug.get_default_exception_reporter_filter.cache_clear()
    response = Client(raise_request_exception=False).get(f"/refresh/{_closed_port()}/")
    assert response.status_code == 500
    return response.content.decode()


def test_a_failed_token_refresh_shows_no_token_on_the_debug_page(settings):
    from django.views import debug

    try:
        page = _debug_page(settings)
        assert "request_token" in page and "Local vars" in page  # the frames are there, their values not
        for secret in (failing_views.REFRESH_TOKEN, failing_views.ACCESS_TOKEN, failing_views.CLIENT_SECRET):
            assert secret not in page
        # Django's own filter would have shown them: the test can fail.
        page = _debug_page(settings, "django.views.debug.SafeExceptionReporterFilter")
        assert failing_views.REFRESH_TOKEN in page or failing_views.ACCESS_TOKEN in page
    finally:
        debug.get_default_exception_reporter_filter.cache_clear()


def test_the_app_installs_its_reporter_filter_and_checks_a_site_that_chose_another(settings):
    from django.conf import settings as live

    assert live.DEFAULT_EXCEPTION_REPORTER_FILTER == "llm_mcp.debug.SecretsReporterFilter"
    assert "llm_mcp.W003" not in [p.id for p in check_settings()]
    settings.DEFAULT_EXCEPTION_REPORTER_FILTER = "django.views.debug.SafeExceptionReporterFilter"
    assert "llm_mcp.W003" in [p.id for p in check_settings()]
