"""Progress (issue 7, checklist section 13, MCP-PROG-01..08): ``after_progress`` and
``after_tool_progress``, the progress token, values that do not grow, and progress a server
should not send (not a number, too large for a float, another request's token).

Against the project's kit server ``llm_mcp_tests.support.servers.progress_tools`` (which records what
it received: the request ``_meta``) in both eras and both transports, scripted 2026-07-28 servers,
a 2024-11-05 HTTP+SSE server, and the npm reference server ``server-everything``. Server logs are
in ``test_server_logs.py``, cancellation in ``test_cancellation.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import llm_mcp
from llm_mcp.testing import running_server
from llm_mcp.testing.scripted_model import reply, tool_call, turn

from llm_mcp_tests.support.progress import (
    COMBOS,
    COMBO_IDS,
    SERVER_MODULE,
    kit,
    received,
    reference_server,
    settled,
    steps_done,
)
from llm_mcp_tests.support.scripted import server_of, sse


# What report_progress sends, filtered by hand: 20 (below 30) and the second 30 (not above 30) are dropped.
DELIVERED = [(10, 100, "starting"), (30, 100, "a third"), (60, None, "no total"), (100, 100, "done")]


# -- progress ------------------------------------------------------------------------------------


def test_progress_value_total_message_fraction():
    """MCP-PROG-02: Progress has message, value, total and fraction; total None without one, fraction
    value/total or None."""
    progress = llm_mcp.Progress(value=30, total=120, message="Copying")
    assert (progress.value, progress.total, progress.message, progress.fraction) == (30, 120, "Copying", 0.25)
    bare = llm_mcp.Progress(value=3)
    assert (bare.total, bare.message, bare.fraction) == (None, None, None)
    assert llm_mcp.Progress.from_params({"progress": 2, "total": 8, "message": "m"}) == llm_mcp.Progress(2, 8, "m")
    assert llm_mcp.Progress.from_params({"progress": "2"}) is None  # not a number: ignored
    assert llm_mcp.client.Progress is llm_mcp.Progress


@pytest.mark.parametrize("transport, era", COMBOS, ids=COMBO_IDS)
def test_after_progress_method_runs_on_the_server_with_growing_progress(tmp_path, transport, era):
    """MCP-PROG-01, MCP-PROG-02, MCP-PROG-03, MCP-PROG-05: ``after_progress`` (a method name) runs on
    the server instance with a Progress per notification; values that do not grow are dropped; the
    request carried a progressToken since someone listened."""
    seen: list[tuple[Any, llm_mcp.Progress]] = []

    class Watched(llm_mcp.MCP):
        after_progress = "remember"

        def remember(self, progress: llm_mcp.Progress) -> None:
            seen.append((self, progress))

    record = tmp_path / "received.jsonl"
    with running_server(SERVER_MODULE, transport=transport, era=era,
                        args=["--context", f"record={record}"]) as running:
        spot = {"url": running.url} if running.url else {"command": running.command, "directory": running.cwd}
        server = type("Watched", (Watched,), spot)()
        try:
            assert server.call("report_progress").text == "reported"
            assert server.protocol_version == ("2026-07-28" if era == "modern" else "2025-11-25")
        finally:
            server.close()
    assert all(owner is server for owner, _ in seen)
    assert [(p.value, p.total, p.message) for _, p in seen] == DELIVERED
    assert [p.fraction for _, p in seen] == [0.1, 0.3, None, 1.0]
    sent = received(record, "tools/call")
    assert len(sent) == 1 and isinstance(sent[0]["meta"].get("progressToken"), (str, int))


def test_after_progress_callable_and_lambda(tmp_path):
    """MCP-PROG-01: a plain callable (inline server) gets the Progress; a class-level function taking
    (self, progress) gets the instance too."""
    got: list[llm_mcp.Progress] = []
    owners: list[Any] = []
    with kit(tmp_path, "http", "modern", after_progress=got.append) as (server, _):
        server.call("report_progress")
    assert [(p.value, p.total, p.message) for p in got] == DELIVERED

    with running_server(SERVER_MODULE, transport="http", era="modern") as running:
        class Lambda(llm_mcp.MCP):
            url = running.url
            after_progress = lambda self, progress: owners.append((self, progress.value))  # noqa: E731

        server = Lambda()
        server.call("report_progress")
        server.close()
    assert owners == [(server, 10), (server, 30), (server, 60), (server, 100)]


def test_after_progress_setting_is_checked():
    """MCP-PROG-01: after_progress must be a callable or the name of a method of the class."""
    with pytest.raises(ValueError, match="after_progress"):
        llm_mcp.mcp(url="http://127.0.0.1:9/mcp", after_progress="no_such_method")
    assert "after_progress" in llm_mcp.client.server.SETTINGS


def test_progress_filter_drops_values_that_do_not_grow():
    """MCP-PROG-03: per request, a notification whose value is not above the last delivered one is dropped
    (a new request starts afresh)."""
    from llm_mcp.client.progress import ProgressFilter

    got: list[float] = []
    deliver = ProgressFilter([lambda p: got.append(p.value)])
    for value in (1, 5, 5, 4, 6, 6.5, 0):
        deliver({"progressToken": "t", "progress": value})
    assert got == [1, 5, 6, 6.5]
    again = ProgressFilter([lambda p: got.append(p.value)])
    again({"progressToken": "u", "progress": 0})
    assert got[-1] == 0


@pytest.mark.parametrize("transport, era", COMBOS, ids=COMBO_IDS)
def test_no_progress_token_without_a_listener(tmp_path, transport, era):
    """MCP-PROG-05: with neither after_progress nor after_tool_progress, no progressToken is sent."""
    with kit(tmp_path, transport, era) as (server, record):
        assert server.call("report_progress").text == "reported"
    sent = received(record, "tools/call")
    assert len(sent) == 1 and "progressToken" not in sent[0]["meta"]


def test_after_tool_progress_in_a_chat(chat_on, model, tmp_path):
    """MCP-PROG-04, MCP-PROG-05: a chat's after_tool_progress gets (tool_call, progress) for an MCP call
    (which then carries a progressToken) and for a Python tool reporting progress; it returns the chat."""
    def crunch() -> str:
        """Crunch numbers."""
        llm_mcp.chat.report_progress(1, 2, "half")
        llm_mcp.chat.report_progress(1, 2, "half again")  # not above: dropped
        llm_mcp.chat.report_progress(2, 2, "all")
        return "crunched"

    heard: list[tuple[str, str, tuple[Any, Any, Any]]] = []
    with kit(tmp_path, "http", "modern") as (server, record):
        chat = chat_on([turn(tool_calls=[tool_call("report_progress", {}, id="call_mcp"),
                                         tool_call("crunch", {}, id="call_py")]), reply("done")])
        assert chat.with_mcp(server).with_tools(crunch).after_tool_progress(
            lambda call, p: heard.append((call.id, call.name, (p.value, p.total, p.message)))) is chat
        assert chat.ask("go").content == "done"
    assert [h for h in heard if h[0] == "call_mcp"] == [("call_mcp", "report_progress", d) for d in DELIVERED]
    assert [h for h in heard if h[0] == "call_py"] == [("call_py", "crunch", (1, 2, "half")),
                                                       ("call_py", "crunch", (2, 2, "all"))]
    assert "progressToken" in received(record, "tools/call")[0]["meta"]
    with pytest.raises(TypeError):
        chat.after_tool_progress("not callable")


# Not stdio-handshake: under CPU load the kit's SDK stdio server (handshake era) sometimes leaves the
# cancelled tool's worker thread hanging, so the server's side cannot be observed there; the client's
# notifications/cancelled over stdio is shown on 2026-07-28 stdio, and to older servers on handshake HTTP.


# -- the npm reference server (server-everything speaks the handshake era only) -------------------


@pytest.mark.parametrize("kind", ["stdio", "http"])
def test_reference_server_progress(request, kind):
    """MCP-PROG-01, MCP-PROG-02, MCP-PROG-05: server-everything's long-running operation reports progress
    to after_progress, step by step of the total."""
    got: list[llm_mcp.Progress] = []
    with reference_server(kind, request, after_progress=got.append) as server:
        text = server.call("trigger-long-running-operation", duration=0.4, steps=4).text
        assert server.protocol_version == "2025-11-25"
    assert "Steps: 4" in text
    assert [(p.value, p.total, p.fraction) for p in got] == [(1, 4, 0.25), (2, 4, 0.5), (3, 4, 0.75), (4, 4, 1.0)]


def test_reference_server_without_a_listener_reports_no_progress(request):
    """MCP-PROG-05: with no listener no progressToken is sent, so server-everything (which reports progress
    only for a token) sends no notifications/progress; with a chat's listener it does."""
    from llm_mcp.client.progress import listening

    heard: list[llm_mcp.Progress] = []
    with reference_server("stdio", request) as server:
        notifications: list[dict[str, Any]] = []
        server.client.on_notification.append(notifications.append)
        server.call("trigger-long-running-operation", duration=0.2, steps=2)
        assert [n for n in notifications if n.get("method") == "notifications/progress"] == []
        with listening(heard.append):
            server.call("trigger-long-running-operation", duration=0.2, steps=2)
        assert len([n for n in notifications if n.get("method") == "notifications/progress"]) == 2
    assert [p.value for p in heard] == [1, 2]


