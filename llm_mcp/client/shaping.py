"""Shaping what the model sees of a server, and what the model's calls do.

The settings live on the ``MCP`` class (or in ``llm_mcp.mcp(...)``), next to ``url``; they are
declared in ``llm_mcp.client.server.settings.TABLE`` and read here through ``server.settings``:

    class GitHub(llm_mcp.MCP):
        url = "https://api.githubcopilot.com/mcp/"
        prefix = "github"                                     # github_search_issues
        only = ["search_issues", "get_issue", "create_issue"]
        tool_options = {"search_issues": {"as": "find_issues", "fixed_arguments": {"owner": "crmne"}}}
        requires_approval = ["create_issue"]

Every tool name a setting declares must exist on the server: when the chat loads the
tools and one is missing, [`ConfigurationError`][llm_mcp.client.errors.ConfigurationError] names it.
"""

from __future__ import annotations

import inspect
import logging
from typing import TYPE_CHECKING, Any

from . import context, outages
from .declared import call_with
from .errors import (
    CancelledError,
    ConfigurationError,
    InputRequiredError,
    MCPError,
    is_outage,
    is_refusal,
    may_have_run,
)
from .server.settings import TABLE
from .task import Task

if TYPE_CHECKING:
    from .server.base import MCP
    from .tool import Tool

__all__ = ["PARTLY_RUN", "SHAPING", "SKILL_PREFIX", "check_shaping", "failure_text", "invoke", "is_refusal", "kept_tools", "model_tools", "shape", "skill_shaped"]

log = logging.getLogger("llm_mcp.client")

SHAPING = tuple(setting.name for setting in TABLE if setting.group == "shaping")
"""The server settings that shape tools for chats (``group="shaping"`` in the settings table)."""

SKILL_PREFIX = "skill:"
"""In ``only``/``exclude``, ``"skill:<name>"`` names a skill (``io.modelcontextprotocol/skills``), not a tool."""

TOOL_OPTION_KEYS = ("as", "description", "fixed_arguments", "wrap")
PREDICATES = ("read_only", "destructive", "idempotent", "open_world")
"""Tool properties ``requires_approval`` may name."""


def _names(value: Any, setting: str, where: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple, set, frozenset)) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where}.{setting} must be a list of tool names")
    return list(value)


def check_shaping(server: MCP, where: str) -> None:
    """Refuse shaping settings of the wrong shape when the server is built (``ValueError``)."""
    option = server.settings.option
    for setting in ("only", "exclude"):
        if option(setting) is not None:
            _names(option(setting), setting, where)
    if option("only") is not None and option("exclude") is not None:
        raise ValueError(f"{where}: set only or exclude, not both")
    prefix = option("prefix")
    if prefix is not None and (not isinstance(prefix, str) or not prefix):
        raise ValueError(f"{where}.prefix must be a non-empty string")
    tool_options = option("tool_options") or {}
    if not isinstance(tool_options, dict):
        raise ValueError(f"{where}.tool_options must be a dict of tool name -> options")
    for name, options in tool_options.items():
        if not isinstance(name, str):
            raise ValueError(f"{where}.tool_options keys must be tool names (strings), not {name!r}")
        if not isinstance(options, dict):
            raise ValueError(f"{where}.tool_options[{name!r}] must be a dict")
        unknown = sorted(set(options) - set(TOOL_OPTION_KEYS))
        if unknown:
            raise ValueError(f"{where}.tool_options[{name!r}] has unknown keys {unknown}; "
                             f"known: {list(TOOL_OPTION_KEYS)}")
        if "as" in options and (not isinstance(options["as"], str) or not options["as"]):
            raise ValueError(f"{where}.tool_options[{name!r}]['as'] must be a non-empty string")
        if "description" in options and not isinstance(options["description"], str):
            raise ValueError(f"{where}.tool_options[{name!r}]['description'] must be a string")
        if not isinstance(options.get("fixed_arguments", {}), dict):
            raise ValueError(f"{where}.tool_options[{name!r}]['fixed_arguments'] must be a dict")
        wrap = options.get("wrap")
        if wrap is not None and not callable(wrap) and not server.settings.names_method(wrap):
            raise ValueError(f"{where}.tool_options[{name!r}]['wrap'] must be a callable or the name of a "
                             f"method of the class, not {wrap!r}")
    approval = option("requires_approval")
    if isinstance(approval, str) and approval not in PREDICATES and not server.settings.names_method(approval):
        raise ValueError(f"{where}.requires_approval: {approval!r} is neither a tool property {PREDICATES} nor a "
                         "method of the class; list tool names as a list")
    if not _flag(approval) and not isinstance(approval, str) and not callable(approval):
        _names(approval, "requires_approval", where)
    defer = option("defer")
    if not _flag(defer):
        _names(defer, "defer", where)
    extra = option("extra_tools") or ()
    if not isinstance(extra, (list, tuple)) or not all(_is_tool_like(e) for e in extra):
        raise ValueError(f"{where}.extra_tools must be a list of llm_mcp.ChatTool classes or tool objects")
    rescue = option("rescue_from") or {}
    if not isinstance(rescue, dict) or not all(isinstance(k, type) and issubclass(k, BaseException) for k in rescue):
        raise ValueError(f"{where}.rescue_from must be a dict of exception class -> handler")
    for handler in rescue.values():
        if not callable(handler) and not server.settings.names_method(handler):
            raise ValueError(f"{where}.rescue_from: handler {handler!r} is neither a callable nor a method name")


