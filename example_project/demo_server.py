"""A small MCP server used by the example project, the docs and the tests.

Run it with ``python -m example_project.demo_server``: it speaks MCP over
stdio. With ``--http PORT`` it serves Streamable HTTP at
``http://127.0.0.1:PORT/mcp`` instead. It is written with ``llm_mcp.testing``
(on the official ``mcp`` package), which serves both protocol eras: a client
that opens with a 2026-07-28 request envelope gets the modern protocol, and a
client that opens with ``initialize`` gets the handshake era (2025-11-25 and
older). ``--era modern`` or ``--era handshake`` serves only one of them.

The tools are deliberately tiny and deterministic where they can be, so that
tests can check exact values:

* ``echo(message)``            returns the message unchanged as text;
* ``add(a, b)``                returns ``{"sum": a + b}`` as structured content;
* ``now()``                    returns the current UTC time in ISO 8601;
* ``roll_dice(sides, count)``  rolls dice and returns the rolls and their total;
* ``dice_board(count)``        rolls dice and shows them in an MCP App (``ui://demo/dice-board.html``),
  whose "Roll again" button calls the app-only ``reroll(count)`` and whose "Ask about it" button
  sends the chat a message (``ui/message``);
* ``learn_shout()``            adds the tool ``shout`` while the server runs, and tells
  listening clients that the tool list changed (``manage.py mcp_listen``, the Procfile's
  ``listener``, shows it; the site's "Live tools" page lists what the listener heard).
"""

from __future__ import annotations

import argparse
import random
from datetime import UTC, datetime
from typing import Any

from llm_mcp.testing import Resource, Server, Tool, ToolError
from llm_mcp.testing.serve import add_serve_arguments

SERVER_NAME = "llm-mcp-demo"
SERVER_VERSION = "1.0.0"

INSTRUCTIONS = (
    "A friendly demo server for llm_mcp. Use `echo` to check the connection, "
    "`add` for arithmetic (the answer is in the structured `sum` field), `now` "
    "for the current UTC time and `roll_dice` when a decision needs a little luck."
)

MAX_DICE = 100

# Every demo tool only reads, stays inside the server and destroys nothing.
_SAFE = {"read_only_hint": True, "destructive_hint": False, "open_world_hint": False}


class Echo(Tool):
    name = "echo"
    title = "Echo"
    description = "Send back the given message, unchanged."
    input_schema = {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}
    annotations = {**_SAFE, "idempotent_hint": True}

    def call(self) -> dict[str, Any]:
        return self.respond_with(content=self.text_content(text=self.answer(self.arguments["message"])))

    @staticmethod
    def answer(message: str) -> str:
        """The text sent back for ``message``."""
        return message


