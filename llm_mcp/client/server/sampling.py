"""Sampling (`Sampling`, a collaborator of ``llm_mcp.MCP``): a server asks the client for a model
completion (``sampling/createMessage``). Off by default; the ``sampling`` setting turns it on.
A handshake-era server sends the request on the open stream of the call in flight; a 2026-07-28
server puts it in an ``InputRequiredResult`` (an ``inputRequests`` entry), and the client sends
the call again with the ``CreateMessageResult`` in ``inputResponses``. Both are answered the same way.

    class Research(llm_mcp.MCP):
        url = "https://research.example.com/mcp"
        sampling = True                                        # the chat's provider and model
        # sampling = {"provider": "anthropic", "model": "claude-haiku-4-5"}
        # sampling = {"model": "gpt-4.1-mini", "history": True}  # may add the chat's history when asked
        # sampling = "complete_for_server"                       # a method (or a callable) given the params
        requires_approval = ["sampling"]                       # a person approves each request first

With ``True`` or a dict the request runs on a chat's model (so only during a chat's call, the
call context's ``sample``); a callable runs anywhere and returns the ``CreateMessageResult``
(a dict) or just the text. ``maxTokens`` is passed on as ``max_tokens``, ``systemPrompt`` as the
instructions, ``temperature`` as it is; ``modelPreferences.hints`` pick among the dict's
``models`` (else they are only logged). The chat's history is added only when the server asked
for context (``includeContext``) and the dict says ``"history": True``. A request with ``tools``
is refused: this client does not declare ``sampling.tools``. One call may make at most
`MAX_PER_CALL` sampling requests; more are refused. When ``requires_approval`` is
``True`` or names ``"sampling"``, the request waits for a person as a held question (see
``docs/how-to/sampling.md``); a refusal answers a handshake-era server with error ``-1`` and, on
2026-07-28 (where ``inputResponses`` has no place for an error), ends the call with an `MCPError`
the chat's model is told about. Every request is logged at INFO without its content.
Spec: MCP 2025-11-25 "Client Features / Sampling"; 2026-07-28 "Multi Round-Trip Requests".
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable

from .. import context as call_context
from ..declared import call_with
from ..errors import MCPError
from ..protocol import INTERNAL_ERROR
from ..question import Question

if TYPE_CHECKING:
    from ..session import Client
    from .settings import ServerSettings

__all__ = ["APPROVAL_NAME", "KEYS", "MAX_PER_CALL", "REFUSED", "Sampling", "check_sampling", "sampling_result"]

log = logging.getLogger("llm_mcp.client")

APPROVAL_NAME = "sampling"
"""The name ``requires_approval`` lists to have a person approve each sampling request."""

KEYS = ("provider", "model", "models", "history", "options")
"""The keys a ``sampling`` dict may have."""

REFUSED = -1
"""The JSON-RPC error code of a sampling request the user (or the client) refused (the spec's example)."""

MAX_SUMMARY_CHARS = 2000
"""Characters of a sampling approval's plain-text ``message`` (its ``sampling`` params hold the whole request)."""

MAX_PER_CALL = 20
"""Sampling requests one call may make (each spends the user's tokens); more are refused (`REFUSED`)."""


def check_sampling(settings: ServerSettings, value: Any, where: str) -> None:
    """The settings table's check of ``sampling``: a bool, a dict of `KEYS`, a callable or a method name."""
    if value is None or isinstance(value, bool) or callable(value):
        return
    if isinstance(value, str):
        if not settings.names_method(value):
            raise ValueError(f"{where}: sampling {value!r} is not a method of the class (give True, a dict "
                             "{'provider', 'model'}, a callable or a method name)")
        return
    if not isinstance(value, dict):
        raise ValueError(f"{where}: sampling must be True, False, a dict, a callable or a method name, not "
                         f"{type(value).__name__}")
    unknown = sorted(set(value) - set(KEYS))
    if unknown:
        raise ValueError(f"{where}: sampling takes the keys {list(KEYS)}, not {unknown}")
    for key in ("provider", "model"):
        if value.get(key) is not None and not isinstance(value[key], str):
            raise ValueError(f"{where}: sampling[{key!r}] must be a string")
    if value.get("models") is not None and not (isinstance(value["models"], list) and
                                                all(isinstance(m, str) for m in value["models"])):
        raise ValueError(f"{where}: sampling['models'] must be a list of model ids")
    if value.get("provider") and not value.get("model") and not value.get("models"):
        raise ValueError(f"{where}: sampling names a provider but no model: add 'model' (or 'models')")


def sampling_result(value: Any, model: str) -> dict[str, Any]:
    """A ``CreateMessageResult`` from what a callable returned: a dict as it is (``role`` and
    ``model`` filled in when missing), or a string as the assistant's text."""
    if isinstance(value, str):
        return {"role": "assistant", "content": {"type": "text", "text": value}, "model": model,
                "stopReason": "endTurn"}
    if isinstance(value, dict) and isinstance(value.get("content"), (dict, list)):
        return {"role": "assistant", "model": model, **value}
    raise TypeError(f"a sampling callable must return the text or a CreateMessageResult dict, not "
                    f"{type(value).__name__}")


class Sampling:
    """A server's sampling requests (see the module docstring).

    Attributes:
        settings: the server's settings (``sampling``, ``requires_approval``, ``question_timeout``).
    """

    def __init__(self, settings: ServerSettings, name: Callable[[], str]):
        self.settings = settings
        self._name = name

    @property
    def on(self) -> bool:
        """Whether the ``sampling`` setting turns sampling on."""
        value = self.settings.option("sampling")
        return value is not None and value is not False

    @property
    def needs_approval(self) -> bool:
        """Whether ``requires_approval`` covers sampling: ``True``, or a list naming ``"sampling"``."""
        setting = self.settings.option("requires_approval")
        return setting is True or (isinstance(setting, (list, tuple, set, frozenset)) and APPROVAL_NAME in setting)

    def capabilities(self) -> dict[str, Any]:
        """``{"sampling": {}}`` when on (``{"sampling": {"context": {}}}`` when a dict allows history)."""
        if not self.on:
            return {}
        value = self.settings.option("sampling")
        return {"sampling": {"context": {}} if isinstance(value, dict) and value.get("history") else {}}

    def wire(self, client: Client) -> None:
        """Let ``client`` answer a handshake-era server's ``sampling/createMessage``."""
        if self.on:
            client.request_handlers["sampling/createMessage"] = self.create_message
            client.channel.listen_during_calls = True

    def input_response(self, params: dict[str, Any]) -> dict[str, Any]:
        """Answer a 2026-07-28 ``sampling/createMessage`` input request: the ``CreateMessageResult``
        for ``inputResponses``. Raises `MCPError` (code `REFUSED`) when refused, declined or not
        possible here, and for malformed params (there is no error answer in ``inputResponses``:
        the call stops and says why)."""
        try:
            return self.create_message(params)
        except ValueError as exc:
            name = self._name()
            raise MCPError(f"{name}: its sampling request was malformed ({exc}); the call was stopped", code=REFUSED,
                           server=name) from None

    def create_message(self, params: dict[str, Any]) -> dict[str, Any]:
        """Answer one ``sampling/createMessage`` (see the module docstring). Raises `MCPError`
        (code `REFUSED`) when refused, declined or not possible here, ``ValueError`` for
        malformed params: no messages, a message that is not ``{"role", "content"}`` with content
        blocks, no positive ``maxTokens`` (the server gets ``-32602``). A ``sampling`` setting that
        cannot run here (an unknown provider) raises `MCPError` with ``-32603``, logged at WARNING."""
        name = self._name()
        messages = params.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ValueError("sampling/createMessage needs a non-empty list of messages")
        for message in messages:
            content = message.get("content") if isinstance(message, dict) else None
            blocks = content if isinstance(content, list) else [content]
            if not isinstance(message, dict) or message.get("role") not in ("user", "assistant") or not blocks \
                    or not all(isinstance(block, dict) and isinstance(block.get("type"), str) for block in blocks):
                raise ValueError(f"sampling/createMessage: each message must be {{'role': 'user' or 'assistant', "
                                 f"'content': a content block or a list of them}}, not {message!r:.100}")
        max_tokens = params.get("maxTokens")
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError("sampling/createMessage needs maxTokens, a positive integer")
        log.info("MCP server %s asks for a model completion (sampling/createMessage): %d message(s), maxTokens %d, "
                 "includeContext %s", name, len(messages), max_tokens, params.get("includeContext", "none"))
        if params.get("tools"):
            log.info("MCP server %s sent tools with its sampling request; refused (sampling.tools is not declared)",
                     name)
            raise MCPError(f"{name}: this client does not offer tools in sampling (sampling.tools was not declared)",
                           code=REFUSED, server=name)
        current = call_context.current()
        if current is not None and current.count("sampling") > MAX_PER_CALL:
            log.warning("MCP server %s asked for more than %d model completions in one call; refused", name,
                        MAX_PER_CALL)
            raise MCPError(f"{name}: asked for more than {MAX_PER_CALL} model completions in one call; refused",
                           code=REFUSED, server=name)
        if self.needs_approval:
            self._approve(params, current, name)
        value = self.settings.option("sampling")
        if callable(value) or isinstance(value, str):
            result = sampling_result(call_with(value, self.settings.owner, params), "unknown")
        elif current is not None and current.sample is not None:
            try:
                result = current.sample(params, value if isinstance(value, dict) else {})
            except ValueError as exc:  # the setting cannot run here (an unknown provider): the client's failure
                log.warning("MCP server %s: its sampling request could not run: %s", name, exc)
                raise MCPError(f"{name}: the client could not run the sampling request ({exc})"[:500],
                               code=INTERNAL_ERROR, server=name) from None
        else:
            log.info("MCP server %s asked for sampling outside a chat; refused", name)
            raise MCPError(f"{name}: sampling runs on a chat's model, and this request came outside a chat "
                           "(a callable sampling setting answers anywhere)", code=REFUSED, server=name)
        log.info("MCP server %s: sampling answered by model %s", name, result.get("model"))
        return result

    def _approve(self, params: dict[str, Any], current: Any, name: str) -> None:
        """Hold the request as a question for a person (a chat's call), or refuse it."""
        question = Question("sampling", approval_params(name, params), server=name, kind="sampling")
        if current is None or current.hold is None:
            log.info("MCP server %s asked for sampling, which needs approval, outside a chat; refused", name)
            raise MCPError(f"{name}: sampling needs approval, and nobody can give it outside a chat", code=REFUSED,
                           server=name)
        with current.holding():
            response = current.hold(question, float(self.settings.option("question_timeout")))
        if response.get("action") != "accept":
            log.info("MCP server %s: the sampling request was not approved (%s)", name, response.get("action"))
            raise MCPError(f"{name}: the user did not approve the sampling request", code=REFUSED, server=name)


def approval_params(server: str, params: dict[str, Any]) -> dict[str, Any]:
    """The question a person answers to approve a sampling request: its message shows what the
    server asks the model (the system prompt and each message's text); ``sampling`` holds the
    request as sent. ``answer()`` approves, ``decline()`` refuses. The message is cut at
    `MAX_SUMMARY_CHARS`, saying how much was left out."""
    lines = [f"{server} asks to run a model completion (at most {params.get('maxTokens')} tokens)."]
    if isinstance(params.get("systemPrompt"), str):
        lines.append(f"System prompt: {params['systemPrompt']}")
    for message in params.get("messages") or []:
        if isinstance(message, dict):
            lines.append(f"{message.get('role', '?')}: {content_text(message.get('content'))}")
    summary = "\n".join(lines)
    if len(summary) > MAX_SUMMARY_CHARS:  # the whole request stays in "sampling"
        summary = summary[:MAX_SUMMARY_CHARS] + f" [... {len(summary) - MAX_SUMMARY_CHARS} more characters]"
    return {"message": summary, "requestedSchema": {"type": "object", "properties": {}}, "sampling": params}


def content_text(content: Any) -> str:
    """The text of a sampling message's content (a block or a list of blocks); other blocks as ``[type]``."""
    blocks = content if isinstance(content, list) else [content]
    parts = []
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif isinstance(block, dict):
            parts.append(f"[{block.get('type', 'content')}]")
    return "\n".join(parts)
