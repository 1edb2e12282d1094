"""stdio: process lifecycle, environment, and the misbehaving servers of shared/cases (C01-C03, C05, C16, C17)."""

from __future__ import annotations

import json
import logging
import shlex
import sys
import time

import pytest

import llm_mcp

from llm_mcp_tests.support.busy_server import while_busy
from llm_mcp_tests.support.processes import raw_stdio_command, timed_after_start
from llm_mcp_tests.support.scripted import result


def raw(case="none", era="handshake", **options):
    return llm_mcp.mcp(command=raw_stdio_command(case, era), name=f"raw-{case}", **options)


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_case_c01_plain_log_lines_on_stdout_are_skipped(era, caplog):
    """C01: plain log lines on stdout are logged at debug level and skipped; every request is answered."""
    caplog.set_level(logging.DEBUG, logger="llm_mcp")
    with raw("C01", era) as server:
        assert [server.echo(message=f"m{i}").text for i in range(3)] == ["m0", "m1", "m2"]
    assert any("not JSON" in r.getMessage() and r.levelno == logging.DEBUG for r in caplog.records)


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_case_c02_invalid_utf8_line_is_skipped(era, caplog):
    """C02: a line of bytes that are not UTF-8 is skipped; the response after it arrives; the transport stays up."""
    caplog.set_level(logging.DEBUG, logger="llm_mcp")
    with raw("C02", era) as server:
        assert server.echo(message="first").text == "first"
        assert server.echo(message="second").text == "second"
        assert server.client.transport.running
    assert any("not UTF-8" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_case_c03_server_exits_mid_call(era):
    """C03, MCP-DESC-14: a server that exits mid-call fails the call quickly with ConnectionError naming the
    server and its exit status; the next request starts the process again."""
    with raw("none", era) as server:
        server.tools
        first_pid = server.client.transport.pid
        started = time.monotonic()
        with pytest.raises(llm_mcp.ConnectionError) as info:
            server.crash()
        assert time.monotonic() - started < 3
        assert info.value.exit_status == 3
        assert "raw-none" in str(info.value) and "3" in str(info.value)
        assert server.echo(message="again").text == "again"
        assert server.client.transport.pid != first_pid


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_case_c05_notifications_before_the_response(era, caplog):
    """C05: progress and log notifications before the tools/call response are dispatched; the result returns."""
    caplog.set_level(logging.INFO, logger="llm_mcp.server")
    with raw("C05", era, log_level="info") as server:
        tool = server.tool("echo")
        progress = []
        raw_result = server.client.request("tools/call", {"name": tool.server_name, "arguments": {"message": "x"}},
                                           on_progress=progress.append)
    assert raw_result["content"][0]["text"] == "x"
    assert [p["progress"] for p in progress] == [1, 2]
    assert any(r.getMessage() == "working" and r.name == "llm_mcp.server.raw-C05" for r in caplog.records)


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_case_c16_unknown_notification_is_ignored(era, caplog):
    """C16: a vendor notification is ignored with a debug log; the connection stays up."""
    caplog.set_level(logging.DEBUG, logger="llm_mcp")
    with raw("C16", era) as server:
        assert server.echo(message="a").text == "a"
        assert server.echo(message="b").text == "b"
    assert any("vendor/heartbeat" in r.getMessage() and r.levelno == logging.DEBUG for r in caplog.records)


def test_case_c17_large_result_with_many_notifications():
    """C17: a 5 MB result sent after 200 progress notifications arrives whole; nothing deadlocks."""
    with raw("none") as server:
        seen = []
        result = server.client.request("tools/call", {"name": "big", "arguments": {}}, on_progress=seen.append)
    text = result["content"][0]["text"]
    assert len(text) == 5 * 1024 * 1024 and set(text) == {"x"}
    assert len(seen) == 200


def test_conn_04_server_request_answered_not_supported():
    """MCP-CONN-04: a request from a handshake-era server gets 'method not supported' at once; the call goes on."""
    with raw("none") as server:
        result = server.ask_client(method="sampling/createMessage")
    answered = json.loads(result.text.removeprefix("client answered: "))
    assert answered["error"]["code"] == -32601


def test_conn_03_handshake_declares_no_capabilities(tmp_path):
    """MCP-CONN-03: in the handshake we declare no roots, sampling or elicitation."""
    with raw("none") as server:
        result = server.ask_client(method="roots/list")
        assert server.protocol_version == "2025-11-25"
    assert "error" in json.loads(result.text.removeprefix("client answered: "))


RECORD_THEN_EXEC = (
    "import json, os, sys; "
    "open(sys.argv[1], 'a').write(json.dumps({'cwd': os.getcwd(), 'env': dict(os.environ)}) + '\\n'); "
    "os.execv(sys.executable, [sys.executable] + sys.argv[2:])"
)


def test_desc_07_09_13_directory_env_and_close(tmp_path, monkeypatch):
    """MCP-DESC-07, MCP-DESC-09, MCP-DESC-11, MCP-DESC-13: directory and env reach the process, other parent
    variables do not; close() stops it; env callables are evaluated again at the next start."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-parent-secret")
    record = tmp_path / "starts.jsonl"
    calls = []

    def token(server):
        calls.append(1)
        return f"token-{len(calls)}"

    argv = [sys.executable, "-c", RECORD_THEN_EXEC, str(record), *raw_stdio_command("none", "handshake")[1:]]
    server = llm_mcp.mcp(command=argv, name="envcheck", directory=str(tmp_path), env={"MY_TOKEN": token})
    try:
        assert server.echo(message="one").text == "one"
        process = server.client.transport.process
        server.close()
        assert process.poll() is not None
        assert server.echo(message="two").text == "two"
    finally:
        server.close()
    starts = [json.loads(line) for line in record.read_text().splitlines()]
    assert [s["env"]["MY_TOKEN"] for s in starts] == ["token-1", "token-2"]
    assert all(s["cwd"] == str(tmp_path) for s in starts)
    assert all("OPENAI_API_KEY" not in s["env"] for s in starts)


def test_missing_command_is_a_connection_error():
    server = llm_mcp.mcp(command=["/nonexistent/mcp-server"], name="missing")
    with pytest.raises(llm_mcp.ConnectionError, match="missing"):
        server.tools


def test_stdio_request_timeout_is_a_connection_error():
    """MCP-ADDR-05: the server's timeout (seconds) bounds each request."""
    with raw("none", timeout=60) as server:
        timed_after_start(server, 1)  # started first: a loaded machine's slow start-up is not the timeout
        started = time.monotonic()
        with pytest.raises(llm_mcp.ConnectionError, match="within 1 s"):
            server.sleep(seconds=30)
        assert time.monotonic() - started < 15  # well short of the 30 s sleep


def test_client_request_from_unknown_executable_name():
    assert llm_mcp.mcp(command=[sys.executable, "-V"]).name.startswith("python")


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_case_c13_structured_content_violating_output_schema(era, caplog):
    """C13: structuredContent that breaks the outputSchema is returned with its text; the violation is
    logged and listed on the result, not raised."""
    caplog.set_level(logging.WARNING, logger="llm_mcp")
    with raw("none", era) as server:
        result = server.bad_sum()
    assert result.text == "It is warm."
    assert result.structured == {"temperature": "warm"}
    assert result.is_error is False
    assert len(result.schema_errors) == 1 and "'warm' is not of type 'number'" in result.schema_errors[0]
    assert any("bad_sum" in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)


def test_concurrent_calls_share_one_process(echo_stdio_command):
    """Calls from several threads wait on one stdio process at once; whichever waits reads for all,
    and each thread gets its own answer, whatever order the server answers in."""
    from concurrent.futures import ThreadPoolExecutor

    with llm_mcp.mcp(command=echo_stdio_command, name="concurrent") as server:
        server.tools
        delays = [0.3, 0.0, 0.2, 0.05, 0.1, 0.0, 0.25, 0.15]

        def work(i):
            if i % 2:
                return server.echo(message=f"echo-{i}").text
            return server.sleep(seconds=delays[i]).text

        with ThreadPoolExecutor(max_workers=8) as pool:
            answers = list(pool.map(work, range(8)))
    expected = [f"echo-{i}" if i % 2 else server_sleep_text(delays[i]) for i in range(8)]
    assert answers == expected


def test_threads_sending_requests_larger_than_the_pipe_all_get_their_answers():
    """Several threads share a server that reads one request at a time and writes each answer
    before reading on; requests and answers are larger than a pipe holds, so writes wait for the
    server, which waits for its stdout to be read. Whichever thread holds the turn to read must
    not sit waiting to write meanwhile: every call is answered well within its timeout, none is
    killed as a server that stopped reading."""
    from concurrent.futures import ThreadPoolExecutor

    sizes = [10, 100_000, 300_000] * 20
    with llm_mcp.mcp(command=raw_stdio_command(era="modern"), name="big-both-ways", timeout=8) as server:
        server.tools
        pid = server.client.transport.pid
        with ThreadPoolExecutor(max_workers=6) as pool:
            answers = list(pool.map(lambda size: len(server.call("echo", message="x" * size).text), sizes))
        assert server.client.transport.pid == pid
    assert answers == sizes


def server_sleep_text(seconds):
    from llm_mcp_tests.support.servers import echo_server

    return echo_server.sleep_text(seconds) if hasattr(echo_server, "sleep_text") else f"slept {seconds:g}"


def test_waiters_fail_together_when_the_process_is_killed(echo_stdio_command):
    """C03 with company: every request waiting when the server is killed gets ConnectionError with the
    exit status; none hangs; the next request starts a new process."""
    import os
    import signal
    from concurrent.futures import ThreadPoolExecutor

    with llm_mcp.mcp(command=echo_stdio_command, name="killed") as server:
        server.tools
        pid = server.client.transport.pid

        def call(_):
            try:
                return server.sleep(seconds=30).text
            except llm_mcp.ConnectionError as exc:
                return exc.exit_status

        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=3) as pool:
            futures = [pool.submit(call, i) for i in range(3)]
            time.sleep(0.5)
            os.kill(pid, signal.SIGKILL)
            results = [f.result(timeout=10) for f in futures]
        assert results == [-signal.SIGKILL] * 3
        assert time.monotonic() - started < 5
        assert server.echo(message="back").text == "back"
        assert server.client.transport.pid != pid


