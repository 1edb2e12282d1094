"""The settings of a server, declared once: `TABLE`.

    class Linear(llm_mcp.MCP):
        url = "https://mcp.linear.app/mcp"
        bearer_token = lambda self: self.user.linear_token     # evaluated per request

Each `Setting` row gives a name, its default, one line of documentation, when its
value is evaluated, and the check that refuses a value that cannot work. Everything else is
derived from the table: the class attributes of [`MCP`][llm_mcp.MCP] and their defaults,
the checks run when a subclass is declared (``__init_subclass__``) and when a server is
built, the keywords ``llm_mcp.mcp(...)`` accepts, and `settings_reference` (the
Markdown table the docs show). Adding a setting is one row here, plus the collaborator that
uses it.

A server reads its settings through `ServerSettings` (``server.settings``):
``option(name)`` is the declared value as written (a literal, a callable, a method name),
``value(name)`` the value evaluated now, ``evaluate(name, value)`` evaluates any declared value.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import urlsplit

from ..declared import evaluate, input_names, names_method
from ..hosts import is_loopback
from ..logs import check_log_level

if TYPE_CHECKING:
    from .base import MCP

__all__ = ["EVALUATED", "SETTINGS", "TABLE", "ServerSettings", "Setting", "check_url", "settings_reference"]

EVALUATED = ("once", "per request", "per process start", "per call", "per change")
"""When a setting's value is evaluated: ``once`` (when the server object first needs it),
``per request`` (each HTTP request of a call, once per call), ``per process start`` (each
time a stdio process starts), ``per call`` (each tool call), ``per change`` (each change the
server announces)."""

Check = Callable[["ServerSettings", Any, str], None]
"""A check of one setting: ``check(settings, declared value, where)``; raises ``ValueError``."""


def check_url(url: str, *, allow_http: bool = False) -> str:
    """Validate a server URL and return it.

    Raises ``ValueError`` (naming the option to use) for a scheme other than ``https`` or
    ``http``, for credentials in the URL (use ``bearer_token`` or ``headers``), and for
    plain ``http`` to a host other than ``localhost`` or a loopback address unless
    ``allow_http=True``.
    """
    if not isinstance(url, str):
        raise ValueError(f"url must be a string, not {type(url).__name__}")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"url must be an absolute http(s) URL, got scheme {parts.scheme!r}")
    if not parts.hostname:
        raise ValueError("url has no host")
    if parts.username is not None or parts.password is not None:
        raise ValueError("url must not carry credentials; send them with bearer_token or headers")
    if parts.scheme == "http" and not allow_http and not is_loopback(parts.hostname):
        raise ValueError(f"plain http to {parts.hostname!r} is not encrypted; use https, or set allow_http=True "
                         "for a private network you trust")
    return url


# -- the checks of single settings ------------------------------------------------------------


def _url(settings: ServerSettings, url: Any, where: str) -> None:
    if url is not None and not isinstance(url, str) and not callable(url):
        raise ValueError(f"{where}: url must be a string (or a callable returning one), not {type(url).__name__}")
    if isinstance(url, str) and not settings.names_method(url):
        check_url(url, allow_http=bool(settings.option("allow_http")))


def _command(settings: ServerSettings, command: Any, where: str) -> None:
    if isinstance(command, (list, tuple)) and (not command or not all(isinstance(c, str) for c in command)):
        raise ValueError(f"{where}: command must be a non-empty list of strings (argv)")
    if isinstance(command, str) and not settings.names_method(command) and not command.split():
        raise ValueError(f"{where}: command is empty")


def _timeout(settings: ServerSettings, timeout: Any, where: str) -> None:
    if timeout is not None and not callable(timeout) and (
            isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0):
        raise ValueError(f"{where}: timeout must be a positive number of seconds, not {timeout!r}")


def _question_timeout(settings: ServerSettings, value: Any, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise ValueError(f"{where}: question_timeout must be a positive, finite number of seconds, not {value!r}")


def _roots_check(settings: ServerSettings, value: Any, where: str) -> None:
    from .roots import check_roots

    check_roots(settings, value, where)


def _sampling_check(settings: ServerSettings, value: Any, where: str) -> None:
    from .sampling import check_sampling

    check_sampling(settings, value, where)


def _log_level(settings: ServerSettings, value: Any, where: str) -> None:
    check_log_level(value, f"{where}.log_level" if where != "llm_mcp.mcp()" else "llm_mcp.mcp() log_level")


def _callback(settings: ServerSettings, value: Any, where: str, name: str) -> None:
    if value is not None and not callable(value) and not settings.names_method(value):
        raise ValueError(f"{where}: {name} must be a callable or the name of a method of the class, not {value!r}")


def _mapping(settings: ServerSettings, value: Any, where: str, name: str) -> None:
    if value is not None and not callable(value) and not settings.names_method(value) and not isinstance(value, dict):
        raise ValueError(f"{where}: {name} must be a dict (or a callable returning one)")


def _extensions(settings: ServerSettings, value: Any, where: str) -> None:
    from ..extensions import declared_extensions

    declared_extensions(value, where)


def _skill_allowed_tools(settings: ServerSettings, value: Any, where: str) -> None:
    from ..skill import check_skill_allowed_tools

    check_skill_allowed_tools(settings, value, where)


def _input_requests(settings: ServerSettings, value: Any, where: str) -> None:
    from .questions import accepted_kinds

    accepted_kinds(value, where)


@dataclass(frozen=True)
class Setting:
    """One server setting.

    Attributes:
        name: the class attribute (and ``llm_mcp.mcp()`` keyword).
        default: its value when a class does not set it.
        doc: one line for the reference.
        evaluated: when a callable or method name is evaluated (one of `EVALUATED`).
        check: refuses a declared value when a server is built (``None``: any value, or the
            collaborator checks it with its group, see `GROUP_CHECKS`).
        inline: whether ``llm_mcp.mcp()`` takes it as a keyword.
        group: the collaborator that uses it (``"connection"``, ``"shaping"``, ``"questions"``, ...).
    """

    name: str
    default: Any
    doc: str
    evaluated: str = "once"
    check: Check | None = None
    inline: bool = True
    group: str = "connection"


def _named(check: Callable[..., None], name: str) -> Check:
    return lambda settings, value, where: check(settings, value, where, name)


TABLE: tuple[Setting, ...] = (
    Setting("url", None, "Streamable HTTP endpoint (https; http only for loopback unless `allow_http`).", check=_url),
    Setting("allow_http", False, "Allow plain http to a host that is not loopback (a network you trust)."),
    Setting("command", None, "argv list of a stdio server (run without a shell).", "per process start", _command),
    Setting("directory", None, "Working directory of the stdio process.", "per process start"),
    Setting("env", None, "Extra environment for the stdio process (values may be callables).", "per process start",
            _named(_mapping, "env")),
    Setting("transport", None, "A callable or method name returning a custom transport object."),
    Setting("name", None, "The server's name (default: the class name in snake_case, the URL's host or the "
            "command's executable)."),
    Setting("timeout", None, "Seconds a request may take (default 60).", check=_timeout),
    Setting("bearer_token", None, "Sent as `Authorization: Bearer ...` on every HTTP request.", "per request"),
    Setting("headers", None, "Extra HTTP headers; values (or the whole dict) may be callables.", "per request",
            _named(_mapping, "headers")),
    Setting("inputs", (), "Names of the keyword arguments the constructor takes (`[\"user\"]`).", inline=False),
    Setting("after_progress", None, "Run with each `Progress` of a tool call; while set, calls ask for progress.",
            "per call", _named(_callback, "after_progress"), group="calls"),
    Setting("log_level", None, "Least severe server log message asked for and written (`None`: none).",
            check=_log_level),
    Setting("oauth", None, "OAuth for this server: `owner`, `client_id`, `scopes`, `grant`, ... (values may be "
            "callables).", "per request", group="auth"),
    Setting("prefix", None, "Put `<prefix>_` before every tool's model-facing name.", group="shaping"),
    Setting("only", None, "Offer only these tools (server-side names).", group="shaping"),
    Setting("exclude", None, "Offer every tool but these.", group="shaping"),
    Setting("tool_options", None, "Per tool: `as` (new name), `description`, `fixed_arguments`, `wrap`.",
            "per call", group="shaping"),
    Setting("extra_tools", (), "Your own tool classes or objects, offered with this server's tools.",
            group="shaping"),
    Setting("requires_approval", False, "`True`, tool names, a tool property (`\"destructive\"`) or a callable "
            "receiving the `Tool`.", "per call", group="shaping"),
    Setting("defer", False, "`True` or tool names: found by the model through tool search.", group="shaping"),
    Setting("rescue_from", None, "`{exception class: handler}`; the handler's return value becomes the result.",
            "per call", group="shaping"),
    Setting("before_input_request", None, "Run with each `Question` before it reaches a chat; may answer or "
            "decline it.", "per call", _named(_callback, "before_input_request"), group="questions"),
    Setting("input_requests", True, "Kinds of question accepted: `True` (form and URL), `\"form\"`, `\"url\"`, "
            "`False`.", check=_input_requests, group="questions"),
    Setting("roots", None, "Directories the server may work in: `file://` URIs or `{\"uri\", \"name\"}` dicts (or a "
            "callable or method name returning them); declared as the roots capability.", "per request",
            check=lambda settings, value, where: _roots_check(settings, value, where), group="roots"),
    Setting("sampling", False, "Answer the server's sampling requests: `True` (the chat's model), a dict "
            "`{\"provider\", \"model\", \"models\", \"history\", \"options\"}`, or a callable or method name given the "
            "request's params.", "per request", check=lambda settings, value, where: _sampling_check(settings, value,
                                                                                                  where),
            group="sampling"),
    Setting("question_timeout", 300, "Seconds a chat holds a handshake-era server's question open for an answer "
            "before declining it (not counted against `timeout`).", check=_question_timeout, group="questions"),
    Setting("after_change", None, "Run with what changed: `\"tools\"`, `\"prompts\"`, `\"resources\"` or the "
            "`Resource` whose content changed; a method name (`def f(self, change)`) or a callable "
            "`f(server, change)` (see `listen`).", "per change", _named(_callback, "after_change"),
            group="changes"),
    Setting("extensions", None, "MCP extensions to declare: one name, a list of names or `{name: settings}`; "
            "`\"apps\"` is MCP Apps (`io.modelcontextprotocol/ui`).", check=_extensions),
    Setting("skill_allowed_tools", False, "Skills (names or `SKILL.md` URIs, or a callable given the `Skill`) whose "
            "`allowed-tools` may pre-approve this server's tools while loaded in a chat; default: none.", "per call",
            check=lambda settings, value, where: _skill_allowed_tools(settings, value, where), group="shaping"),
)
"""Every server setting, in the order of the reference."""

SETTINGS: tuple[str, ...] = tuple(setting.name for setting in TABLE)
"""The settings' names."""

