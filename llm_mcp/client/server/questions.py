"""Questions a server asks (`Questions`, a collaborator of ``llm_mcp.MCP``): how they are handled: the ``before_input_request`` and ``input_requests``
settings, the capabilities they declare, and the rounds of a request that asks.

    class Deploys(llm_mcp.MCP):
        url = "https://deploys.example.com/mcp"
        before_input_request = "answer_from_settings"      # runs with each llm_mcp.Question
        input_requests = "form"                            # True (form and URL), "form", "url", False

On 2026-07-28 a question arrives as an ``InputRequiredResult``: the questions go through
automatic declines (a URL that is not ``http``/``https``, a kind not accepted) and the
callback; when none is left open the original request is sent again with a new JSON-RPC id,
``inputResponses`` keyed like ``inputRequests`` and the ``requestState`` exactly as the server
sent it (none when it sent none). Open questions raise [`InputRequiredError`][llm_mcp.client.errors.InputRequiredError],
which a chat turns into a pause. Handshake-era servers ask with ``elicitation/create``
requests on the open stream of the call: they are told about elicitation when the class has
``before_input_request`` (which answers them in line) or when a chat uses the server
(`Questions.hold_in_chats`). A question the callback leaves open during a chat's call is held
open: the chat saves it where ``pending_questions`` shows it and waits, up to
``question_timeout`` seconds, for an answer recorded by any process (the call context's
``hold``); outside a chat it is declined at once.
Spec: MCP 2026-07-28 "Multi Round-Trip Requests" and "Client Features / Elicitation".
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from .. import context as call_context
from ..declared import call_with
from ..errors import MCPError
from ..question import Question, from_input_request

if TYPE_CHECKING:
    from ..context import CallContext
    from ..errors import InputRequiredError
    from ..session import Client
    from .settings import ServerSettings

__all__ = ["KINDS", "MAX_INPUT_REQUESTS", "MAX_INPUT_ROUNDS", "Questions", "Resume", "accepted_kinds",
           "answers_payload"]

log = logging.getLogger("llm_mcp.client")

MAX_INPUT_ROUNDS = 10
"""Times one call may be answered and sent again in a row before the client gives up (MCPError)."""

MAX_INPUT_REQUESTS = 100
"""Questions one round may ask; a server that asks more at once is stopped (MCPError) rather than
filling a chat, its database row and its page with them."""

KINDS = ("form", "url")


def answers_payload(questions: list[Question], request_state: str | None) -> dict[str, Any]:
    """What a retry adds to the original params: ``inputResponses`` (when there are questions)
    and ``requestState`` (only when the server sent one, exactly as sent)."""
    extra: dict[str, Any] = {}
    if questions:
        extra["inputResponses"] = {q.key: copy.deepcopy(q.response) for q in questions}
    if request_state is not None:
        extra["requestState"] = request_state
    return extra


@dataclass
class Resume:
    """A paused request going on: its original params and the answered questions.

    Attributes:
        method: the request (``"tools/call"``).
        params: its params as first sent (without ``_meta``).
        questions: every question of the round, each with its ``response``.
        request_state: the server's ``requestState``, or ``None``.
    """

    method: str
    params: dict[str, Any]
    questions: list[Question]
    request_state: str | None
    used: bool = field(default=False)

    @classmethod
    def from_stored(cls, stored: list[dict[str, Any]], request_state: str | None) -> Resume | None:
        """The resume of a tool call's stored questions, or ``None`` when they name no request."""
        questions = [Question.from_dict(q) for q in stored]
        request = questions[0].request if questions else None
        if not request or not isinstance(request.get("params"), dict):
            return None
        return cls(str(request.get("method")), copy.deepcopy(request["params"]), questions, request_state)


def accepted_kinds(value: Any, where: str) -> tuple[str, ...]:
    """The kinds of question an ``input_requests`` value accepts; ``ValueError`` naming ``where`` for a bad one."""
    if value is True or value is None:
        return KINDS
    if value is False:
        return ()
    if isinstance(value, str):
        value = [value]
    if isinstance(value, (list, tuple)) and all(v in KINDS for v in value):
        return tuple(k for k in KINDS if k in value)
    raise ValueError(f"{where}: input_requests must be True, False, 'form', 'url' or a list of them, not {value!r}")


