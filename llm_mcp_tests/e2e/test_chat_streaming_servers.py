"""The chat pages' server-sent events under WSGI (``manage.py runserver``) and ASGI (uvicorn), over real
HTTP with httpx (mark ``slow``): a reply's tokens reach the client while the turn still runs, the follow
endpoint sends the conversation, then ``end``, and a turn a Celery worker runs is followed row by row."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from llm_mcp.testing.scripted_model import ScriptedModel, reply
from llm_mcp_tests.support.chat_ui import PASSWORD, SETTINGS, create_user, start_worker

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

TEXT = "Streaming *works* here, piece by piece, until the very end of this sentence."


def signed_in(site, username: str) -> httpx.Client:
    client = httpx.Client(base_url=site.url, timeout=30, follow_redirects=False)
    page = client.get("/accounts/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    response = client.post("/accounts/login/", data={"username": username, "password": PASSWORD,
                                                     "csrfmiddlewaretoken": token})
    assert response.status_code == 302, response.text[:500]
    return client


def csrf(client: httpx.Client, path: str) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', client.get(path).text).group(1)


def events(lines):
    """``(event, data)`` pairs from an iterator of SSE lines."""
    name, data = None, []
    for line in lines:
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif line == "" and name is not None:
            yield name, json.loads("\n".join(data))
            name, data = None, []


@pytest.mark.parametrize("server", ["runserver", "uvicorn"])
def test_send_streams_tokens_while_the_turn_runs(start_site, server):
    with ScriptedModel([reply(TEXT)], chunk_size=4, chunk_delay=0.05) as model:
        site = start_site(server=server, DJANGO_SETTINGS_MODULE=SETTINGS, OPENAI_BASE_URL=model.openai_base_url,
                          OPENAI_API_KEY="test-key")
        create_user(site, "ada")
        client = signed_in(site, "ada")
        created = client.post("/mcp/chats/new/", data={"agent": "0", "csrfmiddlewaretoken": csrf(client, "/mcp/chats/new/")})
        detail = created.headers["location"]
        chat_id = detail.rstrip("/").rsplit("/", 1)[1]
        token = csrf(client, detail)
        seen, state_during = [], None
        with client.stream("POST", f"/mcp/chats/{chat_id}/send/", data={"text": "stream please",
                                                                     "csrfmiddlewaretoken": token},
                           headers={"Accept": "text/event-stream"}) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            assert response.headers["x-accel-buffering"] == "no" and "no-cache" in response.headers["cache-control"]
            for name, data in events(response.iter_lines()):
                seen.append((name, data))
                if name == "token" and state_during is None:  # the first piece: the turn has not finished
                    state_during = client.get(f"/mcp/chats/{chat_id}/state.json").json()["state"]
        assert state_during == "running"
        tokens = [data for name, data in seen if name == "token"]
        assert "".join(tokens) == TEXT and len(tokens) == -(-len(TEXT) // 4)  # every piece, in order
        names = [name for name, _ in seen]
        assert names[-1] == "done" and seen[-1][1]["state"] == "idle"
        final = [data for name, data in seen if name == "conversation"][-1]
        assert "<em>works</em>" in final["html"]  # the saved reply, rendered as markdown

        # following a chat: the conversation, then the end (nothing runs)
        with client.stream("GET", f"/mcp/chats/{chat_id}/events/") as response:
            followed = list(events(response.iter_lines()))
        assert [name for name, _ in followed] == ["conversation", "end"]
        assert followed[0][1]["state"] == "idle" and "<em>works</em>" in followed[0][1]["html"]
        with client.stream("GET", f"/mcp/chats/{chat_id}/events/?since={followed[0][1]['fingerprint']}") as response:
            assert [name for name, _ in events(response.iter_lines())] == ["end"]  # nothing new since
    assert "Traceback" not in site.output()


def start_chat(client: httpx.Client) -> tuple[str, str]:
    """A new chat of the test agent: ``(chat id, a CSRF token of its page)``."""
    created = client.post("/mcp/chats/new/", data={"agent": "0", "csrfmiddlewaretoken": csrf(client, "/mcp/chats/new/")})
    detail = created.headers["location"]
    return detail.rstrip("/").rsplit("/", 1)[1], csrf(client, detail)


def test_a_turn_run_by_a_celery_worker_is_followed(start_site, redis_url, tmp_path):
    """MCP-PERSIST-05: with CHAT_RUN_TURNS = "celery" the page's message is a job of a real worker (Redis
    broker); the events follow its rows until the answer is saved. Without JavaScript, the POST redirects
    and the events endpoint follows the job the same way."""
    with ScriptedModel([reply(TEXT), reply("The second **answer**.")], chunk_size=4) as model:
        site = start_site(DJANGO_SETTINGS_MODULE=SETTINGS, OPENAI_BASE_URL=model.openai_base_url,
                          OPENAI_API_KEY="test-key", CELERY_BROKER_URL=redis_url, LLM_MCP_CHAT_RUN_TURNS="celery")
        create_user(site, "ada")
        worker = start_worker(site.env, tmp_path / "worker.log")
        try:
            client = signed_in(site, "ada")
            chat_id, token = start_chat(client)
            with client.stream("POST", f"/mcp/chats/{chat_id}/send/", data={"text": "by a worker",
                                                                         "csrfmiddlewaretoken": token},
                               headers={"Accept": "text/event-stream"}) as response:
                seen = list(events(response.iter_lines()))
            names = [name for name, _ in seen]
            assert "token" not in names and names[-1] == "done"  # rows, not tokens: the worker has the stream
            last = [data for name, data in seen if name == "conversation"][-1]
            assert last["state"] == "idle" and "<em>works</em>" in last["html"]
            assert "/v1/chat/completions" in (tmp_path / "worker.log").read_text()  # the worker asked the model

            sent = client.post(f"/mcp/chats/{chat_id}/send/", data={"text": "again", "csrfmiddlewaretoken": token})
            assert sent.status_code == 302  # without JavaScript
            with client.stream("GET", f"/mcp/chats/{chat_id}/events/") as response:
                followed = list(events(response.iter_lines()))
            assert followed[-1][0] == "end"
            final = [data for name, data in followed if name == "conversation"][-1]
            assert final["state"] == "idle" and "<strong>answer</strong>" in final["html"]
            assert len(model.requests) == 2
        finally:
            worker.terminate()
            worker.wait(10)
    assert "Traceback" not in site.output()
