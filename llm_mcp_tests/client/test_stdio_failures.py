"""A stdio server's failure names its cause: the last lines of its stderr (bounded, control
characters escaped, environment values redacted) ride on the error and the commands print them;
a process that fails while starting is started once per call. Also: lines in another encoding.
"""

from __future__ import annotations

import json
import logging
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

import llm_mcp
from llm_mcp.client.transports.child_output import TAIL_LINE_CHARS, TAIL_LINES, StderrTail, decode_line

from llm_mcp_tests.support.processes import PYTHON, SERVERS_DIR

FAILS = str(SERVERS_DIR / "fails_to_start.py")
TOKEN = "tok-5e1d9a77-from-the-env-setting"


def test_a_server_failing_at_start_up_is_started_once_and_its_stderr_rides_on_the_error(tmp_path):
    starts = tmp_path / "starts"
    server = llm_mcp.mcp(command=[PYTHON, FAILS, str(starts)], name="npx", env={"API_TOKEN": TOKEN})
    with pytest.raises(llm_mcp.StartupFailedError) as failed:
        server.tools
    server.close()
    assert starts.read_text().splitlines() == ["started"]  # not again for the handshake
    error = failed.value
    assert isinstance(error, llm_mcp.ProcessExitedError) and error.exit_status == 1
    assert str(error).startswith("MCP server 'npx' exited with status 1 while starting, before reading "
                                 "server/discover. Its stderr ended with:\n  npm error code E404\n")
    assert error.stderr.splitlines() == [
        "npm error code E404",
        "npm error 404 Not Found - GET https://registry.npmjs.org/@modelcontextprotocol%2fserver-doesnotexist "
        "- Not found",
        "npm error 404 \\x1b[31mThe requested resource could not be found\\x1b[0m",  # escaped, not a colour
        "npm verbose env API_TOKEN=[redacted]",
    ]
    assert TOKEN not in str(error) and TOKEN not in repr(error.__dict__)
    assert not llm_mcp.client.errors.may_have_run(error)  # it never read the request


def test_a_server_printing_a_line_on_stdout_before_failing_at_start_up_is_started_once(tmp_path):
    """A process that writes a line that is no JSON-RPC message to its stdout (a usage text) and
    exits without reading its request never answered anything: it is not started again."""
    starts = tmp_path / "starts"
    server = llm_mcp.mcp(command=[PYTHON, FAILS, str(starts), "Usage: server --port N"], name="npx")
    with pytest.raises(llm_mcp.StartupFailedError) as failed:
        server.tools
    server.close()
    assert starts.read_text().splitlines() == ["started"]
    assert failed.value.exit_status == 1 and not llm_mcp.client.errors.may_have_run(failed.value)


def test_mcp_inspect_and_mcp_call_print_the_stderr_tail(tmp_path):
    command = f"{PYTHON} {FAILS} {tmp_path / 'starts'}"
    for args in (["mcp_inspect", "--command", command], ["mcp_call", "--command", command, "echo"]):
        with pytest.raises(CommandError) as failed:
            call_command(*args, stdout=StringIO(), stderr=StringIO())
        text = str(failed.value)
        assert text.startswith("StartupFailedError: MCP server ")
        assert "Its stderr ended with:\n  npm error code E404\n" in text and "\x1b" not in text
    assert (tmp_path / "starts").read_text().count("started") == 2  # once per command


def test_the_tail_is_bounded_and_keeps_the_last_lines():
    tail = StderrTail()
    for n in range(TAIL_LINES + 15):
        tail.add(f"line {n}\n".encode())
    tail.add(b"y" * (TAIL_LINE_CHARS * 3) + b"\n")
    lines = tail.text().splitlines()
    assert len(lines) == TAIL_LINES and lines[0] == "line 16"
    assert lines[-1] == "y" * TAIL_LINE_CHARS + "..."
    tail.add(b"\xff\xfe bad bytes\r\n")
    assert tail.text().splitlines()[-1] == "\ufffd\ufffd bad bytes"


def test_a_line_without_an_end_is_read_in_bounded_pieces(tmp_path):
    """A server that writes megabytes to stderr with no newline: the error's tail stays bounded."""
    script = tmp_path / "noisy.py"
    script.write_text("import sys\nsys.stderr.write('z' * 5_000_000)\nsys.stderr.flush()\nsys.exit(2)\n")
    server = llm_mcp.mcp(command=[PYTHON, str(script)], name="noisy")
    with pytest.raises(llm_mcp.ProcessExitedError) as failed:
        server.tools
    server.close()
    lines = failed.value.stderr.splitlines()
    assert 0 < len(lines) <= TAIL_LINES and all(len(line) <= TAIL_LINE_CHARS + 3 for line in lines)