def test_progress_callback_may_call_the_server_again():
    """A progress callback that calls the same stdio server (on the reading thread) does not deadlock."""
    with raw("C05") as server:
        server.tools
        inner = []
        result = server.client.request(
            "tools/call", {"name": "echo", "arguments": {"message": "outer"}},
            on_progress=lambda p: inner.append(server.echo(message=f"inner-{p['progress']}").text))
    assert result["content"][0]["text"] == "outer"
    assert sorted(inner) == ["inner-1", "inner-2"]  # the nested calls' own progress has another token


def test_unclosed_server_process_ends_when_collected(echo_stdio_command):
    """A stdio server object that is dropped without close() still ends its process."""
    import gc

    server = llm_mcp.mcp(command=echo_stdio_command, name="forgotten")
    server.tools
    process = server.client.transport.process
    del server
    gc.collect()
    process.wait(timeout=10)
    assert process.returncode is not None


def test_junk_on_stdout_is_logged_a_bounded_number_of_times(caplog):
    """C01 at scale: a server that writes many lines that are not JSON-RPC gets a bounded log."""
    import shlex

    command = ["sh", "-c", f"yes 'not json' | head -n 1000; exec {shlex.join(raw_stdio_command('none'))}"]
    caplog.set_level(logging.DEBUG, logger="llm_mcp")
    with llm_mcp.mcp(command=command, name="noisy") as server:
        assert server.echo(message="heard").text == "heard"
    skipped = [r for r in caplog.records if "noisy" in r.getMessage() and "not JSON" in r.getMessage()]
    assert 20 <= len(skipped) <= 22
    assert all(r.levelno == logging.DEBUG for r in skipped)


