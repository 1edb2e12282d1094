"""What a running kit tool talks through: the client logger, progress, cancellation.

    channel = CallChannel()                 # a recording channel, no server needed
    Double({"number": "21"}, channel=channel).call()
    channel.logs                            # [("info", "...")] what the tool logged to the client

Inside a server the channel forwards to the request's session (from the tool's
worker thread to the event loop). Spec: MCP 2026-07-28 "Utilities" > "Logging",
"Progress" and "Cancellation".
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["LOG_LEVELS", "CallChannel", "CallState", "ClientLogger", "InvalidResult", "OutputSchemaError",
           "ToolCancelled", "ToolError", "bind_call"]

log = logging.getLogger("llm_mcp.testing")

SEND_TIMEOUT = 10.0
"""Seconds a tool's log or progress notification may take to be handed to the client's stream;
past that (or as soon as the client cancels the request) it is dropped, logged at debug, and the
tool goes on: a stream its client has shut can never hold a tool, and its cancellation, forever."""

CANCEL_POLL = 0.02
"""Seconds between a waiting send's looks at its call's cancel flag."""

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""The protocol's log levels (RFC 5424 severities), least severe first."""


class ToolCancelled(BaseException):
    """Raised inside a tool's ``cancellable`` work once the client has cancelled the request, and
    in the handshake era by a question or sampling request still waiting for the client's answer
    (``channel.send_elicit``/``send_sample``, what ``ask`` and ``sample`` send).

        try: self.cancellable(lambda: self.sleep(3))
        except ToolCancelled: ...   # only to clean up; re-raise it

    A ``BaseException`` (like ``asyncio.CancelledError``) so that ``except Exception``
    in tool code does not swallow it. No result is sent for a cancelled request.
    """


class InvalidResult(ValueError):
    """What a tool, resource or prompt answered cannot be sent: a mistake in the test server.

        return None                                  # InvalidResult: Fetch.call() returned None
        self.text_content(text="hi", annotations={"audience": "robot"})   # refused when answered

    The server logs it and answers the request with JSON-RPC internal error
    (-32603) carrying this message, the same way in both protocol eras, so a test
    fails loudly instead of passing on a half-sent answer.
    """


class OutputSchemaError(InvalidResult):
    """Structured content that does not match the tool's ``output_schema``.

        self.respond_with(structured_content={"temperature": "warm"})
        # OutputSchemaError: get_weather_data: structured content does not match ...

    The server answers such a call with a JSON-RPC internal error (-32603) carrying
    this message, so the test author sees it instead of a success.
    """


class ToolError(Exception):
    """Raise it in ``call()`` to answer with a tool error (``isError: true``) carrying its message.

        raise ToolError("quota exceeded")
        # same as: return self.respond_with(error="quota exceeded")
    """


_Sender = Callable[..., Awaitable[Any]]


