"""Cancelling tool calls, observed on the server's side (checklist section 13, MCP-PROG-09..14).

Against the project's kit server ``llm_mcp_tests.support.servers.progress_tools`` (support/progress.py:
its ``steps`` tool appends a line per step to a file, and ``cancelled`` when it is told to stop) in
both eras and both transports, and against the npm reference server ``server-everything``: a cancel
scope, ``chat.cancel()`` from a callback or another thread, a store's flag, concurrent calls,
cancels that come too early or too late, and a timeout (on stdio: ``notifications/cancelled``).
Chat-level cancellation is in ``chat/test_cancellation.py``, the persisted flag of chat records in
``django/test_cancellation.py``, the kit's side in ``kit/test_cancellation.py``.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

import llm_mcp
from llm_mcp.chat.chat import CANCELLED
from llm_mcp.testing.scripted_model import ScriptedModel, reply, tool_call, turn

from llm_mcp_tests.support.cancel_order import call_and_cancel, cancel_order_server
from llm_mcp_tests.support.chats import answer_when_asked, make_chat
from llm_mcp_tests.support.processes import raw_stdio_command, timed_after_start
from llm_mcp_tests.support.progress import (
    BOUND,
    CANCEL_COMBOS,
    kit,
    lines,
    received,
    reference_server,
    settled,
    steps_done,
    wait_until,
)


@pytest.mark.parametrize("transport, era", CANCEL_COMBOS, ids=[f"{t}-{e}" for t, e in CANCEL_COMBOS])
def test_cancel_stops_the_server_call_at_the_next_event(chat_on, tmp_path, transport, era):
    """MCP-PROG-09, MCP-PROG-12, MCP-PROG-13: chat.cancel() (here from an after_tool_progress callback, so
    no thread of ours is involved and none is started) stops the call; the server's work stops (no step
    after ``cancelled``). 2026-07-28 HTTP closes the stream and sends no notifications/cancelled; stdio
    and handshake-era HTTP send notifications/cancelled with the request id and a reason."""
    work = tmp_path / "work.txt"
    threads: dict[str, set[threading.Thread]] = {}
    started: list[str] = []
    with kit(tmp_path, transport, era) as (server, record):
        chat = chat_on([tool_call("steps", {"count": 200, "interval": 0.1, "path": str(work)}), reply("never")])
        chat.with_mcp(server)
        chat.tools  # connected (a stdio process started) before the turn

        def on_progress(call: Any, progress: llm_mcp.Progress) -> None:
            if progress.value == 3:
                threads["at cancel"] = set(threading.enumerate())
                start = threading.Thread.start

                def counted(thread: threading.Thread) -> None:  # every thread started while cancelling
                    started.append(thread.name)
                    start(thread)

                threading.Thread.start = counted  # type: ignore[method-assign]
                try:
                    chat.cancel()
                finally:
                    threading.Thread.start = start  # type: ignore[method-assign]

        chat.after_tool_progress(on_progress)
        threads["before"] = set(threading.enumerate())
        with pytest.raises(llm_mcp.CancelledError):
            chat.ask("work")
        assert chat.messages[-1].content == CANCELLED
        final = settled(work)
        assert final[-1] == "cancelled" and "completed" not in final
        assert steps_done(work) < 200
        cancels = received(record, "notifications/cancelled")
        call_id = received(record, "tools/call")[0]["id"]
    ours = {name: {t for t in found if "process_request_thread" not in t.name}  # the scripted model's are not
            for name, found in threads.items()}
    assert ours["at cancel"] == ours["before"]  # no extra thread to cancel
    assert started == []  # and cancelling started none
    if transport == "http" and era == "modern":
        assert cancels == []  # the closed stream is the cancellation
    else:
        assert [c["requestId"] for c in cancels] == [call_id]
        assert isinstance(cancels[0]["reason"], str) and cancels[0]["reason"]


@pytest.mark.parametrize("transport, era", [("stdio", "modern"), ("http", "modern"), ("http", "handshake")])
def test_cancel_from_another_thread_stops_the_work(chat_on, tmp_path, transport, era):
    """MCP-PROG-09: chat.cancel() from another thread (a view, a signal handler) stops the work on the server."""
    work = tmp_path / "work.txt"
    with kit(tmp_path, transport, era) as (server, _):
        chat = chat_on([tool_call("steps", {"count": 200, "interval": 0.1, "path": str(work)}), reply("never")])
        chat.with_mcp(server).tools

        def cancel_when_working() -> None:
            if wait_until(lambda: steps_done(work) >= 2):
                chat.cancel()

        threading.Thread(target=cancel_when_working, daemon=True).start()
        with pytest.raises(llm_mcp.CancelledError):
            chat.ask("work")
        final = settled(work)
        assert final[-1] == "cancelled" and steps_done(work) < 200


@pytest.mark.parametrize("transport, era", [("stdio", "modern"), ("http", "modern"), ("http", "handshake")])
def test_cancel_stops_every_concurrent_call(chat_on, tmp_path, transport, era):
    """MCP-PROG-10: with tool calls running at once, cancelling stops every MCP call in flight."""
    files = [tmp_path / f"work{i}.txt" for i in range(3)]
    with kit(tmp_path, transport, era) as (server, _):
        calls = [tool_call("steps", {"count": 200, "interval": 0.1, "path": str(f)}, id=f"call_{i}")
                 for i, f in enumerate(files)]
        chat = chat_on([turn(tool_calls=calls), reply("never")], concurrency=3).with_mcp(server)
        chat.tools

        def cancel_when_all_work() -> None:
            if wait_until(lambda: all(steps_done(f) >= 2 for f in files)):
                chat.cancel()

        threading.Thread(target=cancel_when_all_work, daemon=True).start()
        with pytest.raises(llm_mcp.CancelledError):
            chat.ask("work three times")
        assert [m.content for m in chat.messages[-3:]] == [CANCELLED] * 3
        for path in files:
            final = settled(path)
            assert final[-1] == "cancelled" and steps_done(path) < 200, path


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_call_cancelled_while_its_question_waits_stops_at_the_question(chat_on, tmp_path, transport):
    """MCP-PROG-09, MCP-QUEST-16: a handshake-era call cancelled while its ``elicitation/create`` waits
    for a person (held by the chat) stops on the server as a cancel: the tool's question ends in
    ``ToolCancelled`` (its ``cancelled`` step), once the server heard the ``notifications/cancelled``.
    Before, the question's send ran in the tool's cancel scope: the client's cancel cancelled the send
    itself, and asyncio's ``CancelledError`` (which no ``except Exception`` catches) ended the tool's
    thread there, unseen: ``asking`` and nothing after it, on both transports."""
    work = tmp_path / "work.txt"
    with kit(tmp_path, transport, "handshake") as (server, record):
        chat = chat_on([tool_call("ask_in_line", {"path": str(work)}), reply("never")])
        chat.with_mcp(server).tools
        person = answer_when_asked(chat, lambda question: chat.cancel(), seconds=BOUND)
        with pytest.raises(llm_mcp.CancelledError):
            chat.ask("ask")
        person.join()
        final = settled(work)
        cancels = received(record, "notifications/cancelled")
        call_id = received(record, "tools/call")[0]["id"]
    assert person.seen and person.seen[0].message == "Go on?"
    assert final == ["asking", "cancelled"]
    assert [c["requestId"] for c in cancels] == [call_id]


class _FlagStore(llm_mcp.chat.MemoryStore):
    """A store whose cancel flag another thread sets directly, as another process sets a saved chat's."""


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_a_flag_set_elsewhere_stops_the_call_at_the_next_event(chat_on, tmp_path, era):
    """MCP-PROG-09, MCP-PROG-11 (without Django): a cancel flag set where the chat does not see it (the
    store's, not chat.cancel()) is read at the next event the server streams, and stops the call."""
    work = tmp_path / "work.txt"
    store = _FlagStore()
    with kit(tmp_path, "http", era, log_level="debug") as (server, _):
        chat = chat_on([tool_call("steps", {"count": 200, "interval": 0.1, "path": str(work)}), reply("never")],
                       store=store)
        chat.with_mcp(server).tools

        def flag_when_working() -> None:
            if wait_until(lambda: steps_done(work) >= 2):
                store.set_cancelled(True)

        threading.Thread(target=flag_when_working, daemon=True).start()
        with pytest.raises(llm_mcp.CancelledError):
            chat.ask("work")
        final = settled(work)
        assert final[-1] == "cancelled" and steps_done(work) < 200


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_a_plain_json_answer_cannot_be_interrupted_and_ends_at_the_timeout(chat_on, tmp_path, era):
    """MCP-PROG-14: a server answering with one JSON body (no events) is not interrupted by a flag set
    elsewhere: its work goes on until the request timeout; then the client stops waiting, cancels, and
    the turn stops."""
    work = tmp_path / "work.txt"
    store = _FlagStore()
    timeout = 4.0
    flagged: dict[str, int] = {}
    with kit(tmp_path, "http", era, json_response=True, timeout=timeout) as (server, record):
        chat = chat_on([tool_call("steps", {"count": 150, "interval": 0.05, "path": str(work)}), reply("never")],
                       store=store)
        chat.with_mcp(server).tools

        def flag_when_working() -> None:
            if wait_until(lambda: steps_done(work) >= 2):
                store.set_cancelled(True)
                flagged["steps"] = steps_done(work)

        threading.Thread(target=flag_when_working, daemon=True).start()
        started = time.monotonic()
        with pytest.raises(llm_mcp.CancelledError):
            chat.ask("work")
        elapsed = time.monotonic() - started
        final = settled(work)
        cancels = received(record, "notifications/cancelled")
    assert elapsed >= timeout * 0.9  # it ran to the timeout, not to the flag
    assert steps_done(work) > flagged["steps"] + 10  # the work went on well after the flag
    if era == "handshake":
        assert [c["reason"] for c in cancels] == ["timed out"]  # the client cancelled after the timeout
        assert final[-1] == "cancelled" and steps_done(work) < 150  # and the server stopped
    else:
        # 2026-07-28: closing the connection is the cancellation (no notification); the SDK's JSON
        # mode does not act on a closed connection, so the work may run on: that is the server's part.
        assert cancels == []