STDIO_HOSTILE = r'''
import json, os, sys
mode = sys.argv[1]
sys.stdout.write("\ufeff")  # a byte order mark first
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "server/discover":
        res = {"supportedVersions": ["2026-07-28"], "capabilities": {}}
    elif msg["method"] == "tools/list":
        res = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
    else:
        if mode == "stop_reading":
            import time; time.sleep(60)
        if mode == "fork":
            if os.fork() == 0:
                import time; time.sleep(60)
            os._exit(0)
        junk = [{"jsonrpc": "2.0", "id": [1], "result": {}},
                {"jsonrpc": "2.0", "method": "notifications/progress", "params": ["x"]},
                {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": [1]}}]
        for item in junk:
            sys.stdout.write(json.dumps(item) + "\n")
        sys.stdout.write("[" * 100000 + "\n")
        if mode == "idless_error":  # an error response without the id JSON-RPC requires (null or not)
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}) + "\n")
        res = {"content": [{"type": "text", "text": "survived"}]}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": res}) + "\n")
    sys.stdout.flush()
'''


def hostile(mode: str, **options) -> llm_mcp.MCP:
    return llm_mcp.mcp(command=[sys.executable, "-c", STDIO_HOSTILE, mode], name=f"hostile-{mode}", **options)


def test_stdio_ill_typed_ids_params_tokens_and_deep_json_are_skipped():
    """A BOM, a list id, list params, a list progress token and 100k-deep JSON are skipped."""
    with hostile("junk") as server:
        assert server.protocol_version == "2026-07-28"
        assert server.client.request("tools/call", {"name": "t"}, on_progress=lambda p: None)["content"][0][
            "text"] == "survived"


