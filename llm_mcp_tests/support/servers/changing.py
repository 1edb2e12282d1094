"""A kit server whose tools, prompts and resources change while it runs, and which says so.

Usage::

    python -m llm_mcp_tests.support.servers.changing [--http PORT] [--era auto|modern|handshake]

Tools:

- ``echo(text)``: answers ``text`` (an ordinary call).
- ``add_tool``: adds the tool ``late`` (answers ``"late"``) and announces the tool list changed.
- ``remove_tool(name)``: removes a tool and announces it.
- ``add_prompt``: adds the prompt ``later`` and announces the prompt list changed.
- ``add_resource``: adds ``memo://added`` and announces the resource list changed.
- ``edit(text)``: sets the content of ``memo://note`` and announces that resource changed.

Resources: ``memo://note`` (its content is what ``edit`` last set, ``"first"`` at start).
Announcements go to ``subscriptions/listen`` streams on 2026-07-28 and to each session's own
stream on older revisions (``resources/subscribe`` for ``memo://note``).
"""

from __future__ import annotations

from typing import Any

from llm_mcp.testing import Prompt, Resource, Server, Tool

__all__ = ["NOTE_URI", "server"]

NOTE_URI = "memo://note"

_note = {"text": "first"}


class Note(Resource):
    uri = NOTE_URI
    name = "note"
    mime_type = "text/plain"

    def read(self) -> str:
        return _note["text"]


class Added(Resource):
    uri = "memo://added"
    name = "added"
    mime_type = "text/plain"

    def read(self) -> str:
        return "added"


class Greeting(Prompt):
    name = "greeting"
    description = "Says hello."

    def messages(self) -> Any:
        return [self.user_message("hello")]


class Later(Prompt):
    name = "later"
    description = "Added while serving."

    def messages(self) -> Any:
        return [self.user_message("later")]


class Echo(Tool):
    name = "echo"
    description = "Answers its text."
    input_schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}

    def call(self) -> Any:
        return self.respond_with(content=self.text_content(text=self.arguments["text"]))


class Late(Tool):
    name = "late"
    description = "Added while serving."

    def call(self) -> Any:
        return self.respond_with(content=self.text_content(text="late"))


class AddTool(Tool):
    name = "add_tool"
    description = "Adds the tool late."

    def call(self) -> Any:
        if "late" not in [t.name for t in self.channel.server.tools]:
            self.channel.server.add(Late)
        return self.respond_with(content=self.text_content(text="added late"))


class RemoveTool(Tool):
    name = "remove_tool"
    description = "Removes a tool."
    input_schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}

    def call(self) -> Any:
        self.channel.server.remove(self.arguments["name"])
        return self.respond_with(content=self.text_content(text=f"removed {self.arguments['name']}"))


class AddPrompt(Tool):
    name = "add_prompt"
    description = "Adds the prompt later."

    def call(self) -> Any:
        self.channel.server.add(Later)
        return self.respond_with(content=self.text_content(text="added later"))


class AddResource(Tool):
    name = "add_resource"
    description = "Adds the resource memo://added."

    def call(self) -> Any:
        self.channel.server.add(Added)
        return self.respond_with(content=self.text_content(text="added memo://added"))


class Edit(Tool):
    name = "edit"
    description = "Sets the note's text."
    input_schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}

    def call(self) -> Any:
        _note["text"] = self.arguments["text"]
        self.channel.server.announce("resource", uri=NOTE_URI)
        return self.respond_with(content=self.text_content(text="edited"))


server = Server("changing", tools=[Echo, AddTool, RemoveTool, AddPrompt, AddResource, Edit], resources=[Note],
                prompts=[Greeting])

if __name__ == "__main__":
    server.serve()
