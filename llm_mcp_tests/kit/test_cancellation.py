"""The kit's cancellation and progress: ``cancellable`` returns its value and stops on cancel,
``progressable`` sends rising progress with a message, and the two nested (tools run directly with a
recording ``CallChannel``)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from llm_mcp.testing import CallChannel, Tool, ToolCancelled

from llm_mcp_tests.support.kit_tools import Triple


class Worker(Tool):
    name = "worker"
    steps: list[int] = []

    def call(self) -> dict[str, Any]:
        def work() -> str:
            for i in range(100):
                self.sleep(0.02)
                self.steps.append(i)
            return "done"

        return self.respond_with(content=self.text_content(
            text=self.progressable(lambda: self.cancellable(work), max_duration=2, message="working",
                                   interval=0.02)))


def _cancel_when(channel: CallChannel, ready: Any) -> threading.Thread:
    def watch() -> None:
        while not ready():
            threading.Event().wait(0.005)
        channel.cancel()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_cancellable_returns_its_value_and_stops_on_cancel() -> None:
    """MCP-KIT-16: cancellable(fn) gives fn's value; a cancel interrupts the work, which goes no further."""
    tool = Triple({"n": 1})
    assert tool.cancellable(lambda: 42) == 42
    channel = CallChannel()
    started = threading.Event()
    reached: list[str] = []
    sleeper = Triple({"n": 1}, channel=channel)

    def work() -> None:
        started.set()
        sleeper.sleep(60)
        reached.append("after the sleep")

    _cancel_when(channel, started.is_set)
    with pytest.raises(ToolCancelled):
        sleeper.cancellable(work)
    assert reached == []
    with pytest.raises(TypeError, match="takes a callable"):
        tool.cancellable(42)  # type: ignore[arg-type]


def test_progressable_sends_rising_progress_with_message() -> None:
    """MCP-KIT-17: progress against max_duration, with the message, rising to 100, only when asked for."""
    channel = CallChannel(progress_requested=True)
    tool = Triple({"n": 1}, channel=channel)
    assert tool.progressable(lambda: tool.sleep(0.1) or "ok", max_duration=0.2, message="busy",
                             interval=0.02) == "ok"
    values = [p for p, _, _ in channel.progress_sent]
    assert values == sorted(set(values)) and values[-1] == 100 and len(values) >= 2
    assert {(total, message) for _, total, message in channel.progress_sent} == {(100, "busy")}

    quiet = CallChannel()
    silent = Triple({"n": 1}, channel=quiet)
    assert silent.progressable(lambda: "ok", max_duration=1) == "ok"
    assert quiet.progress_sent == []
    with pytest.raises(ValueError, match="max_duration"):
        silent.progressable(lambda: 1, max_duration=0)
    with pytest.raises(ValueError, match="interval"):
        silent.progressable(lambda: 1, max_duration=1, interval=-1)


def test_progressable_around_cancellable() -> None:
    """MCP-KIT-18: nested, progress goes out and a cancel still stops the work."""
    Worker.steps = []
    channel = CallChannel(progress_requested=True)
    _cancel_when(channel, lambda: len(channel.progress_sent) >= 2)
    with pytest.raises(ToolCancelled):
        Worker.run({}, channel=channel)
    values = [p for p, _, _ in channel.progress_sent]
    assert values == sorted(set(values)) and values[-1] < 100
    assert len(Worker.steps) < 100


def test_a_send_the_client_never_takes_does_not_hold_the_tool(monkeypatch) -> None:
    """A progress or log send that never completes (its stream's reader gone) is dropped after
    ``SEND_TIMEOUT`` seconds: the tool goes on, so it still sees its cancel. The channel runs as in
    a server: sends go from the tool's thread to a real anyio event loop."""
    import anyio
    import anyio.from_thread
    import anyio.lowlevel

    from llm_mcp.testing import runtime

    monkeypatch.setattr(runtime, "SEND_TIMEOUT", 0.2)
    sent: list[tuple[Any, ...]] = []

    async def never(*args: Any) -> None:
        sent.append(args)
        await anyio.sleep_forever()

    async def serve() -> list[str]:
        channel = CallChannel(send_progress=never, send_log=never, progress_requested=True,
                              token=anyio.lowlevel.current_token())

        def tool() -> list[str]:
            done = []
            channel.progress(1, 2, "half")
            done.append("progress")
            channel.log("info", "still here")
            done.append("log")
            return done

        with anyio.fail_after(10):  # a send held forever: TimeoutError here, not a hung test
            return await anyio.to_thread.run_sync(tool, abandon_on_cancel=True)

    done = anyio.run(serve)
    assert done == ["progress", "log"]
    assert sent == [(1, 2, "half"), ("info", "still here")]


