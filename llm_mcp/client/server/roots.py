"""Roots (`Roots`, a collaborator of ``llm_mcp.MCP``): the directories a server may work in.

    class Files(llm_mcp.MCP):
        command = ["npx", "-y", "@modelcontextprotocol/server-filesystem"]
        roots = ["file:///srv/projects/alpha", {"uri": "file:///srv/shared", "name": "Shared"}]
        # or roots = "project_roots" (a method), or a callable: evaluated each time the server asks

With a ``roots`` setting the client declares the ``roots`` capability (``listChanged``) and
answers the server's ``roots/list``: a handshake-era server's request on the open session, a
2026-07-28 server's ``roots/list`` input request. `MCP.roots_changed` sends
``notifications/roots/list_changed`` (handshake era; a 2026-07-28 server asks again on its next
request). The ``directory`` a stdio process runs in is never a root by itself.
Spec: MCP 2025-11-25 "Client Features / Roots".
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import urlsplit

from ..errors import MCPError
from ..protocol import INTERNAL_ERROR

if TYPE_CHECKING:
    from ..session import Client
    from .settings import ServerSettings

__all__ = ["Roots", "check_roots", "normalize_roots"]

log = logging.getLogger("llm_mcp.client")

MAX_ROOTS = 1000
"""Roots one answer may hold; more is a mistake, refused with ``ValueError``."""


def normalize_roots(value: Any, where: str = "roots") -> list[dict[str, str]]:
    """``[{"uri": "file://...", "name": ...}]`` from a list of ``file://`` URI strings or
    ``{"uri", "name"}`` dicts (``None``: no roots). Raises ``ValueError`` naming the problem for
    anything else: a URI that is not ``file://`` with an absolute path, a dict without ``uri``,
    a URI with a host other than ``localhost`` (usually a relative path glued to ``file://``),
    a name that is not a string, more than `MAX_ROOTS`."""
    if value is None:
        return []
    if isinstance(value, (str, dict)) or not isinstance(value, (list, tuple)):
        raise ValueError(f"{where} must be a list of file:// URIs or {{'uri', 'name'}} dicts, not "
                         f"{type(value).__name__}")
    if len(value) > MAX_ROOTS:
        raise ValueError(f"{where}: {len(value)} roots, at most {MAX_ROOTS}")
    roots = []
    for item in value:
        entry = {"uri": item} if isinstance(item, str) else item
        if not isinstance(entry, dict) or not isinstance(entry.get("uri"), str):
            raise ValueError(f"{where}: each root is a file:// URI string or a dict with a 'uri', not {item!r:.80}")
        parts = urlsplit(entry["uri"])
        if parts.scheme != "file" or not parts.path.startswith("/") or parts.query or parts.fragment:
            raise ValueError(f"{where}: a root must be a file:// URI of an absolute path, not {entry['uri']!r:.200}")
        if parts.netloc not in ("", "localhost"):  # "file://" + "srv/x": host "srv", not the directory meant
            raise ValueError(f"{where}: a root names no host (file:///abs/path), but {entry['uri']!r:.200} has the "
                             f"host {parts.netloc!r:.80}; build it with Path('/abs/path').as_uri()")
        root = {"uri": entry["uri"]}
        if entry.get("name") is not None:
            if not isinstance(entry["name"], str):
                raise ValueError(f"{where}: a root's name must be a string, not {entry['name']!r:.80}")
            root["name"] = entry["name"]
        roots.append(root)
    return roots


def check_roots(settings: ServerSettings, value: Any, where: str) -> None:
    """The settings table's check: a literal list is checked when the server is built."""
    if value is None or callable(value) or (isinstance(value, str) and settings.names_method(value)):
        return
    normalize_roots(value, f"{where}: roots")


class Roots:
    """The roots of one server (see the module docstring).

    Attributes:
        settings: the server's settings (``roots``).
    """

    def __init__(self, settings: ServerSettings, name: Callable[[], str]):
        self.settings = settings
        self._name = name

    @property
    def declared(self) -> bool:
        """Whether the server is told about roots (the ``roots`` setting is given)."""
        return self.settings.option("roots") is not None

    def capabilities(self) -> dict[str, Any]:
        """``{"roots": {"listChanged": True}}`` with a ``roots`` setting, else ``{}``."""
        return {"roots": {"listChanged": True}} if self.declared else {}

    def listing(self, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The answer to ``roots/list``: ``{"roots": [...]}``, the setting evaluated now.
        Raises ``ValueError`` for a value that is not a list of roots (the server gets an error;
        logged at WARNING, as a setting that raises is: the mistake is the developer's)."""
        try:
            roots = normalize_roots(self.settings.value("roots"), f"{self.settings.where}: roots")
        except ValueError as exc:
            log.warning("MCP server %s: answering roots/list failed: %s", self._name(), exc)
            raise
        log.debug("MCP server %s listed the roots: %d", self._name(), len(roots))
        return {"roots": roots}

    def input_response(self, params: dict[str, Any]) -> dict[str, Any]:
        """Answer a 2026-07-28 ``roots/list`` input request (see `listing`). A setting that gives
        no list of roots raises `MCPError` (code ``-32603``) naming it: ``inputResponses`` has no
        error answer, so the call stops and says why."""
        try:
            return self.listing(params)
        except ValueError as exc:
            name = self._name()
            raise MCPError(f"{name}: the client could not answer its roots/list input request ({exc}); the call "
                           "was stopped", code=INTERNAL_ERROR, server=name) from None

    def wire(self, client: Client) -> None:
        """Let ``client`` answer a handshake-era server's ``roots/list`` (over Streamable HTTP it
        may come on the GET stream, held open during calls)."""
        if self.declared:
            client.request_handlers["roots/list"] = self.listing
            client.channel.listen_during_calls = True

    def changed(self, client: Client) -> bool:
        """Send ``notifications/roots/list_changed`` on a handshake-era session (``True`` when sent)."""
        if not self.declared or client.era in (None, "modern"):
            return False
        client.notify("notifications/roots/list_changed")
        return True