@pytest.mark.parametrize("kind", ["stdio", "http"])
def test_reference_server_call_is_cancelled_at_a_progress_event(chat_on, request, kind):
    """MCP-PROG-09, MCP-PROG-13: chat.cancel() at a progress event of server-everything's 60-second operation
    ends the call at once (well within a generous bound), and the server goes on serving."""
    with reference_server(kind, request) as server:
        chat = chat_on([tool_call("trigger-long-running-operation", {"duration": 60, "steps": 120}), reply("x")])
        chat.with_mcp(server).after_tool_progress(lambda call, p: chat.cancel() if p.value >= 2 else None)
        started = time.monotonic()
        with pytest.raises(llm_mcp.CancelledError):
            chat.ask("run it")
        assert time.monotonic() - started < 30
        assert server.call("echo", message="still here").text == "Echo: still here"


def test_cancel_scope_watch_and_poll(monkeypatch):
    """MCP-PROG-11 (the mechanism): a watched check cancels the scope when poll() finds it true; a check
    that raises counts as false; checks run at most every POLL_INTERVAL seconds."""
    from llm_mcp.client import cancel

    flag = {"set": False, "calls": 0}

    def check() -> bool:
        flag["calls"] += 1
        if flag["set"] is None:
            raise RuntimeError("database away")
        return bool(flag["set"])

    monkeypatch.setattr(cancel, "POLL_INTERVAL", 0.0)
    scope = llm_mcp.CancelScope()
    scope.watch(check, "flag set")
    scope.poll()
    flag["set"] = None
    scope.poll()  # a failing check: not cancelled
    assert not scope.cancelled and flag["calls"] == 2
    flag["set"] = True
    with pytest.raises(llm_mcp.CancelledError, match="flag set"):
        scope.poll()
    assert scope.cancelled and scope.reason == "flag set"

    monkeypatch.setattr(cancel, "POLL_INTERVAL", 3600.0)
    slow = llm_mcp.CancelScope()
    slow.watch(check)
    flag.update(set=False, calls=0)
    slow.poll()
    flag["set"] = True
    slow.poll()  # within the interval: the check is not run again
    assert flag["calls"] == 1 and not slow.cancelled


