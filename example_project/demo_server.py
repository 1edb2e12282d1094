"""A small MCP server used by the example project, the docs and the tests.

Run it with ``python -m example_project.demo_server``: it speaks MCP over
stdio. With ``--http PORT`` it serves Streamable HTTP at
``http://127.0.0.1:PORT/mcp`` instead. It is written with the official ``mcp`` package, whose server accepts
both protocol eras on the same connection type: a client that opens with a
2026-07-28 request envelope gets the modern protocol, and a client that opens
with ``initialize`` gets the handshake era (2025-11-25 and older).

The tools are deliberately tiny and deterministic where they can be, so that
tests can check exact values:

* ``echo(message)``            returns the message unchanged as text;
* ``add(a, b)``                returns ``{"sum": a + b}`` as structured content;
* ``now()``                    returns the current UTC time in ISO 8601;
* ``roll_dice(sides, count)``  rolls dice and returns the rolls and their total.
"""

from __future__ import annotations

import argparse
import random
from datetime import datetime, timezone
from typing import TypedDict

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

SERVER_NAME = "llm-mcp-demo"
SERVER_VERSION = "1.0.0"

INSTRUCTIONS = (
    "A friendly demo server for llm_mcp. Use `echo` to check the connection, "
    "`add` for arithmetic (the answer is in the structured `sum` field), `now` "
    "for the current UTC time and `roll_dice` when a decision needs a little luck."
)

MAX_DICE = 100

server = MCPServer(
    SERVER_NAME,
    title="llm_mcp demo server",
    version=SERVER_VERSION,
    instructions=INSTRUCTIONS,
    log_level="WARNING",
)


class Sum(TypedDict):
    sum: float


class DiceRoll(TypedDict):
    rolls: list[int]
    total: int


@server.tool(
    title="Echo",
    structured_output=False,
    annotations=ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    ),
)
def echo(message: str) -> str:
    """Send back the given message, unchanged."""
    return message


@server.tool(
    title="Add two numbers",
    annotations=ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    ),
)
def add(a: float, b: float) -> Sum:
    """Add two numbers; the result is returned as structured content {"sum": a + b}."""
    return {"sum": a + b}


@server.tool(
    title="Current time",
    structured_output=False,
    annotations=ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=False, open_world_hint=False
    ),
)
def now() -> str:
    """Return the current date and time in UTC, in ISO 8601 format."""
    return datetime.now(timezone.utc).isoformat()


@server.tool(
    title="Roll dice",
    annotations=ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=False, open_world_hint=False
    ),
)
def roll_dice(sides: int = 6, count: int = 1) -> DiceRoll:
    """Roll `count` dice with `sides` faces each and return every roll and the total."""
    if sides < 2:
        raise ToolError(f"a die needs at least 2 sides, got {sides}")
    if not 1 <= count <= MAX_DICE:
        raise ToolError(f"count must be between 1 and {MAX_DICE}, got {count}")
    rolls = [random.randint(1, sides) for _ in range(count)]
    return {"rolls": rolls, "total": sum(rolls)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The llm_mcp demo MCP server (stdio unless --http is given).")
    parser.add_argument(
        "--http",
        type=int,
        metavar="PORT",
        help="Serve Streamable HTTP on http://HOST:PORT/mcp instead of stdio.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="Interface for --http (default: 127.0.0.1).")
    options = parser.parse_args(argv)
    if options.http is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host=options.host, port=options.http)


if __name__ == "__main__":
    main()
