"""A kit server whose one tool asks a form question with a schema picked by name, for reviewing questions.

Usage::

    python -m llm_mcp_tests.support.servers.asking_kit [--http PORT] [--era modern|handshake|auto]

Tools:

* ``asks(schema)``: asks ``SCHEMAS[schema]`` under the key ``q`` (message ``Question <schema>``) and
  answers with the client's reply as JSON (keys sorted).
* ``visit(url)``: asks the user to visit ``url`` (key ``q``), and answers the reply the same way.
* ``many(count)``: asks ``count`` one-field questions in one round (keys ``q0``, ``q1``, ...); answers
  how many it got answered.
"""

from __future__ import annotations

import json
from typing import Any

from llm_mcp.testing import Server, Tool


def _form(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


SCHEMAS = {
    "nested": _form(address=_form(street={"type": "string"})),
    "array_free": _form(tags={"type": "array", "items": {"type": "string"}}),
    "formats": _form(mail={"type": "string", "format": "email"}, day={"type": "string", "format": "date"},
                     at={"type": "string", "format": "date-time"}, page={"type": "string", "format": "uri"}),
    "number": _form(ratio={"type": "number", "minimum": 0, "maximum": 10}),
    "secret": _form(note={"type": "string"}),
}


class Asks(Tool):
    """``asks(schema)``: asks one form question with ``SCHEMAS[schema]``; answers with the reply, as JSON."""

    name = "asks"
    input_schema = {"type": "object", "properties": {"schema": {"type": "string"}}}

    def call(self) -> Any:
        answer = self.ask("q", f"Question {self.arguments['schema']}", schema=SCHEMAS[self.arguments["schema"]])
        return json.dumps(answer, sort_keys=True)


class Visit(Tool):
    name = "visit"
    input_schema = {"type": "object", "properties": {"url": {"type": "string"}}}

    def call(self) -> Any:
        return json.dumps(self.ask("q", "Please visit", url=self.arguments["url"]), sort_keys=True)


class Many(Tool):
    name = "many"
    input_schema = {"type": "object", "properties": {"count": {"type": "integer"}}}

    def call(self) -> Any:
        from llm_mcp.testing.asking import input_request

        replies = self.ask_all({f"q{i}": input_request(f"Question {i}", schema=SCHEMAS["secret"])
                                for i in range(self.arguments["count"])})
        return f"{len(replies)} answered"


server = Server("asking", tools=[Asks, Visit, Many])

if __name__ == "__main__":
    server.serve()
