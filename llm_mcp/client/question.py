"""A question a server asks the user in the middle of a call: [`Question`][llm_mcp.Question] and its [`Field`][llm_mcp.Field].

    question = chat.pending_questions[0]
    question.message, [f.name for f in question.fields]     # ("Which environment?", ["environment"])
    question.answer("staging")                               # or question.decline(); then chat.complete()

A question is an ``elicitation/create`` request (MCP 2026-07-28, "Client Features /
Elicitation"): a *form* (``requestedSchema``: a flat object of primitive properties) or a
*URL* the user is asked to visit. On 2026-07-28 it arrives inside an ``InputRequiredResult``
("Multi Round-Trip Requests") and its answer goes back in ``inputResponses`` under the same
key; handshake-era servers send it as a request of its own. Everything here is plain data
that round-trips through JSON ([`Question.to_dict`][llm_mcp.Question.to_dict] / [`Question.from_dict`][llm_mcp.Question.from_dict]).
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any
from urllib.parse import urlsplit

from . import offload
from .protocol import as_object, as_text

__all__ = ["WEB_SCHEMES", "Field", "Question"]

WEB_SCHEMES = ("http", "https")

KINDS = ("elicitation", "sampling")
"""What a `Question` is: a server's question to the user, or a sampling request a person approves."""
"""The only schemes a URL question may use; any other is declined before anyone sees it."""

_MISSING: Any = object()

_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "number": (int, float),
                                       "boolean": (bool,), "array": (list, tuple)}


@dataclass(frozen=True)
class Field:
    """One value a form question asks for (one property of its ``requestedSchema``).

        field = question.fields[0]
        field.name, field.type, field.choices, field.default   # ("environment", "string", ["staging", "production"], None)

    Attributes:
        name: the property name, the keyword ``answer`` takes it by.
        type: the JSON Schema type: ``"string"``, ``"integer"``, ``"number"``, ``"boolean"``
            or ``"array"`` (a multi-select of strings); ``"string"`` when the schema gives none.
        title: a label to show, or ``None``.
        description: help text to show, or ``None``.
        choices: the values offered (``enum``, ``oneOf``/``anyOf`` consts; for an array, its
            items'), or ``None`` for free input.
        default: the value used when an answer leaves the field out, or ``None``.
        required: whether an answer must give it (or it must have a default).
        schema: the property's schema as the server sent it.
    """

    name: str
    type: str
    title: str | None
    description: str | None
    choices: list[Any] | None
    default: Any
    required: bool
    schema: dict[str, Any]

    @property
    def primitive(self) -> bool:
        """Whether a form can show it: a string, integer, number or boolean, or an array of choices (a
        multi-select). A nested object, or an array of free values, is not (MCP "Elicitation" allows a
        flat object of primitive properties only)."""
        declared = self.schema.get("type", "string")
        return declared in _TYPES and (declared != "array" or self.choices is not None)

    @property
    def has_default(self) -> bool:
        """Whether the schema gives a ``default`` (which may itself be ``None``)."""
        return "default" in self.schema

    def check(self, value: Any) -> Any:
        """``value`` if this field can take it; ``ValueError`` naming the field otherwise."""
        expected = _TYPES.get(self.type)
        if expected is not None and (not isinstance(value, expected) or
                                     (isinstance(value, bool) and self.type != "boolean")):
            raise ValueError(f"field {self.name!r} takes a {self.type}, not {type(value).__name__} ({value!r:.60})")
        if self.type == "array":
            value = list(value)
            if self.choices is not None:
                for item in value:
                    if item not in self.choices:
                        raise ValueError(f"field {self.name!r} does not offer {item!r}; its choices are {self.choices}")
            for bound, test in (("minItems", lambda n: len(value) < n), ("maxItems", lambda n: len(value) > n)):
                limit = self.schema.get(bound)
                if isinstance(limit, int) and test(limit):
                    raise ValueError(f"field {self.name!r} takes {bound} {limit} values, not {len(value)}")
            return value
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"field {self.name!r} does not offer {value!r}; its choices are {self.choices}")
        if isinstance(value, str):
            for bound, test in (("minLength", lambda n: len(value) < n), ("maxLength", lambda n: len(value) > n)):
                limit = self.schema.get(bound)
                if isinstance(limit, int) and test(limit):
                    raise ValueError(f"field {self.name!r} takes a text of {bound} {limit}, not {len(value)} characters")
            form = self.schema.get("format")
            if isinstance(form, str) and not _conforms(value, form):
                raise ValueError(f"field {self.name!r} takes a text of format {form!r}, not {value!r:.60}")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            if not math.isfinite(value):
                raise ValueError(f"field {self.name!r} takes a finite number, not {value}")
            low, high = self.schema.get("minimum"), self.schema.get("maximum")
            if _number(low) and value < low or _number(high) and value > high:
                raise ValueError(f"field {self.name!r} takes a number between {low} and {high}, not {value}")
        return value

    @classmethod
    def from_schema(cls, name: str, schema: Any, required: bool) -> Field:
        """The field one ``requestedSchema`` property describes (a schema that is not an object counts as ``{}``)."""
        schema = as_object(schema)
        kind = schema.get("type") if isinstance(schema.get("type"), str) else "string"
        return cls(name=name, type=kind, title=as_text(schema.get("title")),
                   description=as_text(schema.get("description")),
                   choices=_choices(as_object(schema.get("items")) if kind == "array" else schema),
                   default=schema.get("default"), required=required, schema=schema)


