"""Serving kit servers: a ``Server`` in a thread over HTTP, ``running_server`` (its options, a server
that will not start, crashes, timeouts, stdio commands, env), the public names, and imports that need
neither Django nor mcp."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

import llm_mcp
import llm_mcp.testing as kit
from llm_mcp.testing import Server, running_server
from llm_mcp.testing.serve import serve_http, serve_stdio

from llm_mcp_tests.support.kit_tools import Greet, Triple


@pytest.mark.parametrize("era", ["auto", "modern", "handshake"])
def test_server_in_a_thread_over_http(era: str) -> None:
    """MCP-KIT-01: a Server built from kit classes and a context answers over Streamable HTTP."""
    server = Server("kit-thread", tools=[Triple], resources=[], prompts=[Greet], context={"user_id": 5})
    with running_server(server, era=era) as running:
        assert running.url.startswith("http://127.0.0.1:") and running.url.endswith("/mcp")
        with running.mcp(timeout=20) as client:
            assert client.protocol_version == ("2025-11-25" if era == "handshake" else "2026-07-28")
            result = client.call("triple", n=14)
            assert result.structured == {"value": 42} and not result.is_error
            tool = client.tool("triple")
            assert (tool.read_only, tool.destructive, tool.idempotent, tool.open_world) == (True, False, True, False)
            assert tool.meta["com.example/x"] == 1
    with pytest.raises(llm_mcp.ConnectionError), llm_mcp.mcp(url=running.url, timeout=5) as client:
        client.tools


def test_running_server_refuses_bad_options() -> None:
    server = Server("x", tools=[Triple])
    with pytest.raises(ValueError, match="transport must be one of"), running_server(server, transport="ws"):
        pass
    with pytest.raises(ValueError, match="era must be one of"), running_server(server, era="2026"):
        pass
    with pytest.raises(ValueError, match="only serves HTTP"), running_server(server, transport="stdio"):
        pass
    with pytest.raises(TypeError, match="module name or a llm_mcp.testing.Server"), running_server(42):
        pass
    with pytest.raises(ValueError, match="era must be one of"):
        serve_stdio(object(), era="new")
    with pytest.raises(ValueError, match="port must be an int"):
        serve_http(object(), port=70000)


def test_running_server_reports_a_server_that_will_not_start() -> None:
    with pytest.raises(RuntimeError, match="exited with"), running_server("llm_mcp_tests.no_such_module", startup_timeout=10):
        pass


def test_stdio_command_from_running_server(mcp_test_server: Any) -> None:
    """MCP-KIT-01: the fixture's stdio form yields the argv; the client starts the process."""
    running = mcp_test_server("llm_mcp_tests.support.servers.seed_tools", transport="stdio", era="handshake")
    assert running.command[1:] == ["-m", "llm_mcp_tests.support.servers.seed_tools", "--era", "handshake"]
    assert mcp_test_server("llm_mcp_tests.support.servers.seed_tools", transport="stdio", era="handshake") is running
    with running.mcp(timeout=20) as client:
        assert client.protocol_version == "2025-11-25"
        assert client.call("double", number="4").text == "4 doubled is 8"


