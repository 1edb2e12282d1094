"""MCP extensions a client declares: the ``extensions`` server setting, read into
``{name: settings}``.

    class Weather(llm_mcp.MCP):
        url = "https://weather.example/mcp"
        extensions = "apps"                                   # one name
        # extensions = ["apps", "com.example/audit"]          # names, each with its default settings
        # extensions = {"com.example/audit": {"level": "full"}}  # names to settings, sent unchanged

Short names stand for the official extensions this client implements: ``"apps"`` is
``io.modelcontextprotocol/ui`` with ``{"mimeTypes": ["text/html;profile=mcp-app"]}`` (MCP Apps,
``modelcontextprotocol/ext-apps``, specification 2026-01-26, "Client<>Server Capability
Negotiation"); ``"skills"`` is ``io.modelcontextprotocol/skills`` with ``{}`` (Skills,
``modelcontextprotocol/ext-skills``; see `llm_mcp.client.skill`); ``"tasks"`` is
``io.modelcontextprotocol/tasks`` with ``{}`` (Tasks, ``modelcontextprotocol/ext-tasks``, SEP-2663: a
server may then answer a ``tools/call`` with a task, see ``llm_mcp.Task``). Any other name is declared
as given, with ``{}`` settings when listed by name.
The extensions are sent under the client capabilities: in the ``_meta`` of every 2026-07-28
request, in ``initialize`` for older servers (see ``MCP.declared_capabilities``).
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["APPS_EXTENSION", "APP_MIME_TYPE", "SHORT_NAMES", "SKILLS_EXTENSION", "TASKS_EXTENSION",
           "declared_extensions"]

APPS_EXTENSION = "io.modelcontextprotocol/ui"
"""The MCP Apps extension's identifier."""

APP_MIME_TYPE = "text/html;profile=mcp-app"
"""The MIME type of an MCP App's HTML resource."""

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
"""The Skills extension's identifier (SEP-2640, ``modelcontextprotocol/ext-skills``)."""

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The Tasks extension's identifier (it defines no settings)."""

SHORT_NAMES: dict[str, tuple[str, dict[str, Any]]] = {
    "apps": (APPS_EXTENSION, {"mimeTypes": [APP_MIME_TYPE]}),
    "skills": (SKILLS_EXTENSION, {}),
    "tasks": (TASKS_EXTENSION, {}),
}
"""Short name -> (extension identifier, default settings)."""

def _by_name(name: Any, where: str) -> tuple[str, dict[str, Any]]:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{where}: an extension name must be a non-empty string, not {name!r}")
    identifier, settings = SHORT_NAMES.get(name, (name, {}))
    return identifier, copy.deepcopy(settings)


def declared_extensions(value: Any, where: str = "extensions") -> dict[str, dict[str, Any]]:
    """The extensions a setting declares, as ``{identifier: settings}`` (a fresh dict).

    ``value``: ``None``/empty (none), one name, a list/tuple of names (each with its default
    settings), or a dict of name to settings (a dict, passed through unchanged; a short name as a
    key is expanded, and its given settings win).

    Raises ``ValueError`` naming ``where`` for anything else (a name that is not a string, settings
    that are not a dict).
    """
    if not value:
        return {}
    if isinstance(value, str):
        value = [value]
    declared: dict[str, dict[str, Any]] = {}
    if isinstance(value, dict):
        for name, settings in value.items():
            if not isinstance(settings, dict):
                raise ValueError(f"{where}: the settings of extension {name!r} must be a dict, "
                                 f"not {type(settings).__name__}")
            identifier, _ = _by_name(name, where)
            declared[identifier] = copy.deepcopy(settings)
        return declared
    if isinstance(value, (list, tuple)):
        for name in value:
            identifier, settings = _by_name(name, where)
            declared[identifier] = settings
        return declared
    raise ValueError(f"{where}: extensions must be a name, a list of names or a dict of names to settings, "
                     f"not {type(value).__name__}")
