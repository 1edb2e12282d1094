"""Server logs (checklist section 13, MCP-PROG-*): ``log_level`` asks a server for messages
(``logging/setLevel`` or, in 2026-07-28, the request's ``_meta``) and writes them to the
``llm_mcp.server.<name>`` logger; without it nothing is asked for or written; one server object's
level does not reach another. What servers write cannot forge log lines: control characters in log
data, logger names, stderr and server-sent names stay escaped.

Against the recording kit server ``progress_tools`` (support/progress.py) in both eras and
transports, scripted 2026-07-28 servers (support/scripted.py), and ``server-everything``.
"""

from __future__ import annotations

import logging
import shlex
import time

import pytest

import llm_mcp
from llm_mcp.client.logs import LOG_LEVELS, LOG_LEVEL_META
from llm_mcp.testing import running_server

from llm_mcp_tests.support.progress import COMBOS, COMBO_IDS, SERVER_MODULE, kit, received, reference_server
from llm_mcp_tests.support.scripted import result, server_of, sse


def test_server_log_data_cannot_forge_log_lines(scripted, caplog):
    """Line breaks and other control characters in a server's log data (and logger name) are
    written escaped, so a server cannot add a line that looks like the application's own."""
    forged = "fine\n2026-11-30 12:00:00 CRITICAL django: forged\r\x1b[2K\u2028\u0085end\tok"
    def call(request):
        return sse(request, [("notifications/message", {"level": "error", "data": forged, "logger": "db\nfake"}),
                             ("notifications/message", {"level": "error", "data": {"k": "a\nb"}})],
                   {"content": [{"type": "text", "text": "done"}]})
    server = scripted(server_of({"tools/call": call}))
    with caplog.at_level(logging.DEBUG, logger="llm_mcp.server.hostile"), \
            llm_mcp.mcp(url=server.url, log_level="debug", name="hostile") as client:
        assert client.call("t").text == "done"
    records = [r for r in caplog.records if r.name == "llm_mcp.server.hostile"]
    assert [r.getMessage() for r in records] == [
        "fine\\n2026-11-30 12:00:00 CRITICAL django: forged\\r\\x1b[2K\\u2028\\x85end\tok", '{"k": "a\\nb"}']
    assert records[0].mcp_logger == "db\\nfake"


def test_stdio_stderr_cannot_forge_log_lines(caplog):
    """What a stdio server writes to stderr is logged one line per record, control characters escaped."""
    import shlex

    from llm_mcp_tests.support.processes import raw_stdio_command
    command = ["sh", "-c", "printf 'one\\r2026 CRITICAL forged\\033[2K\\n' >&2; exec "
               + shlex.join(raw_stdio_command("none"))]
    with caplog.at_level(logging.INFO, logger="llm_mcp.server.stderr-forge"), \
            llm_mcp.mcp(command=command, name="stderr-forge") as client:
        assert client.call("echo", message="hi").text
        deadline = time.monotonic() + 10  # stderr is read by a thread of its own
        while not any("forged" in r.getMessage() for r in caplog.records) and time.monotonic() < deadline:
            time.sleep(0.05)
    messages = [r.getMessage() for r in caplog.records if r.name == "llm_mcp.server.stderr-forge"]
    assert "one\\r2026 CRITICAL forged\\x1b[2K" in messages


def test_names_a_server_sends_cannot_forge_lines_in_the_clients_warnings(scripted, caplog):
    """The client's own warnings about what a server sent (a resource listed twice, a prompt turn
    skipped, an unknown notification) quote server-sent names, so line breaks in them stay escaped."""
    uri = "x:/a\n2026-11-30 CRITICAL forged"
    resources = [{"uri": uri, "name": "a"}, {"uri": uri, "name": "b"}]
    prompts = [{"name": "p\nforged"}]

    def get(request):
        return result(request, {"messages": [{"role": "system", "content": {"type": "text", "text": "x"}},
                                             {"role": "user", "content": {"type": "text", "text": "kept"}}]})

    def call(request):
        return sse(request, [("vendor/odd\nforged", {})], {"content": [{"type": "text", "text": "done"}]})

    server = scripted(server_of({"resources/list": lambda r: result(r, {"resources": resources}),
                                 "prompts/list": lambda r: result(r, {"prompts": prompts}), "prompts/get": get,
                                 "tools/call": call}))
    with caplog.at_level(logging.DEBUG, logger="llm_mcp.client"), llm_mcp.mcp(url=server.url) as client:
        assert [r.name for r in client.resources] == ["a"]
        assert [m.content for m in client.prompts[0].messages] == ["kept"]
        assert client.call("t").text == "done"
    messages = [r.getMessage() for r in caplog.records if r.name == "llm_mcp.client"]
    assert [m for m in messages if "forged" in m] and not [m for m in messages if "\n" in m]


PYTHON_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO, "warning": logging.WARNING,
                 "error": logging.ERROR, "critical": logging.CRITICAL, "alert": logging.CRITICAL,
                 "emergency": logging.CRITICAL}


