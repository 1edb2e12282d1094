"""Listening in a Django project: ``manage.py mcp_listen`` as a real Procfile process, the
``mcp_changed`` signal, and change callbacks that use the database like a Celery job."""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time

import pytest
from django.contrib.auth import get_user_model

import llm_mcp
from llm_mcp.signals import guard_database, mcp_changed
from llm_mcp.testing import running_server
from llm_mcp_tests.support.listen_command import children, gone, listening_command
from llm_mcp_tests.support.listen_targets import ChangingOverHTTP
from llm_mcp_tests.support.listening import wait_until
from llm_mcp_tests.support.processes import ServerProcess, free_port

CHANGING = "llm_mcp_tests.support.servers.changing"


@pytest.mark.slow
def test_listen_20_mcp_listen_logs_each_change_and_exits_0_on_sigterm():
    """MCP-LISTEN-20: ``manage.py mcp_listen TARGET --resource URI`` runs in the foreground, logs
    one INFO line per change naming it (on stderr: logging is not configured for it), and exits 0
    within 5 s of SIGTERM after closing the subscription."""
    with running_server(CHANGING, transport="http", era="modern") as running, \
            listening_command("llm_mcp_tests.support.listen_targets.ChangingOverHTTP", "--resource", "memo://note",
                              env={"LLM_MCP_TEST_LISTEN_URL": running.url}) as (process, err):
        assert err.wait_for("Listening to MCP server changing: tools, prompts, resources, memo://note"), err.text
        trigger = running.mcp()
        trigger.call("add_tool")
        trigger.call("edit", text="seen by the command")
        trigger.close()
        assert err.wait_for("MCP server changing changed: tools"), err.text
        assert err.wait_for("MCP server changing changed: memo://note"), err.text
        assert all(" INFO " in line for line in err.lines if "changed:" in line)
        process.send_signal(signal.SIGTERM)
        started = time.monotonic()
        assert process.wait(timeout=5) == 0
        assert time.monotonic() - started < 5
        assert err.wait_for("Stopping"), err.text


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_listen_20_mcp_listen_over_stdio_leaves_no_child_process(stop):
    """MCP-LISTEN-20: a listener whose server is its own stdio child process exits 0 within 5 s of
    SIGTERM or SIGINT, and the server process is gone too."""
    with listening_command("llm_mcp_tests.support.listen_targets.ChangingOverStdio") as (process, err):
        assert err.wait_for("Listening to MCP server changing"), err.text
        kids = children(process.pid)
        assert kids, "the stdio server should be the command's child"
        process.send_signal(stop)
        assert process.wait(timeout=5) == 0
        assert wait_until(lambda: all(gone(pid) for pid in kids), 5)


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_listen_20_mcp_listen_stops_within_seconds_while_the_server_has_not_answered_yet(stop):
    """MCP-LISTEN-20: a signal while ``listen`` still waits for the server (here a socket that
    takes the connection and never answers) stops the command within 5 s, exit 0, instead of
    after the whole confirmation timeout."""
    with socket.create_server(("127.0.0.1", 0)) as silent:
        silent.settimeout(30)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/mcp"
        with listening_command("llm_mcp_tests.support.listen_targets.ChangingOverHTTP",
                               env={"LLM_MCP_TEST_LISTEN_URL": url}) as (process, err):
            connection, _ = silent.accept()  # the command is now waiting for an answer
            with connection:
                time.sleep(0.5)
                process.send_signal(stop)
                assert process.wait(timeout=5) == 0, err.text
                assert "Traceback" not in err.text


@pytest.mark.slow
def test_listen_20_mcp_listen_wait_outlasts_a_server_that_starts_after_it():
    """MCP-LISTEN-20: in a Procfile the listener may start before its server; with ``--wait``
    it keeps trying to reach it (logging why) and listens once the server is up."""
    port = free_port()
    server = None
    with listening_command("llm_mcp_tests.support.listen_targets.ChangingOverHTTP", "--wait", "60",
                           env={"LLM_MCP_TEST_LISTEN_URL": f"http://127.0.0.1:{port}/mcp"}) as (process, err):
        try:
            assert err.wait_for("cannot be reached yet"), err.text
            assert process.poll() is None
            server = ServerProcess([sys.executable, "-m", CHANGING, "--http", str(port), "--era", "modern"], port)
            server.wait_ready()
            assert err.wait_for("Listening to MCP server changing: tools, prompts, resources"), err.text
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=5) == 0
            assert "Traceback" not in err.text
        finally:
            if server is not None:
                server.stop()