@pytest.mark.slow
@pytest.mark.parametrize("transport, era", [("stdio", "modern"), ("http", "modern"), ("http", "handshake")])
def test_cancelling_one_chat_leaves_another_chats_call_on_the_same_server(model, tmp_path, transport, era):
    """Two chats share one server object and call it at once; cancelling the first stops its call
    only: the second's call runs to ``completed``."""
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    outcomes: dict[str, Any] = {}
    with kit(tmp_path, transport, era) as (server, _), ScriptedModel() as other_model:
        chat_a = make_chat(model, [tool_call("steps", {"count": 300, "interval": 0.05, "path": str(first)}),
                                   reply("never")]).with_mcp(server)
        chat_b = make_chat(other_model, [tool_call("steps", {"count": 40, "interval": 0.05, "path": str(second)}),
                                         reply("b done")]).with_mcp(server)
        chat_a.tools

        def run(name: str, chat: llm_mcp.Chat) -> None:
            try:
                outcomes[name] = chat.ask("work").content
            except Exception as exc:  # noqa: BLE001 - the test reads what happened
                outcomes[name] = exc

        threads = [threading.Thread(target=run, args=("a", chat_a)), threading.Thread(target=run, args=("b", chat_b))]
        for thread in threads:
            thread.start()
        assert wait_until(lambda: steps_done(first) >= 2 and steps_done(second) >= 2)
        chat_a.cancel()
        for thread in threads:
            thread.join(60)
    assert isinstance(outcomes["a"], llm_mcp.CancelledError)
    assert outcomes["b"] == "b done"
    assert settled(first)[-1] == "cancelled"
    assert lines(second)[-1] == "completed" and steps_done(second) == 40


