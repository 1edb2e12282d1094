"""The Django app: ``INSTALLED_APPS = [..., "llm_mcp"]`` then ``manage.py migrate``."""

from __future__ import annotations

import logging
from typing import Any

from django.apps import AppConfig
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed

from . import conf

log = logging.getLogger("llm_mcp")

conf.set_swappable_defaults()  # before the models are imported


class LlmMcpConfig(AppConfig):
    name = "llm_mcp"
    verbose_name = "LLM MCP"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from .client import outages
        from .signals import send_unreachable

        if send_unreachable not in outages.listeners:
            outages.listeners.append(send_unreachable)
        from .client import state
        from .signals import guard_database, send_changed

        if send_changed not in state.change_listeners:
            state.change_listeners.append(send_changed)
        if guard_database not in state.change_guards:
            state.change_guards.append(guard_database)
        checks.register(check_settings)
        install_reporter_filter()
        configure_client()
        setting_changed.connect(_reconfigure, dispatch_uid="llm_mcp.apps.reconfigure")


def install_reporter_filter() -> None:
    """Make `llm_mcp.debug.SecretsReporterFilter` Django's exception reporter filter when the
    site kept Django's default, so debug pages and 500 e-mails never show MCP tokens. A site
    that chose its own filter keeps it (and gets check W003 unless it subclasses ours)."""
    from django.conf import settings
    from django.views import debug

    if settings.DEFAULT_EXCEPTION_REPORTER_FILTER == DJANGO_DEFAULT_FILTER:
        settings.DEFAULT_EXCEPTION_REPORTER_FILTER = "llm_mcp.debug.SecretsReporterFilter"
        debug.get_default_exception_reporter_filter.cache_clear()


DJANGO_DEFAULT_FILTER = "django.views.debug.SafeExceptionReporterFilter"


def configure_client() -> None:
    """Hand the OAuth settings of ``LLM_MCP`` to the MCP client (``llm_mcp.client.config``):
    the credential store (``CREDENTIAL_STORE``), ``CLIENT_ID`` and ``CLIENT_NAME``.

    Raises ``ImproperlyConfigured`` naming the setting when one is wrong, so a site does not
    start with its tokens silently kept in memory."""
    from .client.config import configure

    configure(credential_store=conf.credential_store(), client_id=conf.get("CLIENT_ID"),
              client_name=conf.get("CLIENT_NAME"))


def _reconfigure(*, setting: str, **kwargs: Any) -> None:
    """Settings changed at run time (``override_settings`` in tests): configure the client
    again; a wrong value is left to the system checks (``manage.py check``) to report."""
    if setting == "LLM_MCP":
        try:
            configure_client()
        except (ImproperlyConfigured, ValueError) as exc:
            log.warning("llm_mcp: the changed LLM_MCP settings were not applied to the MCP client: %s", exc)


def check_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``manage.py check``: the encryption salt credentials need (E001, and W002 when it looks weak),
    the exception reporter filter that keeps tokens off debug pages (W003), the MCP Apps sandbox
    middleware when ``APPS_SANDBOX_ORIGIN`` is set (W004), and unknown ``LLM_MCP`` keys."""
    from .credentials import salt_key_problem, salt_key_weakness

    problems: list[checks.CheckMessage] = []
    salt = salt_key_problem()
    if salt is not None:
        problems.append(checks.Error(
            f"{salt}: llm_mcp encrypts MCP credentials with django-fernet-encrypted-fields, which derives its "
            "keys from SECRET_KEY and SALT_KEY.",
            hint="Add SALT_KEY = os.environ['DJANGO_SALT_KEY'] (a random string, or a list of them to rotate) "
                 "to your settings.", id="llm_mcp.E001"))
    for key in conf.unknown_keys():
        problems.append(checks.Warning(f"settings.LLM_MCP has an unknown key {key!r}",
                                       hint=f"Known keys: {', '.join(sorted(conf.DEFAULTS))}.", id="llm_mcp.W001"))
    for problem in conf.problems():
        problems.append(checks.Error(problem, id="llm_mcp.E002"))
    if not problems:
        problems.extend(_oauth_problems())
    weakness = salt_key_weakness() if salt is None else None
    if weakness is not None:
        problems.append(checks.Warning(
            f"{weakness}: the keys that encrypt MCP credentials are derived from it and SECRET_KEY.",
            hint="Use a long random value from the environment, e.g. python -c \"import secrets; "
                 "print(secrets.token_urlsafe(32))\"; to change it, put the new value first in a SALT_KEY "
                 "list and keep the old one after it until the credentials were written again.",
            id="llm_mcp.W002"))
    problems.extend(_reporter_filter_problems())
    if not any(p.id == "llm_mcp.E002" for p in problems):
        problems.extend(_sandbox_problems())
    return problems


def _sandbox_problems() -> list[checks.CheckMessage]:
    """W004 when ``APPS_SANDBOX_ORIGIN`` is set and ``AppsSandboxMiddleware`` is not in ``MIDDLEWARE``."""
    from django.conf import settings

    middleware = "llm_mcp.middleware.AppsSandboxMiddleware"
    if not conf.get("APPS_SANDBOX_ORIGIN") or middleware in settings.MIDDLEWARE:
        return []
    return [checks.Warning(
        "LLM_MCP['APPS_SANDBOX_ORIGIN'] is set but the rest of the site is served on that origin too: "
        "a session there (its login page works) would belong to every MCP App.",
        hint=f"Put {middleware!r} first in MIDDLEWARE.", id="llm_mcp.W004")]


def _reporter_filter_problems() -> list[checks.CheckMessage]:
    """W003 when ``DEFAULT_EXCEPTION_REPORTER_FILTER`` is neither ours nor a subclass of it."""
    from django.conf import settings
    from django.utils.module_loading import import_string

    from .debug import SecretsReporterFilter

    try:
        chosen = import_string(settings.DEFAULT_EXCEPTION_REPORTER_FILTER)
    except ImportError:
        return []  # Django reports it
    if isinstance(chosen, type) and issubclass(chosen, SecretsReporterFilter):
        return []
    return [checks.Warning(
        "DEFAULT_EXCEPTION_REPORTER_FILTER does not hide MCP tokens: a debug page or a 500 e-mail may show the "
        "locals of a token refresh or an MCP request.",
        hint="Set DEFAULT_EXCEPTION_REPORTER_FILTER = 'llm_mcp.debug.SecretsReporterFilter' (or subclass it).",
        id="llm_mcp.W003")]


def _oauth_problems() -> list[checks.CheckMessage]:
    """The credential store and the connect view's servers must be importable."""
    found: list[checks.CheckMessage] = []
    try:
        conf.credential_store()
    except ImproperlyConfigured as exc:
        found.append(checks.Error(str(exc), id="llm_mcp.E003"))
    for name in conf.get("OAUTH_SERVERS"):
        try:
            conf.oauth_server(name)
        except ImproperlyConfigured as exc:
            found.append(checks.Error(str(exc), id="llm_mcp.E004"))
    return found
