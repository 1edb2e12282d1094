"""Throwaway PostgreSQL and Redis servers for the tests.

Each server runs on ``127.0.0.1`` on a free port, with its files in a fresh
temporary directory, and is stopped (and the directory removed) when its context
manager exits::

    from llm_mcp_tests.support.services import postgres_server, redis_server

    with postgres_server() as pg:          # PostgresServer
        psycopg.connect(pg.url)            # postgresql://llm_mcp:...@127.0.0.1:PORT/llm_mcp
        pg.django_env()                    # DJANGO_DB_ENGINE=postgresql, DJANGO_DB_HOST, ...

    with redis_server() as rd:             # RedisServer
        redis.Redis.from_url(rd.url)       # redis://127.0.0.1:PORT/0

Or around a command (the way the Makefile runs the ``db`` tests on PostgreSQL)::

    python -m llm_mcp_tests.support.services postgres -- python -m pytest -m db
    python -m llm_mcp_tests.support.services postgres redis -- COMMAND ...

which exports ``DJANGO_DB_*`` (see example_project/settings.py) and
``LLM_MCP_TEST_POSTGRES_URL`` for ``postgres``, ``LLM_MCP_TEST_REDIS_URL`` for
``redis``, runs the command and exits with its exit code.

PostgreSQL's server binaries are looked for in ``$LLM_MCP_PG_BINDIR``, the newest
``/usr/lib/postgresql/<version>/bin`` (Debian), ``pg_config --bindir``, then
``PATH``. ``initdb`` refuses to run as root, so as root the cluster belongs to
the ``postgres`` system user (made by Debian's package): the temp directory is
given to it and ``initdb``/``postgres`` run as that user. The cluster trusts
connections over its Unix socket (in the temp directory) and asks for the
password on TCP; its superuser is ``llm_mcp``. Durability is switched off
(fsync, full_page_writes, synchronous_commit): it is thrown away anyway.

Redis is ``redis-server`` from ``PATH`` (or ``$LLM_MCP_REDIS_SERVER``), with
persistence off.

No Django import here: the module is used before Django is set up.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pwd
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

__all__ = [
    "PostgresServer",
    "RedisServer",
    "ServiceError",
    "find_postgres_bindir",
    "find_redis_server",
    "main",
    "postgres_server",
    "redis_server",
]

HOST = "127.0.0.1"
STARTUP_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0
PORT_ATTEMPTS = 3

PG_USER = "llm_mcp"
PG_PASSWORD = "llm_mcp"
PG_DBNAME = "llm_mcp"
PG_SYSTEM_USER = "postgres"


class ServiceError(RuntimeError):
    """A server could not be found, started or made ready."""


# --------------------------------------------------------------------------- what is yielded


@dataclass(frozen=True)
class PostgresServer:
    host: str
    port: int
    user: str
    password: str
    dbname: str
    directory: Path = field(repr=False)  # the temp dir: data/, the Unix socket, server.log
    startup_seconds: float = 0.0

    @property
    def url(self) -> str:
        return (f"postgresql://{quote(self.user, safe='')}:{quote(self.password, safe='')}"
                f"@{self.host}:{self.port}/{quote(self.dbname, safe='')}")

    @property
    def socket_dir(self) -> Path:
        return self.directory

    def django_env(self) -> dict[str, str]:
        """The environment variables that make example_project.settings use this server."""
        return {
            "DJANGO_DB_ENGINE": "postgresql",
            "DJANGO_DB_HOST": self.host,
            "DJANGO_DB_PORT": str(self.port),
            "DJANGO_DB_NAME": self.dbname,
            "DJANGO_DB_USER": self.user,
            "DJANGO_DB_PASSWORD": self.password,
        }

    def env(self) -> dict[str, str]:
        """What the CLI exports: django_env() plus ``LLM_MCP_TEST_POSTGRES_URL``."""
        return {**self.django_env(), "LLM_MCP_TEST_POSTGRES_URL": self.url}

    def log(self) -> str:
        return _read_tail(self.directory / "server.log")


@dataclass(frozen=True)
class RedisServer:
    host: str
    port: int
    directory: Path = field(repr=False)
    db: int = 0
    startup_seconds: float = 0.0

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/{self.db}"

    def env(self) -> dict[str, str]:
        """What the CLI exports: ``LLM_MCP_TEST_REDIS_URL``."""
        return {"LLM_MCP_TEST_REDIS_URL": self.url}

    def log(self) -> str:
        return _read_tail(self.directory / "server.log")


# --------------------------------------------------------------------------- helpers


def free_port() -> int:
    """A currently free TCP port on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def port_open(port: int, host: str = HOST, timeout: float = 0.2) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _await_ready(proc: subprocess.Popen, log_path: Path, name: str, what: str, ready: Callable[[], bool],
                 port_taken: tuple[str, ...], timeout: float) -> subprocess.Popen | None:
    """``proc`` once ``ready()`` holds; None if it exited with one of ``port_taken`` in its log (the
    port was taken in between: try another). Raises ServiceError if it exited otherwise, or did not
    ``what`` within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            log = _read_tail(log_path)
            if any(marker in log for marker in port_taken):
                return None
            raise ServiceError(f"{name} exited before accepting connections; its log:\n{log}")
        if ready():
            return proc
        if time.monotonic() > deadline:
            raise ServiceError(f"{name} did not {what} within {timeout:.0f} s; its log:\n{_read_tail(log_path)}")
        time.sleep(0.02)


def _read_tail(path: Path, limit: int = 6000) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"(no log: {exc})"
    return text[-limit:]


def _searchable_by_others(path: Path) -> bool:
    """Whether every directory from / down to ``path`` can be traversed by any user."""
    path = path.resolve()
    for part in [path, *path.parents]:
        try:
            if not part.stat().st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
    return True


def _make_tempdir(prefix: str, for_user: pwd.struct_passwd | None) -> Path:
    base = None
    if for_user is not None and not _searchable_by_others(Path(tempfile.gettempdir())):
        base = "/tmp"  # the system user must be able to reach its directory
    directory = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
    if for_user is not None:
        os.chown(directory, for_user.pw_uid, for_user.pw_gid)
    return directory


def _remove_tree(directory: Path) -> None:
    shutil.rmtree(directory, ignore_errors=True)
    if directory.exists():  # e.g. a file still being written by a dying process
        time.sleep(0.2)
        shutil.rmtree(directory, ignore_errors=True)


def _stop(proc: subprocess.Popen, first_signal: int = signal.SIGTERM) -> None:
    """Stop a server process: ``first_signal``, then SIGKILL after STOP_TIMEOUT."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(first_signal)
        try:
            proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            proc.wait(timeout=STOP_TIMEOUT)


