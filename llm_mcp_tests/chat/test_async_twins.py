"""The async twins of the chat and the client (``aask``, ``acomplete``, ``acall``, ``aresource``,
``aprompt``, ``aanswer``, ``adecline``, ``aapprove``): the same results as the blocking calls, and a
cancelled awaiting task cancels the turn or the call. Concurrency under a real ASGI server is shown
in ``e2e/test_async_views.py``."""

from __future__ import annotations

import asyncio
import time

import pytest

import llm_mcp
from llm_mcp.chat.chat import CANCELLED
from llm_mcp.testing.scripted_model import reply, tool_call
from llm_mcp_tests.support.chats import make_chat


async def cancel_after(task: asyncio.Task, seconds: float) -> float:
    await asyncio.sleep(seconds)
    task.cancel()
    return time.monotonic()


def test_aask_and_acomplete_answer_like_ask(model, echo_http_modern_url):
    """Chat.aask runs the turn (a tool call included) and returns the model's answer; acomplete resumes a
    turn paused on approval once the call is approved with aapprove."""
    server = llm_mcp.mcp(url=echo_http_modern_url, name="echo", requires_approval=["add"])
    chat = make_chat(model, [tool_call("echo", {"message": "hi"}), reply("said hi"),
                             tool_call("add", {"a": 2, "b": 3}), reply("5")]).with_mcp(server)

    async def run() -> None:
        assert (await chat.aask("say hi")).content == "said hi"
        assert model.requests[1].tool_results[0]["content"] == "hi"
        paused = await chat.aask("add 2 and 3")
        assert chat.waiting and paused.tool_calls[0].name == "add"
        await chat.pending_approvals[0].aapprove()
        assert (await chat.acomplete()).content == "5"

    asyncio.run(run())
    assert model.requests[3].tool_results[-1]["content"] == '{"sum": 5}'


def test_cancelling_the_awaiting_task_cancels_the_turn(model, echo_http_modern_url):
    """Cancelling the task awaiting aask cancels the chat's turn: the slow call is stopped long before it
    would end, asyncio.CancelledError comes out, and the call gets its cancelled result."""
    chat = make_chat(model, [tool_call("sleep", {"seconds": 30}), reply("never")])
    chat.with_mcp(llm_mcp.mcp(url=echo_http_modern_url, name="echo"))

    async def run() -> float:
        task = asyncio.ensure_future(chat.aask("sleep"))
        cancelled_at = await cancel_after(task, 1.5)
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - cancelled_at

    assert asyncio.run(run()) < 15  # half the call's 30 s: it was stopped, not waited out
    assert chat.messages[-1].content == CANCELLED and len(model.requests) == 1


def test_acall_and_cancel(echo_http_modern_url):
    """MCP.acall returns what call returns; cancelling the awaiting task stops the call long before it ends."""
    server = llm_mcp.mcp(url=echo_http_modern_url, name="echo")

    async def run() -> float:
        assert (await server.acall("echo", message="hello")).text == server.call("echo", message="hello").text
        task = asyncio.ensure_future(server.acall("sleep", seconds=30))
        cancelled_at = await cancel_after(task, 1.0)
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - cancelled_at

    with server:
        assert asyncio.run(run()) < 15


def test_aresource_and_aprompt(everything_stdio_command):
    """MCP.aresource and MCP.aprompt return what resource and prompt return (server-everything over stdio)."""
    with llm_mcp.mcp(command=everything_stdio_command, name="everything") as server:
        uri = server.resources[0].uri
        prompt = next(p for p in server.prompts if not any(a.required for a in p.argument_definitions))

        async def run() -> tuple:
            return await server.aresource(uri), await server.aprompt(prompt.name)

        resource, filled = asyncio.run(run())
        assert resource.loaded and resource.contents == server.resource(uri).contents
        assert [m.content for m in filled.messages] == [m.content for m in server.prompt(prompt.name).messages]


def test_cancelling_a_queued_aask_leaves_the_running_turn_alone(model, echo_http_modern_url):
    """Two aask on one chat run one after the other. Cancelling the task of the second while the first
    turn runs drops the second (its message is never added, the model never asked for it) and does not
    cancel the first, which finishes with its tool's real result."""
    chat = make_chat(model, [tool_call("sleep", {"seconds": 2}), reply("first done"), reply("second done")])
    chat.with_mcp(llm_mcp.mcp(url=echo_http_modern_url, name="echo"))

    async def run() -> tuple:
        first = asyncio.ensure_future(chat.aask("sleep"))
        while not model.requests:  # the first turn is running (its call is in flight)
            await asyncio.sleep(0.05)
        second = asyncio.ensure_future(chat.aask("then this"))
        await cancel_after(second, 0.3)
        return tuple(await asyncio.gather(first, second, return_exceptions=True))

    first, second = asyncio.run(run())
    assert isinstance(second, asyncio.CancelledError)
    assert not isinstance(first, BaseException) and first.content == "first done", first
    assert [m.content for m in chat.messages if m.role == "tool"] == ["slept 2"]
    assert [m.content for m in chat.messages if m.role == "user"] == ["sleep"] and len(model.requests) == 2