@pytest.mark.parametrize("ends", [True, False], ids=["server-ends-the-call", "server-ignores-the-cancel"])
def test_handshake_http_cancel_reaches_the_server_before_the_stream_is_shut(ends):
    """MCP-PROG-13: to a handshake-era HTTP server, cancelling sends ``notifications/cancelled`` (once, with
    the request id and the reason) while the call's stream is still open, and shuts the stream after it.
    Shut first, the server saw its client gone before it heard of the cancel (the kit server then kept
    working on; see the two-chats test above). Either way the server answers, the call raises CancelledError:
    a server ending the call with an error (the SDKs' -32800), or one ignoring the cancel (the stream is
    shut once the notification was delivered)."""
    with cancel_order_server(ends_cancelled_calls=ends) as server:
        raised = call_and_cancel(server, "enough", within=BOUND)
    assert isinstance(raised, llm_mcp.CancelledError) and "enough" in str(raised)
    assert len(server.calls) == 1
    assert server.cancels == [{"requestId": server.calls[0], "reason": "enough", "stream": "open"}]


def test_handshake_http_cancel_ends_the_call_when_the_notification_gets_no_answer(monkeypatch):
    """MCP-PROG-13: a server that takes ``notifications/cancelled`` and never answers the POST does
    not hold the cancelled call: its stream is shut once ``CANCEL_NOTIFY_TIMEOUT`` passes, and the
    notification is not sent a second time."""
    from llm_mcp.client.transports import http

    monkeypatch.setattr(http, "CANCEL_NOTIFY_TIMEOUT", 0.5)
    with cancel_order_server(ends_cancelled_calls=False, answers_cancels=False) as server:
        raised = call_and_cancel(server, "enough", within=BOUND)  # the server would hold the call 30 s
        ended = time.monotonic()
        assert [c["requestId"] for c in server.cancels] == server.calls
    assert isinstance(raised, llm_mcp.CancelledError) and "enough" in str(raised)
    assert ended - server.cancelled_at < 10  # the notification's 0.5 s, not the server's 30 s


