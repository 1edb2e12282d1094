"""The exceptions the client raises, as one tree.

Every error the package raises on its own account derives from `MCPError`, so
``except llm_mcp.MCPError`` catches them all. Messages never carry tokens, headers or
request bodies: they name the server, the method and what went wrong.

    MCPError                        a protocol error, or no revision we know (.code, .data, .server)
    ├── ConnectionError             unreachable, or HTTP 429/5xx (.status, .retry_after; also the builtin)
    │   ├── ServerTimeoutError      no answer within the request's timeout (.timed_out is True)
    │   ├── ProcessExitedError      a stdio server's process ended (.exit_status, .stderr)
    │   │   └── StartupFailedError  it ended before reading its first request: starting again won't help
    │   └── AddressRefusedError     an address policy refused the address a name resolves to
    ├── StreamBrokenError           a response stream ended before the response and could not be resumed
    ├── LegacyProtocolError         HTTP 400/404/405 without a JSON-RPC body: a server older than 2026-07-28
    ├── SessionExpiredError         a handshake-era server ended our Mcp-Session-Id (HTTP 404)
    ├── UnauthorizedError           credentials wanted (HTTP 401)
    │   └── TokenRequestError       an authorization server refused a token request (RFC 6749 §5.2)
    ├── ForbiddenError              the request was refused (HTTP 403)
    │   └── InsufficientScopeError  the token lacks a scope (RFC 6750 §3.1)
    ├── ConfigurationError          a server class declares a tool the server does not list
    ├── CancelledError              the call was cancelled before the server answered
    ├── InputRequiredError          the server asked questions nobody answered
    ├── ExtensionRequiredError      the server needs an extension the client did not declare (-32021)
    ├── TaskProtocolError           a server's task breaks the Tasks extension (a field, another task's id)
    ├── SkillVerificationError      a skill's file or frontmatter does not match its listing (size, sha256)
    ├── InvalidToolChoiceError      a chat's tool choice names a tool it cannot offer (also ValueError)
    └── TurnLimitError              a chat turn reached max_steps (also RuntimeError)

Three questions about a failure are answered here and nowhere else:

* may it be retried? `is_refusal` says when retrying will not help (401, 403, HTTP 404, a refused address);
* has the call partly run? `may_have_run`;
* is the server down? `is_outage` (the chat's backoff in `llm_mcp.client.outages` acts on it).

`from_httpx` is the one translation of an `httpx` failure into this tree.

`ConnectionError`'s subclasses replace the flags callers branched on; the flags stay, derived
from the class: ``timed_out`` is ``isinstance(exc, ServerTimeoutError)``, and
``ConnectionError(message, timed_out=True)`` (or ``exit_status=...``) still builds the
matching subclass. An HTTP 429 or 5xx stays a plain `ConnectionError` with ``.status``, a
number like `MCPError.code` rather than a flag: ``rescue_from`` handlers and chat tools show
the model ``type(error).__name__``, and for those answers it has always been
``"ConnectionError"``. `ServerTimeoutError` does not also derive from the builtin
``TimeoutError``: code waiting on a future with ``except TimeoutError`` would take a tool's
timeout for its own. The builtin bases of `ConnectionError`, `InvalidToolChoiceError` and
`TurnLimitError` keep older ``except`` clauses working.

Not in the tree: ``ValueError`` for settings of the wrong shape (raised when a server is
built), private control-flow classes that never leave their module (their names start with
``_``, and ``oauth.bounded.TooLarge``, an ``httpx.HTTPError`` turned into one of ours), and
the exceptions of ``llm_mcp.testing``, which tool code inside a test server raises.
"""

from __future__ import annotations

import builtins
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

