"""The official SDK's ``MCPServer`` (``mcp`` 2.x), which serves ``subscriptions/listen`` itself.

Usage::

    python -m llm_mcp_tests.support.servers.sdk_listen [--http PORT]

Tools: ``echo(text)``; ``add_tool`` registers the tool ``late`` and publishes a tools
list-changed event; ``edit(text)`` sets ``memo://sdk-note`` and publishes its update. The
SDK's own ``ListenHandler`` acknowledges the filter and carries the events (2026-07-28 only).
"""

from __future__ import annotations

import argparse

from mcp.server.mcpserver import Context, MCPServer

__all__ = ["NOTE_URI", "server"]

NOTE_URI = "memo://sdk-note"

server = MCPServer("sdk-listen")
_note = {"text": "first"}


@server.tool()
def echo(text: str) -> str:
    """Answers its text."""
    return text


@server.tool()
async def add_tool(ctx: Context) -> str:
    """Adds the tool late and says so to listeners."""

    def late() -> str:
        """Added while serving."""
        return "late"

    server.add_tool(late, name="late")
    await ctx.notify_tools_changed()
    return "added late"


@server.tool()
async def edit(text: str, ctx: Context) -> str:
    """Sets the note and says so to listeners of it."""
    _note["text"] = text
    await ctx.notify_resource_updated(NOTE_URI)
    return "edited"


@server.resource(NOTE_URI)
def note() -> str:
    """The note."""
    return _note["text"]


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int)
    options = parser.parse_args()
    if options.http:
        server.run("streamable-http", host="127.0.0.1", port=options.http)
    else:
        server.run("stdio")
