"""A kit server whose tools ask the user questions (elicitation), for the MCP-QUEST tests.

Usage::

    python -m llm_mcp_tests.support.servers.questions [--http PORT] [--era modern|handshake|auto]
        [--context record=/path/to/file.jsonl]

With ``--context record=PATH`` every ``tools/call`` the server receives is appended to PATH
as one JSON line: ``{"tool", "id", "version", "state", "responses", "capabilities"}`` (in the
handshake era, ``call()`` runs again inside the same request after each answer: one line each).

Tools:

* ``deploy(branch)``: one form field ``environment`` (choices staging/production), with a
  ``requestState`` (:data:`DEPLOY_STATE`) made of characters a client could mangle.
* ``profile()``: several fields with defaults (``name``, ``age``, ``verified``, ``color``)
  and one required without a default (``reason``); answers with the content it got, as JSON.
* ``connect(url, force)``: a URL question (``force``: ask even when the client did not
  declare URL questions).
* ``two_steps()``: asks ``env``, then, once answered, ``confirm``; then finishes.
* ``both()``: a form and a URL question in one round.
* ``pushy()``: asks again whatever the answer.
* ``capabilities()``: answers the client capabilities it received, as JSON.
* ``complete_for_me(prompt, max_tokens)``: asks the client's model for a completion
  (``sampling/createMessage``: an input request on 2026-07-28, a request on the stream before),
  with the system prompt :data:`SAMPLING_SYSTEM`; answers the ``CreateMessageResult`` it got, as JSON.

A resource ``config://deploy`` and a prompt ``release_notes`` ask ``env`` the same way
(``resources/read`` and ``prompts/get`` may answer with an ``InputRequiredResult`` too).
"""

from __future__ import annotations

import json
from typing import Any

from llm_mcp.testing import Prompt, Resource, Server, Tool

DEPLOY_STATE = 'v1:é∑"q"\\ \t🚀 {"nested": [1, 2]}'
"""The ``requestState`` ``deploy`` sends: a client must send it back byte for byte."""

ENVIRONMENT = {"type": "object", "properties": {"environment": {
    "type": "string", "title": "Environment", "description": "Where to deploy",
    "enum": ["staging", "production"]}}, "required": ["environment"]}

PROFILE = {"type": "object", "properties": {
    "name": {"type": "string", "title": "Name", "default": "Ada"},
    "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 36},
    "verified": {"type": "boolean", "default": False},
    "color": {"type": "string", "oneOf": [{"const": "red", "title": "Red"}, {"const": "green", "title": "Green"}],
              "default": "green"},
    "reason": {"type": "string", "description": "Why"},
}, "required": ["reason"]}

SAMPLING_SYSTEM = "You answer a test server in one word."
"""The system prompt ``complete_for_me`` sends with its sampling request."""

CONFIRM = {"type": "object", "properties": {"confirmed": {"type": "boolean"}}, "required": ["confirmed"]}


class Recording(Tool):
    """A tool that writes what each request brought to the ``record`` file (when given)."""

    input_schema = {"type": "object", "properties": {}}

    def record(self) -> None:
        path = self.context.get("record")
        if not path:
            return
        line = {"tool": self.name, "id": self.request_id, "version": self.channel.protocol_version,
                "state": self.request_state, "responses": self.input_responses,
                "capabilities": self.client_capabilities}
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")


class Deploy(Recording):
    name = "deploy"
    description = "Deploy a branch; asks which environment."
    input_schema = {"type": "object", "properties": {"branch": {"type": "string"}}}

    def call(self) -> Any:
        self.record()
        reply = self.ask("env", "Which environment?", schema=ENVIRONMENT, state=DEPLOY_STATE)
        if reply.get("action") != "accept":
            return f"deploy {reply.get('action')}d"
        return f"deployed {self.arguments.get('branch', 'main')} to {reply['content']['environment']}"


class Profile(Recording):
    name = "profile"

    def call(self) -> Any:
        self.record()
        reply = self.ask("profile", "Tell us about you", schema=PROFILE)
        return json.dumps(reply, sort_keys=True)