def _flag(value: Any) -> bool:
    return value is None or value is True or value is False


def _is_tool_like(value: Any) -> bool:
    """A tool class or object a chat can offer: it has a name, a schema and ``call``."""
    return all(hasattr(value, attr) for attr in ("name", "call")) and (
        isinstance(value, type) or hasattr(value, "params_schema"))


def shape(server: MCP, tool: Tool) -> None:
    """Give ``tool`` its model-facing name, description and argument schema."""
    options = (server.settings.option("tool_options") or {}).get(tool.server_name, {})
    prefix = server.settings.option("prefix")
    if "as" in options:
        tool.name = options["as"]
    elif prefix:
        tool.name = f"{prefix}_{tool.server_name}"
    if "description" in options:
        tool.description = str(options["description"])
    fixed = options.get("fixed_arguments") or {}
    tool.fixed_arguments = dict(fixed)
    tool.wrap = options.get("wrap")
    tool.params_schema = _without(tool.input_schema, fixed) if fixed else tool.input_schema


def _without(schema: dict[str, Any], fixed: dict[str, Any]) -> dict[str, Any]:
    schema = dict(schema)
    if isinstance(schema.get("properties"), dict):
        schema["properties"] = {k: v for k, v in schema["properties"].items() if k not in fixed}
    if isinstance(schema.get("required"), list):
        schema["required"] = [k for k in schema["required"] if k not in fixed]
    return schema


def requires_approval(server: MCP, tool: Tool) -> bool:
    """What the server's ``requires_approval`` setting says for this tool."""
    setting = server.settings.option("requires_approval")
    if setting is None or setting is False:
        return False
    if setting is True:
        return True
    if setting in PREDICATES:
        return getattr(tool, setting, False) is True
    if isinstance(setting, str) or callable(setting):  # a method name or a callable receiving the tool
        return bool(call_with(setting, server, tool))
    return getattr(tool, "server_name", tool.name) in setting


def deferred(server: MCP, tool: Tool) -> bool:
    """Whether the server's ``defer`` setting keeps this tool out of the model's first list."""
    setting = server.settings.option("defer")
    if setting is None or setting is False:
        return False
    return setting is True or getattr(tool, "server_name", tool.name) in _names(setting, "defer", server.name)


def declared_names(server: MCP) -> dict[str, list[str]]:
    """Tool names each shaping setting declares: ``{"only": [...], "tool_options": [...], ...}``."""
    found: dict[str, list[str]] = {}
    for key in ("only", "exclude", "defer", "requires_approval"):
        value = server.settings.option(key)
        if value is None or isinstance(value, bool) or callable(value):
            continue
        if key == "requires_approval" and isinstance(value, str):
            continue  # a tool property or a method, not a name
        found[key] = _names(value, key, server.name)
        if key == "requires_approval":  # "sampling" names the server's sampling requests, not a tool
            found[key] = [name for name in found[key] if name != "sampling"]
    found["tool_options"] = list(server.settings.option("tool_options") or {})
    return found


def model_tools(server: MCP) -> list[Any]:
    """The tools a chat offers from this server: ``only``/``exclude`` applied, tools whose MCP
    App ``visibility`` leaves out ``"model"`` removed, then the ``extra_tools``.

    Raises [`ConfigurationError`][llm_mcp.client.errors.ConfigurationError] naming any tool a setting declares that
    the server does not list.
    """
    tools = server.tools
    extras = [_build_extra(extra, server) for extra in server.settings.option("extra_tools") or ()]
    listed = {t.server_name for t in tools} | {e.name for e in extras}
    missing = {key: [n for n in names if n not in listed and not n.startswith(SKILL_PREFIX)]
               for key, names in declared_names(server).items()}
    missing = {key: names for key, names in missing.items() if names}
    if missing:
        described = "; ".join(f"{key}: {', '.join(names)}" for key, names in missing.items())
        raise ConfigurationError(f"MCP server {server.name!r} does not list tools its class declares ({described})",
                                 server=server.name)
    offered: list[Any] = [t for t in kept_tools(server, tools) if t.visibility is None or "model" in t.visibility]
    for extra in extras:  # the server's requires_approval and defer cover its extra tools too
        extra.requires_approval = bool(getattr(extra, "requires_approval", False)) or requires_approval(server, extra)
        extra.deferred = bool(getattr(extra, "deferred", False)) or deferred(server, extra)
        offered.append(extra)
    return offered


