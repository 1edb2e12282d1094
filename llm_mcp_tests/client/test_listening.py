"""Listening for changes: kept lists dropped on list_changed, ``after_change``, ``MCP.listen``
against the kit's changing server in both eras and both transports, the listener thread, its
reconnects, forks and the custom-transport ``listen`` hook."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import llm_mcp
from llm_mcp.client.server import listener as listener_module
from llm_mcp.testing import running_server
from llm_mcp_tests.support.listening import Heard, wait_until
from llm_mcp_tests.support.processes import ServerProcess, free_port
from llm_mcp_tests.support.transports import Acknowledging, OldTunnel

CHANGING = "llm_mcp_tests.support.servers.changing"
NOTE = "memo://note"
BASE_TOOLS = {"echo", "add_tool", "remove_tool", "add_prompt", "add_resource", "edit"}

COMBINATIONS = [("modern", "http"), ("handshake", "http"), ("modern", "stdio"), ("handshake", "stdio")]


@pytest.fixture(params=COMBINATIONS, ids=lambda c: f"{c[0]}-{c[1]}")
def changing(request: pytest.FixtureRequest):
    """The kit's changing server, in each era over each transport (a fresh process per test)."""
    era, transport = request.param
    with running_server(CHANGING, transport=transport, era=era) as running:
        yield running


def listener_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("mcp-listener-")]


# -- forgetting ---------------------------------------------------------------------------------


def test_listen_01_tools_list_changed_drops_the_kept_tools_and_the_next_turn_lists_again(model):
    """MCP-LISTEN-01: a tools/list_changed drops the server object's kept tool list, and the
    chat's next turn lists the tools again (the model is offered the new tool)."""
    from llm_mcp.testing import reply, tool_call
    from llm_mcp_tests.support.chats import make_chat

    with running_server(CHANGING, transport="http", era="modern") as running:
        heard = Heard()
        server = running.mcp(name="changing", after_change=heard)
        try:
            server.listen()
            chat = make_chat(model, [tool_call("add_tool", {}), reply("added"), reply("second turn")])
            chat.with_mcp(server)
            chat.ask("add a tool")
            assert heard.wait_for("tools")
            chat.ask("again")
        finally:
            server.close()
    first, last = model.requests[0].tool_names, model.requests[-1].tool_names
    assert "late" not in first and "late" in last


def test_listen_02_a_handshake_server_announcing_on_a_response_stream_is_followed_with_no_setup():
    """MCP-LISTEN-02: a pre-2026-07-28 server's list_changed, sent while it answers a request
    (stdio: the same pipe), drops the kept list without ``listen``."""
    heard = Heard()
    with running_server(CHANGING, transport="stdio", era="handshake") as running:
        server = running.mcp(after_change=heard)
        try:
            assert {t.name for t in server.tools} == BASE_TOOLS
            server.call("add_tool")
            server.call("echo", text="one more request, to read what came after the answer")
            assert not server.listening and "tools" in heard.names
            assert {t.name for t in server.tools} == BASE_TOOLS | {"late"}
        finally:
            server.close()


def test_listen_02_a_list_changed_on_a_handshake_era_call_s_response_stream_drops_the_list(scripted):
    """MCP-LISTEN-02: over Streamable HTTP, a 2025-11-25 server's tools/list_changed inside a
    tools/call's SSE answer drops the kept list, with no listener."""
    from llm_mcp_tests.support.scripted import answer, result, sse

    listings = []

    def script(request):
        method = request.get("method")
        if method == "server/discover":
            return answer({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no"}})
        if method == "initialize":
            return result(request, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {"listChanged": True}},
                                    "serverInfo": {"name": "old", "version": "1"}})
        if "id" not in request:  # notifications/initialized
            return answer(b"", status=202)
        if method == "tools/list":
            listings.append(1)
            return result(request, {"tools": [{"name": f"t{len(listings)}", "inputSchema": {"type": "object"}}]})
        return sse(request, [("notifications/tools/list_changed", {})], {"content": []})

    heard = Heard()
    server = llm_mcp.mcp(url=scripted(script).url, after_change=heard)
    try:
        assert [t.name for t in server.tools] == ["t1"]
        server.call("t1")
        assert heard.names == ["tools"] and not server.listening
        assert [t.name for t in server.tools] == ["t2"]
    finally:
        server.close()


