"""Kit definitions several kit tests serve: ``Triple`` (a tool with every attribute set),
``Greet`` (a prompt with an argument and completions) and ``Notes`` (a resource template)."""

from __future__ import annotations

from typing import Any

from llm_mcp.testing import Prompt, ResourceTemplate, Tool


OBJECT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


class Triple(Tool):
    name = "triple"
    title = "Tripler"
    description = "Multiplies by three."
    input_schema = OBJECT
    output_schema = {"type": "object", "properties": {"value": {"type": "integer"}}, "required": ["value"]}
    annotations = {"read_only_hint": True, "destructive_hint": False, "idempotent_hint": True,
                   "open_world_hint": False}
    security_schemes = [{"type": "noauth"}, {"type": "oauth2", "scopes": ["math.read"]}]
    meta = {"com.example/x": 1}

    def call(self) -> dict[str, Any]:
        self.client_logger.info(f"tripling {self.arguments['n']} for {self.context.get('user_id')}")
        return self.respond_with(structured_content={"value": 3 * self.arguments["n"]})


class Greet(Prompt):
    name = "greet"
    description = "Says hello."
    arguments = [{"name": "who", "required": True}, {"name": "style"}]
    completions = {"style": ["formal", "Friendly", "funny"],
                   "who": lambda value, arguments: [f"{value}-{arguments.get('style', 'any')}"]}

    def messages(self) -> list[dict[str, Any]]:
        return [self.user_message(f"Hello {self.arguments['who']}")]


class Notes(ResourceTemplate):
    uri_template = "notes://{owner}/{+path}"
    name = "notes"
    completions = {"owner": ["ann", "bob", "anna"]}

    def read(self) -> bytes:
        return f"{self.params['owner']}:{self.params['path']}".encode()
