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

import importlib
import re
from collections.abc import Callable
from pathlib import PurePath
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .client.hosts import is_loopback

__all__ = ["DEFAULTS", "chat_access", "chat_agents", "chat_model_name", "credential_store", "get", "import_object", "message_model_name",
           "oauth_server"]

DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")
SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,100}$")

ORIGIN = re.compile(r"https?://[a-z0-9.\-\[\]:]+")
"""An origin as a browser serialises it (``fullmatch``): lower-case scheme, host and optional port."""


def _origin(value: Any) -> bool:
    """Whether ``value`` is an origin spelled as ``event.origin`` spells it (no default port)."""
    return (isinstance(value, str) and bool(ORIGIN.fullmatch(value))
            and not value.endswith(":443" if value.startswith("https:") else ":80"))

DEFAULTS: dict[str, Any] = {
    # Seconds a Celery job waits before checking a paused chat's tasks again, when none of
    # the tasks says how long (its ``pollIntervalMs``).
    "TASK_POLL_INTERVAL": 5.0,
    # How paused chats' server tasks get checked: "poll" (``check_tasks`` schedules itself at
    # the poll interval) or "listen" (it does not: a ``manage.py mcp_listen --tasks`` process
    # enqueues it when a task changes).
    "TASK_CHECKS": "poll",
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
    # Where OAuth credentials of MCP servers are kept: the dotted path of an object with
    # read/write/delete (and synchronize, when several processes share it), or of a class
    # built without arguments. Default: the encrypted Credential model. None: in memory.
    "CREDENTIAL_STORE": "llm_mcp.models.Credential.objects",
    # The https URL of the app's client ID metadata document, used as client_id with
    # authorization servers that support them (llm_mcp.views.client_metadata serves one).
    "CLIENT_ID": None,
    # The app's name in client registrations and its metadata document (None: "llm_mcp").
    "CLIENT_NAME": None,
    # The servers the connect view may authorize, by the name its URL uses:
    # {"linear": "myapp.mcp.Linear"}: an llm_mcp.MCP subclass whose oauth owner is an
    # input (the view passes the signed-in user), or a function(request) -> server.
    "OAUTH_SERVERS": {},
    # Where the callback sends the user when the connect view got no (safe) ``next``: a
    # path, a URL, or a URL pattern name.
    "OAUTH_REDIRECT_URL": "/",
    # Who may do what with a chat on the chat pages: the dotted path of a function
    # (user, chat, action) -> bool, action one of "view", "send", "decide", "cancel".
    # Default: the chat's user, or staff with the app's permissions (llm_mcp.access).
    "CHAT_ACCESS": "llm_mcp.access.default_access",
    # The agents the "New chat" page offers: dotted paths of llm_mcp.Agent subclasses whose
    # chat_class is the chat model. Empty: a plain chat on CHAT_MODEL.
    "CHAT_AGENTS": [],
    # The model of a plain chat (no agent): {"provider": ..., "model": ...}.
    "CHAT_MODEL": {"provider": "openai", "model": "gpt-4.1-mini"},
    # Where a message sent from the chat page (with JavaScript) runs its turn: "request" (in
    # the web process, the reply streamed token by token) or "celery" (a job, the page
    # following its rows). Without JavaScript, and for approvals and answers, it is a job.
    "CHAT_RUN_TURNS": "request",
    # Largest image or audio, in bytes, the chat page shows inline (larger: named attachment).
    "CHAT_INLINE_MEDIA_BYTES": 2_000_000,
    # MCP Apps: the origin (scheme://host[:port]) the Apps' sandbox proxy is served on, a
    # different origin from the chat pages' (None: Apps are not rendered). See docs "MCP Apps".
    "APPS_SANDBOX_ORIGIN": None,
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


def _dotted_path_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, str) and bool(DOTTED.match(value)))


def _https_url_or_none(value: Any) -> bool:
    if value is None:
        return True
    if not isinstance(value, str):
        return False
    parts = urlsplit(value)
    secure = parts.scheme == "https" or (parts.scheme == "http" and is_loopback(parts.hostname))
    return secure and bool(parts.hostname) and parts.path not in ("", "/") and not parts.fragment


def _oauth_servers(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(k, str) and SERVER_NAME.match(k) and isinstance(v, str) and DOTTED.match(v)
        for k, v in value.items())


def _provider_options(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, dict) for k, v in value.items())


CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "TASK_POLL_INTERVAL": (_positive_number, "a positive number of seconds"),
    "TASK_CHECKS": (lambda v: v in ("poll", "listen"), '"poll" or "listen"'),
    "TURN_LOCK_TIMEOUT": (_positive_number, "a positive number of seconds"),
    "LOCK_DIR": (lambda v: v is None or isinstance(v, (str, PurePath)), "a directory path, or None"),
    "GENERATOR_ACRONYM": (lambda v: isinstance(v, bool), "True or False"),
    "PROVIDER_OPTIONS": (_provider_options, 'a dict of dicts by provider name, like {"openai": {"base_url": ...}}'),
    "CREDENTIAL_STORE": (_dotted_path_or_none, ('the dotted path of a credential store, like '
                                               '"llm_mcp.models.Credential.objects", or None (in memory)')),
    "CLIENT_ID": (_https_url_or_none, ("the https URL (with a path) of a client ID metadata document (http only "
                                       "on loopback, for development), or None")),
    "CLIENT_NAME": (lambda v: v is None or (isinstance(v, str) and bool(v.strip())), "a non-empty string, or None"),
    "OAUTH_SERVERS": (_oauth_servers, ('a dict of server classes by URL name (letters, digits, "-", "_"), like '
                                      '{"linear": "myapp.mcp.Linear"}')),
    "OAUTH_REDIRECT_URL": (lambda v: isinstance(v, str) and bool(v), "a path, URL or URL pattern name"),
    "CHAT_ACCESS": (lambda v: isinstance(v, str) and bool(DOTTED.match(v)),
                    'the dotted path of a function (user, chat, action) -> bool'),
    "CHAT_AGENTS": (lambda v: isinstance(v, (list, tuple)) and all(isinstance(p, str) and DOTTED.match(p) for p in v),
                    'a list of dotted paths of llm_mcp.Agent subclasses'),
    "CHAT_MODEL": (lambda v: isinstance(v, dict) and set(v) == {"provider", "model"}
                   and all(isinstance(x, str) and x for x in v.values()),
                   '{"provider": "<registered provider>", "model": "<model id>"}'),
    "CHAT_RUN_TURNS": (lambda v: v in ("request", "celery"), '"request" or "celery"'),
    "APPS_SANDBOX_ORIGIN": (lambda v: v is None or _origin(v),
                            ('an origin like "https://apps.example.com" (scheme://host[:port], lower case, '
                             'no default port, no path), or None')),
    "CHAT_INLINE_MEDIA_BYTES": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
                                "a number of bytes (0: never inline)"),
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


def import_object(path: str, *, setting: str) -> Any:
    """The object a dotted path names: a module attribute, or an attribute of one
    (``"llm_mcp.models.Credential.objects"``).

    Raises ``ImproperlyConfigured`` naming ``setting`` when nothing by that path can be
    imported (an error raised while importing the module itself propagates)."""
    parts = path.split(".")
    for split in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:split])
        try:
            found: Any = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and (module_name == exc.name or module_name.startswith(exc.name + ".")):
                continue  # that prefix is not a module: try a shorter one
            raise
        for attribute in parts[split:]:
            try:
                found = getattr(found, attribute)
            except AttributeError:
                raise ImproperlyConfigured(f"{setting}: {path!r} names nothing ({module_name!r} has no "
                                           f"{'.'.join(parts[split:])!r})") from None
        return found
    raise ImproperlyConfigured(f"{setting}: {path!r} names nothing (no module {parts[0]!r})")


def credential_store() -> Any:
    """The credential store ``CREDENTIAL_STORE`` names (a class is built without arguments),
    or ``None`` for the client's in-memory default.

    Raises ``ImproperlyConfigured`` when the path names nothing or an object without
    ``read``, ``write`` and ``delete``."""
    path = get("CREDENTIAL_STORE")
    if path is None:
        return None
    store = import_object(path, setting="settings.LLM_MCP['CREDENTIAL_STORE']")
    if isinstance(store, type):
        store = store()
    # Imported here, not with conf: conf is read before the client is needed.
    from .client.oauth.store import missing_methods

    missing = missing_methods(store)
    if missing:
        raise ImproperlyConfigured(f"settings.LLM_MCP['CREDENTIAL_STORE']: {path!r} is not a credential store "
                                   f"(it lacks {', '.join(missing)})")
    return store


def oauth_server(name: str) -> Any:
    """What ``OAUTH_SERVERS[name]`` names: an ``llm_mcp.MCP`` subclass or a function of the
    request. Raises ``KeyError`` for a name the setting does not list (the connect view
    answers 404), ``ImproperlyConfigured`` for a path that names nothing."""
    servers = get("OAUTH_SERVERS")
    if name not in servers:
        raise KeyError(name)
    target = import_object(servers[name], setting=f"settings.LLM_MCP['OAUTH_SERVERS'][{name!r}]")
    from .client.server import MCP

    if not (isinstance(target, type) and issubclass(target, MCP)) and (isinstance(target, type) or
                                                                       not callable(target)):
        raise ImproperlyConfigured(f"settings.LLM_MCP['OAUTH_SERVERS'][{name!r}]: {servers[name]!r} is neither an "
                                   "llm_mcp.MCP subclass nor a function(request) returning a server")
    return target


def chat_access() -> Callable[[Any, Any, str], bool]:
    """The function ``CHAT_ACCESS`` names: ``(user, chat, action) -> bool``.

    Raises ``ImproperlyConfigured`` when the path names nothing callable."""
    check = import_object(get("CHAT_ACCESS"), setting="settings.LLM_MCP['CHAT_ACCESS']")
    if not callable(check):
        raise ImproperlyConfigured(f"settings.LLM_MCP['CHAT_ACCESS']: {get('CHAT_ACCESS')!r} is not callable")
    return check


def chat_agents() -> list[type]:
    """The agent classes ``CHAT_AGENTS`` names, in order.

    Raises ``ImproperlyConfigured`` for a path that names nothing, or names something other than
    an ``llm_mcp.Agent`` subclass with a ``chat_class``."""
    from .chat import Agent

    found = []
    for path in get("CHAT_AGENTS"):
        agent = import_object(path, setting="settings.LLM_MCP['CHAT_AGENTS']")
        if not (isinstance(agent, type) and issubclass(agent, Agent)) or agent.chat_class is None:
            raise ImproperlyConfigured(f"settings.LLM_MCP['CHAT_AGENTS']: {path!r} is not an llm_mcp.Agent subclass "
                                       "with a chat_class (its chats must be saved rows)")
        found.append(agent)
    return found