def test_an_error_response_without_an_id_is_skipped_and_the_call_still_answered(caplog):
    """JSON-RPC 2.0 §5: a response carries an ``id`` (``null`` when the request's could not be
    read). An error response with none at all answers no request: it is logged as answering an
    unknown one, and the reading thread goes on to the response it waits for."""
    caplog.set_level(logging.DEBUG, logger="llm_mcp")
    with hostile("idless_error") as server:
        assert server.client.request("tools/call", {"name": "t"})["content"][0]["text"] == "survived"
    assert any("unknown request id None" in r.getMessage() for r in caplog.records)


LATE_BIG = r'''
import json, sys, time
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "server/discover":
        res = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}
    elif msg["method"] == "tools/list":
        res = {"tools": [{"name": name, "inputSchema": {"type": "object"}} for name in ("late_big", "echo")]}
    elif msg["params"]["name"] == "late_big":  # answered after the caller gave up: more than a pipe holds
        time.sleep(0.5)
        res = {"content": [{"type": "text", "text": "x" * 1_000_000}]}
    else:
        res = {"content": [{"type": "text", "text": str(len(msg["params"]["arguments"]["message"]))}]}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": res}) + "\n")
    sys.stdout.flush()
'''


def test_a_large_request_is_written_while_the_server_writes_an_answer_nobody_waits_for():
    """A call gave up (timed out); the server, which reads one request at a time, then writes its
    answer, more than a pipe holds, and reads no more until it is read. The next call's request,
    also more than a pipe holds, waits to be written with no other thread reading: the writing
    thread reads the server's output meanwhile, so the request goes through and is answered,
    rather than the server being killed as one that stopped reading."""
    command = [sys.executable, "-c", LATE_BIG]
    with llm_mcp.mcp(command=command, name="late-big", timeout=0.2) as server:
        server.tools
        with pytest.raises(llm_mcp.ServerTimeoutError):
            server.call("late_big")
        server.client.timeout = 10
        pid = server.client.transport.pid
        assert server.call("echo", message="y" * 500_000).text == "500000"
        assert server.client.transport.pid == pid


def test_stdio_server_that_stops_reading_is_bounded():
    """A server that stops reading its stdin cannot hold a large write past the timeout."""
    with hostile("stop_reading", timeout=2) as server:
        server.tools
        started = time.monotonic()
        with pytest.raises(llm_mcp.ConnectionError):
            server.call("t", blob="x" * 2_000_000)
        assert time.monotonic() - started < 6


def test_stdio_server_that_exits_while_a_child_holds_stdout():
    """The server process ends but a child keeps its stdout open: noticed at once, not at the timeout."""
    with hostile("fork", timeout=30) as server:
        server.tools
        started = time.monotonic()
        with pytest.raises(llm_mcp.ConnectionError) as info:
            server.call("t")
        assert info.value.exit_status == 0 and time.monotonic() - started < 3


@pytest.mark.parametrize("pause", [0.0, 0.8])
def test_a_server_that_died_between_calls_is_started_again(echo_stdio_command, pause):
    """MCP-DESC-14: a process killed while no request waits (just after its answer, when the
    transport takes a process that has just written as alive, or a while later) is started again
    by the next call, which gets its answer; nothing of that call reached the dead process."""
    import os
    import signal

    with llm_mcp.mcp(command=echo_stdio_command, name="killed-idle") as server:
        assert server.echo(message="first").text == "first"
        pid = server.client.transport.pid
        os.kill(pid, signal.SIGKILL)
        time.sleep(pause)
        assert server.echo(message="second").text == "second"
        assert server.client.transport.pid not in (None, pid)


