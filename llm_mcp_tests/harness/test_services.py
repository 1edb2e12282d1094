"""The throwaway PostgreSQL and Redis servers of llm_mcp_tests/support/services.py are real servers.

Without the server binaries these tests skip, except under CI (CI=true), where
.ci/run installs them and a missing binary is a failure.
"""

from __future__ import annotations

import os
import pwd
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from llm_mcp_tests.support import services
from llm_mcp_tests.support.services import ServiceError, port_open, postgres_server, redis_server

REPO_ROOT = Path(__file__).resolve().parents[2]


def _need(finder) -> None:
    try:
        finder()
    except ServiceError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(str(exc))


@pytest.fixture
def need_postgres() -> None:
    _need(services.find_postgres_bindir)


@pytest.fixture
def need_redis() -> None:
    _need(services.find_redis_server)


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "llm_mcp_tests.support.services", *args], cwd=REPO_ROOT, check=False,
                          capture_output=True, text=True, timeout=120, env=env)


# --------------------------------------------------------------------------- PostgreSQL


def test_postgres_server_is_a_real_postgres(need_postgres: None) -> None:
    import psycopg

    with postgres_server() as pg:
        assert pg.host == "127.0.0.1" and pg.port not in (0, 5432)
        assert pg.url == f"postgresql://llm_mcp:llm_mcp@127.0.0.1:{pg.port}/llm_mcp"
        assert port_open(pg.port)
        if os.geteuid() == 0:  # initdb refuses root: the cluster belongs to the postgres user
            assert pwd.getpwuid(pg.directory.stat().st_uid).pw_name == "postgres"

        with psycopg.connect(pg.url, connect_timeout=10) as conn:
            version = conn.execute("SELECT version()").fetchone()[0]
            assert version.startswith("PostgreSQL ")
            assert conn.execute("SELECT current_user, current_database()").fetchone() == ("llm_mcp", "llm_mcp")
            assert conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone() == (True,)
            assert conn.execute("SHOW fsync").fetchone() == ("off",)
            conn.execute("CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)")
            conn.execute("INSERT INTO notes (body) VALUES (%s), (%s)", ("hello", "wörld"))
            conn.commit()
        with psycopg.connect(host=pg.host, port=pg.port, user=pg.user, password=pg.password, dbname=pg.dbname,
                             autocommit=True) as conn:
            assert conn.execute("SELECT body FROM notes ORDER BY id").fetchall() == [("hello",), ("wörld",)]
            # A superuser may create databases (Django's test runner does).
            conn.execute("CREATE DATABASE scratch")

        # TCP connections need the password.
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(host=pg.host, port=pg.port, user=pg.user, password="wrong", dbname=pg.dbname)
        port, directory = pg.port, pg.directory

    assert not port_open(port)
    assert not directory.exists()


def test_two_postgres_servers_side_by_side(need_postgres: None) -> None:
    with postgres_server() as first, postgres_server(dbname="other") as second:
        assert first.port != second.port and first.directory != second.directory
        assert second.url.endswith("/other")
        assert port_open(first.port) and port_open(second.port)
    assert not port_open(first.port) and not port_open(second.port)


def test_postgres_server_stops_when_the_body_raises(need_postgres: None) -> None:
    with pytest.raises(KeyError), postgres_server() as pg:
        raise KeyError("boom")
    assert not port_open(pg.port)
    assert not pg.directory.exists()


# --------------------------------------------------------------------------- Redis


def test_redis_server_is_a_real_redis(need_redis: None) -> None:
    import redis

    with redis_server() as rd:
        assert rd.url == f"redis://127.0.0.1:{rd.port}/0"
        client = redis.Redis.from_url(rd.url, socket_timeout=5)
        try:
            assert client.ping()
            assert client.set("greeting", "hello")
            assert client.get("greeting") == b"hello"
            assert client.incr("counter") == 1 and client.incr("counter") == 2
            assert client.config_get("save") == {"save": ""}
            assert client.config_get("appendonly") == {"appendonly": "no"}
        finally:
            client.close()
        port, directory = rd.port, rd.directory
        assert directory.is_dir()

    assert not port_open(port)
    assert not directory.exists()