class Connect(Recording):
    name = "connect"
    input_schema = {"type": "object", "properties": {"url": {"type": "string"}, "force": {"type": "boolean"}}}

    def call(self) -> Any:
        self.record()
        url = self.arguments.get("url", "https://accounts.example.com/connect?user=7")
        reply = self.ask("login", "Connect your account", url=url, state="connect-1",
                         check_capabilities=not self.arguments.get("force", False))
        return "connected" if reply.get("action") == "accept" else f"not connected ({reply.get('action')})"


class TwoSteps(Recording):
    """Stateless like a 2026-07-28 server should be: the first answer travels in the requestState."""

    name = "two_steps"

    def call(self) -> Any:
        self.record()
        if (self.request_state or "").startswith("step-2:"):
            environment = self.request_state.split(":", 1)[1]
        else:
            env = self.ask("env", "Which environment?", schema=ENVIRONMENT, state="step-1")
            if env.get("action") != "accept":
                return "stopped at step 1"
            environment = env["content"]["environment"]
        confirm = self.ask("confirm", f"Really deploy to {environment}?", schema=CONFIRM,
                           state=f"step-2:{environment}")
        return f"{environment} confirmed={confirm.get('content', {}).get('confirmed')}"


class Both(Recording):
    name = "both"

    def call(self) -> Any:
        self.record()
        from llm_mcp.testing.asking import input_request

        replies = self.ask_all({"env": input_request("Which environment?", schema=ENVIRONMENT),
                                "login": input_request("Connect your account",
                                                       url="https://accounts.example.com/connect")})
        return json.dumps(replies, sort_keys=True)


class Pushy(Recording):
    name = "pushy"

    def call(self) -> Any:
        self.record()
        asked = int(self.request_state or "0")  # the state counts the rounds; each asks under a new key
        self.ask(f"again-{asked + 1}", "Once more?", schema=CONFIRM, state=str(asked + 1))
        return "never"


class Capabilities(Recording):
    name = "capabilities"

    def call(self) -> Any:
        self.record()
        return json.dumps(self.client_capabilities, sort_keys=True)


class ListRoots(Recording):
    """2026-07-28: asks the client for its roots with a ``roots/list`` input request, answers them as JSON."""

    name = "list_roots"

    def call(self) -> Any:
        self.record()
        reply = self.ask_all({"roots": {"method": "roots/list", "params": {}}}, state="roots-1",
                             check_capabilities=False)
        return json.dumps({"roots": reply["roots"], "state": self.request_state}, sort_keys=True)


class CompleteForMe(Recording):
    """Asks the client's model to complete ``prompt`` (at most ``max_tokens``), answers what it got as JSON."""

    name = "complete_for_me"
    input_schema = {"type": "object", "properties": {"prompt": {"type": "string"}, "max_tokens": {"type": "integer"}},
                    "required": ["prompt"]}

    def call(self) -> Any:
        self.record()
        reply = self.sample("completion", self.arguments["prompt"], max_tokens=self.arguments.get("max_tokens", 30),
                            system_prompt=SAMPLING_SYSTEM, state="sampling-1")
        return json.dumps({"reply": reply, "state": self.request_state}, sort_keys=True)


class DeployConfig(Resource):
    uri = "config://deploy"
    name = "deploy_config"
    mime_type = "text/plain"

    def read(self) -> str:
        reply = self.ask("env", "Config for which environment?", schema=ENVIRONMENT, state="config-1")
        return f"config for {reply.get('content', {}).get('environment', 'nothing')}"


class ReleaseNotes(Prompt):
    name = "release_notes"

    def messages(self) -> list[dict[str, Any]]:
        reply = self.ask("env", "Notes for which environment?", schema=ENVIRONMENT, state="notes-1")
        return [self.user_message(f"Write release notes for {reply.get('content', {}).get('environment')}")]


server = Server("questions", tools=[Deploy, Profile, Connect, TwoSteps, Both, Pushy, Capabilities, ListRoots,
                              CompleteForMe],
                resources=[DeployConfig], prompts=[ReleaseNotes])

if __name__ == "__main__":
    server.serve()