def kept_tools(server: MCP, tools: list[Any]) -> list[Any]:
    """``tools`` (of ``server``) that its ``only`` and ``exclude`` settings keep: what the site uses
    of the server, for the model and for an MCP App alike."""
    only, exclude = server.settings.option("only"), server.settings.option("exclude")
    if only is not None:
        keep = _names(only, "only", server.name)
        tools = [t for t in tools if t.server_name in keep]
    if exclude is not None:
        drop = _names(exclude, "exclude", server.name)
        tools = [t for t in tools if t.server_name not in drop]
    return tools


def _build_extra(extra: Any, server: MCP) -> Any:
    if not isinstance(extra, type):
        return extra
    try:
        positional = [p for p in inspect.signature(extra).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    except (TypeError, ValueError):
        positional = []
    return extra(server) if positional else extra()


# -- calls ------------------------------------------------------------------------------------


PARTLY_RUN = (" The call may have partly run before it broke off: check its effects before "
              "calling it again.")
"""What `failure_text` adds when a failed call may have partly run (pages look for it)."""


def failure_text(tool: Tool, exc: BaseException) -> str:
    """What the model is told when the server failed a call: the server's own words, and a
    warning when a tool with effects may have partly run."""
    text = f"The MCP server {tool.server.name!r} failed to run {tool.server_name}: {str(exc).rstrip('.')}."
    if may_have_run(exc) and not tool.read_only and not (tool.idempotent and not tool.destructive):
        text += PARTLY_RUN
    return text


def _handler(handlers: dict[type, Any], exc: BaseException) -> Any:
    for kind, handler in handlers.items():
        if isinstance(exc, kind):
            return handler
    return None


def invoke(tool: Tool, arguments: dict[str, Any]) -> Any:
    """Run a model's call of an MCP tool: fixed arguments win over the model's, the server's
    answer goes through ``wrap`` (unless it is an error), and a failure goes to
    ``rescue_from`` (the server class's, then ``llm_mcp.Tool``'s).

    Returns the ``Result``, the ``Task`` the server answered with (Tasks extension; not wrapped),
    what ``wrap`` or a handler returned, or ``{"error": text}``
    when the server failed (unreachable, 429/5xx, a JSON-RPC error, a broken stream).
    Raises refusals (401, 403, 404), ``CancelledError``, ``InputRequiredError`` and
    whatever a handler raises.
    """
    server = tool.server
    call = context.for_call()  # one context: the outage check, the request and a recorded outage share it
    if outages.is_down(server, call):  # no contact, no handler: the backoff decides
        return {"error": f"The MCP server {server.name!r} is unavailable right now, so {tool.server_name} was "
                         "not called. Try again later or do without it."}
    sent = dict(arguments)
    for key, value in (getattr(tool, "fixed_arguments", None) or {}).items():
        sent[key] = server.settings.evaluate(f"fixed_arguments[{key!r}]", value)
    try:
        result = server.run(tool, sent, call)
    except (CancelledError, InputRequiredError):
        raise
    except Exception as exc:
        if is_outage(exc, tool_call=True):
            outages.record(server, exc, call)
        handler = _handler(server.settings.option("rescue_from") or {}, exc)
        if handler is not None:
            return call_with(handler, server, exc)
        handler = _handler(type(tool).rescue_from, exc)
        if handler is not None:
            return call_with(handler, tool, exc)
        if isinstance(exc, MCPError) and not is_refusal(exc) and not isinstance(exc, ConfigurationError):
            return {"error": failure_text(tool, exc)}
        raise
    if isinstance(result, Task):  # Tasks extension: the caller checks or waits for it
        return result
    wrap = getattr(tool, "wrap", None)
    if wrap is None or result.is_error:
        return result
    return call_with(wrap, server, result, **sent)


def skill_shaped(server: MCP, name: str) -> bool:
    """Whether ``only``/``exclude`` let a chat offer the skill ``name`` of ``server``: with ``only``,
    when it holds ``"skill:<name>"``; with ``exclude``, unless it does."""
    only, exclude = server.settings.option("only"), server.settings.option("exclude")
    if only is not None:
        return SKILL_PREFIX + name in _names(only, "only", server.name)
    if exclude is not None:
        return SKILL_PREFIX + name not in _names(exclude, "exclude", server.name)
    return True