def test_redis_server_stops_when_the_body_raises(need_redis: None) -> None:
    with pytest.raises(ValueError), redis_server() as rd:
        raise ValueError("boom")
    assert not port_open(rd.port)
    assert not rd.directory.exists()


def test_a_server_that_dies_at_startup_is_reported_with_its_log(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "redis-server"
    fake.write_text("#!/bin/sh\necho 'FATAL: no such thing as a free lunch' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv("LLM_MCP_REDIS_SERVER", str(fake))
    made: list[Path] = []
    make_tempdir = services._make_tempdir
    monkeypatch.setattr(services, "_make_tempdir", lambda *a: made.append(make_tempdir(*a)) or made[-1])
    with pytest.raises(ServiceError, match="exited before accepting connections") as info, redis_server():
        pass
    assert "no such thing as a free lunch" in str(info.value)
    assert len(made) == 1 and not made[0].exists()


def test_a_server_that_never_answers_times_out_with_its_log(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "redis-server"
    fake.write_text("#!/bin/sh\necho 'starting, slowly'\nexec sleep 30\n")
    fake.chmod(0o755)
    monkeypatch.setenv("LLM_MCP_REDIS_SERVER", str(fake))
    with pytest.raises(ServiceError, match=r"did not answer PING .* within 1 s") as info, redis_server(timeout=1):
        pass
    assert "starting, slowly" in str(info.value)


# --------------------------------------------------------------------------- command line


def test_cli_passes_redis_url_and_returns_the_exit_code(need_redis: None) -> None:
    child = "import os, sys; print(os.environ['LLM_MCP_TEST_REDIS_URL']); sys.exit(7)"
    result = _cli("redis", "--", sys.executable, "-c", child)
    assert result.returncode == 7, result.stderr
    url = result.stdout.strip()
    match = re.fullmatch(r"redis://127\.0\.0\.1:(\d+)/0", url)
    assert match, url
    assert not port_open(int(match.group(1)))  # stopped after the command

    assert _cli("redis", "--", sys.executable, "-c", "pass").returncode == 0


def test_cli_runs_django_on_postgres(need_postgres: None, need_redis: None) -> None:
    child = textwrap.dedent("""
        import os, sys, django
        os.environ["DJANGO_SETTINGS_MODULE"] = "example_project.settings"
        django.setup()
        from django.db import connection
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_database(), current_user")
            print(connection.vendor, *cursor.fetchone())
        print(os.environ["DJANGO_DB_PORT"], os.environ["LLM_MCP_TEST_REDIS_URL"])
        sys.exit(4)
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_DB_")}
    result = _cli("postgres", "redis", "--", sys.executable, "-c", child, env=env)
    assert result.returncode == 4, result.stderr
    first, second = result.stdout.splitlines()
    assert first == "postgresql llm_mcp llm_mcp"
    port, redis_url = second.split()
    assert redis_url.startswith("redis://127.0.0.1:")
    assert not port_open(int(port))


def test_cli_usage_errors() -> None:
    assert _cli("redis").returncode == 2  # no command
    assert _cli("mysql", "--", "true").returncode == 2
    missing = _cli("redis", "--", "/nonexistent/command", env={**os.environ, "LLM_MCP_REDIS_SERVER": "/bin/false"})
    assert missing.returncode == 1 and "redis-server exited" in missing.stderr


# --------------------------------------------------------------------------- the settings


@pytest.mark.db
@pytest.mark.django_db
def test_the_database_is_the_one_the_environment_names() -> None:
    """On SQLite in the first run, on PostgreSQL in the Makefile's second run of the `db` tests."""
    from django.contrib.auth.models import User
    from django.db import connection

    expected = "postgresql" if os.environ.get("DJANGO_DB_ENGINE") == "postgresql" else "sqlite"
    assert connection.vendor == expected
    User.objects.create_user("ada", password="pw")
    assert User.objects.filter(username="ada").count() == 1
