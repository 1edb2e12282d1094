"""Calling tools: `Calls`, a collaborator of ``llm_mcp.MCP``.

One ``tools/call`` goes: the call's `CallContext` is taken
once (a chat's, or one of its own), a paused request it resumes supplies the original params
and the answers, progress goes to ``after_progress`` and the context's listener, the
server's questions are answered round after round (`Questions`),
and an answer ``-32020`` (the header names we sent are stale) lists the tools again and sends
the call once more. The answer becomes a [`Result`][llm_mcp.Result], checked against the tool's
``outputSchema``.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Callable

from .. import context
from ..declared import call_with
from ..errors import InputRequiredError, MCPError
from ..param_headers import param_headers
from ..progress import Progress, ProgressFilter
from ..protocol import HEADER_MISMATCH
from ..result import Result
from ..task import Task
from .changes import unknown_tool
from .questions import MAX_INPUT_ROUNDS, answers_payload

if TYPE_CHECKING:
    from ..context import CallContext
    from ..tool import Tool
    from .catalog import Catalog
    from .connection import Connection
    from .questions import Questions, Resume
    from .settings import ServerSettings

__all__ = ["Calls"]

_ROUNDS = range(MAX_INPUT_ROUNDS)


class Calls:
    """The ``tools/call`` path of one server.

    Attributes:
        settings: the server's settings (``after_progress``).
        catalog: lists the tools again after a ``-32020``.
        questions: turns an ``InputRequiredResult`` into screened questions.
        connection: holds the server's protocol client.
        name: returns the server's name.
    """

    def __init__(self, settings: ServerSettings, catalog: Catalog, questions: Questions, *,
                 connection: Connection, name: Callable[[], str]):
        self.settings = settings
        self.catalog = catalog
        self.questions = questions
        self.connection = connection
        self._name = name
        self._after_progress = settings.option("after_progress")  # declared once: read once

    def run(self, tool: Tool, arguments: dict[str, Any], call: CallContext | None = None) -> Result | Task:
        """Send ``tools/call`` for ``tool`` with ``arguments`` in the context ``call`` (default:
        `for_call`); see ``MCP.run``. A [`Task`][llm_mcp.Task] when the server answered with one
        (only when the ``"tasks"`` extension is declared)."""
        call = call or context.for_call()
        token = context.enter(call)  # the transports' cancel check and the headers see this call's context
        try:  # (enter/leave rather than ``with call.active()``: one generator less per call)
            params = {"name": tool.server_name, "arguments": arguments}
            resume = self.questions.resume_for(call, "tools/call", params) if call.resume is not None else None
            if resume is not None:  # a paused chat call going on
                params = resume.params
                arguments = params.get("arguments") or {}
            listened = self._after_progress is not None or call.on_progress is not None  # (most calls: nobody)
            try:
                raw = self.request_answering("tools/call", params, resume,  # (positional: no keywords matched)
                                             param_headers(tool.header_map, arguments) if tool.header_map else None,
                                             None, tool._resend, self.progress_listener(call) if listened else None,
                                             call)
            except MCPError as exc:
                if exc.code is not None and unknown_tool(str(exc), tool.server_name):
                    self.catalog.forget("tools")  # the tool is gone: the next listing shows what is left
                if exc.code != HEADER_MISMATCH:  # our idea of the tool is stale
                    raise
                fresh = next((t for t in self.catalog.refresh_tools() if t.server_name == tool.server_name), tool)
                raw = self.request_answering("tools/call", params, resume=resume, context=call,
                                             headers=param_headers(fresh.header_map, arguments) if fresh.header_map
                                             else None,
                                             resend=fresh._resend, on_progress=self.progress_listener(call))
                tool = fresh
        finally:
            context.leave(token)
        if raw.get("resultType") == "task":
            return Task(raw, server=self.settings.owner, tool_name=tool.server_name)
        result = Result(raw, tool.server_name, tool._ui_uri)  # (positional: keywords to a class cost a dict)
        if result.is_error and unknown_tool(result.text, tool.server_name):
            self.catalog.forget("tools")
        if tool.output_schema is not None:  # (check_output's own first test: most tools have none)
            tool.check_output(result)
        return result

    def request_answering(self, method: str, params: dict[str, Any], resume: Resume | None = None,
                          headers: dict[str, str] | None = None, timeout: float | None = None, resend: bool = True,
                          on_progress: Callable[[dict[str, Any]], None] | None = None,
                          context: CallContext | None = None) -> dict[str, Any]:
        """``client.request(method, params)`` (the other keywords are its own), answering the
        server's questions round after round.

        Raises [`InputRequiredError`][llm_mcp.client.errors.InputRequiredError] with the questions left open, and
        ``MCPError`` after `MAX_INPUT_ROUNDS` answered rounds, for more than
        `MAX_INPUT_REQUESTS` questions in one round, or for an input request that is not
        an ``elicitation/create``."""
        extra = answers_payload(resume.questions, resume.request_state) if resume is not None else None
        for _ in _ROUNDS:
            try:  # (the keywords spelled out, not ``**options``: no dict built and unpacked per call)
                return self.connection.client.request(method, {**params, **extra} if extra else params,
                                                      headers=headers, timeout=timeout, resend=resend,
                                                      on_progress=on_progress, context=context)
            except InputRequiredError as exc:
                if exc.questions:  # a nested server's questions: not ours to answer
                    raise
                questions = self.questions.from_answer(exc, method, params)
                left = [q for q in questions if not q.answered]
                if left:
                    raise InputRequiredError(
                        f"MCP server {self._name()!r} asked {len(left)} question(s) to finish {method}: "
                        + "; ".join(repr(q.message[:80]) for q in left), server=self._name(), requests=left,
                        questions=questions, request_state=exc.request_state, method=method,
                        params=copy.deepcopy(params), input_requests=exc.input_requests) from None
                extra = answers_payload(questions, exc.request_state)
        raise MCPError(f"MCP server {self._name()!r} kept asking for input to finish {method} ({MAX_INPUT_ROUNDS} "
                       "rounds answered); the call was stopped", server=self._name())

    def progress_listener(self, call: CallContext | None) -> Callable[[dict[str, Any]], None] | None:
        """What receives one request's progress notifications: ``after_progress`` and the call
        context's listener, each given [`Progress`][llm_mcp.Progress] objects whose value only
        grows; ``None`` when nobody listens (then no ``progressToken`` is sent)."""
        chat_listener = call.on_progress if call is not None else None
        after = self._after_progress
        if after is None and chat_listener is None:
            return None
        listeners: list[Callable[[Progress], Any]] = []
        if after is not None:
            owner = self.settings.owner
            listeners.append(lambda progress: call_with(after, owner, progress))
        if chat_listener is not None:
            listeners.append(chat_listener)
        return ProgressFilter(listeners)
