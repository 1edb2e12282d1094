"""The async twins under a real ASGI server: uvicorn serving Django async views
(``support/async_site.py``) that await ``MCP.acall``, ``Chat.aask`` and ``llm_mcp.models.Chat.aask``,
each making a slow tool call on the echo test server.

Twenty requests at once must run their calls side by side, not one after another: each view's call
is the echo server's ``together``, which waits until all twenty calls of its group are in flight on
the server at the same time and answers the most that ever were. Twenty out of twenty proves every
call was open at once, so the requests finish in about one call's time, not twenty; a site that queued
them (one thread, or the event loop's default executor of six threads on two cores) would see at most
that many together. No time is measured here (the durations are in ``make bench``).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import httpx
import pytest

from llm_mcp.testing.scripted_model import reply, tool_call
from llm_mcp_tests.support.processes import PYTHON, start_http_server

pytestmark = [pytest.mark.slow]

CONCURRENT = 20


@pytest.fixture
def site(shared_db, model, echo_http_modern_url) -> Iterator[str]:
    """uvicorn serving the async site on a free port; its chats talk to this test's scripted model."""
    def turn(request):  # each chat's turn: call together (group and parties from the user's message), then answer
        if request.tool_results:
            return reply("done")
        _, group, parties = request.last_user_text.split()
        return tool_call("together", {"group": group, "parties": int(parties)})

    model.add(*[turn] * (2 * (CONCURRENT + 1)))
    env = {**shared_db, "DJANGO_SETTINGS_MODULE": "llm_mcp_tests.support.async_site",
           "ASYNC_SITE_ECHO_URL": echo_http_modern_url, "LLM_MCP_TEST_BASE_URL": model.openai_base_url}
    server = start_http_server(lambda port: [PYTHON, "-m", "uvicorn", "llm_mcp_tests.support.async_asgi:application",
                                             "--port", str(port), "--host", "127.0.0.1", "--log-level", "warning"],
                               env=env)
    try:
        yield f"http://127.0.0.1:{server.port}"
    finally:
        server.stop()


async def fetch(client: httpx.AsyncClient, url: str) -> dict:
    response = await client.get(url)
    assert response.status_code == 200, response.text[response.text.find("exception_value"):][:1500]
    return response.json()


async def at_once(url: str, count: int) -> list[dict]:
    async with httpx.AsyncClient(timeout=180, limits=httpx.Limits(max_connections=count)) as client:
        return await asyncio.gather(*(fetch(client, url) for _ in range(count)))


@pytest.mark.parametrize("view", ["call", "chat", "record"])
def test_twenty_concurrent_async_views_run_their_calls_side_by_side(site, view):
    """MCP.acall, Chat.aask and the Django Chat's aask in async views under uvicorn: 20 requests at once each
    make a tool call that waits for the others; the server saw all 20 calls in flight together, so the views
    finished in about one call's time, not twenty."""
    asyncio.run(at_once(f"{site}/{view}?group=warm-{uuid.uuid4().hex}&parties=1", 1))  # imports, connections
    group = f"{view}-{uuid.uuid4().hex}"
    answers = asyncio.run(at_once(f"{site}/{view}?group={group}&parties={CONCURRENT}", CONCURRENT))
    together = f"together {CONCURRENT} of {CONCURRENT}"
    if view == "call":
        assert [a["text"] for a in answers] == [together] * CONCURRENT
    elif view == "chat":
        assert answers == [{"text": "done", "tool": together}] * CONCURRENT
    else:
        assert len({a["chat"] for a in answers}) == CONCURRENT
        assert [(a["text"], a["tool"]) for a in answers] == [("done", together)] * CONCURRENT


def test_a_queue_never_gets_twenty_together(echo_http_modern_url):
    """The proof can fail: calls made one after another (a short wait each) never have more than one in flight,
    and the server says so."""
    import llm_mcp

    group = f"queue-{uuid.uuid4().hex}"
    with llm_mcp.mcp(url=echo_http_modern_url, name="echo") as server:
        texts = [server.call("together", group=group, parties=3, seconds=0.2).text for _ in range(3)]
    assert texts == ["together 1 of 3"] * 3
