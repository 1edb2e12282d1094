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
        configure_client()
        setting_changed.connect(_reconfigure, dispatch_uid="llm_mcp.apps.reconfigure")


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
    """``manage.py check``: the encryption salt credentials need, and unknown ``LLM_MCP`` keys."""
    from .credentials import salt_key_problem

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
    return problems


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
