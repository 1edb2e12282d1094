"""The error tree (llm_mcp.client.errors): drawn as it is, picklable, caught by builtin excepts,
the httpx map against real sockets, and the three questions (retry? partly run? down?)."""

from __future__ import annotations

import builtins
import http.server
import pickle
import re
import socket
import threading
from collections.abc import Iterator

import httpx
import pytest

import llm_mcp
from llm_mcp.client import errors
from llm_mcp.client.errors import (
    ConnectionError,
    MCPError,
    ProcessExitedError,
    ServerTimeoutError,
    StreamBrokenError,
)


def _package_errors() -> set[type]:
    """Every public exception class of the package under MCPError, MCPError included."""
    found, todo = set(), [MCPError]
    while todo:
        cls = todo.pop()
        if cls.__module__.startswith("llm_mcp.") and not cls.__name__.startswith("_"):
            found.add(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_the_tree_draws_exactly_the_classes_that_exist():
    import llm_mcp.client.oauth
    import llm_mcp.client.transports.http
    import llm_mcp.client.transports.sse
    import llm_mcp.client.transports.stdio

    drawn = re.findall(r"^\s*(?:[│ ]*[├└]── )?(\w+Error)\s", errors.__doc__, re.MULTILINE)
    assert len(drawn) == len(set(drawn))
    assert set(drawn) == {cls.__name__ for cls in _package_errors()}
    assert all(getattr(errors, name) in _package_errors() for name in drawn)
    assert {name for name in drawn} <= set(errors.__all__)


def test_each_error_names_its_parent_in_the_drawing():
    """The indentation of each drawn line matches the class's depth under MCPError."""
    for line in errors.__doc__.splitlines():
        match = re.match(r"^\s{4}([│ ├└─]*)(\w+Error)\s", line)
        if not match:
            continue
        cls = getattr(errors, match.group(2))
        depth = len(match.group(1)) // 4
        ours = [base for base in cls.__mro__ if base in _package_errors()]
        assert len(ours) - 1 == depth, line


SAMPLES = [
    MCPError("m", code=-32000, data={"x": 1}, server="s"),
    ConnectionError("c", server="s", status=503, retry_after=2.0, request_sent=True),
    ServerTimeoutError("t", server="s"),
    ProcessExitedError("p", server="s", exit_status=3, stderr="last words"),
    errors.StartupFailedError("npx exited", server="s", exit_status=1, stderr="npm error 404"),
    errors.AddressRefusedError("a.test resolves only to 127.0.0.1 (loopback)", server="s", request_sent=False),
    StreamBrokenError("b", server="s", attempts=2),
    errors.LegacyProtocolError("l", status=405, server="s"),
    errors.SessionExpiredError("e", server="s"),
    errors.UnauthorizedError("u", server="s", www_authenticate='Bearer realm="x"'),
    errors.TokenRequestError("r", server="s", error="invalid_client", error_description="no", status=401),
    errors.ForbiddenError("f", server="s"),
    errors.InsufficientScopeError("i", server="s", scopes=["a", "b"], reason="more"),
    errors.ConfigurationError("g", server="s"),
    errors.CancelledError("x", server="s"),
    errors.InputRequiredError("q", server="s", request_state="st", method="tools/call", params={"name": "a"},
                       input_requests={"k": {"method": "elicitation/create"}}),
    errors.InvalidToolChoiceError("v"),
    errors.ExtensionRequiredError("x", code=-32021, server="s", extensions=["io.modelcontextprotocol/tasks"]),
    errors.SkillVerificationError("x", uri="skill://s/SKILL.md", server="s"),
    errors.TaskProtocolError("t", server="s"),
    errors.TurnLimitError("n"),
]


def test_samples_cover_every_class():
    assert {type(sample) for sample in SAMPLES} == _package_errors()


@pytest.mark.parametrize("error", SAMPLES, ids=lambda e: type(e).__name__)
def test_every_error_survives_pickling(error):
    """Errors cross processes (Celery): class, message and attributes come back as they were."""
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error)
    assert str(again) == str(error) and again.args == error.args
    assert again.__dict__ == error.__dict__


def test_connection_errors_are_builtin_connection_errors():
    for error in (ConnectionError("down"), ServerTimeoutError("slow"), ProcessExitedError("gone", exit_status=1)):
        with pytest.raises(builtins.ConnectionError):
            raise error
        assert isinstance(error, OSError) and str(error) == error.args[0]
    assert llm_mcp.ConnectionError is ConnectionError
    assert issubclass(errors.InvalidToolChoiceError, ValueError) and issubclass(errors.TurnLimitError, RuntimeError)
    assert issubclass(errors.InvalidToolChoiceError, MCPError) and issubclass(errors.TurnLimitError, MCPError)