class CallChannel:
    """The link between one tool call and its request; records what it sends.

        channel = CallChannel()
        channel.log("info", "hello"); channel.logs         # [("info", "hello")]
        channel.cancel(); channel.cancelled                 # True

    Attributes:
        logs: ``(level, message)`` pairs sent (or offered) to the client, in order.
        progress_sent: ``(progress, total, message)`` triples sent, in order.
        cancel_event: set when the client cancelled the request.
        progress_requested: whether the request carried a ``progressToken``.
        request_id: the JSON-RPC id of the request, or ``None`` outside a server.
        protocol_version: the request's protocol revision (``"2026-07-28"``, ``"2025-11-25"``...).
        client_capabilities: the capabilities the client declared (``_meta`` or ``initialize``).
        input_responses: the ``inputResponses`` the request carried (``{}`` when none).
        request_state: the ``requestState`` the request carried, or ``None``.
        send_elicit: in the handshake era, sends one ``elicitation/create`` params dict and
            returns the client's ``ElicitResult`` dict (`ToolCancelled` once the client cancels
            the request); ``None`` on 2026-07-28.
        send_sample: in the handshake era, sends one ``sampling/createMessage`` params dict and
            returns the client's ``CreateMessageResult`` dict (`ToolCancelled` the same way);
            ``None`` on 2026-07-28.
        server: the kit server serving the call, or ``None``.
    """

    def __init__(self, *, send_log: _Sender | None = None, send_progress: _Sender | None = None,
                 progress_requested: bool = False, token: Any = None, request_id: Any = None,
                 protocol_version: str | None = None, client_capabilities: dict[str, Any] | None = None,
                 input_responses: dict[str, Any] | None = None, request_state: str | None = None,
                 send_elicit: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                 send_sample: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> None:
        self._send_log = send_log
        self._send_progress = send_progress
        self._token = token
        self.request_id = request_id
        self.protocol_version = protocol_version
        self.client_capabilities: dict[str, Any] = dict(client_capabilities or {})
        self.input_responses: dict[str, Any] = dict(input_responses or {})
        self.request_state = request_state
        self.send_elicit = send_elicit
        self.send_sample = send_sample
        self.progress_requested = progress_requested
        self.cancel_event = threading.Event()
        self.logs: list[tuple[str, str]] = []
        self.progress_sent: list[tuple[float, float | None, str | None]] = []
        self.task: Any = None
        """The kit task this call runs as (``llm_mcp.testing.tasks.KitTask``), or ``None``."""
        self.server: Any = None
        """The kit [`Server`][llm_mcp.testing.Server] serving the call (``None`` outside one): a
        tool changes it at run time with ``self.channel.server.add(...)``/``remove(...)``/``announce(...)``."""

    @property
    def cancelled(self) -> bool:
        """Whether the client has cancelled the request."""
        return self.cancel_event.is_set()

    def cancel(self) -> None:
        """Mark the request cancelled (the server does this when the client cancels)."""
        self.cancel_event.set()

    def _forward(self, sender: _Sender | None, *args: Any) -> None:
        """Run ``sender(*args)`` on the server's event loop; this (the tool's) thread waits for it
        at most `SEND_TIMEOUT` seconds, and no longer once the client has cancelled the request.
        Whatever the send ends in is logged at debug: the tool goes on, or its thread would end
        unseen (no ``cancelled`` step, no answer).

        The send runs as a task of its own, outside the tool's cancel scope (see `_run_outside`)."""
        if sender is None:
            return
        try:
            self._run_outside(sender, args, deadline=time.monotonic() + SEND_TIMEOUT)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - e.g. asyncio's CancelledError: the tool goes on
            log.debug("llm_mcp.testing: a send to the client was dropped: %s: %s", type(exc).__name__, exc)

    def _call(self, sender: _Sender, *args: Any) -> Any:
        """Run ``sender(*args)`` (a request to the client: ``elicitation/create``,
        ``sampling/createMessage``) on the server's event loop from the tool's thread and return
        its value; no time limit (a person may be answering), but not past the client's cancel.

        Raises `ToolCancelled` once the client has cancelled the request, also when the answer
        came back as the cancel landed (a cancelled call does not go on with it); else what the
        send raised. The send runs outside the tool's cancel scope (see `_run_outside`)."""
        try:
            value = self._run_outside(sender, args, deadline=None)
        except (ToolCancelled, KeyboardInterrupt, SystemExit):
            raise
        except BaseException:
            if self.cancel_event.is_set():
                raise ToolCancelled("the client cancelled the request while the server's request waited") from None
            raise
        if self.cancel_event.is_set():
            raise ToolCancelled("the client cancelled the request as the server's request was answered")
        return value

    def _run_outside(self, sender: _Sender, args: tuple[Any, ...], *, deadline: float | None) -> Any:
        """``sender(*args)``'s value, the send run on the server's asyncio loop as a task of its own
        while this (the tool's) thread waits, looking at the cancel flag every `CANCEL_POLL` seconds.

        Not in the tool's cancel scope: ``anyio.from_thread.run`` puts the task there, where a
        client's cancel landing mid-send cancels the send itself, which then ends in asyncio's
        ``CancelledError`` in the tool's thread (no ``except Exception`` catches it: the tool's
        thread ended unseen). Here only this thread stops a send: once the client has cancelled
        the request (`ToolCancelled`) or past ``deadline`` (``time.monotonic()``; `TimeoutError`),
        the send is cancelled. Raises what the send raised, ``RuntimeError`` when the loop is
        closed (the server stopping). On another event loop than asyncio's, anyio's way (in the
        scope) is all there is."""
        loop = getattr(self._token, "native_token", None)
        if not isinstance(loop, asyncio.AbstractEventLoop):
            import anyio.from_thread

            return anyio.from_thread.run(sender, *args, token=self._token)
        send = sender(*args)
        try:
            sending = asyncio.run_coroutine_threadsafe(send, loop)
        except RuntimeError:  # the loop is closed: the server is stopping
            if asyncio.iscoroutine(send):
                send.close()  # never to run: no "never awaited" warning
            raise
        while True:
            finished, _ = concurrent.futures.wait((sending,), timeout=CANCEL_POLL)
            if finished:
                return sending.result()
            if self.cancel_event.is_set():
                sending.cancel()
                raise ToolCancelled("the client cancelled the request while a send to it waited")
            if deadline is not None and time.monotonic() > deadline:
                sending.cancel()
                raise TimeoutError("a send to the client was not taken in time")

    def log(self, level: str, message: str) -> None:
        """Send ``notifications/message`` at ``level`` (one of ``LOG_LEVELS``)."""
        self.logs.append((level, message))
        self._forward(self._send_log, level, message)

    def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send ``notifications/progress`` for this request (only when the client asked for progress)."""
        if not self.progress_requested:
            return
        self.progress_sent.append((progress, total, message))
        self._forward(self._send_progress, progress, total, message)


def _send_at(level: str) -> Callable[[ClientLogger, str], None]:
    """The `ClientLogger` method named ``level``: ``logger.warning(message)`` is ``logger.log("warning", message)``."""

    def send(self: ClientLogger, message: str) -> None:
        self.log(level, message)

    send.__name__, send.__qualname__ = level, f"ClientLogger.{level}"
    send.__doc__ = f"Send at ``{level}``."
    return send


class ClientLogger:
    """Log messages that go to the MCP client, one method per protocol level.

        self.client_logger.info("Getting weather data for Paris")
        self.client_logger.emergency("disk on fire")
        self.client_logger.verbose("x")     # AttributeError: no such level

    Over 2026-07-28 a message is sent only when the request's ``_meta`` carries
    ``io.modelcontextprotocol/logLevel`` and only at or above that level; in the
    handshake era the level set with ``logging/setLevel`` filters (default: all).
    """

    def __init__(self, channel: CallChannel) -> None:
        self._channel = channel

    def log(self, level: str, message: str) -> None:
        """Send ``message`` at ``level``; ValueError for a level the protocol does not have."""
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        self._channel.log(level, str(message))

    # one method a level, named for it: debug(message), info(message), ..., emergency(message)
    debug, info, notice, warning, error, critical, alert, emergency = (_send_at(level) for level in LOG_LEVELS)


class CallState:
    """What a tool, resource or prompt instance holds while it runs (set by `bind_call`).

        self.context          # the server's context values, {} when none
        self.client_logger    # ClientLogger: sends notifications/message
        self.server_logger    # logging.Logger, never sent
    """

    name: Any = None
    context: dict[str, Any]
    channel: CallChannel
    client_logger: ClientLogger
    server_logger: logging.Logger


def bind_call(target: Any, kind: str, context: dict[str, Any] | None, channel: CallChannel | None) -> None:
    """Give a tool, resource or prompt instance its ``context``, ``channel`` and two loggers.

        bind_call(self, "tools", context, channel)
        self.client_logger.info("..."); self.server_logger.debug("...")   # llm_mcp.testing.tools.<name>
    """
    target.context = dict(context or {})
    target.channel = channel if channel is not None else CallChannel()
    target.client_logger = ClientLogger(target.channel)
    target.server_logger = logging.getLogger(f"llm_mcp.testing.{kind}.{target.name or type(target).__name__}")
