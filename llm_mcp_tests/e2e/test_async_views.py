"""The async twins under a real ASGI server: uvicorn serving Django async views
(``support/async_site.py``) that await ``MCP.acall``, ``Chat.aask`` and ``llm_mcp.models.Chat.aask``,
each making a slow tool call on the echo test server (``sleep``).

Twenty requests at once finish in about one call's time, not twenty: the bound is computed from the
measured duration of one request alone on the same site (no absolute timing), with room for a
loaded machine, and well under what a queue of even six threads (the event loop's default
executor on two cores) would take.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import httpx
import pytest

from llm_mcp.testing.scripted_model import reply, tool_call
from llm_mcp_tests.support.processes import PYTHON, start_http_server

pytestmark = [pytest.mark.slow]

CONCURRENT = 20
SECONDS = 2.0


@pytest.fixture
def site(shared_db, model, echo_http_modern_url) -> Iterator[str]:
    """uvicorn serving the async site on a free port; its chats talk to this test's scripted model."""
    def turn(request):  # each request's turn: call sleep first, then answer (any number of chats at once)
        return reply("done") if request.tool_results else tool_call("sleep", {"seconds": SECONDS})

    model.add(*[turn] * (2 * (CONCURRENT + 2)))
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


async def timed(url: str, count: int) -> tuple[float, list[dict]]:
    async with httpx.AsyncClient(timeout=120, limits=httpx.Limits(max_connections=count)) as client:
        started = time.monotonic()
        answers = await asyncio.gather(*(fetch(client, url) for _ in range(count)))
        return time.monotonic() - started, answers


def one_and_many(url: str) -> tuple[float, float, list[dict]]:
    asyncio.run(timed(url, 1))  # warm: the site's first request imports and connects
    single, _ = asyncio.run(timed(url, 1))
    many, answers = asyncio.run(timed(url, CONCURRENT))
    return single, many, answers


def assert_side_by_side(single: float, many: float) -> None:
    # Serial would take CONCURRENT x single; six threads (the default executor on two cores) ceil(20/6) = 4 x.
    assert single >= SECONDS
    assert many < 3 * single, f"{CONCURRENT} concurrent requests took {many:.2f} s; one alone took {single:.2f} s"


@pytest.mark.parametrize("view", ["call", "chat", "record"])
def test_twenty_concurrent_async_views_take_about_one_calls_time(site, view):
    """MCP.acall, Chat.aask and the Django Chat's aask in async views under uvicorn: 20 requests at once,
    each with a 2 s tool call, finish in about the time of one request alone."""
    url = f"{site}/{view}?seconds={SECONDS:g}"
    single, many, answers = one_and_many(url)
    assert_side_by_side(single, many)
    if view == "call":
        assert {a["text"] for a in answers} == {f"slept {SECONDS:g}"}
    elif view == "chat":
        assert all(a == {"text": "done", "tool": f"slept {SECONDS:g}"} for a in answers)
    else:
        assert len({a["chat"] for a in answers}) == CONCURRENT and {a["text"] for a in answers} == {"done"}