def test_listen_03_a_2026_server_tells_only_listeners_and_each_new_object_lists_afresh():
    """MCP-LISTEN-03: a 2026-07-28 server sends changes only to a listener: an object that does
    not listen keeps its list, and a freshly built object lists the tools fresh."""
    with running_server(CHANGING, transport="http", era="modern") as running:
        keeper, changer = running.mcp(), running.mcp()
        try:
            assert {t.name for t in keeper.tools} == BASE_TOOLS
            changer.call("add_tool")
            assert {t.name for t in keeper.tools} == BASE_TOOLS  # nobody told it
            fresh = running.mcp()
            assert {t.name for t in fresh.tools} == BASE_TOOLS | {"late"}
            fresh.close()
        finally:
            keeper.close()
            changer.close()


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_listen_04_a_call_answered_unknown_tool_drops_the_kept_tools(era):
    """MCP-LISTEN-04: a tools/call that fails because the tool is gone drops the kept tool list."""
    with running_server(CHANGING, transport="http", era=era) as running:
        stale, other = running.mcp(), running.mcp()
        try:
            assert "echo" in {t.name for t in stale.tools}
            other.call("remove_tool", name="echo")
            with pytest.raises(llm_mcp.MCPError) as caught:
                stale.call("echo", text="hi")
            assert "echo" in str(caught.value)
            assert stale.catalog.listed_tools is None
            assert {t.name for t in stale.tools} == BASE_TOOLS - {"echo"}
        finally:
            stale.close()
            other.close()


# -- after_change -------------------------------------------------------------------------------


class Noted(llm_mcp.MCP):
    """A class whose after_change names a method."""

    inputs = ["target"]
    url = "target_url"
    after_change = "note_change"

    def target_url(self) -> str:
        return self.target

    def note_change(self, change: Any) -> None:
        self.notes.append((change, [t.name for t in self.tools], threading.current_thread().name))


def test_listen_05_after_change_by_method_name_and_callable_gets_lists_and_resources():
    """MCP-LISTEN-05: ``after_change`` (a method name on a class, a callable inline, which gets
    the server then the change) receives "tools", "prompts", "resources" and the changed
    ``Resource``. (Tasks: not in llm_mcp yet.)"""
    with running_server(CHANGING, transport="http", era="modern") as running:
        noted = Noted(target=running.url)
        noted.notes = []
        received: list[tuple[Any, Any]] = []
        inline = running.mcp(after_change=lambda server, change: received.append((server, change)))
        try:
            noted.listen(resources=[NOTE])
            inline.listen(resources=[NOTE])
            noted.call("add_tool")
            noted.call("add_prompt")
            noted.call("add_resource")
            noted.call("edit", text="second")
            assert wait_until(lambda: len(received) >= 4 and len(noted.notes) >= 4)
            kinds = [c if isinstance(c, str) else c.uri for c, _, _ in noted.notes]
            assert sorted(kinds) == sorted(["tools", "prompts", "resources", NOTE])
            assert all(server is inline for server, _ in received)
            assert sorted(c if isinstance(c, str) else c.uri for _, c in received) == sorted(kinds)
            resource = next(c for c, _, _ in noted.notes if isinstance(c, llm_mcp.Resource))
            assert isinstance(resource, llm_mcp.Resource) and resource.uri == NOTE
            tools_note = next(n for n in noted.notes if n[0] == "tools")
            assert "late" in tools_note[1]  # the callback could list the tools again
        finally:
            noted.close()
            inline.close()


