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
and runs ``call()`` again the same way. ``sample`` asks the client's model for a completion
(``sampling/createMessage``) the same way: an ``inputRequests`` entry on 2026-07-28, a request on
the open stream before (the SDK's ``ServerSession.create_message``).

    class Summarize(Tool):
        name = "summarize"
        def call(self):
            reply = self.sample("summary", "Summarize: ...", max_tokens=50, system_prompt="Be brief.")
            return reply["content"]["text"]                      # the CreateMessageResult's text

Spec: MCP 2026-07-28 "Multi Round-Trip Requests", "Client Features / Elicitation"; 2025-11-25
"Client Features / Elicitation" and "Client Features / Sampling".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .runtime import CallChannel

__all__ = ["MAX_ASKING_ROUNDS", "MISSING_CLIENT_CAPABILITY", "Asking", "InputNotAccepted", "InputRequired",
           "input_request", "run_asking", "sampling_request"]

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


def sampling_request(messages: str | list[dict[str, Any]], *, max_tokens: int, system_prompt: str | None = None,
                     **params: Any) -> dict[str, Any]:
    """One ``sampling/createMessage`` input request: ``messages`` as the spec's list of
    ``{"role", "content"}`` dicts, or a string for one user message; ``max_tokens`` becomes
    ``maxTokens``; other ``params`` (``temperature``, ``includeContext``, ``modelPreferences``...)
    are sent as given.

        sampling_request("Name a colour", max_tokens=20, system_prompt="One word.")
        # ValueError for an empty message list or a max_tokens that is not a positive integer
    """
    if isinstance(messages, str):
        messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
    if not isinstance(messages, list) or not messages:
        raise ValueError("sampling_request needs a message string or a non-empty list of messages")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive integer, not {max_tokens!r}")
    body: dict[str, Any] = {"messages": messages, "maxTokens": max_tokens, **params}
    if system_prompt is not None:
        body["systemPrompt"] = system_prompt
    return {"method": "sampling/createMessage", "params": body}


def declared_modes(capabilities: Any) -> set[str]:
    """The elicitation modes a client's capabilities declare (``{}`` means form only)."""
    elicitation = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
    if not isinstance(elicitation, dict):
        return set()
    modes = {mode for mode in ("form", "url") if isinstance(elicitation.get(mode), dict)}
    return modes or {"form"}


def run_asking(channel: CallChannel, owner: str, once: Callable[..., Any], *args: Any) -> Any:
    """``once(*args)``, asking what it asks the way the request's era does it.

    On 2026-07-28 (no ``channel.send_elicit``) a question is answered with its
    ``InputRequiredResult`` dict; in the handshake era each question is sent on the open stream,
    and ``once`` runs again with the answers (``ToolCancelled`` instead once the client cancels
    the request). ``InvalidResult`` after `MAX_ASKING_ROUNDS`.
    """
    from .runtime import InvalidResult

    for _ in range(MAX_ASKING_ROUNDS):
        try:
            return once(*args)
        except InputRequired as asked:
            if channel.send_elicit is None:  # 2026-07-28: the client answers and sends the request again
                return asked.result()
            channel.input_responses = {key: (channel.send_sample if request["method"] == "sampling/createMessage"
                                             else channel.send_elicit)(request["params"])
                                       for key, request in asked.requests.items()}
            channel.request_state = asked.state
    raise InvalidResult(f"{owner} asked {MAX_ASKING_ROUNDS} times in a row and never finished")


class Asking:
    """Asking the user from a kit tool, resource or prompt (mixed in; needs ``self.channel``).

        reply = self.ask("env", "Which environment?", schema={"type": "object", "properties": {...}})
        reply = self.ask("login", "Connect your account", url="https://example.com/connect", state="s1")
        # reply: {"action": "accept", "content": {...}} / {"action": "accept"} / {"action": "decline"}
    """

    channel: CallChannel

    @property
    def input_responses(self) -> dict[str, Any]:
        """The answers this request carries, by key (``{}`` on a first request)."""
        return self.channel.input_responses

    @property
    def request_state(self) -> str | None:
        """The ``requestState`` the client sent back with this request, exactly as received, or ``None``."""
        return self.channel.request_state

    @property
    def request_id(self) -> Any:
        """The JSON-RPC id of this request (``None`` outside a server)."""
        return self.channel.request_id

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """The capabilities the client declared (``_meta`` on 2026-07-28, ``initialize`` before)."""
        return self.channel.client_capabilities

    def ask(self, key: str, message: str, *, schema: dict[str, Any] | None = None, url: str | None = None,
            state: str | None = None, check_capabilities: bool = True) -> dict[str, Any]:
        """The client's answer to one question, or stop the work to ask it (see the module docstring).

        Raises ``InputNotAccepted`` (the server answers error -32021) when the client did not
        declare this kind, unless ``check_capabilities=False``.
        """
        return self.ask_all({key: input_request(message, schema=schema, url=url, elicitation_id=key)},
                            state=state, check_capabilities=check_capabilities)[key]

    def sample(self, key: str, messages: str | list[dict[str, Any]], *, max_tokens: int,
               system_prompt: str | None = None, state: str | None = None, **params: Any) -> dict[str, Any]:
        """The client's ``CreateMessageResult`` (a dict) for one sampling request (see
        `sampling_request`), or stop the work to ask for it (see the module docstring).

        Raises ``InputNotAccepted`` (the server answers error -32021) when the client did not
        declare ``sampling``. In the handshake era a client's refusal reaches the tool as the
        SDK's ``McpError``."""
        if "sampling" not in self.client_capabilities:
            raise InputNotAccepted(f"{type(self).__name__} asked for sampling ({key!r}) but the client did not "
                                   "declare the sampling capability")
        request = sampling_request(messages, max_tokens=max_tokens, system_prompt=system_prompt, **params)
        return self.ask_all({key: request}, state=state, check_capabilities=False)[key]

    def ask_all(self, requests: dict[str, dict[str, Any]], *, state: str | None = None,
                check_capabilities: bool = True) -> dict[str, Any]:
        """Answers to several questions at once (``{key: input_request(...)}``), by key; asks
        them all (in one ``InputRequiredResult``) unless the request carries an answer to each."""
        if all(key in self.input_responses for key in requests):
            return {key: self.input_responses[key] for key in requests}
        if check_capabilities:
            modes = declared_modes(self.client_capabilities)
            for key, request in requests.items():
                mode = request["params"].get("mode", "form")
                if mode not in modes:
                    raise InputNotAccepted(f"{type(self).__name__} asked a {mode} question ({key!r}) but the client "
                                           f"declared elicitation modes {sorted(modes) or 'none'}")
        raise InputRequired(requests, state)