def test_import_needs_neither_django_nor_mcp() -> None:
    """Importing llm_mcp.testing pulls in no Django and no mcp; building a server without mcp names the extra."""
    code = (
        "import sys\n"
        "import llm_mcp.testing as kit\n"
        "assert 'django' not in sys.modules and 'mcp' not in sys.modules, sorted(sys.modules)\n"
        "sys.modules['mcp'] = None\n"
        "try:\n"
        "    kit.Server('x').build()\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "pip install 'django-llm-mcp[testing]'" in done.stdout


def test_public_names() -> None:
    assert "ScriptedModel" in kit.__all__
    assert kit.ScriptedModel.__name__ == "ScriptedModel"
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        kit.Nothing
    for name in kit.__all__:
        assert getattr(kit, name) is not None


SEED = "llm_mcp_tests.support.servers.seed_tools"


def _module(tmp_path: Any, name: str, source: str) -> str:
    (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
    return str(tmp_path)


def test_a_crashing_module_is_started_once_and_its_output_reported(tmp_path: Any) -> None:
    """Review bug 3: no retry for a crash; the output is in the error."""
    cwd = _module(tmp_path, "crash_server", "import pathlib\n"
                  "with open('starts.txt', 'a') as f: f.write('x')\n"
                  "raise SystemExit('crash_server refuses to start')\n")
    with pytest.raises(RuntimeError, match="crash_server refuses to start"), \
            running_server("crash_server", cwd=cwd, startup_timeout=20):
        pass
    assert (tmp_path / "starts.txt").read_text() == "x"


def test_a_module_that_does_not_serve_gets_a_hint(tmp_path: Any) -> None:
    """Review bug 3: exit status 0 before listening suggests calling server.serve()."""
    cwd = _module(tmp_path, "quiet_server", "print('defined, never served')\n")
    with pytest.raises(RuntimeError, match=r"did the module call server.serve\(\)") as caught, \
            running_server("quiet_server", cwd=cwd, startup_timeout=20):
        pass
    assert "defined, never served" in str(caught.value)


def test_a_startup_timeout_reports_the_output(tmp_path: Any) -> None:
    """Review bug 3: a server that never listens: the timeout error carries its output."""
    cwd = _module(tmp_path, "stuck_server", "import sys, time\nprint('stuck before listening', flush=True)\n"
                  "time.sleep(60)\n")
    with pytest.raises(RuntimeError, match="stuck before listening"), \
            running_server("stuck_server", cwd=cwd, startup_timeout=3):
        pass


def test_stdio_with_a_module_that_does_not_import() -> None:
    """Review bug 4: stdio checks the module imports, and reports why not."""
    with pytest.raises(RuntimeError, match="(?s)no_such_module cannot be imported.*ModuleNotFoundError"), \
            running_server("llm_mcp_tests.no_such_module", transport="stdio"):
        pass


def test_output_readable_after_stop_and_args_must_be_a_list() -> None:
    """Review bugs 12, 13: output() after the server stopped; args as a str is a TypeError."""
    with running_server(SEED, args=["--context", "user_id=7"]) as running:
        pass
    assert isinstance(running.output(), str)
    with pytest.raises(TypeError, match="args must be a list of str"), running_server(SEED, args="--context"):
        pass


def test_env_reaches_http_and_stdio_servers(tmp_path: Any, mcp_test_server: Any) -> None:
    """Review bugs 9, 10: env= works with the fixture (no unhashable dict) and reaches a stdio process."""
    cwd = _module(tmp_path, "env_server", "import os\nfrom llm_mcp.testing import Server, Tool\n"
                  "class Env(Tool):\n    name = 'env'\n"
                  "    def call(self):\n        return os.environ.get('KIT_MARK', 'unset')\n"
                  "server = Server('env', tools=[Env])\n"
                  "if __name__ == '__main__':\n    server.serve()\n")
    for transport in ("http", "stdio"):
        running = mcp_test_server("env_server", transport=transport, env={"KIT_MARK": transport}, cwd=cwd)
        assert mcp_test_server("env_server", transport=transport, env={"KIT_MARK": transport}, cwd=cwd) is running
        with running.mcp(timeout=20) as client:
            assert client.call("env").text == transport


def test_a_stdio_module_found_through_pythonpath_starts_like_an_http_one(tmp_path: Any, monkeypatch: Any) -> None:
    """A server module importable only through this process's PYTHONPATH (not from the working
    directory) runs over stdio as it does over HTTP: the import check and the server the client
    starts see the same environment."""
    where = _module(tmp_path, "pythonpath_server", "from llm_mcp.testing import Server, Tool\n"
                    "class Ping(Tool):\n    name = 'ping'\n"
                    "    def call(self):\n        return 'pong'\n"
                    "server = Server('pythonpath', tools=[Ping])\n"
                    "if __name__ == '__main__':\n    server.serve()\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(where), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    for transport in ("http", "stdio"):
        with running_server("pythonpath_server", transport=transport) as running, running.mcp(timeout=20) as client:
            assert client.call("ping").text == "pong"


def test_an_orphaned_stdio_server_exits_when_stdin_closes(tmp_path: Any) -> None:
    """Review bug 5: a tool blocking forever does not keep the process alive once its client is gone."""
    cwd = _module(tmp_path, "blocking_server", "import time\nfrom llm_mcp.testing import Server, Tool\n"
                  "class Block(Tool):\n    name = 'block'\n"
                  "    def call(self):\n        while True:\n            time.sleep(0.1)\n"
                  "server = Server('blocking', tools=[Block])\n"
                  "if __name__ == '__main__':\n    server.serve()\n")
    import json

    process = subprocess.Popen([sys.executable, "-m", "blocking_server", "--era", "handshake"], cwd=cwd,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdin is not None and process.stdout is not None

    def send(message: dict[str, Any]) -> None:
        process.stdin.write((json.dumps(message) + "\n").encode())
        process.stdin.flush()

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        assert b'"id":1' in process.stdout.readline()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "block", "arguments": {}}})
        send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        assert b'"id":3' in process.stdout.readline()  # the blocking call is in flight
        process.stdin.close()  # what the OS does when the client dies
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