def test_listen_06_a_changed_resource_reads_its_content_on_first_access_only():
    """MCP-LISTEN-06: the ``Resource`` given to ``after_change`` has read nothing; its first
    ``content`` access reads the new content."""
    seen: list[tuple[bool, Any]] = []

    def look(server: Any, change: Any) -> None:
        if isinstance(change, llm_mcp.Resource):
            seen.append((change.loaded, change))

    with running_server(CHANGING, transport="stdio", era="modern") as running:
        server = running.mcp(after_change=look)
        try:
            server.listen(resources=[NOTE])
            server.call("edit", text="new words")
            assert wait_until(lambda: seen)
            loaded_when_given, resource = seen[0]
            assert loaded_when_given is False and resource.loaded is False
            assert resource.content == "new words"
            assert resource.loaded is True
        finally:
            server.close()


# -- listen() -----------------------------------------------------------------------------------


def test_listen_both_eras_and_transports_hear_lists_and_resources(changing):
    """MCP-LISTEN-08, MCP-LISTEN-18: listen subscribes to every announced list and to the given
    resource, whatever the era and transport (2026-07-28 subscriptions/listen; older: the GET
    stream or the stdio pipe, and resources/subscribe)."""
    heard = Heard()
    server = changing.mcp(after_change=heard)
    try:
        server.listen(resources=[NOTE])
        server.call("add_tool")
        server.call("add_prompt")
        server.call("add_resource")
        server.call("edit", text="from the test")
        assert heard.wait_for("tools", "prompts", "resources", NOTE), heard.names
        assert heard.changes[heard.names.index(NOTE)].content == "from the test"
        assert "late" in {t.name for t in server.tools}
        assert set(heard.threads) == {f"mcp-listener-{server.name}"}
    finally:
        server.close()
    assert not listener_threads()


def test_listen_07_returns_the_server_object_itself():
    """MCP-LISTEN-07: ``listen`` returns the MCP object, so ``h = Handbook().listen(...)`` works."""
    with running_server(CHANGING, transport="http", era="modern") as running:
        server = running.mcp()
        try:
            assert server.listen(resources=[NOTE]) is server
        finally:
            server.close()


def test_listen_08_resources_may_be_uris_or_resource_objects():
    """MCP-LISTEN-08: resources to listen to are given as URI strings or ``Resource`` objects."""
    heard = Heard()
    with running_server(CHANGING, transport="http", era="handshake") as running:
        server = running.mcp(after_change=heard)
        try:
            note = next(r for r in server.resources if r.uri == NOTE)
            server.listen(resources=[note])
            server.call("edit", text="via a Resource")
            assert heard.wait_for(NOTE)
            with pytest.raises(TypeError):
                server.listen(resources=[42])
        finally:
            server.close()


@pytest.mark.parametrize(("resources", "error", "words"), [
    (5, TypeError, "not int"),
    (object(), TypeError, "not object"),
    (b"memo://note", TypeError, "not bytes"),
    ({"memo://note": True}, TypeError, "not dict"),
    ([None], TypeError, "not NoneType"),
    (["not a uri"], ValueError, "'not a uri' is not a URI"),
    ([" memo://note"], ValueError, "is not a URI"),
    (["memo://note\nINFO forged"], ValueError, "is not a URI"),
    ([""], ValueError, "an empty string is not a URI"),
])
def test_listen_08_resources_that_are_not_uris_are_refused_before_the_server_is_contacted(resources, error, words):
    """MCP-LISTEN-08: ``resources`` must be URI strings or ``Resource`` objects (one, or an
    iterable of them); anything else raises an error naming what was given, before any connection
    is attempted (the URL here answers nothing, so contacting it would raise ConnectionError)."""
    server = llm_mcp.mcp(url="http://127.0.0.1:9/mcp", name="nowhere")
    with pytest.raises(error) as raised:
        server.listen(resources=resources)
    assert words in str(raised.value)
    assert not server.listening