def test_a_request_left_in_the_pipe_of_a_child_that_holds_it_is_not_sent_again(tmp_path):
    """MCP-DESC-14: the process exits right after an answer, a child of its own keeps its stdin
    and reads the next request later: that request is not given to a new process as well (the
    tool is not idempotent: it would run twice). The call fails; the child runs it, once."""
    from llm_mcp_tests.support.processes import SERVERS_DIR

    record = tmp_path / "record"
    command = [sys.executable, str(SERVERS_DIR / "hands_off.py"), str(record)]
    with llm_mcp.mcp(command=command, name="hands-off", timeout=10) as server:
        assert [tool.name for tool in server.tools] == ["record"]
        with pytest.raises(llm_mcp.ConnectionError):
            server.call("record")
        deadline = time.monotonic() + 5
        while not record.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
    assert len(record.read_text().splitlines()) == 1


def test_a_call_in_flight_when_the_process_is_killed_may_have_run_though_another_request_was_left_unread():
    """MCP-DESC-14: two calls to a server that reads one request at a time; it is killed while
    running the first. The first fails as a call that may have run (`ProcessExitedError` with
    the killed process's status, not `StartupFailedError`: the second request left in the pipe
    says nothing of the first); the second, never read, goes to a new process and is answered."""
    import os
    import signal

    from llm_mcp.client.errors import may_have_run

    with llm_mcp.mcp(command=raw_stdio_command(era="modern"), name="killed-busy", timeout=20) as server:
        server.tools
        pid = server.client.transport.pid
        outcomes = while_busy(server, lambda: server.call("sleep", seconds=1.5).text,
                              then=lambda: os.kill(pid, signal.SIGKILL))
        assert server.client.transport.pid not in (None, pid)
    first = outcomes[0]
    assert type(first) is llm_mcp.ProcessExitedError and may_have_run(first)
    assert first.exit_status == -signal.SIGKILL and "while handling tools/call" in str(first)
    assert outcomes[1] == "slept"


@pytest.mark.parametrize("size", [10, 300_000], ids=["left-in-the-pipe", "still-being-written"])
def test_a_request_in_flight_when_the_server_is_closed_is_not_sent_to_a_new_process(size):
    """MCP-DESC-14: ``close()`` while a call's request waits in the pipe of a busy server (unread,
    or, larger than the pipe holds, still being written): the request is not handed to a new
    process, which would start one after the close that nothing ends. No process lives on after
    the calls."""
    server = llm_mcp.mcp(command=raw_stdio_command(era="modern"), name="closed-busy", timeout=20)
    server.tools
    transport = server.client.transport
    first_process = transport.process
    outcomes = while_busy(server, lambda: server.call("echo", message="x" * size).text, then=server.close)
    assert first_process.poll() is not None
    assert transport.process is None  # nothing started since the close
    # close() lets the process finish what it reads before its stdin ends: a call gets its answer,
    # or fails as a call to a server that is gone
    assert outcomes[0] == "slept" or isinstance(outcomes[0], llm_mcp.ConnectionError), outcomes
    assert outcomes[1] == "x" * size or isinstance(outcomes[1], llm_mcp.ConnectionError), outcomes


def test_a_handshake_era_server_that_exits_after_a_call_is_given_the_handshake_again():
    """MCP-DESC-14: a handshake-era process ends just after answering (here, 0.3 s later, having
    read nothing more). The next call, written before it ended, was never read: it fails as a call
    that did not run, and is not handed to a new process that had no ``initialize`` (the server
    answers such a request with "not initialized", and every later call would get the same). The
    call after it gets the handshake on a new process and its answer."""
    from llm_mcp.client.errors import may_have_run

    with llm_mcp.mcp(command=raw_stdio_command("exit_after_call", "handshake"), name="one-call", timeout=10) as server:
        assert server.echo(message="first").text == "first"
        assert server.protocol_version == "2025-11-25"
        pid = server.client.transport.pid
        with pytest.raises(llm_mcp.ConnectionError) as failed:
            server.echo(message="second")
        assert not may_have_run(failed.value)
        time.sleep(0.5)
        assert server.echo(message="third").text == "third"
        assert server.client.transport.pid not in (None, pid)


def test_a_server_of_2026_07_28_that_exits_after_a_call_serves_the_next_call_from_a_new_process():
    """MCP-DESC-14: the same on 2026-07-28, where a request needs no handshake: the call written
    before the process ended, never read, goes to a new process, which answers it."""
    with llm_mcp.mcp(command=raw_stdio_command("exit_after_call", "modern"), name="one-call", timeout=10) as server:
        assert server.echo(message="first").text == "first"
        pid = server.client.transport.pid
        assert server.echo(message="second").text == "second"
        assert server.client.transport.pid not in (None, pid)