@pytest.mark.slow
def test_a_cancel_after_the_turn_ended_does_not_stop_the_next_turn(chat_on, tmp_path):
    """chat.cancel() when nothing runs (the turn finished) is not kept for the next ask()."""
    work = tmp_path / "work.txt"
    with kit(tmp_path, "stdio", "modern") as (server, record):
        chat = chat_on([reply("first"), tool_call("steps", {"count": 3, "interval": 0.01, "path": str(work)}),
                        reply("second")]).with_mcp(server)
        assert chat.ask("hello").content == "first"
        chat.cancel()
        assert chat.ask("work").content == "second"
        assert lines(work)[-1] == "completed"
        assert received(record, "notifications/cancelled") == []


@pytest.mark.slow
@pytest.mark.parametrize("transport, era", [("stdio", "modern"), ("http", "modern"), ("http", "handshake")])
def test_a_scope_cancelled_before_the_call_sends_nothing(tmp_path, transport, era):
    """A CancelScope cancelled before a call raises CancelledError at once: the server gets no
    tools/call (and no notifications/cancelled for it)."""
    work = tmp_path / "work.txt"
    with kit(tmp_path, transport, era) as (server, record):
        server.tools  # connected
        scope = llm_mcp.CancelScope()
        scope.cancel()
        with pytest.raises(llm_mcp.CancelledError), scope:
            server.call("steps", count=3, interval=0.01, path=str(work))
        assert server.call("steps", count=2, interval=0.01, path=str(work)).text  # outside the scope: runs
        assert [c["tool"] for c in received(record, "tools/call")] == ["steps"]
        assert received(record, "notifications/cancelled") == []
        assert lines(work)[-1] == "completed" and steps_done(work) == 2


@pytest.mark.slow
@pytest.mark.parametrize("transport, era", [("stdio", "handshake"), ("http", "handshake")])
def test_cancelling_a_scope_after_its_call_finished_tells_the_server_nothing(tmp_path, transport, era):
    """scope.cancel() after the call answered sends no notifications/cancelled for a finished request."""
    work = tmp_path / "work.txt"
    with kit(tmp_path, transport, era) as (server, record):
        scope = llm_mcp.CancelScope()
        with scope:
            server.call("steps", count=2, interval=0.01, path=str(work))
        scope.cancel()
        server.call("steps", count=1, interval=0.01, path=str(work))  # anything queued is flushed by now
        assert received(record, "notifications/cancelled") == []


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_timeout_sends_notifications_cancelled(era, tmp_path):
    """MCP-ADDR-05: a request that times out is cancelled on the server with notifications/cancelled
    naming its id (stdio has no stream to close)."""
    import shlex

    received = tmp_path / "stdin.jsonl"
    argv = ["sh", "-c", f"tee {shlex.quote(str(received))} | {shlex.join(raw_stdio_command('none', era))}"]
    with llm_mcp.mcp(command=argv, name="teed", timeout=60) as server:
        timed_after_start(server, 1)
        with pytest.raises(llm_mcp.ConnectionError) as info:
            server.sleep(seconds=3)
        assert info.value.timed_out
    messages = [json.loads(line) for line in received.read_text().splitlines() if line.strip()]
    call = next(m for m in messages if m.get("method") == "tools/call")
    cancels = [m for m in messages if m.get("method") == "notifications/cancelled"]
    assert [c["params"]["requestId"] for c in cancels] == [call["id"]]
    assert cancels[0]["params"]["reason"] == "timed out"
