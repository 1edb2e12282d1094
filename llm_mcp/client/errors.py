"""The exceptions the client raises.

Every error the client raises on its own account derives from :class:`MCPError`, so
``except llm_mcp.MCPError`` catches them all. Messages never carry tokens, headers or
request bodies: they name the server, the method and what went wrong.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CancelledError",
    "ConfigurationError",
    "ConnectionError",
    "ForbiddenError",
    "InputRequiredError",
    "InsufficientScopeError",
    "InvalidToolChoiceError",
    "MCPError",
    "TurnLimitError",
    "UnauthorizedError",
]


class MCPError(Exception):
    """A server answered with a protocol error, or spoke no protocol revision we know.

    Attributes:
        code: the JSON-RPC error code (``int``), or ``None`` when the failure was not a
            JSON-RPC error (a broken stream, an unknown ``resultType``).
        data: the error's ``data`` member as the server sent it, or ``None``.
        server: the name of the server, or ``None``.
    """

    def __init__(self, message: str, *, code: int | None = None, data: Any = None, server: str | None = None):
        super().__init__(message)
        self.code = code
        self.data = data
        self.server = server


class ConnectionError(MCPError):  # noqa: A001 - the public name the docs promise
    """The server could not be reached: refused, timed out, or its process exited.

    Attributes:
        status: the HTTP status when one was received (429, 5xx), else ``None``.
        exit_status: a stdio server's exit status when its process ended, else ``None``.
        retry_after: seconds the server asked us to wait (``Retry-After``), else ``None``.
        timed_out: ``True`` when no answer came within the request's timeout.
    """

    def __init__(
        self,
        message: str,
        *,
        server: str | None = None,
        status: int | None = None,
        exit_status: int | None = None,
        retry_after: float | None = None,
        timed_out: bool = False,
    ):
        super().__init__(message, server=server)
        self.status = status
        self.exit_status = exit_status
        self.retry_after = retry_after
        self.timed_out = timed_out


class UnauthorizedError(MCPError):
    """The server wants credentials (HTTP 401).

    Attributes:
        www_authenticate: the ``WWW-Authenticate`` challenge, or ``None``.
    """

    def __init__(self, message: str, *, server: str | None = None, www_authenticate: str | None = None):
        super().__init__(message, server=server)
        self.www_authenticate = www_authenticate


class ForbiddenError(MCPError):
    """The server refused the request (HTTP 403)."""


class InsufficientScopeError(ForbiddenError):
    """The token lacks a scope (HTTP 403 with ``error="insufficient_scope"``, RFC 6750 §3.1).

    Attributes:
        scopes: the scopes the server asked for, as a list of strings.
        reason: the server's ``error_description``, or ``None``.
    """

    def __init__(self, message: str, *, server: str | None = None, scopes: list[str] | None = None,
                 reason: str | None = None):
        super().__init__(message, server=server)
        self.scopes = scopes or []
        self.reason = reason


class ConfigurationError(MCPError):
    """A server class declares something the server does not have (an unknown tool name)."""


class CancelledError(MCPError):
    """The call was cancelled before the server answered."""


class InputRequiredError(MCPError):
    """The server asked questions (an ``InputRequiredResult``, MCP 2026-07-28 "Multi Round-Trip
    Requests") that no ``before_input_request`` callback answered.

        try: server.call("deploy", branch="release")
        except llm_mcp.InputRequiredError as exc: [q.message for q in exc.requests]

    Attributes:
        requests: the unanswered :class:`~llm_mcp.Question` objects.
        questions: every question of the round, the ones the callback answered included.
        request_state: the server's opaque ``requestState`` to send back, or ``None``.
        method: the request that asked (``"tools/call"``), or ``None``.
        params: that request's params as sent (without ``_meta``), to send again with the answers.
        input_requests: the ``inputRequests`` map as the server sent it.
    """

    def __init__(self, message: str, *, server: str | None = None, requests: Any = None,
                 request_state: str | None = None, questions: Any = None, method: str | None = None,
                 params: dict[str, Any] | None = None, input_requests: Any = None):
        super().__init__(message, server=server)
        self.requests = list(requests or [])
        self.questions = list(questions) if questions is not None else list(self.requests)
        self.request_state = request_state
        self.method = method
        self.params = params
        self.input_requests = input_requests if isinstance(input_requests, dict) else {}


class InvalidToolChoiceError(ValueError):
    """A chat's tool choice names a tool it cannot offer (unknown, or its server is down),
    or asks for ``"required"`` when no tool is left."""


class TurnLimitError(RuntimeError):
    """A chat asked the model ``max_steps`` times in one turn and the model still called tools."""