def test_the_old_flags_build_the_subclasses_and_stay_readable():
    timed_out = ConnectionError("slow", server="s", timed_out=True)
    assert type(timed_out) is ServerTimeoutError and timed_out.timed_out and timed_out.server == "s"
    exited = ConnectionError("gone", exit_status=1)
    assert type(exited) is ProcessExitedError and exited.exit_status == 1 and not exited.timed_out
    refused = ConnectionError("busy", status=429, retry_after=3.0)
    assert type(refused) is ConnectionError and (refused.status, refused.retry_after) == (429, 3.0)
    assert not refused.timed_out and refused.exit_status is None and refused.request_sent is None


@pytest.mark.parametrize(("error", "refusal", "partly_run", "outage", "call_outage"), [
    (ConnectionError("refused"), False, False, True, True),
    (ConnectionError("5xx", status=503), False, True, True, True),
    (ConnectionError("429", status=429), False, False, True, True),
    (ConnectionError("404", status=404), True, False, False, False),
    (ServerTimeoutError("slow"), False, True, True, False),
    (ProcessExitedError("gone", exit_status=1), False, True, True, True),
    (errors.StartupFailedError("never read its request", exit_status=1), False, False, True, True),
    (ConnectionError("reset after the request left", request_sent=True), False, True, True, True),
    (ConnectionError("refused before it left", request_sent=False), False, False, True, True),
    (ConnectionError("429 after it left", status=429, request_sent=True), False, False, True, True),
    (errors.AddressRefusedError("private", request_sent=False), True, False, False, False),
    (StreamBrokenError("broke"), False, True, False, False),
    (errors.TaskProtocolError("a task without a taskId"), False, True, False, False),
    (errors.UnauthorizedError("401"), True, False, False, False),
    (errors.TokenRequestError("refused", error="invalid_grant", status=400), True, False, False, False),
    (errors.ForbiddenError("403"), True, False, False, False),
    (errors.InsufficientScopeError("scope"), True, False, False, False),
    (MCPError("json-rpc", code=-32603), False, False, False, False),
    (errors.LegacyProtocolError("old", status=404), False, False, False, False),
    (ValueError("not ours"), False, False, False, False),
], ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else str(v))
def test_the_three_questions(error, refusal, partly_run, outage, call_outage):
    assert errors.is_refusal(error) is refusal
    assert errors.may_have_run(error) is partly_run
    assert errors.is_outage(error) is outage
    assert errors.is_outage(error, tool_call=True) is call_outage


def test_outages_report_connection_errors_by_their_old_name():
    assert errors.reported_name(ServerTimeoutError("x")) == "ConnectionError"
    assert errors.reported_name(ProcessExitedError("x", exit_status=1)) == "ConnectionError"
    assert errors.reported_name(StreamBrokenError("x")) == "StreamBrokenError"


# -- from_httpx, against real sockets on 127.0.0.1 ------------------------------------------------


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join(2)
    for connection in held:
        connection.close()
    listener.close()


@pytest.fixture
def failing_url() -> Iterator[str]:
    """A server answering every GET with HTTP 500 and ``Retry-After: 3``."""

    class Failing(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(500)
            self.send_header("Retry-After", "3")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Failing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    server.shutdown()
    server.server_close()
    thread.join(2)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_from_httpx_maps_a_timeout(silent_port):
    with pytest.raises(httpx.ReadTimeout) as caught, httpx.Client(timeout=0.3) as client:
        client.get(f"http://127.0.0.1:{silent_port}/mcp")
    error = errors.from_httpx(caught.value, server="s", message="unreachable", timeout_message="too slow")
    assert type(error) is ServerTimeoutError and str(error) == "too slow" and error.timed_out
    assert error.server == "s" and error.request_sent is True
    plain = errors.from_httpx(caught.value, server="s", message="unreachable")
    assert type(plain) is ConnectionError and str(plain) == "unreachable" and not plain.timed_out


def test_from_httpx_maps_a_refused_connection():
    with pytest.raises(httpx.ConnectError) as caught, httpx.Client(timeout=2) as client:
        client.get(f"http://127.0.0.1:{_closed_port()}/mcp")
    error = errors.from_httpx(caught.value, server="s", message="unreachable", timeout_message="too slow")
    assert type(error) is ConnectionError and str(error) == "unreachable"
    assert error.status is None and error.request_sent is False and errors.is_outage(error)


def test_from_httpx_maps_a_status(failing_url):
    with httpx.Client(timeout=2) as client:
        response = client.get(failing_url)
        with pytest.raises(httpx.HTTPStatusError) as caught:
            response.raise_for_status()
    for failure in (caught.value, response):
        error = errors.from_httpx(failure, server="s", message="answered HTTP 500")
        assert type(error) is ConnectionError and str(error) == "answered HTTP 500"
        assert (error.status, error.retry_after, error.request_sent) == (500, 3.0, True)
        assert errors.may_have_run(error) and errors.is_outage(error, tool_call=True)