def test_listen_09_returns_once_confirmed_and_calls_keep_working_meanwhile():
    """MCP-LISTEN-09: ``listen`` returns after the server confirmed (the listener is running) and
    ordinary requests and calls go on while it listens."""
    with running_server(CHANGING, transport="http", era="modern") as running:
        server = running.mcp()
        try:
            server.listen()
            assert server.listening and len(listener_threads()) == 1
            assert [server.call("echo", text=str(i)).text for i in range(5)] == [str(i) for i in range(5)]
            assert server.resource(NOTE).content == "first"
        finally:
            server.close()


@pytest.mark.parametrize(("era", "transport"), [("modern", "stdio"), ("handshake", "http"), ("handshake", "stdio")])
def test_listen_10_listening_again_replaces_the_resources(era, transport):
    """MCP-LISTEN-10, MCP-LISTEN-18: calling ``listen`` again replaces the resources listened to.
    On the handshake era a resource subscription belongs to the session, which outlives the
    listener: listening again without the resource sends ``resources/unsubscribe``, so its
    updates stop coming."""
    heard = Heard()
    with running_server(CHANGING, transport=transport, era=era) as running:
        server = running.mcp(after_change=heard)
        try:
            server.listen(resources=[NOTE])
            server.listen(resources=[])
            assert len(listener_threads()) == 1
            assert server._listener.resources == []
            server.call("edit", text="unheard")
            server.call("add_tool")
            assert heard.wait_for("tools")
            assert NOTE not in heard.names
        finally:
            server.close()


def test_listen_11_a_server_announcing_nothing_gets_no_thread_and_no_subscription(echo_stdio_command):
    """MCP-LISTEN-11: a server that announces no changes, with no resources given: ``listen``
    starts no thread and opens no subscription."""
    server = llm_mcp.mcp(command=echo_stdio_command, name="echo")
    try:
        assert not any(server.capabilities.get(k, {}).get("listChanged") for k in ("tools", "prompts", "resources"))
        before = threading.active_count()
        assert server.listen() is server
        assert not server.listening and threading.active_count() == before and not listener_threads()
    finally:
        server.close()


def test_listen_12_an_unreachable_http_server_raises_connection_error():
    """MCP-LISTEN-12: ``listen`` on an HTTP server that cannot be reached raises ``llm_mcp.ConnectionError``."""
    server = llm_mcp.mcp(url=f"http://127.0.0.1:{free_port()}/mcp")
    with pytest.raises(llm_mcp.ConnectionError):
        server.listen()
    assert not listener_threads()


def test_listen_13_a_refused_resource_raises_mcp_error_naming_it(echo_http_handshake_url):
    """MCP-LISTEN-13: a server that will not send updates for a resource given makes ``listen``
    raise ``MCPError`` naming it (here: no ``resources.subscribe`` capability)."""
    server = llm_mcp.mcp(url=echo_http_handshake_url)
    try:
        with pytest.raises(llm_mcp.MCPError, match="memo://nowhere"):
            server.listen(resources=["memo://nowhere"])
        assert not listener_threads()
    finally:
        server.close()


def test_listen_13_resources_missing_from_the_acknowledgement_are_refused():
    """MCP-LISTEN-13: on 2026-07-28, what the acknowledgement leaves out was refused: ``listen``
    raises ``MCPError`` naming it, and the listener ends."""
    transport = Acknowledging(grant_resources=False)
    server = llm_mcp.mcp(transport=lambda: transport, name="tunnel")
    with pytest.raises(llm_mcp.MCPError, match="memo://refused"):
        server.listen(resources=["memo://refused"])
    assert not listener_threads()


# -- the listener thread ------------------------------------------------------------------------