def test_a_secret_across_the_end_of_a_read_piece_is_not_shown_in_part(tmp_path, caplog):
    """A line longer than a read piece used to go on as a new tail line from the piece boundary: an
    environment value straddling it was shown (and logged) from its middle on, unredacted."""
    from llm_mcp.client.transports.child_output import READ_LIMIT

    script = tmp_path / "straddle.py"
    script.write_text(f"import sys\nsys.stderr.write('x' * {READ_LIMIT - 5} + {TOKEN!r} + ' end\\n')\n"
                      "sys.stderr.flush()\nsys.exit(2)\n")
    caplog.set_level(logging.INFO, logger="llm_mcp.server.straddle")
    server = llm_mcp.mcp(command=[PYTHON, str(script)], name="straddle", env={"API_TOKEN": TOKEN})
    with pytest.raises(llm_mcp.ProcessExitedError) as failed:
        server.tools
    server.close()
    shown = failed.value.stderr + "\n".join(r.getMessage() for r in caplog.records)
    assert failed.value.stderr.splitlines() == ["x" * TAIL_LINE_CHARS + "..."]
    assert not any(TOKEN[i:i + 6] in shown for i in range(len(TOKEN) - 5))


def test_short_environment_values_are_not_redacted_and_long_ones_are():
    tail = StderrTail(secrets=["1", "s3cr3t-value"])
    assert tail.add(b"debug=1 key=s3cr3t-value") == "debug=1 key=[redacted]"


def test_decode_line_is_lenient_only_when_it_has_to_be():
    assert decode_line('\ufeff{"a": "é"}\n'.encode()) == ('{"a": "é"}', False)
    assert decode_line('{"a": "é"}'.encode("cp1252")) == ('{"a": "\ufffd"}', True)


def test_a_junk_line_that_is_not_utf8_is_skipped_without_a_warning(caplog):
    """Only a line that still parses as JSON-RPC is read leniently (and warned about); the fault
    matrix's ``junk`` and ``encoding`` cells run both through real servers."""
    from llm_mcp.client.transports.stdio import StdioTransport

    transport = StdioTransport(lambda: ([PYTHON, "-c", "pass"], {}), name="quiet")
    caplog.set_level(logging.DEBUG, logger="llm_mcp")
    assert transport._parse(b"\xff\xfe not json") == []
    assert transport._parse('{"jsonrpc": "2.0", "method": "x/é"}'.encode("cp1252")) == [
        {"jsonrpc": "2.0", "method": "x/\ufffd"}]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["MCP server quiet wrote JSON-RPC that is not valid UTF-8 (another encoding?); read it with "
                        "replacement characters"]


_RESULT = {"jsonrpc": "2.0", "result": {}}
_ERROR = {"jsonrpc": "2.0", "error": {"code": -1, "message": "no"}}


@pytest.mark.parametrize("message, read", [
    ({**_RESULT, "id": 1}, True), ({**_RESULT, "id": "a"}, True), ({**_RESULT, "id": 0}, True),
    ({**_RESULT, "id": True}, False), ({**_RESULT, "id": 1.0}, False), ({**_RESULT, "id": None}, False),
    ({**_RESULT, "id": [1]}, False), ({**_RESULT}, False), ({**_RESULT, "id": 1, "jsonrpc": "1.0"}, False),
    ({**_ERROR, "id": None}, True), ({**_ERROR, "id": 2}, True), ({**_ERROR, "id": False}, False),
    ({**_RESULT, "id": 1, "method": "x"}, True),  # a request, with a stray result
    ({**_RESULT, "id": 1, "method": 5}, False),
])
def test_a_line_is_read_as_the_json_rpc_message_it_holds(message, read):
    """JSON-RPC 2.0 §5: a response's id is a string or an integer (``null`` only in an error); a
    result response with any other id, a bool included, is not a message, alone or in a batch."""
    from llm_mcp.client.transports.stdio import StdioTransport

    transport = StdioTransport(lambda: ([PYTHON, "-c", "pass"], {}), name="ids")
    assert transport._parse(json.dumps(message).encode()) == ([message] if read else [])
    batch = [message, {**_RESULT, "id": 9}]
    assert transport._parse(json.dumps(batch).encode()) == ([message] if read else []) + [batch[1]]
