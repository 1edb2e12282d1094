"""Tools written in Python: `ChatTool`, plain functions, and the tool-search tool.

    class Weather(llm_mcp.ChatTool):
        description = "The current weather in a city"
        def execute(self, city: str) -> str: ...

    chat.with_tools(Weather, roll_dice)      # a class, an instance, or a plain function
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from ..client.asking import current_resume
from ..client.declared import snake_case
from ..client.errors import InputRequiredError
from ..client.progress import Progress, tool_listener
from ..client.question import Question
from ..client.tool import Tool
from .text import shortened

if TYPE_CHECKING:
    from ..client.server import MCP
    from .chat import Chat

__all__ = ["ASK_METHOD", "ChatTool", "FunctionTool", "ToolSearch", "as_tool", "report_progress",
           "schema_from_signature"]

ASK_METHOD = "llm_mcp/ask"
"""The ``request.method`` of questions a Python tool asks (resumed by running the tool again)."""

_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "object"}


def schema_from_signature(function: Callable[..., Any]) -> dict[str, Any]:
    """A JSON Schema for a function's keyword arguments, read from its annotations and
    defaults (``str`` -> ``"string"``, ``int`` -> ``"integer"``, ...; unannotated: any)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    try:
        hints = inspect.get_annotations(function, eval_str=True)
    except Exception:  # noqa: BLE001 - a hint that does not resolve just gives no type
        hints = {}
    for parameter in inspect.signature(function).parameters.values():
        if parameter.name in ("self", "tool_call") or parameter.kind in (parameter.VAR_POSITIONAL,
                                                                          parameter.VAR_KEYWORD):
            continue
        hint = hints.get(parameter.name)
        origin = getattr(hint, "__origin__", hint)
        properties[parameter.name] = {"type": _JSON_TYPES[origin]} if origin in _JSON_TYPES else {}
        if parameter.default is parameter.empty:
            required.append(parameter.name)
    return {"type": "object", "properties": properties, "required": required}


def report_progress(value: float, total: float | None = None, message: str | None = None) -> None:
    """Report the progress of the Python tool running now to the chat's ``after_tool_progress``.

        def copy_files(paths: list) -> str:
            for done, path in enumerate(paths, 1): ...; report_progress(done, len(paths), path)

    Does nothing outside a chat's tool call, or when no callback listens. A value not
    above the last one reported for the call is dropped.
    """
    listener = tool_listener()
    if listener is not None:
        listener(Progress(value=value, total=total, message=message))


class ChatTool:
    """A tool written in Python that a chat can offer the model.

        class Weather(llm_mcp.ChatTool):
            description = "The current weather in a city"
            def execute(self, city: str) -> str: return f"Sunny in {city}"

    It meets the chat-tool contract, `ToolLike`, with these defaults.

    Attributes:
        name: the name the model calls it by (default: the class name in snake_case).
        description: what it does, for the model.
        parameters: the JSON Schema of its arguments (default: read from ``execute``).
        requires_approval: ``True`` to pause each call until someone approves it.
        deferred: ``True`` to leave it out of the model's first tool list (found by tool
            search); default ``False``.
        server: the MCP server it is offered with (set for a server's ``extra_tools``), else ``None``.
        rescue_from: ``{exception class: method name or callable}``; the handler's return
            value becomes the result, and an exception it raises stops the chat.
            Handlers of subclasses come first, then their bases'.
    """

    name: str = ""
    description: str = ""
    parameters: dict[str, Any] | None = None
    requires_approval: bool = False
    deferred: bool = False
    server: MCP | None = None
    rescue_from: ClassVar[dict[type, Any]] = {}

    def __init__(self) -> None:
        if not self.name:
            self.name = snake_case(type(self).__name__)

    @property
    def params_schema(self) -> dict[str, Any]:
        """The schema the model fills in."""
        return self.parameters if self.parameters is not None else schema_from_signature(self.execute)

    @property
    def server_name(self) -> str:
        """Its own name (a Python tool is not renamed by a server): what a server's shaping
        settings (``requires_approval``, ``defer`` lists) name it by."""
        return self.name

    def execute(self, **arguments: Any) -> Any:
        """Do the work; return text, a dict/list (sent as JSON), or a ``Result``."""
        raise NotImplementedError(f"{type(self).__name__} must define execute()")

    def call(self, /, **arguments: Any) -> Any:
        """Run `execute` the way a chat does: an exception goes to ``rescue_from``, and
        one no handler takes becomes ``{"error": "<ExceptionClass>: <message>"}`` for the model.
        Exceptions raised by a handler propagate."""
        arguments.pop("tool_call", None)
        try:
            return self.execute(**arguments)
        except InputRequiredError:
            raise  # a question: the chat pauses the call
        except Exception as exc:
            handler = self._handler_for(exc)
            if handler is None:
                return {"error": f"{type(exc).__name__}: {exc}"}
            return getattr(self, handler)(exc) if isinstance(handler, str) else handler(exc)

    def ask(self, message: str, *, schema: dict[str, Any] | None = None, url: str | None = None,
            key: str = "question") -> Question:
        """Ask the user something from ``execute``: the same `llm_mcp.Question` servers ask.

            answer = self.ask("Which environment?", schema={"type": "object", "properties": {
                "environment": {"type": "string", "enum": ["staging", "production"]}}}, key="env")
            answer.response        # {"action": "accept", "content": {"environment": "staging"}}

        The first time, the call pauses (the chat's ``pending_questions``); once the question is
        answered, ``complete()`` runs ``execute`` again and ``ask`` returns the answered question.
        Ask several questions one after the other under different ``key``s. A URL that is not
        ``http``/``https`` comes back declined at once. Outside a chat, raises
        `llm_mcp.InputRequiredError`. ``ValueError`` for both or neither of ``schema`` and ``url``.
        """
        if (schema is None) == (url is None):
            raise ValueError("ask() takes exactly one of schema= (a form) or url= (a URL question)")
        resume = current_resume()
        answered = [q for q in resume.questions if q.answered] if resume is not None and \
            resume.method == ASK_METHOD and resume.params.get("name") == self.name else []
        for question in answered:
            if question.key == key:
                return question
        params: dict[str, Any] = {"mode": "url", "message": message, "url": url} if url is not None else \
            {"mode": "form", "message": message, "requestedSchema": schema}
        question = Question(key, params, server=self.name, request={"method": ASK_METHOD,
                                                                    "params": {"name": self.name}})
        if question.is_url and not question.web_url:
            question.response = {"action": "decline"}
            return question
        raise InputRequiredError(f"tool {self.name!r} asks: {message[:80]!r}", requests=[question],
                                 questions=[*answered, question], method=ASK_METHOD)

    def _handler_for(self, exc: BaseException) -> Any:
        for klass in type(self).__mro__:
            for kind, handler in (klass.__dict__.get("rescue_from") or {}).items():
                if isinstance(exc, kind):
                    return handler
        return None

    def report_progress(self, value: float, total: float | None = None, message: str | None = None) -> None:
        """Report progress from `execute` to the chat's ``after_tool_progress`` (see `report_progress`)."""
        report_progress(value, total, message)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name!r}>"