def test_a_waiting_send_gives_way_to_the_clients_cancel() -> None:
    """A send still waiting when the client cancels the request is dropped at once (long before
    ``SEND_TIMEOUT``): the tool goes on to notice the cancel."""
    import time

    import anyio
    import anyio.from_thread
    import anyio.lowlevel

    from llm_mcp.testing import runtime

    async def never(*args: Any) -> None:
        await anyio.sleep_forever()

    async def serve() -> tuple[bool, float]:
        channel = CallChannel(send_progress=never, progress_requested=True, token=anyio.lowlevel.current_token())
        threading.Timer(0.3, channel.cancel).start()

        def tool() -> tuple[bool, float]:
            started = time.monotonic()
            channel.progress(1, 2, "half")
            return channel.cancelled, time.monotonic() - started  # was it the cancel that let it go?

        with anyio.fail_after(runtime.SEND_TIMEOUT + 5):
            return await anyio.to_thread.run_sync(tool, abandon_on_cancel=True)

    cancelled_then, waited = anyio.run(serve)
    assert cancelled_then and waited < runtime.SEND_TIMEOUT / 2


def test_a_send_ending_in_a_base_exception_does_not_end_the_tool() -> None:
    """A send that ends in a ``BaseException`` no ``except Exception`` catches is dropped: the tool
    goes on, as it must to reach its ``cancelled`` step. (Seen under load: a send caught by the
    client's cancel ended in asyncio's ``CancelledError`` in the tool's thread, which then ended
    without a word, its last step written and no ``cancelled``.)"""
    import asyncio

    import anyio
    import anyio.lowlevel

    async def cancelled_send(*args: Any) -> None:
        raise BaseExceptionGroup("send cancelled", [asyncio.CancelledError()])

    async def serve() -> str:
        channel = CallChannel(send_progress=cancelled_send, send_log=cancelled_send, progress_requested=True,
                              token=anyio.lowlevel.current_token())

        def tool() -> str:
            channel.progress(1, 2, "half")
            channel.log("info", "still here")
            return "went on"

        return await anyio.to_thread.run_sync(tool)

    assert anyio.run(serve) == "went on"


def test_a_send_failing_with_timeout_error_is_dropped_at_once() -> None:
    """A send that itself ends in ``TimeoutError`` (a transport's bounded write) is dropped as soon as
    it ends: the tool's thread does not take it for its own wait running out (``TimeoutError`` is
    ``concurrent.futures.TimeoutError`` since Python 3.11) and spin until ``SEND_TIMEOUT``."""
    import time

    import anyio
    import anyio.lowlevel

    from llm_mcp.testing import runtime

    async def timed_out(*args: Any) -> None:
        raise TimeoutError("the transport's write timed out")

    async def serve() -> float:
        channel = CallChannel(send_progress=timed_out, progress_requested=True, token=anyio.lowlevel.current_token())

        def tool() -> float:
            started = time.monotonic()
            channel.progress(1, 2, "half")
            return time.monotonic() - started

        return await anyio.to_thread.run_sync(tool)

    assert anyio.run(serve) < runtime.SEND_TIMEOUT / 2


def test_an_answer_that_comes_back_as_the_client_cancels_is_not_used() -> None:
    """A handshake-era question whose answer arrives once the client has cancelled the request ends
    in ``ToolCancelled``: a cancelled call does not go on with the answer (and ``ask`` does not run
    ``call()`` again with it)."""
    import anyio
    import anyio.lowlevel

    async def serve() -> str:
        channel = CallChannel(token=anyio.lowlevel.current_token())

        async def answered_then_cancelled(params: dict[str, Any]) -> dict[str, Any]:
            channel.cancel()  # the client's cancel lands while the answer is on its way
            return {"action": "accept", "content": {"go": True}}

        channel.send_elicit = lambda request: channel._call(answered_then_cancelled, request)  # as the kit's server

        def tool() -> str:
            try:
                channel.send_elicit({"message": "Go on?"})
            except ToolCancelled:
                return "cancelled"
            return "went on with the answer"

        return await anyio.to_thread.run_sync(tool)

    assert anyio.run(serve) == "cancelled"