def test_listen_14_callbacks_run_one_at_a_time_on_the_listener_thread_and_may_call_the_server():
    """MCP-LISTEN-14: callbacks run on the listener thread, one at a time, and may call the server."""
    running_now = []
    overlap = []

    def slow(server: Any, change: Any) -> None:
        running_now.append(1)
        if len(running_now) > 1:
            overlap.append(change)
        server.call("echo", text="from the callback")
        time.sleep(0.2)
        running_now.pop()

    heard = Heard(also=slow)
    with running_server(CHANGING, transport="stdio", era="modern") as running:
        server = running.mcp(after_change=heard)
        try:
            server.listen(resources=[NOTE])
            server.call("add_tool")
            server.call("edit", text="x")
            server.call("add_prompt")
            assert heard.wait_for("tools", NOTE, "prompts")
            assert not overlap and set(heard.threads) == {f"mcp-listener-{server.name}"}
        finally:
            server.close()


def test_listen_15_an_exception_in_a_callback_is_logged_and_listening_goes_on(caplog):
    """MCP-LISTEN-15: a callback that raises is logged, and the next change is still heard."""
    def explode(server: Any, change: Any) -> None:
        if change == "tools":
            raise RuntimeError("callback broke")

    heard = Heard(also=explode)
    with running_server(CHANGING, transport="http", era="handshake") as running:
        server = running.mcp(after_change=heard)
        try:
            with caplog.at_level(logging.ERROR, logger="llm_mcp.listen"):
                server.listen()
                server.call("add_tool")
                assert heard.wait_for("tools")
                server.call("add_prompt")
                assert heard.wait_for("prompts")
            assert any("callback broke" in (r.exc_text or "") or r.exc_info for r in caplog.records)
            assert server.listening
        finally:
            server.close()


def test_listen_16_waits_double_from_one_second_to_a_minute_and_reset_after_success(monkeypatch):
    """MCP-LISTEN-16: after a drop the listener subscribes again after FIRST_DELAY (1 s), doubling
    each failed attempt up to MAX_DELAY (60 s), and back to FIRST_DELAY after a success.
    (The constants are checked, then scaled down so the test runs in a second.)"""
    assert (listener_module.FIRST_DELAY, listener_module.MAX_DELAY) == (1.0, 60.0)
    monkeypatch.setattr(listener_module, "FIRST_DELAY", 0.01)
    monkeypatch.setattr(listener_module, "MAX_DELAY", 0.08)
    # attempt 1 ok then drops; 2..6 fail; 7 ok then drops; 8 fails
    transport = Acknowledging(script=["ok", "fail", "fail", "fail", "fail", "fail", "ok", "fail"])
    server = llm_mcp.mcp(transport=lambda: transport, name="tunnel")
    try:
        server.listen()
        assert wait_until(lambda: transport.attempts >= 8)
        delays = server._listener.delays[:7]
        assert delays == [0.01, 0.01, 0.02, 0.04, 0.08, 0.08, 0.01]
    finally:
        server.close()


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_listen_16_17_a_killed_server_is_subscribed_again_and_everything_counts_as_changed(era):
    """MCP-LISTEN-16, MCP-LISTEN-17: the real server process is killed and started again on the
    same port; the listener subscribes again within the backoff (a new session on the handshake
    era), and ``after_change`` gets every announced list and every listened resource."""
    port = free_port()
    argv = [sys.executable, "-m", CHANGING, "--http", str(port), "--era", era]
    process = ServerProcess(argv, port)
    process.wait_ready()
    heard = Heard()
    server = llm_mcp.mcp(url=f"http://127.0.0.1:{port}/mcp", after_change=heard)
    try:
        server.listen(resources=[NOTE])
        assert {t.name for t in server.tools} == BASE_TOOLS
        process.proc.kill()
        process.proc.wait()
        time.sleep(1.5)  # one attempt fails (about 1 s), the next waits about 2 s
        process.stop()
        process = ServerProcess(argv, port)
        process.wait_ready()
        assert heard.wait_for("tools", "prompts", "resources", NOTE, timeout=20), heard.names
        assert server.listening
        assert 1.0 in server._listener.delays
        server.call("add_tool")  # the new subscription hears changes again
        assert wait_until(lambda: heard.names.count("tools") >= 2)
    finally:
        server.close()
        process.stop()


