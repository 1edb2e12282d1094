"""Cancelling a chat's turn: calls in flight (one or several, stdio and HTTP), the work on the server,
a streamed answer, and calls that wait for approval (which a cancel leaves waiting).

Real chats: the scripted model through the official SDK, the echo server over stdio and Streamable
HTTP, the recording kit server where the server's side must be seen.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import llm_mcp
from llm_mcp.chat.chat import CANCELLED
from llm_mcp.testing.scripted_model import ScriptedModel, reply, tool_call, turn

from llm_mcp_tests.support.processes import echo_command


@pytest.mark.parametrize("transport", ["stdio", "http-modern", "http-handshake"])
def test_cancel_stops_calls_in_flight(chat_on, echo_http_server, transport):
    """chat.cancel() from another thread stops a call in flight and raises CancelledError from the turn;
    the call still gets a result. (Without cancellation the 100 s sleep outlives the test's timeout.)"""
    if transport == "stdio":
        server = llm_mcp.mcp(command=echo_command(), name="echo", timeout=100)
    else:
        server = llm_mcp.mcp(url=echo_http_server(transport.split("-")[1]), name="echo", timeout=100)
    chat = chat_on([tool_call("sleep", {"seconds": 100}), reply("never")]).with_mcp(server)
    chat.tools  # connect first, so the cancel lands during the call
    timer = threading.Timer(1.0, chat.cancel)
    timer.start()
    with pytest.raises(llm_mcp.CancelledError):
        chat.ask("sleep")
    assert chat.messages[-1].content == CANCELLED and chat.messages[-1].is_error
    assert server.call("echo", message="alive").text == "alive"  # the server still serves
    server.close()


def test_cancel_stops_concurrent_calls_too(chat_on):
    server = llm_mcp.mcp(command=echo_command(), name="echo", timeout=100)
    chat = chat_on([turn(tool_calls=[tool_call("sleep", {"seconds": 100}), tool_call("sleep", {"seconds": 100})]),
                    reply("never")], concurrency=2).with_mcp(server)
    chat.tools
    threading.Timer(1.0, chat.cancel).start()
    with pytest.raises(llm_mcp.CancelledError):
        chat.ask("sleep twice")
    assert [m.content for m in chat.messages[-2:]] == [CANCELLED, CANCELLED]
    server.close()


@pytest.mark.parametrize("transport, era", [("stdio", "auto"), ("http", "modern"), ("http", "handshake")])
def test_cancel_really_stops_the_work_on_the_server(chat_on, tmp_path, transport, era):
    """chat.cancel() during cancellable_sleep: the server's work stops (it leaves a "cancelled" marker and
    never a "completed" one), and the turn raises CancelledError."""
    from llm_mcp.testing import running_server

    args = ["--context", f"marker_dir={tmp_path}"]
    with running_server("llm_mcp_tests.support.servers.seed_tools", transport=transport, era=era, args=args) as running:
        server = (llm_mcp.mcp(command=running.command, name="seed") if transport == "stdio"
                  else llm_mcp.mcp(url=running.url, name="seed"))
        chat = chat_on([tool_call("cancellable_sleep", {}), reply("never")]).with_mcp(server)
        chat.tools

        def cancel_once_started() -> None:
            if _wait_for(tmp_path / "cancellable_sleep.started"):
                chat.cancel()

        threading.Thread(target=cancel_once_started, daemon=True).start()
        with pytest.raises(llm_mcp.CancelledError):
            chat.ask("sleep")
        assert _wait_for(tmp_path / "cancellable_sleep.cancelled")
        assert not (tmp_path / "cancellable_sleep.completed").exists()
        server.close()


def test_cancel_stops_a_streamed_answer(model):
    pieces: list[str] = []
    scripted = ScriptedModel([reply("abcdefghijklmnop")], chunk_size=1).start()
    try:
        chat = llm_mcp.chat("m", "openai", base_url=scripted.openai_base_url, api_key="k")

        def on_text(text: str) -> None:
            pieces.append(text)
            chat.cancel()

        with pytest.raises(llm_mcp.CancelledError):
            chat.ask("spell", stream=on_text)
        assert pieces == ["a"]
    finally:
        scripted.stop()


def test_cancel_leaves_calls_waiting_for_approval_waiting(chat_on, echo_http_url):
    server = llm_mcp.mcp(command=echo_command(), name="echo", timeout=100, requires_approval=["add"])
    chat = chat_on([turn(tool_calls=[tool_call("add", {"a": 1, "b": 1}), tool_call("sleep", {"seconds": 100})])])
    chat.with_mcp(server)
    chat.tools
    threading.Timer(1.0, chat.cancel).start()
    with pytest.raises(llm_mcp.CancelledError):
        chat.ask("go")
    assert chat.waiting and [c.name for c in chat.pending_approvals] == ["add"]
    assert chat.messages[-1].content == "The call was cancelled before it finished."
    server.close()


def _wait_for(path: Path, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists():
            return True
        time.sleep(0.02)
    return False
