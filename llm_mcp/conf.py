"""The Django app's settings, read in one place, each with its default.

    # settings.py
    LLM_MCP = {"TASK_POLL_INTERVAL": 10}
    LLM_MCP_CHAT_MODEL = "chats.Conversation"     # optional: your own chat model

    from llm_mcp import conf
    conf.get("TASK_POLL_INTERVAL")                # 10

Swappable models are top-level settings (like ``AUTH_USER_MODEL``), because Django's
migrations read them there; everything else lives in the ``LLM_MCP`` dict.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePath
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

__all__ = ["DEFAULTS", "chat_model_name", "get", "message_model_name"]

DEFAULTS: dict[str, Any] = {
    # Seconds a Celery job waits before checking a paused chat's tasks again, when none of
    # the tasks says how long (its ``pollInterval``).
    "TASK_POLL_INTERVAL": 5.0,
    # Seconds a chat waits for another process that runs a turn of the same chat.
    "TURN_LOCK_TIMEOUT": 600.0,
    # Directory for the turn locks of SQLite databases (file locks); default: next to the
    # database file.
    "LOCK_DIR": None,
    # Keyword arguments for providers, by provider name, used by chat records that no agent
    # set up: {"openai": {"base_url": "http://127.0.0.1:8001/v1"}}. Keys stay in environment
    # variables (OPENAI_API_KEY, ANTHROPIC_API_KEY), which the SDKs read themselves.
    "PROVIDER_OPTIONS": {},
    # ``startmcp`` names classes ``LinearMCP`` instead of ``LinearMcp``.
    "GENERATOR_ACRONYM": False,
}


SWAPPABLE = {"LLM_MCP_CHAT_MODEL": "llm_mcp.Chat", "LLM_MCP_MESSAGE_MODEL": "llm_mcp.Message"}
"""Top-level settings naming the chat and message models, with their defaults."""


def set_swappable_defaults() -> None:
    """Give ``settings`` the swappable model settings it lacks (Django's migration machinery
    reads them as attributes). Called when the app is loaded, before its models."""
    for name, default in SWAPPABLE.items():
        if not hasattr(settings, name):
            setattr(settings, name, default)


def _positive_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _provider_options(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, dict) for k, v in value.items())


CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "TASK_POLL_INTERVAL": (_positive_number, "a positive number of seconds"),
    "TURN_LOCK_TIMEOUT": (_positive_number, "a positive number of seconds"),
    "LOCK_DIR": (lambda v: v is None or isinstance(v, (str, PurePath)), "a directory path, or None"),
    "GENERATOR_ACRONYM": (lambda v: isinstance(v, bool), "True or False"),
    "PROVIDER_OPTIONS": (_provider_options, 'a dict of dicts by provider name, like {"openai": {"base_url": ...}}'),
}
"""What each setting must be, and how to say so."""


def _settings_dict() -> dict[str, Any]:
    value = getattr(settings, "LLM_MCP", None)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ImproperlyConfigured(f"settings.LLM_MCP must be a dict, not {type(value).__name__}")
    return value


def get(name: str) -> Any:
    """The value of ``settings.LLM_MCP[name]``, or its default.

    Raises ``KeyError`` for a name the app does not know (a typo in code, not in settings),
    and ``ImproperlyConfigured`` naming the setting when its value has the wrong kind."""
    if name not in DEFAULTS:
        raise KeyError(f"llm_mcp has no setting {name!r}; known: {sorted(DEFAULTS)}")
    value = _settings_dict().get(name, DEFAULTS[name])
    valid, expected = CHECKS[name]
    if not valid(value):
        raise ImproperlyConfigured(f"settings.LLM_MCP[{name!r}] must be {expected}, not {value!r:.80}")
    return value


def problems() -> list[str]:
    """Every setting whose value is wrong, described (for ``manage.py check``)."""
    found = []
    try:
        names = [name for name in _settings_dict() if name in DEFAULTS]
    except ImproperlyConfigured as exc:
        return [str(exc)]
    for name in names:
        try:
            get(name)
        except ImproperlyConfigured as exc:
            found.append(str(exc))
    return found


def chat_model_name() -> str:
    """``"app_label.ModelName"`` of the chat model (``LLM_MCP_CHAT_MODEL``, default ``llm_mcp.Chat``)."""
    return getattr(settings, "LLM_MCP_CHAT_MODEL", SWAPPABLE["LLM_MCP_CHAT_MODEL"])


def message_model_name() -> str:
    """``"app_label.ModelName"`` of the message model (``LLM_MCP_MESSAGE_MODEL``, default ``llm_mcp.Message``)."""
    return getattr(settings, "LLM_MCP_MESSAGE_MODEL", SWAPPABLE["LLM_MCP_MESSAGE_MODEL"])


def unknown_keys() -> list[str]:
    """Keys of ``settings.LLM_MCP`` that the app does not know (reported by a system check)."""
    try:
        return sorted(set(_settings_dict()) - set(DEFAULTS))
    except ImproperlyConfigured:
        return []  # reported by problems()