class Add(Tool):
    name = "add"
    title = "Add two numbers"
    description = 'Add two numbers; the result is returned as structured content {"sum": a + b}.'
    input_schema = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "required": ["a", "b"]}
    output_schema = {"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]}
    annotations = {**_SAFE, "idempotent_hint": True}

    def call(self) -> dict[str, Any]:
        return self.respond_with(structured_content={"sum": float(self.arguments["a"]) + float(self.arguments["b"])})


class Now(Tool):
    name = "now"
    title = "Current time"
    description = "Return the current date and time in UTC, in ISO 8601 format."
    annotations = {**_SAFE, "idempotent_hint": False}

    def call(self) -> dict[str, Any]:
        return self.respond_with(content=self.text_content(text=datetime.now(UTC).isoformat()))


class RollDice(Tool):
    name = "roll_dice"
    title = "Roll dice"
    description = "Roll `count` dice with `sides` faces each and return every roll and the total."
    input_schema = {"type": "object", "properties": {"sides": {"type": "integer", "default": 6},
                                                     "count": {"type": "integer", "default": 1}}}
    output_schema = {"type": "object", "required": ["rolls", "total"],
                     "properties": {"rolls": {"type": "array", "items": {"type": "integer"}},
                                    "total": {"type": "integer"}}}
    annotations = {**_SAFE, "idempotent_hint": False}

    def call(self) -> dict[str, Any]:
        sides, count = self.arguments.get("sides", 6), self.arguments.get("count", 1)
        if sides < 2:
            raise ToolError(f"a die needs at least 2 sides, got {sides}")
        if not 1 <= count <= MAX_DICE:
            raise ToolError(f"count must be between 1 and {MAX_DICE}, got {count}")
        rolls = [random.randint(1, sides) for _ in range(count)]
        return self.respond_with(structured_content={"rolls": rolls, "total": sum(rolls)})


class Shout(Echo):
    name = "shout"
    title = "Shout"
    description = "Send back the given message in capitals (learnt at run time with learn_shout)."
    answer = staticmethod(str.upper)


class LearnShout(Tool):
    name = "learn_shout"
    title = "Learn to shout"
    description = "Add the tool `shout` to this server; listening clients hear that the tool list changed."
    annotations = {"read_only_hint": False, "destructive_hint": False, "open_world_hint": False,
                   "idempotent_hint": True}

    def call(self) -> dict[str, Any]:
        if "shout" not in [tool.name for tool in self.channel.server.tools]:
            self.channel.server.add(Shout)
        return self.respond_with(content=self.text_content(text="The server can shout now."))


BOARD_URI = "ui://demo/dice-board.html"
BOARD_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Dice board</title>
<style>body{font-family:system-ui,sans-serif;margin:10px}.dice{font-size:2.4em;letter-spacing:.15em}
button{margin-right:.5em}</style></head>
<body><div class="dice" id="dice">…</div><p>Total: <b id="total">?</b></p>
<button id="again" type="button">Roll again</button><button id="ask" type="button">Ask about it</button>
<script>
// An MCP App (the View side), by hand: JSON-RPC 2.0 over postMessage with the host.
var next = 1, waiting = {}, count = 2, FACES = "\u2680\u2681\u2682\u2683\u2684\u2685";
function send(m) { window.parent.postMessage(m, "*"); }
function ask(method, params) { var id = next++; send({jsonrpc: "2.0", id: id, method: method, params: params});
  return new Promise(function (ok, no) { waiting[id] = [ok, no]; }); }
function show(result) { var s = result && result.structuredContent; if (!s) return;
  document.getElementById("dice").textContent = s.rolls.map(function (r) { return FACES[r - 1] || r; }).join(" ");
  var total = document.getElementById("total"); total.textContent = s.total;
  total.setAttribute("data-rolls", String(window.rolls || 0)); }
window.addEventListener("message", function (e) {
  if (e.source !== window.parent || !e.data || e.data.jsonrpc !== "2.0") return;
  var m = e.data;
  if (!m.method && waiting[m.id]) { var w = waiting[m.id]; delete waiting[m.id]; m.error ? w[1](m.error) : w[0](m.result); }
  else if (m.method === "ui/notifications/tool-input") count = (m.params.arguments || {}).count || count;
  else if (m.method === "ui/notifications/tool-result") show(m.params);
  else if (m.method === "ui/resource-teardown") send({jsonrpc: "2.0", id: m.id, result: {}});
});
document.getElementById("again").onclick = function () { ask("tools/call", {name: "reroll", arguments: {count: count}}).then(show); };
document.getElementById("ask").onclick = function () { ask("ui/message", {role: "user", content: [{type: "text",
  text: "I rolled " + document.getElementById("total").textContent + ". Is that a good roll?"}]}); };
ask("ui/initialize", {appInfo: {name: "dice-board", version: "1"}, appCapabilities: {}, protocolVersion: "2026-01-26"})
  .then(function () { send({jsonrpc: "2.0", method: "ui/notifications/initialized", params: {}});
    send({jsonrpc: "2.0", method: "ui/notifications/size-changed", params: {height: document.body.scrollHeight + 20}}); });
</script></body></html>
"""


def _six_sided(count: int) -> dict[str, Any]:
    if not 1 <= count <= 12:
        raise ToolError(f"count must be between 1 and 12, got {count}")
    rolls = [random.randint(1, 6) for _ in range(count)]
    return {"rolls": rolls, "total": sum(rolls)}


class DiceBoard(Tool):
    name = "dice_board"
    title = "Dice board"
    description = "Roll `count` six-sided dice and show them on a board the user can roll again."
    input_schema = {"type": "object", "properties": {"count": {"type": "integer", "default": 2}}}
    annotations = {**_SAFE, "idempotent_hint": False}
    resource_uri = BOARD_URI

    def call(self) -> dict[str, Any]:
        return self.respond_with(structured_content=_six_sided(self.arguments.get("count", 2)))


class Reroll(DiceBoard):
    name = "reroll"
    title = "Roll the board again"
    description = "Roll the dice board again (only its App calls it)."
    visibility = ["app"]


class Board(Resource):
    uri = BOARD_URI
    name = "dice_board"
    mime_type = "text/html;profile=mcp-app"
    meta = {"ui": {"prefersBorder": True}}  # no csp: the strictest policy (no network at all)

    def read(self) -> str:
        return BOARD_HTML


server = Server(SERVER_NAME, title="llm_mcp demo server", version=SERVER_VERSION, instructions=INSTRUCTIONS,
                tools=[Echo, Add, Now, RollDice, DiceBoard, Reroll, LearnShout], resources=[Board])


def main(argv: list[str] | None = None) -> None:
    parser = add_serve_arguments(
        argparse.ArgumentParser(description="The llm_mcp demo MCP server (stdio unless --http is given)."))
    parser.add_argument("--host", default="127.0.0.1", help="Interface for --http (default: 127.0.0.1).")
    options = parser.parse_args(argv)
    if options.http is None:
        server.serve_stdio(options.era)
    else:
        server.serve_http(options.http, options.era, json_response=options.json_response, host=options.host)


if __name__ == "__main__":
    main()
