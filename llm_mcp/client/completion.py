"""Argument suggestions from a server: ``completion/complete``, shared by prompts and resource templates.

    review = server.prompts[0]
    review.suggest(language="ru")                      # ["ruby", "rust"]
    template.suggest(path="src/", project="demo")      # "project" is sent as context

MCP 2026-07-28, "Server Features / Utilities / Completion": the request names what is
completed (``ref/prompt`` by name, ``ref/resource`` by URI template), the argument and its
partial value, and may give the values already chosen as ``context.arguments``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import MCPError
from .protocol import as_text

if TYPE_CHECKING:
    from .server import MCP

__all__ = ["MAX_SUGGESTIONS", "Completable"]

MAX_SUGGESTIONS = 100
"""Values one ``completion/complete`` answer may hold (MCP "Completion": at most 100); more are cut."""


class Completable:
    """What a prompt or a resource template needs to ask its server for suggestions.

        prompt.suggest(language="py")                       # ["python"]
        prompt.suggest(framework="fla", language="python")  # language goes as context

    Subclasses set ``server``, `completion_ref` (the ``ref`` object) and `completion_names`
    (the argument names the server declared, to catch typos) when they are built.
    """

    server: MCP

    completion_ref: dict[str, Any]
    """The ``ref`` of a ``completion/complete`` request for this object."""

    completion_names: list[str]
    """The names ``suggest`` accepts (argument or variable names); empty: any name."""

    def _take_listing(self, server: MCP, entry: dict[str, Any], key: str, what: str) -> str:
        """Keep ``server`` and what every listed completable has (``raw``, ``title``,
        ``description``); return ``entry[key]``, the string that names it (``ValueError``
        without one)."""
        value = entry.get(key)
        if not isinstance(value, str) or not value:
            raise ValueError(f"a {what} needs a {key} string")
        self.server = server
        self.raw = entry
        self.title = as_text(entry.get("title"))
        self.description = as_text(entry.get("description"))
        return value

    def suggest(self, /, **values: str) -> list[str]:
        """Ask the server to complete an argument; returns its suggestions (strings, at most
        `MAX_SUGGESTIONS`), best first.

        The first keyword names the argument being completed and gives the text typed so
        far; further keywords are sent as ``context.arguments`` (values chosen already).

        Raises ``ValueError`` without keywords or for a name the server did not declare,
        ``TypeError`` for a value that is not a string, and [`MCPError`][llm_mcp.client.errors.MCPError] when
        the server refuses (say ``-32601`` from a server without completions).
        """
        if not values:
            raise ValueError("suggest() takes the argument to complete as a keyword: suggest(language='py')")
        names = self.completion_names
        for name, value in values.items():
            if names and name not in names:
                raise ValueError(f"{self!r} has no argument {name!r} (it has {', '.join(names)})")
            if not isinstance(value, str):
                raise TypeError(f"suggest(): the value of {name!r} must be a string, not {type(value).__name__}")
        (argument, partial), *context = values.items()
        params: dict[str, Any] = {"ref": self.completion_ref, "argument": {"name": argument, "value": partial}}
        if context:
            params["context"] = {"arguments": dict(context)}
        result = self.server.client.request("completion/complete", params)
        completion = result.get("completion")
        if not isinstance(completion, dict) or not isinstance(completion.get("values"), list):
            raise MCPError(f"MCP server {self.server.name!r} answered completion/complete without completion values",
                           server=self.server.name)
        return [value for value in completion["values"] if isinstance(value, str)][:MAX_SUGGESTIONS]
