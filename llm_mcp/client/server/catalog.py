"""What a server offers, listed once and kept: `Catalog`, a collaborator of ``llm_mcp.MCP``.

Tools (``tools/list``), resources (``resources/list``), resource templates
(``resources/templates/list``) and prompts (``prompts/list``), every page of each, read the
first time they are asked for and kept until ``refresh_*`` lists them again. Entries without a name (or URI), or
listed twice, are skipped with a warning; each tool is shaped (``shaping.shape``) as it is
listed.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, Callable

from ..prompt import Prompt
from ..resource import Resource, ResourceTemplate
from ..shaping import shape
from ..tool import Tool

if TYPE_CHECKING:
    from ..session import Client
    from .base import MCP

__all__ = ["Catalog"]

log = logging.getLogger("llm_mcp.client")

LISTS: dict[str, tuple[str, str, type, str]] = {
    "resources": ("resources/list", "resources", Resource, "uri"),
    "resource_templates": ("resources/templates/list", "resourceTemplates", ResourceTemplate, "uriTemplate"),
    "prompts": ("prompts/list", "prompts", Prompt, "name"),
}
"""The lists kept besides tools: kind -> (method, result key, class built, identifying field)."""


class Catalog:
    """The lists of one server, kept.

    Attributes:
        server: the server the entries belong to (each ``Tool``, ``Resource``, ``Prompt`` keeps it).
        client: returns the server's protocol client.
        listed_tools: the tools listed so far, or ``None`` before the first listing (no contact).
    """

    def __init__(self, server: MCP, client: Callable[[], Client]):
        self.server = server
        self._client = client
        self._lock = threading.RLock()
        self.listed_tools: list[Tool] | None = None
        self._tool_index: dict[str, Tool] | None = None
        self._lists: dict[str, list[Any]] = {}  # resources, resource templates, prompts, once listed
        self._forgotten = 0  # counts forget() calls: a listing that a change overtook is not kept

    # -- tools ----------------------------------------------------------------------------------

    def tools(self) -> list[Tool]:
        """Every tool the server lists (all pages), listed the first time."""
        with self._lock:
            tools = self.listed_tools  # read once: a listener thread may forget it meanwhile
            if tools is None:
                before = self._forgotten
                tools = self._list_tools()
                if before == self._forgotten:  # else the server said they changed while we listed them
                    self.listed_tools = tools
                    self._tool_index = {t.server_name: t for t in tools}
            return list(tools)

    def forget(self, kind: str) -> None:
        """Drop a kept list so the next use lists it again: ``"tools"``, ``"prompts"`` or
        ``"resources"`` (with the resource templates). No contact; safe from any thread."""
        self._forgotten += 1
        if kind == "tools":
            self.listed_tools = self._tool_index = None
        elif kind == "resources":
            self._lists.pop("resource_templates", None)
            self._lists.pop("resources", None)
        else:
            self._lists.pop(kind, None)

    def refresh_tools(self) -> list[Tool]:
        """Forget the tools and list them again."""
        with self._lock:
            self.listed_tools = self._tool_index = None
            return self.tools()

    def tool(self, name: str) -> Tool | None:
        """The tool with this server-side name, or ``None`` (lists the tools the first time)."""
        return (self._tool_index or self._indexed_tools()).get(name)  # one line: read on every call

    def _indexed_tools(self) -> dict[str, Tool]:
        """The tools by server-side name, listed now if they are not kept (``{}`` when the listing
        was overtaken by a change, or the server has none)."""
        self.tools()
        return self._tool_index or {}

    def _list_tools(self) -> list[Tool]:
        name = self.server.name
        tools: list[Tool] = []
        names: set[str] = set()
        for definition in self._client().list("tools/list", "tools"):
            if not isinstance(definition.get("name"), str):
                log.warning("MCP server %s listed a tool without a name; skipped", name)
                continue
            if definition["name"] in names:
                log.warning("MCP server %s listed the tool %r twice; kept the first", name, definition["name"])
                continue
            names.add(definition["name"])
            try:
                tool = Tool(self.server, definition)
            except ValueError as exc:
                log.warning("MCP server %s: dropped tool %r: %s", name, definition["name"], str(exc))
                continue
            shape(self.server, tool)
            tools.append(tool)
        return tools

    # -- resources and prompts --------------------------------------------------------------------

    def resources(self) -> list[Resource]:
        """Every resource the server lists, listed the first time (no content is read)."""
        return self._kept("resources")

    def resource_templates(self) -> list[ResourceTemplate]:
        """Every resource template the server lists, listed the first time."""
        return self._kept("resource_templates")

    def refresh_resources(self) -> list[Resource]:
        """Forget the resources and resource templates, and list the resources again."""
        with self._lock:
            self._lists.pop("resource_templates", None)
            self._lists.pop("resources", None)
            return self.resources()

    def prompts(self) -> list[Prompt]:
        """Every prompt the server lists, listed the first time."""
        return self._kept("prompts")

    def refresh_prompts(self) -> list[Prompt]:
        """Forget the prompts and list them again."""
        with self._lock:
            self._lists.pop("prompts", None)
            return self.prompts()

    def listed_resource(self, uri: str) -> dict[str, Any] | None:
        """The listing entry of a resource, if the resources were listed and it is among them (no contact)."""
        return next((r.raw for r in self._lists.get("resources", ()) if r.uri == uri), None)

    def listed_prompt(self, name: str) -> dict[str, Any] | None:
        """The listing entry of a prompt, if the prompts were listed and it is among them (no contact)."""
        return next((p.raw for p in self._lists.get("prompts", ()) if p.name == name), None)

    def _kept(self, kind: str) -> list[Any]:
        """The list of ``kind`` (see `LISTS`), listed the first time and kept."""
        with self._lock:
            items = self._lists.get(kind)  # read once: a listener thread may forget it meanwhile
            if items is None:
                before = self._forgotten
                items = self._listed(*LISTS[kind])
                if before == self._forgotten:  # else it changed while we listed it: not kept
                    self._lists[kind] = items
            return list(items)

    def _listed(self, method: str, key: str, kind: Any, field: str) -> list[Any]:
        """Every entry of a list, built as ``kind``; entries without ``field`` or seen twice are skipped."""
        name = self.server.name
        items: list[Any] = []
        seen: set[str] = set()
        for entry in self._client().list(method, key):
            identity = entry.get(field)
            if not isinstance(identity, str) or not identity:
                log.warning("MCP server %s listed an entry of %s without a %s; skipped", name, key, field)
                continue
            if identity in seen:
                log.warning("MCP server %s listed %s %r twice; kept the first", name, key, identity)
                continue
            seen.add(identity)
            items.append(kind(self.server, entry))
        return items