def _run_as(user: pwd.struct_passwd | None) -> dict:
    """Popen keyword arguments that run the child as ``user`` (None: as ourselves)."""
    if user is None:
        return {}
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}


def _child_env(user: pwd.struct_passwd | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}  # no stray PGDATA, PGPORT...
    env["LC_ALL"] = "C"
    if user is not None:
        env.update(HOME=user.pw_dir, USER=user.pw_name, LOGNAME=user.pw_name)
    return env


# --------------------------------------------------------------------------- PostgreSQL


def _pg_version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", path.parent.name)) or (0,)


def _is_pg_bindir(path: Path) -> bool:
    return (path / "postgres").is_file() and (path / "initdb").is_file()


def find_postgres_bindir() -> Path:
    """The directory of PostgreSQL's server binaries (postgres, initdb, createdb)."""
    candidates: list[Path] = []
    if os.environ.get("LLM_MCP_PG_BINDIR"):
        candidates.append(Path(os.environ["LLM_MCP_PG_BINDIR"]))
    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=_pg_version_key, reverse=True)
    pg_config = shutil.which("pg_config")
    if pg_config:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run([pg_config, "--bindir"], check=False, capture_output=True, text=True, timeout=10).stdout
            if out.strip():
                candidates.append(Path(out.strip()))
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(Path(initdb).resolve().parent)
    for candidate in candidates:
        if _is_pg_bindir(candidate):
            return candidate
    raise ServiceError(
        "PostgreSQL server binaries (postgres, initdb) not found in $LLM_MCP_PG_BINDIR, "
        "/usr/lib/postgresql/*/bin, `pg_config --bindir` or PATH: install them "
        "(Debian: apt-get install postgresql; .ci/run does)"
    )


