"""What a server says changed: `Changes`, a collaborator of ``llm_mcp.MCP``.

A ``notifications/tools/list_changed`` (``prompts``, ``resources``) drops that list from the
server object's `Catalog`, so the next turn of a chat lists it again;
a ``notifications/resources/updated`` names a resource whose content changed. Either way the
``after_change`` setting runs with what changed: ``"tools"``, ``"prompts"``, ``"resources"``,
or a fresh [`Resource`][llm_mcp.Resource] (its content read on first access). MCP 2026-07-28,
"Tools" / "Prompts" / "Resources" > "List Changed Notification" and "Subscriptions".

Handshake-era servers may send these notifications on any response stream, and they are
acted on here with no setup; 2026-07-28 servers send them only on a ``subscriptions/listen``
stream (see `Listener`).
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any, Callable

from .. import protocol, state
from ..declared import names_method
from ..logs import printable
from ..resource import Resource
from ..task import Task
from .listener import on_listener_thread

if TYPE_CHECKING:
    from .catalog import Catalog
    from .settings import ServerSettings

__all__ = ["Changes", "describe", "unknown_tool"]

log = logging.getLogger("llm_mcp.listen")



MAX_SHOWN = 300
"""Characters of a URI a log line shows."""


def unknown_tool(message: str, name: str) -> bool:
    """Whether an error message says the tool ``name`` does not exist, the ways servers put it:
    ``Unknown tool: x``, ``Tool x not found``, ``tool 'x' does not exist``, ``No such tool``."""
    text = message.lower()
    if name.lower() not in text:
        return False
    return bool(_UNKNOWN_TOOL.search(text))


_UNKNOWN_TOOL = re.compile(r"unknown tool|no such tool|tool not found|tool\b[^.;\n]{0,80}\b(?:not found|does not exist"
                           r"|doesn't exist|is not available)")


class Changes:
    """Turns change notifications into dropped caches and ``after_change`` calls.

    Each callback (``after_change``, then each of ``state.change_listeners``) runs, on a
    listener's thread, inside the process's ``state.change_guards`` (the Django app's: stale
    database connections closed before and after). A change a handshake-era server announces
    while it answers a request runs them unguarded, in the requesting thread, which may be in
    the middle of a transaction.

    Attributes:
        settings: the server's settings (``after_change``).
        catalog: the lists to drop.
    """

    def __init__(self, settings: ServerSettings, catalog: Catalog):
        self.settings = settings
        self.catalog = catalog

    def notified(self, message: dict[str, Any]) -> None:
        """Act on one notification from the server (anything but a change is ignored)."""
        method = message.get("method")
        if method in protocol.LIST_CHANGED:
            self.changed(protocol.LIST_CHANGED[method])
        elif method == protocol.RESOURCE_UPDATED:
            uri = protocol.as_object(message.get("params")).get("uri")
            if isinstance(uri, str) and uri:
                self.changed(self.resource(uri))

    def resource(self, uri: str) -> Resource:
        """A `Resource` for ``uri`` whose content is read on first access (the listing's entry
        when the resources were listed)."""
        return Resource(self.settings.owner, self.catalog.listed_resource(uri) or {"uri": uri})

    def changed(self, change: Any) -> None:
        """Drop the list a change names, log it (INFO, logger ``llm_mcp.listen``), then run
        ``after_change`` and the process's change listeners with it; an exception they raise
        is logged, never raised."""
        if isinstance(change, str):
            self.catalog.forget(change)
        log.info("MCP server %s changed: %s", self.settings.owner.name, describe(change))
        owner = self.settings.owner
        after = self.settings.option("after_change")
        receivers: list[Callable[[], None]] = []
        if after is not None:
            receivers.append(lambda: self._run_after_change(after, change))
        receivers += [lambda listener=listener: listener(owner, change) for listener in state.change_listeners]
        guards = list(state.change_guards) if on_listener_thread() else []  # not inside a caller's request
        for receiver in receivers:
            try:
                _guarded(receiver, guards)
            except Exception:  # a failing callback must not stop listening
                log.exception("MCP server %s: a callback for the change %s failed", owner.name, describe(change))

    def _run_after_change(self, after: Any, change: Any) -> None:
        owner = self.settings.owner
        if isinstance(after, str) and names_method(type(owner), after, self.settings.base):
            getattr(owner, after)(change)
        elif isinstance(after, (staticmethod, classmethod)):
            after.__get__(None, type(owner))(owner, change)
        else:
            after(owner, change)


def _guarded(fn: Callable[[], None], guards: list[Callable[[Callable[[], None]], None]]) -> None:
    """Run ``fn`` inside each guard, the first outermost."""
    if not guards:
        fn()
        return
    guards[0](lambda: _guarded(fn, guards[1:]))


def describe(change: Any) -> str:
    """What a change names in a log line: the list (``tools``), the resource's URI, the task's id."""
    if isinstance(change, Task):
        text = f"task {change.id} ({change.status})"
    else:
        text = change.uri if isinstance(change, Resource) else str(change)
    return printable(text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "...")  # a server's text: one line