BY_NAME: dict[str, Setting] = {setting.name: setting for setting in TABLE}

def defaults() -> dict[str, Any]:
    """The class attributes of ``MCP``: each setting's default."""
    return {setting.name: setting.default for setting in TABLE}


def check_class(cls: type[MCP], base: type, reserved: tuple[str, ...] = ()) -> None:
    """The checks a subclass gets when it is declared: a literal ``url``, a ``log_level``, the
    ``inputs`` names (not an attribute of ``base``, nor one of ``reserved``). Raises
    ``ValueError`` naming the class."""
    url = cls.__dict__.get("url")
    if isinstance(url, str) and not names_method(cls, url, base):
        check_url(url, allow_http=bool(cls.allow_http))
    check_log_level(cls.__dict__.get("log_level"), f"{cls.__name__}.log_level")
    for name in input_names(cls.inputs):
        if not name.isidentifier() or name.startswith("_") or hasattr(base, name) or name in reserved:
            raise ValueError(f"{cls.__name__}.inputs: {name!r} cannot be an input name (it must be an "
                             "identifier that is not an attribute of llm_mcp.MCP)")


def check_keywords(options: dict[str, Any]) -> None:
    """The keywords of ``llm_mcp.mcp()``: raises ``ValueError`` for one that is not an inline setting."""
    unknown = sorted(k for k in options if k not in BY_NAME)
    if unknown:
        raise ValueError(f"llm_mcp.mcp() got unknown settings {unknown}")
    class_only = sorted(k for k in options if not BY_NAME[k].inline)
    if class_only:
        raise ValueError(f"llm_mcp.mcp() does not take {class_only}: only a subclass of llm_mcp.MCP declares them")
    if "transport" in options and not options.get("name"):
        raise ValueError("llm_mcp.mcp(transport=...) needs a name=, since it has no URL or command to be named after")


