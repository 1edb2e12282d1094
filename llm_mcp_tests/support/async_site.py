"""Settings and async views of a small ASGI site that uses the async twins (``MCP.acall``,
``Chat.aask``, ``llm_mcp.models.Chat.aask``), served by uvicorn in ``e2e/test_async_views.py``:

    DJANGO_SETTINGS_MODULE=llm_mcp_tests.support.async_site \\
        uvicorn llm_mcp_tests.support.async_asgi:application

The echo test server's URL comes from ``ASYNC_SITE_ECHO_URL``, the scripted model's from
``LLM_MCP_TEST_BASE_URL``; the database is the example project's (``DJANGO_DB_PATH``).
Each view answers JSON with the tool's text. Every view's tool call is the echo server's
``together``: it waits until ``parties`` calls of ``group`` (query parameters) are in flight on the
server at once and answers ``together N of P``, N the most that were: N = P proves the views ran
their calls side by side, with no timing involved.
"""

from __future__ import annotations

import os
import threading

from django.http import HttpRequest, JsonResponse
from django.urls import path

from example_project.settings import *

ROOT_URLCONF = __name__


def _server():
    import llm_mcp

    return llm_mcp.mcp(url=os.environ["ASYNC_SITE_ECHO_URL"], name="echo")


def _provider_options() -> dict[str, str]:
    return {"base_url": os.environ["LLM_MCP_TEST_BASE_URL"], "api_key": "test-key"}


def _ask(request: HttpRequest) -> str:
    """The user's message of a chat view: the scripted model reads the group and parties from it."""
    return f"together {request.GET['group']} {int(request.GET['parties'])}"


async def call_view(request: HttpRequest) -> JsonResponse:
    """``MCP.acall("together", group=..., parties=...)``; with ``seconds`` instead, ``MCP.acall("sleep",
    seconds=...)`` (``benchmarks/async_views.py``)."""
    from llm_mcp.client.offload import in_thread

    server = _server()
    try:
        if "seconds" in request.GET:
            result = await server.acall("sleep", seconds=float(request.GET["seconds"]))
        else:
            result = await server.acall("together", group=request.GET["group"],
                                        parties=int(request.GET["parties"]))
    finally:
        await in_thread(server.close)
    return JsonResponse({"text": result.text, "loop_thread": threading.current_thread().name})


async def chat_view(request: HttpRequest) -> JsonResponse:
    """A plain chat's ``aask``: the model calls ``together``, then answers."""
    import llm_mcp
    from llm_mcp.client.offload import in_thread

    server = _server()
    chat = llm_mcp.chat(model="gpt-test", provider="openai", **_provider_options()).with_mcp(server)
    try:
        reply = await chat.aask(_ask(request))
    finally:
        await in_thread(server.close)
    return JsonResponse({"text": reply.content, "tool": chat.messages[2].content})


async def record_view(request: HttpRequest) -> JsonResponse:
    """A saved chat's (``llm_mcp.models.Chat``) ``aask``."""
    from llm_mcp.client.offload import in_thread
    from llm_mcp.models import Chat

    server = _server()
    record = await Chat.objects.acreate(model="gpt-test", provider="openai")
    record.provider_options = _provider_options()
    try:
        reply = await record.with_mcp(server).aask(_ask(request))
    finally:
        await in_thread(server.close)
    tool = await record.message_records.filter(role="tool").afirst()
    return JsonResponse({"text": reply.content, "chat": record.pk, "tool": tool.content if tool else None})


def _sleep_call(seconds: float) -> str:
    server = _server()
    try:
        return server.call("sleep", seconds=seconds).text
    finally:
        server.close()


async def to_thread_view(request: HttpRequest) -> JsonResponse:
    """The blocking ``sleep`` call from an async view through ``asyncio.to_thread``: the event loop's
    default executor (``benchmarks/async_views.py``'s peer)."""
    import asyncio

    return JsonResponse({"text": await asyncio.to_thread(_sleep_call, float(request.GET["seconds"]))})


def sync_call_view(request: HttpRequest) -> JsonResponse:
    """The blocking ``sleep`` call in a plain (sync) view, which Django runs in a thread of the
    request's own (``benchmarks/async_views.py``'s other peer)."""
    return JsonResponse({"text": _sleep_call(float(request.GET["seconds"]))})


urlpatterns = [path("call", call_view), path("chat", chat_view), path("record", record_view),
               path("to-thread", to_thread_view), path("sync-call", sync_call_view)]
