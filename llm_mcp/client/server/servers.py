"""Servers by name: [`Servers`][llm_mcp.Servers], as a chat or a page holds them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import MCP

__all__ = ["Servers"]


class Servers:
    """Servers by name, as a chat or a page holds them: ``servers.linear``, ``servers["files"]``.

        servers = Servers([Linear(user=u), llm_mcp.mcp(command=["npx", "server"], name="files")])
        servers["files"].tools

    Raises ``ValueError`` naming both servers when two share a name.
    """

    def __init__(self, servers: list[MCP] | tuple[MCP, ...] = ()):
        self._by_name: dict[str, MCP] = {}
        for server in servers:
            self.add(server)

    def add(self, server: MCP) -> None:
        other = self._by_name.get(server.name)
        if other is not None and other is not server:
            raise ValueError(f"two MCP servers are named {server.name!r}: {other!r} and {server!r}; "
                             "give one of them its own name=")
        self._by_name[server.name] = server

    def discard(self, name: str) -> None:
        """Remove the server of this name, if there is one."""
        self._by_name.pop(name, None)

    def __getitem__(self, name: str) -> MCP:
        return self._by_name[name]

    def __getattr__(self, name: str) -> MCP:
        try:
            return self.__dict__["_by_name"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __iter__(self) -> Iterator[MCP]:
        return iter(self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name