def test_listen_stdio_server_answers_ordinary_calls_concurrently_while_listened_to():
    """A listening stdio server still answers ordinary calls, from several threads at once, each
    with its own answer, while the listener reads the same pipe."""
    heard = Heard()
    with running_server(CHANGING, transport="stdio", era="handshake") as running:
        server = running.mcp(after_change=heard)
        try:
            server.listen(resources=[NOTE])

            def echo(i: int) -> str:
                return server.call("echo", text=f"n{i}").text

            with ThreadPoolExecutor(max_workers=8) as pool:
                answers = list(pool.map(echo, range(200)))
            assert answers == [f"n{i}" for i in range(200)]
            server.call("add_tool")
            assert heard.wait_for("tools")
            with ThreadPoolExecutor(max_workers=4) as pool:
                assert list(pool.map(echo, range(20))) == [f"n{i}" for i in range(20)]
        finally:
            server.close()


def test_close_ends_the_listener_within_seconds(changing):
    """``close()`` ends the subscription and the listener thread within a few seconds, in every
    era and transport (a stdio server process is stopped too)."""
    server = changing.mcp()
    server.listen(resources=[NOTE])
    pid = server.client.transport.pid if changing.transport == "stdio" else None
    started = time.monotonic()
    server.close()
    assert time.monotonic() - started < 3
    assert not server.listening and not listener_threads()
    if pid is not None:
        assert wait_until(lambda: not _alive(pid), 5)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie not yet reaped counts as gone
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
def test_listen_21_a_forked_child_does_not_inherit_the_listener_and_listens_on_its_own():
    """MCP-LISTEN-21: a forked child has no listener thread; ``listen`` in the child starts one,
    which hears changes."""
    with running_server(CHANGING, transport="http", era="modern") as running:
        heard = Heard()
        server = running.mcp(after_change=heard)
        server.listen()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child
            code = 1
            try:
                os.close(read)
                inherited = server.listening or bool(listener_threads())
                heard.clear()
                server.listen()  # the same object: its own thread and connection in the child
                mine = server.listening and len(listener_threads()) == 1
                server.call("add_tool")
                ok = heard.wait_for("tools", timeout=10)
                server.close()
                os.write(write, f"{inherited} {mine} {ok}".encode())
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        try:
            _, status = os.waitpid(pid, 0)
            report = os.read(read, 100).decode()
            assert os.WEXITSTATUS(status) == 0
            assert report == "False True True"
            assert server.listening and heard.wait_for("tools")  # the parent's listener lives on
        finally:
            os.close(read)
            server.close()


# -- the custom-transport hook -------------------------------------------------------------------


def test_trans_11_a_custom_transport_listen_hook_carries_the_subscription():
    """MCP-TRANS-11: the listener thread calls the transport's ``listen(message, version=...)``
    with a ``subscriptions/listen`` request; the notifications it passes on are heard."""
    heard = Heard()
    transport = Acknowledging()
    server = llm_mcp.mcp(transport=lambda: transport, name="tunnel", after_change=heard)
    try:
        server.listen(resources=["memo://a"])
        message = transport.messages[0]
        assert message["method"] == "subscriptions/listen"
        assert message["params"]["notifications"] == {"toolsListChanged": True, "resourceSubscriptions": ["memo://a"]}
        assert message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        transport.queue.append({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                                "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": message["id"]}}})
        assert heard.wait_for("tools")
        assert heard.threads == ["mcp-listener-tunnel"]
    finally:
        server.close()