@pytest.mark.parametrize("transport, era", COMBOS, ids=COMBO_IDS)
@pytest.mark.parametrize("level", ["warning", "debug"])
def test_log_level_asks_for_messages_and_writes_them(tmp_path, caplog, transport, era, level):
    """MCP-PROG-06, MCP-PROG-07: log_level asks the server for messages at that level and above (logLevel
    meta on 2026-07-28, logging/setLevel in the handshake era) and writes them under llm_mcp.server.kit,
    notice as INFO and critical/alert/emergency as CRITICAL."""
    caplog.set_level(logging.DEBUG, logger="llm_mcp.server.kit")
    with kit(tmp_path, transport, era, log_level=level) as (server, record):
        assert server.call("log_levels").text == "logged"
    expected = LOG_LEVELS[LOG_LEVELS.index(level):]
    written = [(r.levelno, r.getMessage()) for r in caplog.records
               if r.name == "llm_mcp.server.kit" and r.getMessage().endswith(" message")]
    assert written == [(PYTHON_LEVELS[name], f"{name} message") for name in expected]
    meta = received(record, "tools/call")[0]["meta"]
    if era == "modern":
        assert meta.get(LOG_LEVEL_META) == level
        assert received(record, "logging/setLevel") == []
    else:
        assert LOG_LEVEL_META not in meta
        assert [e["level"] for e in received(record, "logging/setLevel")] == [level]


@pytest.mark.parametrize("transport, era", COMBOS, ids=COMBO_IDS)
def test_without_log_level_no_messages_are_asked_for_or_written(tmp_path, caplog, transport, era):
    """MCP-PROG-08: without log_level no logLevel meta and no logging/setLevel are sent, and messages a
    handshake-era server sends anyway are not written."""
    caplog.set_level(logging.DEBUG, logger="llm_mcp.server.kit")
    with kit(tmp_path, transport, era) as (server, record):
        assert server.call("log_levels").text == "logged"
    assert not [r for r in caplog.records if r.getMessage().endswith(" message")]
    assert LOG_LEVEL_META not in received(record, "tools/call")[0]["meta"]
    assert received(record, "logging/setLevel") == []


def test_messages_sent_anyway_are_not_written(caplog):
    """MCP-PROG-08: a server that sends notifications/message unasked (the raw C05 server) is not written."""
    from llm_mcp_tests.support.processes import raw_stdio_command

    caplog.set_level(logging.DEBUG, logger="llm_mcp.server")
    with llm_mcp.mcp(command=raw_stdio_command("C05", "handshake"), name="unasked") as server:
        server.client.request("tools/call", {"name": "echo", "arguments": {"message": "x"}})
    assert not [r for r in caplog.records if r.name == "llm_mcp.server.unasked" and r.getMessage() == "working"]


@pytest.mark.parametrize("value", ["verbose", "WARNING", 3, ""])
def test_log_level_must_be_a_protocol_level(value):
    """MCP-PROG-07: anything but the eight protocol levels raises ValueError naming the setting."""
    with pytest.raises(ValueError, match="log_level"):
        llm_mcp.mcp(url="http://127.0.0.1:9/mcp", log_level=value)
    with pytest.raises(ValueError, match=r"Noisy\.log_level"):
        type("Noisy", (llm_mcp.MCP,), {"url": "http://127.0.0.1:9/mcp", "log_level": value})
    assert LOG_LEVELS == ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


LEVEL_OF_TEXT = {"Debug-level": "debug", "Info-level": "info", "Notice-level": "notice", "Warning-level": "warning",
                 "Error-level": "error", "Critical-level": "critical", "Alert level": "alert",
                 "Emergency-level": "emergency"}


def test_reference_server_logs(request, caplog):
    """MCP-PROG-06, MCP-PROG-07, MCP-PROG-08: server-everything's simulated logging (one message of a random
    level at once, over stdio) is written under llm_mcp.server.everything at the mapped Python level when
    log_level asks for it, and not at all without log_level."""
    caplog.set_level(logging.DEBUG, logger="llm_mcp.server.everything")
    with reference_server("stdio", request, log_level="debug") as server:
        server.call("toggle-simulated-logging")
        server.call("toggle-simulated-logging")  # off again
    written = [r for r in caplog.records if r.name == "llm_mcp.server.everything" and "message" in r.getMessage()]
    assert written
    for record in written:
        level = next(v for k, v in LEVEL_OF_TEXT.items() if record.getMessage().startswith(k))
        assert record.levelno == PYTHON_LEVELS[level]
    caplog.clear()
    with reference_server("stdio", request) as server:
        server.call("toggle-simulated-logging")
        server.call("toggle-simulated-logging")
    assert not [r for r in caplog.records if "message" in r.getMessage() and "level" in r.getMessage()]


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_a_log_level_on_one_server_object_does_not_reach_another(tmp_path, caplog, era):
    """Two server objects on one HTTP server: the one with ``log_level="error"`` gets error and
    above; the other asks for nothing and writes nothing, even after the first set its level."""
    import logging

    from llm_mcp.client.logs import LOG_LEVEL_META
    from llm_mcp.testing import running_server

    record = tmp_path / "received.jsonl"
    caplog.set_level(logging.DEBUG, logger="llm_mcp.server")
    with running_server(SERVER_MODULE, transport="http", era=era, args=["--context", f"record={record}"]) as running:
        with running.mcp(name="loud", log_level="error") as loud, running.mcp(name="quiet") as quiet:
            assert loud.call("log_levels").text == "logged"
            assert quiet.call("log_levels").text == "logged"
    written = [(r.name, r.getMessage()) for r in caplog.records if r.getMessage().endswith(" message")]
    assert written == [("llm_mcp.server.loud", f"{level} message")
                       for level in ("error", "critical", "alert", "emergency")]
    loud_meta, quiet_meta = (call["meta"] for call in received(record, "tools/call"))
    assert LOG_LEVEL_META not in quiet_meta
    assert loud_meta.get(LOG_LEVEL_META) == ("error" if era == "modern" else None)
