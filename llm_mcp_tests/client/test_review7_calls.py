"""Review of issue 7: cancellation edge cases and per-server log levels, on the kit server ``progress_tools``
(its ``steps`` tool appends a line per step to a file, ``cancelled`` when told to stop,
``completed`` when it finishes).
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

import llm_mcp
from llm_mcp.testing.scripted_model import ScriptedModel, reply, tool_call
from llm_mcp_tests.chat_support import make_chat
from llm_mcp_tests.test_progress import (
    kit,
    lines,
    received,
    settled,
    steps_done,
    wait_until,
)

pytestmark = pytest.mark.slow


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


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_a_log_level_on_one_server_object_does_not_reach_another(tmp_path, caplog, era):
    """Two server objects on one HTTP server: the one with ``log_level="error"`` gets error and
    above; the other asks for nothing and writes nothing, even after the first set its level."""
    import logging

    from llm_mcp.client.logs import LOG_LEVEL_META
    from llm_mcp.testing import running_server
    from llm_mcp_tests.test_progress import SERVER_MODULE

    record = tmp_path / "received.jsonl"
    caplog.set_level(logging.DEBUG, logger="llm_mcp.server")
    with running_server(SERVER_MODULE, transport="http", era=era, args=["--context", f"record={record}"]) as running:
        with running.mcp(name="loud", log_level="error") as loud, running.mcp(name="quiet") as quiet:
            assert loud.call("log_levels").text == "logged"
            assert quiet.call("log_levels").text == "logged"
    written = [(r.name, r.getMessage()) for r in caplog.records if r.getMessage().endswith(" message")]
    assert written == [("llm_mcp.server.loud", f"{level} message")
                       for level in ("error", "critical", "alert", "emergency")]
    loud_meta, quiet_meta = (call["meta"] for call in received(record, "tools/call"))
    assert LOG_LEVEL_META not in quiet_meta
    assert loud_meta.get(LOG_LEVEL_META) == ("error" if era == "modern" else None)