def test_mcp_listen_reports_a_server_it_cannot_reach():
    """An unreachable server: the command prints one error line and exits non-zero at once."""
    with listening_command("llm_mcp_tests.support.listen_targets.ChangingOverHTTP",
                           env={"LLM_MCP_TEST_LISTEN_URL": "http://127.0.0.1:9/mcp"}) as (process, err):
        assert process.wait(timeout=30) == 1
        assert wait_until(lambda: "ConnectionError" in err.text, 5), err.text


@pytest.mark.db
@pytest.mark.django_db(transaction=True)
def test_listen_19_callbacks_use_the_orm_with_connections_closed_before_and_after():
    """MCP-LISTEN-19: ``after_change`` and ``mcp_changed`` receivers run on the listener thread
    with the database-connection handling of a Celery job: they can use the ORM, and stale
    connections are closed before and after each one (``close_old_connections``)."""
    get_user_model().objects.create(username="listener-user")
    signalled: list[tuple[type, str, str]] = []

    class Counting(ChangingOverHTTP):
        after_change = "count"
        counted: list[tuple[int, str]] = []

        def count(self, change) -> None:
            self.counted.append((get_user_model().objects.filter(username="listener-user").count(),
                                 threading.current_thread().name))

    def receiver(sender, server, change, **kwargs) -> None:
        signalled.append((sender, str(change), threading.current_thread().name))

    mcp_changed.connect(receiver)
    try:
        with running_server(CHANGING, transport="http", era="modern") as running:
            os.environ["LLM_MCP_TEST_LISTEN_URL"] = running.url
            server = Counting()
            try:
                server.listen()
                server.call("add_tool")
                assert wait_until(lambda: signalled)
            finally:
                server.close()
    finally:
        mcp_changed.disconnect(receiver)
        os.environ.pop("LLM_MCP_TEST_LISTEN_URL", None)
    assert Counting.counted == [(1, "mcp-listener-changing")]
    assert signalled == [(Counting, "tools", "mcp-listener-changing")]
    # the guard around them: stale connections closed before and after, as a Celery job does
    import django.db

    order: list[str] = []
    real = django.db.close_old_connections
    try:
        django.db.close_old_connections = lambda **kwargs: order.append("close")
        guard_database(lambda: order.append("callback"))
    finally:
        django.db.close_old_connections = real
    assert order == ["close", "callback", "close"]


def test_mcp_changed_is_sent_with_the_server_class_as_sender():
    """``llm_mcp.signals.mcp_changed`` goes out for a change heard with no listener too (a
    handshake-era server announcing on a response), ``sender`` the class, with ``server`` and ``change``."""
    received: list[tuple[type, object, object]] = []

    def receiver(sender, server, change, **kwargs) -> None:
        received.append((sender, server, change))

    mcp_changed.connect(receiver)
    try:
        with running_server(CHANGING, transport="stdio", era="handshake") as running:
            server = running.mcp()
            try:
                server.call("add_tool")
                server.call("echo", text="read what follows")
            finally:
                server.close()
    finally:
        mcp_changed.disconnect(receiver)
    assert [(s, c) for s, _, c in received] == [(type(server), "tools")]
    assert received[0][1] is server and isinstance(server, llm_mcp.MCP)


@pytest.mark.slow
@pytest.mark.django_db
def test_the_example_live_tools_page_shows_what_its_listener_heard(tmp_path, settings):
    """The example project's listener (``LiveDemoServer``, as the Procfile runs it) hears the demo
    server learn a tool after the page's button asked it to, and the page lists the new tool."""
    from django.test import Client
    from django.urls import reverse

    from example_project.demo import LiveDemoServer
    from llm_mcp_tests.support.processes import start_http_server

    demo = start_http_server(lambda port: [sys.executable, "-m", "example_project.demo_server", "--http", str(port)])
    settings.EXAMPLE_DEMO_MCP_URL = f"http://127.0.0.1:{demo.port}/mcp"
    settings.EXAMPLE_LIVE_TOOLS_FILE = str(tmp_path / "live_tools.json")
    listener = LiveDemoServer()
    try:
        page = Client()
        assert "has heard no change yet" in page.get(reverse("live_tools")).content.decode()
        listener.listen()
        assert page.post(reverse("live_tools")).status_code == 302
        assert wait_until(lambda: (tmp_path / "live_tools.json").exists())
        html = page.get(reverse("live_tools")).content.decode()
        assert 'data-tool="shout"' in html and 'data-tool="echo"' in html
    finally:
        listener.close()
        demo.stop()
