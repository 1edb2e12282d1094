"""Cross-process test parts: a database several processes share, a Redis broker and a Celery worker
(fixtures, enabled in ``llm_mcp_tests/e2e/conftest.py``), and ``step`` to run one step of
``llm_mcp_tests/support/steps.py`` in its own process.

The shared database is an SQLite file, or, in the PostgreSQL run of ``make test`` (marker ``db``),
a fresh database on the throwaway PostgreSQL server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llm_mcp_tests.support.processes import REPO_ROOT
from llm_mcp_tests.support.services import ServiceError, redis_server


@pytest.fixture
def shared_db(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Environment variables naming a migrated database that several processes can open."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    env.pop("CELERY_BROKER_URL", None)
    name = None
    if os.environ.get("DJANGO_DB_ENGINE") == "postgresql":
        import psycopg

        name = f"llm_mcp_proc_{uuid.uuid4().hex[:12]}"
        url = os.environ["LLM_MCP_TEST_POSTGRES_URL"]
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        env["DJANGO_DB_NAME"] = name
    else:
        env["DJANGO_DB_PATH"] = str(tmp_path / "shared.sqlite3")
    migrate = subprocess.run([sys.executable, "manage.py", "migrate", "--verbosity", "0"], cwd=REPO_ROOT,
                             env=env, capture_output=True, text=True, timeout=STEP_TIMEOUT)
    assert migrate.returncode == 0, migrate.stderr
    yield env
    if name is not None:
        import psycopg

        with psycopg.connect(os.environ["LLM_MCP_TEST_POSTGRES_URL"], autocommit=True) as admin:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def step(env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run one step in a new process; its JSON output is on ``.json``."""
    done = subprocess.run([sys.executable, "-m", "llm_mcp_tests.support.steps", *args], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=STEP_TIMEOUT)
    if check:
        assert done.returncode == 0, f"step {args} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    done.json = json.loads(lines[-1]) if lines else None  # type: ignore[attr-defined]
    return done


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    try:
        with redis_server() as server:
            yield server.url
    except ServiceError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"no Redis server here: {exc}")


@pytest.fixture
def worker(shared_db, redis_url, model, tmp_path) -> Iterator[dict[str, str]]:
    """A real Celery worker process (``celery -A example_project worker``) on Redis, whose
    chats talk to this test's scripted ``model``."""
    env = {**shared_db, "CELERY_BROKER_URL": redis_url, "LLM_MCP_TEST_BASE_URL": model.openai_base_url,
           "LLM_MCP_TEST_RUNS": str(tmp_path / "runs")}
    log = open(tmp_path / "worker.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "-m", "celery", "-A", "example_project", "worker", "--pool", "solo",
                             "--without-gossip", "--without-mingle", "--without-heartbeat", "--loglevel", "INFO"],
                            cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while "ready" not in (tmp_path / "worker.log").read_text():
        assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "worker.log").read_text()
        time.sleep(0.1)
    env["WORKER_LOG"] = str(tmp_path / "worker.log")
    yield env
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    log.close()


STEP_TIMEOUT = 60


def wait_for_answer(env: dict[str, str], chat_id: str, seconds: float = 45) -> dict[str, Any]:
    """The ``dump`` step's state of chat ``chat_id`` once its last message is an assistant's answer
    (fails after ``seconds``, showing the state and the worker's log)."""
    deadline = time.monotonic() + seconds
    while True:
        state = step(env, "dump", chat_id).json
        last = state["messages"][-1] if state["messages"] else {}  # the job may not have added the question yet
        if last.get("role") == "assistant" and last.get("content"):
            return state
        assert time.monotonic() < deadline, (state, Path(env["WORKER_LOG"]).read_text())
        time.sleep(0.3)
