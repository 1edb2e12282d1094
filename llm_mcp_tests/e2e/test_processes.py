"""Chats and credentials across real processes: a crash mid-turn, two processes refreshing one
credential, and a Celery worker resuming a chat approved through a view (issue 5).

Every step runs in its own process (``llm_mcp_tests/support/steps.py``) on a database they share: an
SQLite file, or, in the PostgreSQL run of ``make test`` (marker ``db``), a fresh database on
the throwaway PostgreSQL server.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llm_mcp.testing.scripted_model import ScriptedModel, reply, tool_call, turn

from llm_mcp_tests.support.processes import REPO_ROOT
from llm_mcp_tests.support.workers import STEP_TIMEOUT, step, wait_for_answer

pytestmark = [pytest.mark.db, pytest.mark.slow]


def test_two_processes_refreshing_one_credential_refresh_once(shared_db, tmp_path):
    """MCP-CRED-06, MCP-CRED-07: ``Credential.objects.synchronize(key)`` serializes a rotating
    refresh across processes: both race to spend ``rt-1``, exactly one does, and the other
    uses the token it stored."""
    step(shared_db, "write", "oauth:linear:user:1", json.dumps({"access_token": "at-1", "refresh_token": "rt-1"}))
    log = tmp_path / "refreshes.log"
    racers = [subprocess.Popen([sys.executable, "-m", "llm_mcp_tests.support.steps", "refresh", "oauth:linear:user:1",
                                str(log)], cwd=REPO_ROOT, env=shared_db, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = []
    for racer in racers:
        out, err = racer.communicate(timeout=STEP_TIMEOUT)
        assert racer.returncode == 0, err
        outputs.append(json.loads(out.strip().splitlines()[-1]))
    assert len(log.read_text().split()) == 1
    assert sorted(o["refreshed"] for o in outputs) == [False, True]
    assert [o["token"] for o in outputs if not o["refreshed"]] == ["at-2"]


def test_a_turn_killed_mid_way_is_finished_by_a_later_complete(shared_db, tmp_path):
    """A process dies inside a tool call (``os._exit``: no cleanup). Another process's
    ``complete()`` finishes the turn: every call has exactly one result, the call that had
    finished is not run again, and the model gets all three results."""
    runs = tmp_path / "runs"
    env = {**shared_db, "LLM_MCP_TEST_RUNS": str(runs)}
    with ScriptedModel() as model:
        env["LLM_MCP_TEST_BASE_URL"] = model.openai_base_url
        model.add(turn(tool_calls=[tool_call("count", {"label": "a"}, id="call_1"),
                                   tool_call("crash", {}, id="call_2"),
                                   tool_call("count", {"label": "c"}, id="call_3")]),
                  reply("all three ran"))
        crashed = step(env, "crash-turn", "Run the three tools", check=False)
        assert crashed.returncode == 9, crashed.stderr
        chat_id = str(json.loads(crashed.stdout.splitlines()[0])["chat"])
        before = step(env, "dump", chat_id).json
        assert [c["result"] for c in before["calls"]] == ["counted a", None, None]

        finished = step(env, "complete", chat_id).json
        assert finished["content"] == "all three ran"
        after = step(env, "dump", chat_id).json
        assert [c["result"] for c in after["calls"]] == ["counted a", "survived", "counted c"]
        assert after["tool_messages"] == 3
        assert runs.read_text().split() == ["a", "c"]
        assert [r["content"] for r in model.requests[1].tool_results] == ["counted a", "survived", "counted c"]


def test_cancel_from_another_process_stops_the_running_turn(shared_db, tmp_path):
    """``cancel()`` in one process sets the persisted flag; the turn running in another process
    stops at its next check: the call after the slow one does not run, and gets a result
    saying it was cancelled, so the conversation stays well-formed."""
    runs = tmp_path / "runs"
    env = {**shared_db, "LLM_MCP_TEST_RUNS": str(runs)}
    with ScriptedModel() as model:
        env["LLM_MCP_TEST_BASE_URL"] = model.openai_base_url
        model.add(turn(tool_calls=[tool_call("slow", {}, id="call_s"), tool_call("count", {"label": "b"}, id="call_b")]))
        running = subprocess.Popen([sys.executable, "-m", "llm_mcp_tests.support.steps", "crash-turn", "Go"], cwd=REPO_ROOT,
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        chat_id = str(json.loads(running.stdout.readline())["chat"])
        deadline = time.monotonic() + STEP_TIMEOUT
        while not Path(str(runs) + ".started").exists():
            assert running.poll() is None and time.monotonic() < deadline, running.stderr.read()
            time.sleep(0.05)
        step(env, "cancel", chat_id)
        out, err = running.communicate(timeout=STEP_TIMEOUT)
        assert running.returncode == 0, err
        assert "cancelled" in json.loads(out.strip().splitlines()[-1])
        state = step(env, "dump", chat_id).json
        assert [c["result"] for c in state["calls"]] == ["slow done", "The call was cancelled before it finished."]
        assert not runs.exists()  # count never ran
        assert len(model.requests) == 1


def test_a_celery_job_resumes_a_chat_approved_through_a_view(worker, model):
    """MCP-PERSIST-05, MCP-APPROVAL-05: one process pauses a chat for approval; the example
    site's view records the approval (CSRF and all) and enqueues ``resume_chat``; a real
    worker on Redis runs the call against the MCP server and finishes the turn."""
    env = worker
    model.add(tool_call("echo", {"message": "hello from a job"}, id="call_c1"), reply("It echoed."))
    started = step(env, "start-chat", "Echo something").json
    assert started["waiting"] is True and started["calls"] == ["call_c1"]
    chat_id = str(started["chat"])
    approved = step(env, "approve", chat_id, "call_c1").json
    assert approved["approval"] == "approved" and approved["status"] in (200, 302, 303)
    state = wait_for_answer(env, chat_id)
    assert [(m["role"], m["content"]) for m in state["messages"]] == [
        ("user", "Echo something"), ("assistant", ""), ("tool", "hello from a job"), ("assistant", "It echoed.")]
    assert state["calls"] == [{"id": "call_c1", "name": "echo", "approval": "approved",
                               "result": "hello from a job"}]
    assert len(model.requests) == 2
    assert model.requests[1].tool_results[0]["content"] == "hello from a job"
    assert "llm_mcp.resume_chat" in Path(env["WORKER_LOG"]).read_text()