def _postgres_system_user() -> pwd.struct_passwd | None:
    """The user to run PostgreSQL as: None (ourselves) unless we are root."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(PG_SYSTEM_USER)
    except KeyError:
        raise ServiceError(
            f"running as root, and initdb refuses root: the {PG_SYSTEM_USER!r} system user is needed "
            "(Debian's postgresql package creates it)"
        ) from None


def _pg_ready(data: Path) -> bool:
    """postmaster.pid's status line says the server accepts connections."""
    try:
        lines = (data / "postmaster.pid").read_text().splitlines()
    except OSError:
        return False
    return len(lines) >= 8 and lines[7].strip() == "ready"


def _pg_start(bindir: Path, directory: Path, user: pwd.struct_passwd | None, port: int) -> subprocess.Popen:
    data = directory / "data"
    log = open(directory / "server.log", "ab")  # noqa: SIM115 - the child keeps writing to it
    try:
        return subprocess.Popen(
            [str(bindir / "postgres"), "-D", str(data), "-p", str(port),
             "-c", f"listen_addresses={HOST}",
             "-c", f"unix_socket_directories={directory}",
             "-c", "fsync=off", "-c", "full_page_writes=off", "-c", "synchronous_commit=off",
             "-c", "max_connections=50", "-c", "shared_buffers=32MB",
             "-c", "logging_collector=off", "-c", "log_min_messages=warning"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            cwd=directory, env=_child_env(user), start_new_session=True, **_run_as(user),
        )
    finally:
        log.close()


@contextlib.contextmanager
def postgres_server(timeout: float = STARTUP_TIMEOUT, user: str = PG_USER, password: str = PG_PASSWORD,
                    dbname: str = PG_DBNAME) -> Iterator[PostgresServer]:
    """A throwaway PostgreSQL cluster on 127.0.0.1 with superuser ``user`` and database ``dbname``."""
    started = time.monotonic()
    bindir = find_postgres_bindir()
    system_user = _postgres_system_user()
    directory = _make_tempdir("llm-mcp-pg-", system_user)
    proc: subprocess.Popen | None = None
    try:
        pwfile = directory / "pwfile"
        pwfile.write_text(password + "\n")
        if system_user is not None:
            os.chown(pwfile, system_user.pw_uid, system_user.pw_gid)
        init = subprocess.run(
            [str(bindir / "initdb"), "-D", str(directory / "data"), "-U", user, f"--pwfile={pwfile}",
             "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync"],
            check=False, stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=directory,
            env=_child_env(system_user), timeout=max(timeout, 60), **_run_as(system_user),
        )
        pwfile.unlink()
        if init.returncode != 0:
            raise ServiceError(f"initdb failed with exit code {init.returncode}:\n{init.stdout}\n{init.stderr}")

        for attempt in range(PORT_ATTEMPTS):
            port = free_port()
            proc = _pg_start(bindir, directory, system_user, port)
            proc = _await_ready(proc, directory / "server.log", "postgres", f"accept connections on {HOST}:{port}",
                                lambda: _pg_ready(directory / "data") and port_open(port),
                                ("could not bind", "Address already in use"), timeout)
            if proc is not None:
                break
        else:
            raise ServiceError(f"postgres could not bind a free port in {PORT_ATTEMPTS} attempts; its log:\n"
                               f"{_read_tail(directory / 'server.log')}")

        if dbname != "postgres":
            created = subprocess.run(
                [str(bindir / "createdb"), "-h", str(directory), "-p", str(port), "-U", user, dbname],
                check=False, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=_child_env(None),
                timeout=timeout,
            )
            if created.returncode != 0:
                raise ServiceError(f"createdb {dbname} failed: {created.stdout}{created.stderr}\n"
                                   f"server log:\n{_read_tail(directory / 'server.log')}")

        yield PostgresServer(HOST, port, user, password, dbname, directory,
                             startup_seconds=time.monotonic() - started)
    finally:
        if proc is not None:
            _stop(proc, signal.SIGINT)  # SIGINT: fast shutdown (ends the open sessions)
        _remove_tree(directory)


# --------------------------------------------------------------------------- Redis


def find_redis_server() -> str:
    path = os.environ.get("LLM_MCP_REDIS_SERVER") or shutil.which("redis-server")
    if not path:
        raise ServiceError("redis-server not found on PATH: install it (Debian: apt-get install redis-server; "
                           ".ci/run does)")
    return path


def _redis_ping(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


@contextlib.contextmanager
def redis_server(timeout: float = STARTUP_TIMEOUT) -> Iterator[RedisServer]:
    """A throwaway Redis server on 127.0.0.1 (no persistence)."""
    started = time.monotonic()
    binary = find_redis_server()
    directory = _make_tempdir("llm-mcp-redis-", None)
    proc: subprocess.Popen | None = None
    try:
        for attempt in range(PORT_ATTEMPTS):
            port = free_port()
            with open(directory / "server.log", "ab") as log:
                proc = subprocess.Popen(
                    [binary, "--port", str(port), "--bind", HOST, "--save", "", "--appendonly", "no",
                     "--dir", str(directory), "--daemonize", "no", "--logfile", ""],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    cwd=directory, start_new_session=True,
                )
            proc = _await_ready(proc, directory / "server.log", "redis-server", f"answer PING on {HOST}:{port}",
                                lambda: _redis_ping(port), ("Address already in use",), timeout)
            if proc is not None:
                break
        else:
            raise ServiceError(f"redis-server could not bind a free port in {PORT_ATTEMPTS} attempts; its log:\n"
                               f"{_read_tail(directory / 'server.log')}")
        yield RedisServer(HOST, port, directory, startup_seconds=time.monotonic() - started)
    finally:
        if proc is not None:
            _stop(proc, signal.SIGTERM)
        _remove_tree(directory)


# --------------------------------------------------------------------------- command line

SERVICES = {"postgres": postgres_server, "redis": redis_server}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" in argv:
        split = argv.index("--")
        names, command = argv[:split], argv[split + 1:]
    else:
        names, command = argv, []
    parser = argparse.ArgumentParser(
        prog="python -m llm_mcp_tests.support.services",
        description="Start throwaway servers, run COMMAND with their environment variables, stop them. "
                    "postgres exports DJANGO_DB_ENGINE=postgresql, DJANGO_DB_HOST/PORT/NAME/USER/PASSWORD and "
                    "LLM_MCP_TEST_POSTGRES_URL; redis exports LLM_MCP_TEST_REDIS_URL.",
        usage="%(prog)s {postgres,redis} [...] [-v] -- COMMAND [ARG ...]",
    )
    parser.add_argument("services", nargs="+", choices=sorted(SERVICES))
    parser.add_argument("-v", "--verbose", action="store_true", help="say what was started, and how fast")
    args = parser.parse_args(names)
    if not command:
        parser.error("no command: put it after --")

    env = dict(os.environ)
    with contextlib.ExitStack() as stack:
        for name in dict.fromkeys(args.services):  # each once, in the order given
            try:
                server = stack.enter_context(SERVICES[name]())
            except ServiceError as exc:
                print(f"llm_mcp_tests.support.services: {name}: {exc}", file=sys.stderr)
                return 1
            env.update(server.env())
            if args.verbose:
                print(f"llm_mcp_tests.support.services: {name} on {server.host}:{server.port} "
                      f"(started in {server.startup_seconds:.2f} s)", file=sys.stderr)
        # The servers stop (ExitStack) after the command, also on Ctrl-C or SIGTERM.
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
        try:
            code = subprocess.call(command, env=env)
        except OSError as exc:
            print(f"llm_mcp_tests.support.services: cannot run {command[0]!r}: {exc}", file=sys.stderr)
            return 127
        finally:
            signal.signal(signal.SIGTERM, previous)
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main())