# -- 2024-11-05 HTTP+SSE -------------------------------------------------------------------------


@pytest.fixture
def legacy_sse(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The progress kit server over 2024-11-05 HTTP+SSE: its URL and its record file."""
    from llm_mcp_tests.support.processes import PYTHON, start_http_server

    record = tmp_path / "received.jsonl"
    process = start_http_server(lambda port: [PYTHON, "-m", "llm_mcp_tests.support.servers.progress_sse", str(port),
                                              str(record)])
    try:
        yield f"http://127.0.0.1:{process.port}/mcp", record
    finally:
        process.stop()


def test_legacy_sse_progress_logs_and_cancel(chat_on, legacy_sse, tmp_path, caplog):
    """MCP-PROG-01, MCP-PROG-06, MCP-PROG-09, MCP-PROG-13 over 2024-11-05 HTTP+SSE: progress and logs arrive,
    and chat.cancel() at a progress event stops the call and sends notifications/cancelled with its id."""
    url, record = legacy_sse
    caplog.set_level(logging.DEBUG, logger="llm_mcp.server.legacy")
    got: list[llm_mcp.Progress] = []
    work = tmp_path / "work.txt"
    with llm_mcp.mcp(url=url, name="legacy", after_progress=got.append, log_level="error") as server:
        assert server.call("report_progress").text == "reported"
        assert server.client.era == "sse"  # the 2024-11-05 transport (the SDK still negotiates 2025-11-25 on it)
        assert server.call("log_levels").text == "logged"
        chat = chat_on([tool_call("steps", {"count": 200, "interval": 0.1, "path": str(work)}), reply("never")])
        chat.with_mcp(server).after_tool_progress(lambda call, p: chat.cancel() if p.value >= 3 else None)
        with pytest.raises(llm_mcp.CancelledError):
            chat.ask("work")
        final = settled(work)
        assert final[-1] == "cancelled" and steps_done(work) < 200
    assert [(p.value, p.total, p.message) for p in got[:4]] == DELIVERED
    written = [r.getMessage() for r in caplog.records if r.name == "llm_mcp.server.legacy"
               and r.getMessage().endswith(" message")]
    assert written == ["error message", "critical message", "alert message", "emergency message"]
    assert [e["level"] for e in received(record, "logging/setLevel")] == ["error"]
    steps_call = [e for e in received(record, "tools/call") if e["tool"] == "steps"][0]
    assert [c["requestId"] for c in received(record, "notifications/cancelled")] == [steps_call["id"]]


def token(request):
    return request["params"]["_meta"]["progressToken"]


def test_progress_with_numbers_too_large_for_a_float_is_ignored(scripted):
    """A progress value or total that no float holds (a 400-digit integer) is dropped, like NaN:
    the call's result is not lost to an OverflowError."""
    def call(request):
        t = token(request)
        return sse(request, [("notifications/progress", {"progressToken": t, "progress": 1, "total": 4}),
                             ("notifications/progress", {"progressToken": t, "progress": 10**400, "total": 4}),
                             ("notifications/progress", {"progressToken": t, "progress": 2, "total": 10**400}),
                             ("notifications/progress", {"progressToken": t, "progress": 3, "total": 4})],
                   {"content": [{"type": "text", "text": "done"}]})
    reports: list[llm_mcp.Progress] = []
    server = scripted(server_of({"tools/call": call}))
    with llm_mcp.mcp(url=server.url, after_progress=reports.append) as client:
        assert client.call("t").text == "done"
    assert [(p.value, p.total, p.fraction) for p in reports] == [(1, 4, 0.25), (2, None, None), (3, 4, 0.75)]


def test_progress_that_is_not_a_number_goes_back_or_is_for_another_request_is_dropped(scripted):
    """Strings, booleans, NaN, values not above the last, and another request's token are not
    delivered; a total of 0 (or below) gives no fraction instead of dividing by zero."""
    def call(request):
        t = token(request)
        reports = [{"progress": "5"}, {"progress": True}, {"progress": float("nan")}, {"progress": -2, "total": 0},
                   {"progress": 4, "total": -1}, {"progress": 3}, {"progress": float("inf")},
                   {"progress": 9, "total": 10, "message": 7}, {"progress": 9, "total": 10}]
        notes = [("notifications/progress", {"progressToken": t, **r}) for r in reports]
        notes.insert(3, ("notifications/progress", {"progressToken": f"{t}-other", "progress": 50}))
        notes.append(("notifications/progress", {"progressToken": ["not", "a", "token"], "progress": 99}))
        return sse(request, notes, {"content": [{"type": "text", "text": "done"}]})
    reports: list[llm_mcp.Progress] = []
    server = scripted(server_of({"tools/call": call}))
    with llm_mcp.mcp(url=server.url, after_progress=reports.append) as client:
        assert client.call("t").text == "done"
    assert [(p.value, p.total, p.message, p.fraction) for p in reports] == [
        (-2, 0, None, None), (4, -1, None, None), (9, 10, None, 0.9)]