class Questions:
    """What a server does with the questions it is asked (see the module docstring).

    Attributes:
        settings: the server's settings (``before_input_request``, ``input_requests``).
        name: the server's name, for logs and errors.
    """

    def __init__(self, settings: ServerSettings, name: Callable[[], str], *,
                 automatic: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] | None = None):
        self.settings = settings
        self._name = name
        self.held = False
        self.automatic = dict(automatic or {})

    def hold_in_chats(self) -> None:
        """A chat uses the server: handshake-era sessions declare elicitation (the kinds
        ``input_requests`` accepts) so that questions asked during a chat's call can be held
        open for a person. Capabilities are fixed per session: see ``MCP.hold_questions``."""
        self.held = True

    @property
    def question_timeout(self) -> float:
        """Seconds a chat waits for the answer to a held question (``question_timeout``)."""
        return float(self.settings.option("question_timeout"))

    @property
    def answers_inline(self) -> bool:
        """Whether a handshake-era server is told about elicitation: a chat uses it, or the class
        has ``before_input_request``."""
        return bool(self.input_kinds) and (self.held or self.settings.option("before_input_request") is not None)

    @property
    def name(self) -> str:
        return self._name()

    @property
    def input_kinds(self) -> tuple[str, ...]:
        """The kinds of question accepted: ``("form", "url")``, one of them, or ``()``."""
        return accepted_kinds(self.settings.option("input_requests"), type(self.settings.owner).__name__)

    def capabilities(self, era: str) -> dict[str, Any]:
        """``{"elicitation": {mode: {} ...}}`` for the accepted kinds (``{}`` for none; to a
        handshake-era server only when a chat uses it or with ``before_input_request``)."""
        kinds = self.input_kinds
        if not kinds or (era != "modern" and not self.answers_inline):
            return {}
        return {"elicitation": {kind: {} for kind in kinds}}

    def wire(self, client: Client) -> None:
        """Let ``client`` answer a handshake-era server's ``elicitation/create`` in line (the
        callback, or a chat holding it open), when it is declared (`answers_inline`); a request
        waits longer than ``timeout`` by the time a chat holds a question (`CallContext.holding`). Over
        Streamable HTTP a GET stream is held open during calls for questions sent there (not
        tied to the call) only with ``before_input_request``: questions held for a chat come
        on the call's own stream, as servers send them."""
        if self.answers_inline:
            client.on_input_request = self.answer_inline
            if self.settings.option("before_input_request") is not None:
                client.channel.listen_during_calls = True  # Streamable HTTP: requests may come on GET

    # -- screening one question ----------------------------------------------------------------

    def screen_question(self, question: Question) -> None:
        """Decline what must be declined, then run ``before_input_request`` on what is left.

        A URL that is not ``http``/``https``, a form with a field that is not a primitive (a
        nested object, an array of free values) and a kind not accepted are declined here, and
        never reach the callback. ``ValueError`` from an answer the callback gives propagates."""
        if question.mode not in self.input_kinds:
            log.info("MCP server %s asked a %s question, which this client does not accept: declined", self.name,
                     question.mode)
            question.response = {"action": "decline"}
            return
        if question.unsupported is not None:
            log.warning("MCP server %s asked for the field %r, which is not a string, number, boolean or list of "
                        "choices; the question was declined", self.name, question.unsupported)
            question.response = {"action": "decline"}
            return
        if question.is_url and not question.web_url:
            log.warning("MCP server %s asked the user to visit a URL that is not http(s); declined", self.name)
            question.response = {"action": "decline"}
            return
        callback = self.settings.option("before_input_request")
        if callback is not None:
            call_with(callback, self.settings.owner, question)

    def answer_inline(self, params: dict[str, Any]) -> dict[str, Any]:
        """A handshake-era ``elicitation/create``, answered through the callback; one it leaves
        open is held for a person when a chat makes the call (the call context's ``hold``, for
        up to ``question_timeout`` seconds), else declined at once."""
        question = Question("elicitation", params, server=str(self.name))
        self.screen_question(question)
        if question.response is not None:
            return question.response
        current = call_context.current()
        if current is not None and current.hold is not None and self.held:
            with current.holding():  # the wait does not count against the request's timeout
                return current.hold(question, self.question_timeout)
        log.info("MCP server %s asked a question outside a chat and no before_input_request answered it: "
                 "declined", self.name)
        return {"action": "decline"}

    # -- requests that ask ---------------------------------------------------------------------

    @staticmethod
    def resume_for(context: CallContext | None, method: str, params: dict[str, Any]) -> Resume | None:
        """The paused request this one goes on with (the call context's, set by a chat), if it is
        the same request; it is used up."""
        resume = context.resume if context is not None else None
        if resume is None or resume.used or resume.method != method or resume.params.get("name") != params.get("name"):
            return None
        resume.used = True
        return resume

    def from_answer(self, exc: InputRequiredError, method: str, params: dict[str, Any]) -> list[Question]:
        """The questions of an ``InputRequiredResult`` (``exc``) to ``method``, each screened
        (declined or answered by ``before_input_request`` where it can be).

        Raises ``MCPError`` for more than `MAX_INPUT_REQUESTS` questions, or for an input
        request that is not an ``elicitation/create``."""
        if len(exc.input_requests) > MAX_INPUT_REQUESTS:
            raise MCPError(f"MCP server {self.name!r} asked {len(exc.input_requests)} questions at once to finish "
                           f"{method} (at most {MAX_INPUT_REQUESTS}); the call was stopped", server=str(self.name))
        original = {"method": method, "params": copy.deepcopy(params)}
        questions = []
        for key, request in exc.input_requests.items():
            question = from_input_request(key, request, server=str(self.name), original=original)
            if question is None:
                asked = request.get("method") if isinstance(request, dict) else None
                answer = self.automatic.get(asked) if isinstance(asked, str) else None
                if answer is None:
                    raise MCPError(f"MCP server {self.name!r} asked for {asked!r} to finish {method}, which this "
                                   "client did not declare", server=str(self.name))
                params = request.get("params") if isinstance(request.get("params"), dict) else {}
                question = Question(key, params, server=str(self.name), request=original,
                                    response=answer(params))  # answered by the client: nobody sees it
            questions.append(question)
        for question in questions:
            if question.response is None:
                self.screen_question(question)
        return questions