class FunctionTool(ChatTool):
    """A plain function offered as a tool: its name, docstring and signature describe it.

        def roll_dice(sides: int = 6) -> int:
            '''Roll a die.'''
        chat.with_tools(roll_dice)
    """

    def __init__(self, function: Callable[..., Any]):
        self.function = function
        self.name = function.__name__
        doc = inspect.getdoc(function) or ""
        self.description = doc.split("\n\n")[0].replace("\n", " ")
        self.parameters = schema_from_signature(function)

    def execute(self, **arguments: Any) -> Any:
        return self.function(**arguments)


def as_tool(value: Any) -> ChatTool | Tool:
    """What ``with_tools`` accepts, as a tool object: a ``ChatTool`` class is instantiated, a
    plain function wrapped; tool objects (``ChatTool``, ``llm_mcp.Tool``) pass through.

    Raises ``TypeError`` for anything else."""
    if isinstance(value, type) and issubclass(value, ChatTool):
        return value()
    if isinstance(value, (ChatTool, Tool)):
        return value
    if inspect.isfunction(value) or inspect.ismethod(value):
        return FunctionTool(value)
    raise TypeError(f"with_tools() takes ChatTool classes or instances, MCP tools, or functions, not {value!r}")


class ToolSearch(ChatTool):
    """The tool a chat offers when some tools are deferred: the model describes what it
    needs, gets the matching tools' names and descriptions, and can call them next."""

    name = "search_tools"
    description = ("Search for more tools you can use. Describe the capability you need in a few words; "
                   "the matching tools become available to call.")
    parameters = {"type": "object", "properties": {"query": {"type": "string",
                                                            "description": "What the tool should do"}},
                  "required": ["query"]}
    LIMIT = 5

    def __init__(self, chat: Chat, deferred: list[Any]):
        super().__init__()
        self.chat = chat
        self.deferred = deferred

    def execute(self, query: str = "") -> Any:
        terms = [t for t in re.split(r"\W+", query.lower()) if t]
        scored = []
        for tool in self.deferred:
            haystack = f"{tool.name} {tool.server_name} {tool.description}".lower()
            score = sum(1 for term in terms if term in haystack)
            if score:
                scored.append((-score, tool.name, tool))
        found = [tool for _, _, tool in sorted(scored, key=lambda item: item[:2])[:self.LIMIT]]
        if not found:
            return f"No tools match {query!r}."
        return json.dumps({"tools": [{"name": t.name, "description": shortened(t.description)} for t in found]})

    @staticmethod
    def discovered(content: str) -> list[str]:
        """The tool names a search result made available."""
        try:
            return [t["name"] for t in json.loads(content)["tools"]]
        except (ValueError, KeyError, TypeError):
            return []
