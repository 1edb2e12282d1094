"""The Django app: ``INSTALLED_APPS = [..., "llm_mcp"]`` then ``manage.py migrate``."""

from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.core import checks

from . import conf

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
        checks.register(check_settings)


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
    return problems