def test_trans_12_close_raises_cancelled_error_in_the_hook_which_lets_it_propagate():
    """MCP-TRANS-12: ``close()`` stops the transport's listener by raising ``CancelledError`` in the
    listener thread (from the notification callback); the thread then ends."""
    transport = Acknowledging()
    server = llm_mcp.mcp(transport=lambda: transport, name="tunnel")
    server.listen()
    server.close()
    assert isinstance(transport.stopped_by, llm_mcp.CancelledError)
    assert not listener_threads()
    cancelled = [m for m in transport.messages if m and m.get("method") == "notifications/cancelled"]
    assert cancelled and cancelled[0]["params"]["requestId"] == transport.messages[0]["id"]


def test_trans_13_an_older_server_s_hook_gets_none_and_passes_on_unprompted_changes():
    """MCP-TRANS-13: for a server older than 2026-07-28 the hook gets ``message=None`` and passes
    on the change notifications the server sends on its own."""
    heard = Heard()
    transport = OldTunnel()
    server = llm_mcp.mcp(transport=lambda: transport, name="old", after_change=heard)
    try:
        server.listen()
        assert transport.given == [(None, "2025-11-25")]
        transport.queue.append({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"})
        assert heard.wait_for("prompts")
    finally:
        server.close()
    assert not listener_threads()


def test_a_server_that_never_acknowledges_makes_listen_time_out_and_stop():
    """A subscription the server never confirms: ``listen`` raises ``ServerTimeoutError`` after
    the server's ``timeout`` and the listener thread ends (cancelled in the transport)."""
    transport = Acknowledging(script=["silent"])
    server = llm_mcp.mcp(transport=lambda: transport, name="tunnel", timeout=0.5)
    with pytest.raises(llm_mcp.ServerTimeoutError, match="did not confirm"):
        server.listen()
    assert isinstance(transport.stopped_by, llm_mcp.CancelledError)
    assert not listener_threads() and not server.listening


def test_a_server_ending_the_first_subscription_without_acknowledging_it_fails_listen_at_once():
    """MCP-LISTEN-09/13: a server that answers ``subscriptions/listen`` with a result before any
    acknowledgement confirmed nothing: ``listen`` raises MCPError saying so after that one
    attempt, instead of subscribing again until its timeout."""
    transport = Acknowledging(script=["unacknowledged"] * 100)
    server = llm_mcp.mcp(transport=lambda: transport, name="tunnel", timeout=3)
    try:
        with pytest.raises(llm_mcp.MCPError, match="without acknowledging") as raised:
            server.listen()
        assert not isinstance(raised.value, llm_mcp.ServerTimeoutError)
        assert transport.attempts == 1
        assert not server.listening and not listener_threads()
    finally:
        server.close()


def test_a_refused_subscription_s_error_text_cannot_forge_lines():
    """MCP-LISTEN-13: a server refusing ``subscriptions/listen`` with an error: ``listen`` raises
    MCPError carrying its code and text, with control characters escaped, so the text cannot
    start a line of its own where the error is printed or logged (``mcp_listen`` prints it)."""
    transport = Acknowledging(script=["error"])
    server = llm_mcp.mcp(transport=lambda: transport, name="tunnel")
    try:
        with pytest.raises(llm_mcp.MCPError) as raised:
            server.listen()
        assert raised.value.code == -32603
        assert "\n" not in str(raised.value) and "no listening today\\n2026 ERROR forged" in str(raised.value)
    finally:
        server.close()


def test_a_transport_without_a_listen_hook_cannot_listen():
    """A custom transport without ``listen`` makes ``listen`` raise ``MCPError`` saying so."""
    from llm_mcp_tests.support.transports import Duck

    class Announcing(Duck):
        def request(self, message: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            if message["method"] == "server/discover":
                return {"jsonrpc": "2.0", "id": message["id"], "result": {
                    "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {"listChanged": True}}}}
            return super().request(message, **kwargs)

    server = llm_mcp.mcp(transport=lambda: Announcing(), name="duck")
    with pytest.raises(llm_mcp.MCPError, match="Announcing cannot listen"):
        server.listen()
    assert not listener_threads()


def test_listen_18_a_2024_11_05_http_sse_server_is_listened_to_on_its_event_stream():
    """MCP-LISTEN-18: a server on the 2024-11-05 HTTP+SSE transport sends its changes on the event
    stream the session lives on; the listener hands them to ``after_change`` in its own thread,
    and ``resources/subscribe`` brings the resource's updates."""
    from llm_mcp_tests.support.processes import start_http_server

    process = start_http_server(lambda port: [sys.executable, "-m", "llm_mcp_tests.support.servers.legacy_sse",
                                              CHANGING, str(port)])
    heard = Heard()
    server = llm_mcp.mcp(url=f"http://127.0.0.1:{process.port}/mcp", after_change=heard)
    try:
        assert server.protocol_version == "2025-11-25"
        assert type(server.client.transport).__name__ == "SSETransport"
        server.listen(resources=[NOTE])
        server.call("add_tool")
        server.call("edit", text="over the old transport")
        assert heard.wait_for("tools", NOTE), heard.names
        assert set(heard.threads) == {f"mcp-listener-{server.name}"}
        assert heard.changes[heard.names.index(NOTE)].content == "over the old transport"
    finally:
        server.close()
        process.stop()
    assert not listener_threads()


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_listen_17_a_stdio_server_that_died_is_started_again_and_listened_to_again(era):
    """MCP-LISTEN-16, MCP-LISTEN-17: the stdio server process is killed; the listener starts it
    again (sending ``subscriptions/listen`` again, or handshaking and subscribing again), and
    ``after_change`` gets everything as changed."""
    import signal

    heard = Heard()
    with running_server(CHANGING, transport="stdio", era=era) as running:
        server = running.mcp(after_change=heard)
        try:
            server.listen(resources=[NOTE])
            first = server.client.transport.pid
            os.kill(first, signal.SIGKILL)
            assert heard.wait_for("tools", "prompts", "resources", NOTE, timeout=20), heard.names
            assert server.client.transport.pid not in (None, first)
            heard.clear()
            server.call("edit", text="after the restart")
            assert heard.wait_for(NOTE)
            assert heard.changes[-1].content == "after the restart"
        finally:
            server.close()


def test_a_resource_uri_from_the_server_cannot_forge_log_lines(caplog):
    """A changed resource's URI is logged on one line, control characters escaped."""
    transport = Acknowledging()
    server = llm_mcp.mcp(transport=lambda: transport, name="tunnel")
    try:
        with caplog.at_level(logging.INFO, logger="llm_mcp.listen"):
            server.listen(resources=["memo://a"])
            subscription = transport.messages[0]["id"]
            transport.queue.append({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {
                "uri": "memo://a\n2026 ERROR forged", "_meta": {"io.modelcontextprotocol/subscriptionId": subscription}}})
            assert wait_until(lambda: any("changed: memo://a" in r.getMessage() for r in caplog.records))
        line = next(r.getMessage() for r in caplog.records if "changed: memo://a" in r.getMessage())
        assert "\n" not in line and "\\n2026 ERROR forged" in line
    finally:
        server.close()


@pytest.mark.parametrize("end", ["ok", "cancelled"])
def test_either_graceful_end_of_a_subscription_is_followed_by_a_new_one(monkeypatch, end):
    """MCP-LISTEN-16: a server ending the subscription with a ``complete`` result or with
    ``notifications/cancelled`` for it: the listener subscribes again (after FIRST_DELAY) and
    treats everything as changed."""
    monkeypatch.setattr(listener_module, "FIRST_DELAY", 0.01)
    heard = Heard()
    transport = Acknowledging(script=[end])
    server = llm_mcp.mcp(transport=lambda: transport, name="tunnel", after_change=heard)
    try:
        server.listen()
        assert wait_until(lambda: transport.attempts == 2)
        assert heard.wait_for("tools") and server.listening
        assert [m["method"] for m in transport.messages[:2]] == ["subscriptions/listen"] * 2
    finally:
        server.close()