__all__ = [
    "AddressRefusedError",
    "CancelledError",
    "ConfigurationError",
    "ConnectionError",
    "ExtensionRequiredError",
    "ForbiddenError",
    "InputRequiredError",
    "InsufficientScopeError",
    "InvalidToolChoiceError",
    "LegacyProtocolError",
    "MCPError",
    "ProcessExitedError",
    "ServerTimeoutError",
    "SessionExpiredError",
    "SkillVerificationError",
    "StartupFailedError",
    "StreamBrokenError",
    "TaskProtocolError",
    "TokenRequestError",
    "TurnLimitError",
    "UnauthorizedError",
    "from_httpx",
    "is_outage",
    "is_refusal",
    "may_have_run",
    "reported_name",
    "retry_after_seconds",
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


# -- could not be reached ------------------------------------------------------------------------


class ConnectionError(MCPError, builtins.ConnectionError):  # noqa: A001 - the public name the docs promise
    """The server could not be reached: refused, timed out, or its process exited.

    Also a builtin ``ConnectionError`` (an ``OSError``), so ``except ConnectionError`` catches
    it whichever of the two the name means. Its subclasses say why; this class itself means the
    connection failed or broke off (refused, DNS, reset, a process that could not start), or
    the server answered HTTP 429 or 5xx (``status``): it is there but will not serve now.

    Attributes:
        status: the HTTP status when one was received (429, 5xx), else ``None``.
        exit_status: a stdio server's exit status when its process ended (`ProcessExitedError`), else ``None``.
        retry_after: seconds the server asked us to wait (``Retry-After``), else ``None``.
        timed_out: ``True`` for a `ServerTimeoutError` (read-only: it is the class).
        stderr: the last lines a stdio server wrote to its stderr (bounded, control characters
            escaped, environment values redacted; ``""`` when none or not stdio).
        request_sent: whether the request had left when the failure came (``True``/``False``),
            or ``None`` when unknown. `from_httpx` knows it; `may_have_run` reads it: a failure
            after the request left (other than a 429) means the server may have started the work.

    ``ConnectionError(message, timed_out=True)`` or ``exit_status=<int>`` builds the subclass
    the flag stands for (a timeout first), as callers wrote before the subclasses existed.
    """

    def __new__(cls, message: str = "", *, timed_out: bool = False, exit_status: int | None = None,
                **_: Any) -> ConnectionError:
        built = cls
        if cls is ConnectionError and timed_out:
            built = ServerTimeoutError
        elif cls is ConnectionError and exit_status is not None:
            built = ProcessExitedError
        return super().__new__(built, message)

    def __init__(self, message: str = "", *, server: str | None = None, status: int | None = None,
                 exit_status: int | None = None, retry_after: float | None = None, timed_out: bool = False,
                 request_sent: bool | None = None, stderr: str = ""):
        super().__init__(message, server=server)
        self.stderr = stderr
        self.status = status
        self.exit_status = exit_status
        self.retry_after = retry_after
        self.request_sent = request_sent

    @property
    def timed_out(self) -> bool:
        """Whether no answer came within the request's timeout (this is a `ServerTimeoutError`)."""
        return isinstance(self, ServerTimeoutError)


class ServerTimeoutError(ConnectionError):
    """No answer came within the request's timeout (the server may still be working on it).

    A tool call that times out does not mark the server down: a slow tool is not a down server.
    """


class ProcessExitedError(ConnectionError):
    """A stdio server's process ended while a request waited for it, or before it was written.

    Attributes:
        exit_status: the process's exit status (``int``; negative for a signal), or ``None``
            when unknown.
    """


class StartupFailedError(ProcessExitedError):
    """A stdio server's process ended before it read its first request: it failed while
    starting (a package that does not exist, a bad command, a missing variable). The client
    does not start it again within the same call; ``.stderr`` usually says why."""


class AddressRefusedError(ConnectionError):
    """The connection was not made: the address the server's name resolves to is one the
    connection's address policy refuses (`llm_mcp.client.addresses.PublicAddressesOnly`:
    loopback, private, link-local, ...). Nothing was sent; `is_refusal` is true for it."""


# -- spoke, but not as expected ------------------------------------------------------------------


class StreamBrokenError(MCPError):
    """A response stream ended before the response arrived and could not be resumed.

    Attributes:
        attempts: how many streams were already read for this request (the POST, plus any
            resumptions), counted against the client's limit of three.
    """

    def __init__(self, message: str = "", *, server: str | None = None, attempts: int = 1):
        super().__init__(message, server=server)
        self.attempts = attempts


class LegacyProtocolError(MCPError):
    """The peer answered like a server that predates 2026-07-28.

    Raised by the HTTP transport for HTTP 400, 404 or 405 without a JSON-RPC error body
    (MCP 2026-07-28, "Backward compatibility"); the client then tries the handshake.

    Attributes:
        status: the HTTP status (``int``), or ``None``.
    """

    def __init__(self, message: str = "", *, status: int | None = None, server: str | None = None):
        super().__init__(message, server=server)
        self.status = status


class SessionExpiredError(MCPError):
    """A handshake-era HTTP server answered 404 to our ``Mcp-Session-Id``: the session is gone.

    The client answers it with a new handshake; it reaches callers only when that session ends too."""


# -- refused -------------------------------------------------------------------------------------


class UnauthorizedError(MCPError):
    """The server wants credentials (HTTP 401).

    Attributes:
        www_authenticate: the ``WWW-Authenticate`` challenge, or ``None``.
    """

    def __init__(self, message: str = "", *, server: str | None = None, www_authenticate: str | None = None):
        super().__init__(message, server=server)
        self.www_authenticate = www_authenticate


class TokenRequestError(UnauthorizedError):
    """An authorization server refused a token request (RFC 6749 §5.2).

        try: request_token(http, endpoint, form, client=client, auth_method="client_secret_basic")
        except TokenRequestError as refusal:
            refusal.error, refusal.error_description   # ("invalid_client", "client is disabled")

    Importable from ``llm_mcp.client.oauth`` too, where it is raised.

    Attributes:
        error: the server's ``error`` code, e.g. ``"invalid_client"`` (``str``).
        error_description: the server's ``error_description``, or ``None``.
        status: the HTTP status of the refusal (``int``).
    """

    def __init__(self, message: str = "", *, server: str | None = None, error: str = "",
                 error_description: str | None = None, status: int = 0):
        super().__init__(message, server=server)
        self.error = error
        self.error_description = error_description
        self.status = status


class ForbiddenError(MCPError):
    """The server refused the request (HTTP 403)."""


class InsufficientScopeError(ForbiddenError):
    """The token lacks a scope (HTTP 403 with ``error="insufficient_scope"``, RFC 6750 §3.1).

    Attributes:
        scopes: the scopes the server asked for, as a list of strings.
        reason: the server's ``error_description``, or ``None``.
    """

    def __init__(self, message: str = "", *, server: str | None = None, scopes: list[str] | None = None,
                 reason: str | None = None):
        super().__init__(message, server=server)
        self.scopes = scopes or []
        self.reason = reason


# -- the client's own ----------------------------------------------------------------------------


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
        requests: the unanswered `Question` objects.
        questions: every question of the round, the ones the callback answered included.
        request_state: the server's opaque ``requestState`` to send back, or ``None``.
        method: the request that asked (``"tools/call"``), or ``None``.
        params: that request's params as sent (without ``_meta``), to send again with the answers.
        input_requests: the ``inputRequests`` map as the server sent it.
    """

    def __init__(self, message: str = "", *, server: str | None = None, requests: Any = None,
                 request_state: str | None = None, questions: Any = None, method: str | None = None,
                 params: dict[str, Any] | None = None, input_requests: Any = None):
        super().__init__(message, server=server)
        self.requests = list(requests or [])
        self.questions = list(questions) if questions is not None else list(self.requests)
        self.request_state = request_state
        self.method = method
        self.params = params
        self.input_requests = input_requests if isinstance(input_requests, dict) else {}


class ExtensionRequiredError(MCPError):
    """The server needs the client to declare extensions it did not (JSON-RPC ``-32021`` with
    ``data.requiredCapabilities.extensions``), e.g. ``io.modelcontextprotocol/tasks`` for a tool
    that only runs as a task: add the extension to the server class's ``extensions``.

    Attributes:
        extensions: the identifiers the server asked for, sorted.
    """

    def __init__(self, message: str = "", *, extensions: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.extensions = list(extensions or [])


class TaskProtocolError(MCPError):
    """A server's task (a ``CreateTaskResult``, a ``tasks/get`` answer or a ``notifications/tasks``)
    breaks the Tasks extension (``io.modelcontextprotocol/tasks``): a missing or invalid field,
    a status the extension does not have, another task's id, ``completed`` without its result.
    Unlike a lost answer it is not checked again: in a chat the paused call gets one error
    result saying so, then ``complete()`` raises this."""


class InvalidToolChoiceError(MCPError, ValueError):
    """A chat's tool choice names a tool it cannot offer (unknown, or its server is down),
    or asks for ``"required"`` when no tool is left. Also a ``ValueError``."""


class TurnLimitError(MCPError, RuntimeError):
    """A chat asked the model ``max_steps`` times in one turn and the model still called tools.
    Also a ``RuntimeError``."""


# -- the three questions -------------------------------------------------------------------------


def is_refusal(exc: BaseException) -> bool:
    """Whether retrying will not fix the failure: 401, 403 (scopes included), HTTP 404, and an
    address the connection's policy refuses."""
    return isinstance(exc, (UnauthorizedError, ForbiddenError, AddressRefusedError)) or (
        isinstance(exc, ConnectionError) and exc.status == 404)


def may_have_run(exc: BaseException) -> bool:
    """Whether a call that failed this way may have partly run on the server: it timed out,
    its process exited, the server answered 5xx, its response stream broke, or the connection
    failed after the request had left (``request_sent``; over HTTP, both eras), or it answered
    with a task it broke the extension with (`TaskProtocolError`: work was started). A refused
    connect, an HTTP 429 ("not now", said before any work) and a process that never read the
    request (`StartupFailedError`) are the failures that did not."""
    if isinstance(exc, StartupFailedError):
        return False  # it never read the request
    if isinstance(exc, (StreamBrokenError, ServerTimeoutError, ProcessExitedError, TaskProtocolError)):
        return True
    if not isinstance(exc, ConnectionError):
        return False
    if exc.status is not None:
        return exc.status >= 500
    return exc.request_sent is True


def is_outage(exc: BaseException, *, tool_call: bool = False) -> bool:
    """Whether the failure means the server is down: it could not be reached, answered 429 or
    5xx, or its process exited; refusals and protocol errors are not outages.

    With ``tool_call=True`` (the failure of a ``tools/call``) a timeout does not count: a slow
    tool is not a down server."""
    if not isinstance(exc, ConnectionError) or is_refusal(exc):
        return False
    return not (tool_call and isinstance(exc, ServerTimeoutError))


def reported_name(exc: BaseException) -> str:
    """The error's class name as outage logs and listeners report it: ``"ConnectionError"`` for
    `ConnectionError` and its subclasses (listeners, and the ``mcp_unreachable`` signal, have
    always been sent that name), else the class's own name."""
    return ConnectionError.__name__ if isinstance(exc, ConnectionError) else type(exc).__name__


# -- from httpx ----------------------------------------------------------------------------------


def retry_after_seconds(value: str | None) -> float | None:
    """Parse ``Retry-After`` (RFC 9110 §10.2.3): delay seconds or an HTTP date; ``None`` when absent
    or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    import email.utils  # only for an HTTP date; email brings socket and more, so not at import

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def from_httpx(failure: httpx.HTTPError | httpx.Response, *, server: str | None, message: str,
               timeout_message: str | None = None, broke_message: str | None = None) -> ConnectionError:
    """The error for a failed ``httpx`` request, to raise ``from None``.

        except httpx.HTTPError as exc:
            raise from_httpx(exc, server=name, message=f"{name} could not be reached",
                             timeout_message=f"{name} did not answer within 5 s") from None

    Args:
        failure: the ``httpx`` exception, or a response whose status means "not now" (429, 5xx).
        server: the server's name, for `MCPError.server`.
        message: the message for a failure to reach the server (or for a response).
        timeout_message: the message for a timeout; ``None`` treats a timeout as any other
            failure to reach the server.
        broke_message: the message for a failure after the request had left (the connection
            reset or closed before the answer); ``None`` uses ``message``.

    Returns:
        `ConnectionError` with ``.status`` and ``.retry_after`` for a response or an
        ``httpx.HTTPStatusError``; `ServerTimeoutError` for an ``httpx.TimeoutException`` when
        ``timeout_message`` is given; `ConnectionError` otherwise. ``.request_sent`` is
        ``False`` when the request never left (connect failures and timeouts, an exhausted pool),
        ``True`` otherwise.
    """
    import httpx

    if isinstance(failure, httpx.HTTPStatusError):
        failure = failure.response
    if isinstance(failure, httpx.Response):
        return ConnectionError(message, server=server, status=failure.status_code, request_sent=True,
                               retry_after=retry_after_seconds(failure.headers.get("retry-after")))
    sent = not isinstance(failure, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout,
                                    httpx.UnsupportedProtocol, httpx.ProxyError))
    if timeout_message is not None and isinstance(failure, httpx.TimeoutException):
        return ServerTimeoutError(timeout_message, server=server, request_sent=sent)
    if sent and broke_message is not None:
        message = broke_message
    return ConnectionError(message, server=server, request_sent=sent)


class SkillVerificationError(MCPError):
    """A skill's content does not match the entry the client holds for it, or the entry cannot be
    loaded (Skills extension ``io.modelcontextprotocol/skills``, "Integrity and Verification"):
    a file whose size or ``sha256`` digest differs from its entry, a ``SKILL.md`` whose frontmatter
    differs from the entry's, a file the entry does not list, an entry over the 512-file / 16 MiB
    limits. The content is never used.

    Attributes (besides `MCPError`'s): ``uri``, the file (or skill) concerned.
    """

    def __init__(self, message: str = "", *, uri: str = "", server: str | None = None):
        super().__init__(message, server=server)  # defaults let pickle rebuild it (Celery)
        self.uri = uri