@cache
def _format_checker() -> Any:
    """jsonschema's checker for ``email`` and ``date``, built on the first form that names one
    (importing jsonschema costs tens of milliseconds a call without questions never needs)."""
    import jsonschema

    return jsonschema.FormatChecker(["email", "date"])


_DATE_TIME = re.compile(r"\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")


def _conforms(value: str, form: str) -> bool:
    """Whether ``value`` is a text of ``form``: the formats an elicitation schema may name (``email``,
    ``date`` via jsonschema; ``date-time`` per RFC 3339; ``uri`` with a scheme, per RFC 3986); others pass."""
    if form == "date-time":
        if not _DATE_TIME.fullmatch(value):
            return False
        try:
            datetime.fromisoformat(value.upper())
        except ValueError:
            return False
        return True
    if form == "uri":
        return bool(_SCHEME.fullmatch(value.split(":", 1)[0])) and ":" in value and not any(c.isspace() for c in value)
    return _format_checker().conforms(value, form)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _choices(schema: dict[str, Any]) -> list[Any] | None:
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    for key in ("oneOf", "anyOf"):
        options = schema.get(key)
        if isinstance(options, list) and options and all(isinstance(o, dict) and "const" in o for o in options):
            return [o["const"] for o in options]
    return None


class Question:
    """A question a server asked the user during a call: a form to fill in, or a URL to visit.

        question = chat.pending_questions[0]
        question.answer(environment="staging", reason="Release 2.2")   # or answer("staging") for one field
        chat.complete()                                                 # the call resumes with the answers

    Attributes:
        key: the server's key for it (``inputRequests`` key on 2026-07-28).
        server: the name of the server that asked (show it: the user must know who asks).
        message: what the server asks, to show the user.
        mode: ``"form"`` or ``"url"``.
        fields: a form's [`Field`][llm_mcp.Field] objects, in the schema's order (``[]`` for a URL).
        url: the address a URL question asks the user to visit (show all of it), else ``None``.
        params: the ``elicitation/create`` params as the server sent them.
        request: the original request to send again with the answers,
            ``{"method": "tools/call", "params": {...}}`` (``None`` for handshake-era questions,
            which are answered in line).
        response: the answer once given: ``{"action": "accept", "content": {...}}`` for a form,
            ``{"action": "accept"}`` for a URL, ``{"action": "decline"}``; ``None`` until then.
        held: whether a handshake-era server asked it during a chat's call that is still open,
            waiting for the answer (answer it and the call goes on: no ``complete()`` or
            ``resume_chat`` is needed; the call declines it after ``question_timeout`` seconds).
        tool_call_id: the id of the chat's tool call that asked it (set by ``chat.pending_questions``;
            ``None`` elsewhere, and not part of [`to_dict`][llm_mcp.Question.to_dict]).
        kind: ``"elicitation"`` (the server asks the user), or ``"sampling"``: the client asks a
            person to approve a server's sampling request (see [`sampling`][llm_mcp.Question.sampling]);
            set by the client, never by what a server sends.

    ``answer`` and ``decline`` raise ``ValueError`` for an answer the question cannot take,
    and for a question answered already.
    """

    def __init__(self, key: str, params: dict[str, Any], *, server: str = "", request: dict[str, Any] | None = None,
                 response: dict[str, Any] | None = None, held: bool = False, kind: str = "elicitation"):
        if kind not in KINDS:
            raise ValueError(f"a question's kind is one of {list(KINDS)}, not {kind!r}")
        self.kind = kind
        self.key = str(key)
        self.held = held
        self.server = server
        self.params: dict[str, Any] = as_object(params)
        self.request = request
        self.response = response
        self.mode: str = "url" if self.params.get("mode") == "url" else "form"
        self.message: str = as_text(self.params.get("message")) or ""
        self.url: str | None = as_text(self.params.get("url")) if self.mode == "url" else None
        schema = as_object(self.params.get("requestedSchema"))
        required = schema.get("required") if isinstance(schema.get("required"), list) else []
        self.fields: list[Field] = [] if self.mode == "url" else [
            Field.from_schema(str(name), prop, name in required)
            for name, prop in as_object(schema.get("properties")).items()]
        self.tool_call_id: str | None = None
        self._save: Callable[[Question], None] | None = None

    @property
    def is_url(self) -> bool:
        """Whether it asks the user to visit `url` (rather than fill in a form)."""
        return self.mode == "url"

    @property
    def sampling(self) -> dict[str, Any] | None:
        """For a sampling approval (`kind` ``"sampling"``): the server's ``sampling/createMessage``
        params as sent (``messages``, ``systemPrompt``, ``maxTokens``, ...), to show a person before
        they approve (``answer()``) or refuse (``decline()``); ``None`` for any other question."""
        request = self.params.get("sampling") if self.kind == "sampling" else None
        return request if isinstance(request, dict) else None

    @property
    def answered(self) -> bool:
        """Whether it has an answer or a decline."""
        return self.response is not None

    @property
    def declined(self) -> bool:
        """Whether its answer is a decline (``{"action": "decline"}``)."""
        return self.response is not None and self.response.get("action") == "decline"

    @property
    def web_url(self) -> bool:
        """Whether a URL question's address is an ``http``/``https`` URL with a host."""
        if not self.url:
            return False
        try:
            parts = urlsplit(self.url)
        except ValueError:
            return False
        return parts.scheme.lower() in WEB_SCHEMES and bool(parts.hostname)

    @property
    def unsupported(self) -> str | None:
        """The name of the first field no form can show (see [`Field.primitive`][llm_mcp.Field.primitive]), or ``None``."""
        return next((f.name for f in self.fields if not f.primitive), None)

    def field(self, name: str) -> Field | None:
        """The field named ``name``, or ``None``."""
        return next((f for f in self.fields if f.name == name), None)

    def values_for(self, value: Any = _MISSING, /, **values: Any) -> dict[str, Any]:
        """The ``content`` an answer would send: ``value`` for a one-field form, or ``values`` by
        name, every field left out taking its default. ``ValueError`` when it cannot."""
        if value is not _MISSING:
            if values:
                raise ValueError("answer() takes one value for a one-field question, or values by field name; "
                                 "not both")
            if len(self.fields) != 1:
                names = [f.name for f in self.fields]
                raise ValueError(f"this question asks for {len(names)} fields {names}: answer them by name")
            values = {self.fields[0].name: value}
        unknown = sorted(name for name in values if self.field(name) is None)
        if unknown:
            raise ValueError(f"this question has no field {unknown[0]!r}; its fields are {[f.name for f in self.fields]}")
        content: dict[str, Any] = {}
        for field in self.fields:
            if field.name in values:
                content[field.name] = field.check(values[field.name])
            elif field.has_default:
                content[field.name] = field.default
            elif field.required:
                raise ValueError(f"field {field.name!r} is required and has no default: give a value")
        return content

    def answer(self, value: Any = _MISSING, /, **values: Any) -> None:
        """Answer it: ``answer("staging")`` for a one-field form, ``answer(environment="staging",
        reason="...")`` by field name, ``answer()`` for a URL question (the user agreed to go)
        or a form whose fields all take their defaults. Saved at once when the question came
        from a chat; sent to the server when the call resumes.

        Raises ``ValueError``: a field the question lacks, a choice it does not offer, a value
        of the wrong type, a required field left out without a default, values for a URL
        question, or a question answered already.
        """
        self._check_open()
        if self.is_url:
            if value is not _MISSING or values:
                raise ValueError("a URL question takes no values: answer() means the user agreed to visit the URL")
            response: dict[str, Any] = {"action": "accept"}
        else:
            response = {"action": "accept", "content": self.values_for(value, **values)}
        self._settle(response)

    def decline(self) -> None:
        """Refuse it (sent as ``{"action": "decline"}``). Raises ``ValueError`` when it is answered already."""
        self._check_open()
        self._settle({"action": "decline"})

    async def aanswer(self, value: Any = _MISSING, /, **values: Any) -> None:
        """The async twin of [`answer`][llm_mcp.Question.answer]: saving the answer is database work
        for a chat record, so it runs where Django wants it (``llm_mcp.client.offload.on_orm``)."""
        await offload.on_orm(self.answer, value, **values)

    async def adecline(self) -> None:
        """The async twin of [`decline`][llm_mcp.Question.decline] (see [`aanswer`][llm_mcp.Question.aanswer])."""
        await offload.on_orm(self.decline)

    def _check_open(self) -> None:
        if self.response is not None:
            raise ValueError(f"question {self.key!r} of {self.server or 'the server'} is answered already "
                             f"({self.response.get('action')})")

    def _settle(self, response: dict[str, Any]) -> None:
        self.response = response
        if self._save is not None:
            try:
                self._save(self)
            except BaseException:
                self.response = None
                raise

    # -- as data ----------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form: ``{"key", "server", "params", "request", "response"}``, and
        ``"held": True`` for a held question, ``"kind": "sampling"`` for a sampling approval."""
        data = {"key": self.key, "server": self.server, "params": copy.deepcopy(self.params),
                "request": copy.deepcopy(self.request), "response": copy.deepcopy(self.response)}
        if self.held:
            data["held"] = True
        if self.kind != "elicitation":
            data["kind"] = self.kind
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Question:
        """The inverse of [`to_dict`][llm_mcp.Question.to_dict]; ``ValueError`` for data that is not a question."""
        if not isinstance(data, dict) or "key" not in data or not isinstance(data.get("params"), dict):
            raise ValueError(f"not a stored question: {str(data)[:80]}")
        response = data.get("response")
        return cls(data["key"], data["params"], server=str(data.get("server") or ""),
                   request=data.get("request") if isinstance(data.get("request"), dict) else None,
                   response=response if isinstance(response, dict) else None, held=data.get("held") is True,
                   kind="sampling" if data.get("kind") == "sampling" else "elicitation")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Question) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        state = self.response.get("action") if self.response else "open"
        what = f"url: {self.url!r}" if self.is_url else f"fields: {[f.name for f in self.fields]}"
        return f"<Question {self.key!r} from {self.server!r}: {self.message[:60]!r}, {what}, {state}>"


def from_input_request(key: str, request: Any, *, server: str, original: dict[str, Any] | None) -> Question | None:
    """The question an ``inputRequests`` entry asks, or ``None`` when it is not an ``elicitation/create``."""
    request = as_object(request)
    if request.get("method") != "elicitation/create":
        return None
    return Question(key, as_object(request.get("params")), server=server, request=original)


def open_entries(stored: Any) -> list[dict[str, Any]]:
    """The entries of a tool call's stored ``pending_questions`` that have no answer yet, in stored order.

        open_entries([{"key": "env", "response": None}, {"key": "ok", "response": {"action": "decline"}}])
        # [{"key": "env", "response": None}]

    ``stored`` is a list of `Question.to_dict` dicts (a call's attribute, or a row's JSON as
    read). An entry is open when its ``"response"`` is missing or ``None`` (a decline is an
    answer); an item that is not a dict is skipped, and anything but a list or tuple has no
    entries. The entries themselves are returned, not copies. The one definition of "open"
    that a call's `waiting`, a chat's ``pending_questions`` and a database store share."""
    if not isinstance(stored, (list, tuple)):
        return []
    return [q for q in stored if isinstance(q, dict) and q.get("response") is None]


def open_questions(stored: Any) -> bool:
    """Whether a tool call's stored ``pending_questions`` (a list of dicts) has one without an answer
    (see `open_entries`)."""
    return bool(open_entries(stored))
