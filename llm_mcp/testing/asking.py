"""Kit tools that ask the user something (elicitation), the same code in both protocol eras.

    class Deploy(Tool):
        name = "deploy"
        def call(self):
            reply = self.ask("env", "Which environment?", schema={"type": "object", "properties": {
                "environment": {"type": "string", "enum": ["staging", "production"]}}})
            return f"deployed to {reply['content']['environment']}" if reply["action"] == "accept" else "not deployed"

``ask`` returns the client's answer (an ``ElicitResult`` dict) when the request carries one;
otherwise it stops ``call()``. On 2026-07-28 the kit then answers the request with an
``InputRequiredResult`` (``inputRequests`` keyed by ``key``, and ``requestState`` when ``state=``
is given); the client sends the request again with ``inputResponses``, and ``call()`` runs again
with them. In the handshake era the kit sends each question as an ``elicitation/create`` request
on the open stream (the SDK's ``ServerSession.elicit_form``/``elicit_url``), waits for the answers,
and runs ``call()`` again the same way. Spec: MCP 2026-07-28 "Multi Round-Trip Requests",
"Client Features / Elicitation"; 2025-11-25 "Client Features / Elicitation".
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_ASKING_ROUNDS", "MISSING_CLIENT_CAPABILITY", "InputNotAccepted", "InputRequired", "input_request"]

MAX_ASKING_ROUNDS = 10
"""Times one handshake-era call may ask and run ``call()`` again before the kit gives up."""

MISSING_CLIENT_CAPABILITY = -32021
"""JSON-RPC error code the kit answers when a tool asks a kind of question the client did not declare."""


class InputRequired(BaseException):
    """Raised by ``Tool.ask``/``ask_all`` when an answer is missing; the kit turns it into the era's question.

    A ``BaseException`` (like ``ToolCancelled``) so ``except Exception`` in tool code lets it through.

    Attributes:
        requests: ``{key: {"method": "elicitation/create", "params": {...}}}``.
        state: the ``requestState`` to send, or ``None``.
    """

    def __init__(self, requests: dict[str, dict[str, Any]], state: str | None = None):
        super().__init__(f"input required: {sorted(requests)}")
        self.requests = requests
        self.state = state

    def result(self) -> dict[str, Any]:
        """The 2026-07-28 ``InputRequiredResult`` for it."""
        result: dict[str, Any] = {"resultType": "input_required", "inputRequests": self.requests}
        if self.state is not None:
            result["requestState"] = self.state
        return result


class InputNotAccepted(Exception):
    """A tool asked a kind of question (form, URL) the client did not declare.

    The server answers the request with JSON-RPC error ``-32021`` (missing client capability)
    carrying this message, in both eras (a server MUST NOT ask what the client did not declare).
    """


def input_request(message: str, *, schema: dict[str, Any] | None = None, url: str | None = None,
                  elicitation_id: str | None = None) -> dict[str, Any]:
    """One ``elicitation/create`` input request: a form (``schema``) or a URL (``url``).

        input_request("Which environment?", schema={"type": "object", "properties": {...}})
        input_request("Connect your account", url="https://example.com/connect")
        # ValueError for both or neither of schema and url
    """
    if (schema is None) == (url is None):
        raise ValueError("input_request takes exactly one of schema= (a form) or url= (a URL question)")
    if not isinstance(message, str):
        raise TypeError(f"message must be a str; got {type(message).__name__}")
    if url is not None:
        params: dict[str, Any] = {"mode": "url", "message": message, "url": url}
        if elicitation_id is not None:
            params["elicitationId"] = elicitation_id
    else:
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise ValueError(f"schema must be an object schema ({{'type': 'object', 'properties': ...}}); got {schema!r}")
        params = {"mode": "form", "message": message, "requestedSchema": schema}
    return {"method": "elicitation/create", "params": params}


def declared_modes(capabilities: Any) -> set[str]:
    """The elicitation modes a client's capabilities declare (``{}`` means form only)."""
    elicitation = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
    if not isinstance(elicitation, dict):
        return set()
    modes = {mode for mode in ("form", "url") if isinstance(elicitation.get(mode), dict)}
    return modes or {"form"}