def settings_reference() -> str:
    """The settings as a Markdown table (name, default, when evaluated, what it does), for the docs."""
    lines = ["| setting | default | evaluated | what it does |", "| --- | --- | --- | --- |"]
    for setting in TABLE:
        only = "" if setting.inline else " (a class attribute only, not a `llm_mcp.mcp()` keyword)"
        lines.append(f"| `{setting.name}` | `{setting.default!r}` | {setting.evaluated} | {setting.doc}{only} |")
    return "\n".join(lines) + "\n"


class ServerSettings:
    """One server object's settings: the declared values and their evaluation.

        server.settings.option("bearer_token")   # as declared: a callable, a method name, a literal
        server.settings.value("bearer_token")    # evaluated now

    Attributes:
        owner: the server; callables receive it, method names are looked up on its class.
        base: the class whose own attributes do not count as method names (``llm_mcp.MCP``).
        where: how error messages name the server (its class name, or ``"llm_mcp.mcp()"``).
        inline: whether the server was built by ``llm_mcp.mcp()``.
    """

    def __init__(self, owner: Any, options: dict[str, Any], *, base: type, inline: bool):
        self.owner = owner
        self.base = base
        self.inline = inline
        self.where = "llm_mcp.mcp()" if inline else type(owner).__name__
        self._options = options
        cls = type(owner)
        declared = cls.__dict__.get("_declared_settings")
        if declared is None:  # each class reads its settings once, unbound (functions stay functions)
            declared = {name: inspect.getattr_static(cls, name) for name in SETTINGS}
            cls._declared_settings = declared
        self._declared = declared

    def option(self, name: str) -> Any:
        """The setting as declared (keyword of ``llm_mcp.mcp()``, else the class attribute), not evaluated."""
        if name in self._options:
            return self._options[name]
        return self._declared[name]

    def names_method(self, value: Any) -> bool:
        """Whether a string names a method defined on the server's class (not on ``MCP`` itself)."""
        return names_method(type(self.owner), value, self.base)

    def resolve(self, value: Any) -> Any:
        """Evaluate a declared value: call a callable (with the server when it takes an argument),
        call the method a string names, or return a literal as it is."""
        return evaluate(self.owner, value, self.base)

    def evaluate(self, name: str, value: Any) -> Any:
        """`resolve` ``value``; an ``AttributeError`` it raises comes out as a
        ``RuntimeError`` naming ``name`` (left as it is, Python would take it for a missing attribute)."""
        try:
            return self.resolve(value)
        except AttributeError as exc:
            raise RuntimeError(f"{type(self.owner).__name__}: evaluating {name} raised AttributeError: {exc}") from exc

    def value(self, name: str) -> Any:
        """The setting evaluated now (see `evaluate`; a setting left at ``None`` is ``None``)."""
        declared = self.option(name)
        return None if declared is None else self.evaluate(name, declared)

    def check(self, group_checks: list[Callable[[ServerSettings], None]]) -> None:
        """Refuse settings that cannot work, naming the setting (``ValueError``): exactly one of
        ``url``, ``command``, ``transport``; each setting's own check; then the collaborators'
        ``group_checks`` (shaping, oauth), which look at several settings together."""
        given = [key for key in ("url", "command", "transport") if self.option(key) is not None]
        if len(given) != 1:
            raise ValueError(f"{self.where} needs exactly one of url, command or transport (got {given or 'none'})")
        for setting in TABLE:
            if setting.check is not None:
                setting.check(self, self.option(setting.name), self.where)
        for group_check in group_checks:
            group_check(self)
