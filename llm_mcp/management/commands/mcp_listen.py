"""``manage.py mcp_listen``: listen to one MCP server in the foreground, for a Procfile.

    python manage.py mcp_listen myapp.mcp.Handbook --resource handbook://policies

Runs ``Handbook().listen(resources=[...])`` until SIGINT or SIGTERM, then closes the
subscription and exits 0 (a signal while ``listen`` still waits for the server stops it too).
``--wait SECONDS`` keeps trying for that long to reach a server that is not up yet (started
next to the listener in a Procfile); without it, an unreachable server exits 1 at once. Each change is logged at INFO by the logger ``llm_mcp.listen``
(``MCP server handbook changed: tools``); when logging is not configured for it, the command
writes those lines to stderr itself. ``after_change`` and the ``llm_mcp.signals.mcp_changed``
receivers run in the listener's thread with stale database connections closed before and
after, as in a Celery job.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError

import llm_mcp
from llm_mcp.client.server.listener import resource_uris
from llm_mcp.management.targets import build_server, reporting_errors

log = logging.getLogger("llm_mcp.listen")

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

RETRY_EVERY = 1.0
"""Seconds between attempts to reach the server with ``--wait``."""


def show_changes_on_stderr() -> logging.Handler | None:
    """Attach a stderr handler to ``llm_mcp.listen`` (INFO) when no handler would show its
    lines (logging not configured); returns it, or ``None`` when logging already shows them."""
    if log.hasHandlers() and log.getEffectiveLevel() <= logging.INFO:
        return None
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False  # a root handler above WARNING would not show them; ours does
    return handler


class Command(BaseCommand):
    help = (
        "Listen to an MCP server for changes in the foreground (a Procfile process): runs TARGET().listen() "
        "until SIGINT or SIGTERM and logs one line per change (logger llm_mcp.listen). "
        "Usage: mcp_listen myapp.mcp.Handbook [--resource URI ...] [--wait SECONDS]."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("target", metavar="TARGET", help="Dotted path of an llm_mcp.MCP subclass.")
        parser.add_argument("--resource", action="append", default=[], metavar="URI",
                            help="A resource URI to hear updates of (repeatable).")
        parser.add_argument("--timeout", type=float, metavar="SECONDS",
                            help="Seconds each request may take (default: the server's own, else 60).")
        parser.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                            help="Keep trying for up to SECONDS to reach a server that cannot be reached yet "
                                 "(it starts with the listener, in a Procfile); default 0: fail at once.")

    def handle(self, *args: Any, **options: Any) -> None:
        stop = threading.Event()
        starting = [True]

        def on_signal(*_: Any) -> None:
            stop.set()
            if starting[0]:  # listen() still waits for the server: interrupt it, or it waits its whole timeout
                raise KeyboardInterrupt

        try:
            resource_uris(options["resource"])
        except ValueError as exc:
            raise CommandError(f"--resource: {str(exc).removeprefix('listen(resources=...): ')}") from None
        server = build_server(options["target"], {"timeout": options.get("timeout")})
        handler = show_changes_on_stderr()
        previous = {sig: signal.signal(sig, on_signal) for sig in STOP_SIGNALS}
        try:
            self.listen(server, options["resource"], options["wait"])
            starting[0] = False
            if server.listening:
                log.info("Stop with Ctrl-C or SIGTERM")
            else:
                log.warning("MCP server %s announces no changes: nothing to listen to (waiting for Ctrl-C or "
                            "SIGTERM)", server.name)
            while not stop.wait(0.5):  # short waits: signals are handled between them
                pass
            log.info("Stopping: closing the subscription to MCP server %s", server.name)
        except KeyboardInterrupt:  # a signal before the server confirmed the subscription
            log.info("Stopping before MCP server %s confirmed the subscription", server.name)
        except CommandError:
            raise
        finally:
            starting[0] = False
            server.close()
            for sig, old in previous.items():
                signal.signal(sig, old)
            if handler is not None:
                log.removeHandler(handler)
                log.propagate = True

    @staticmethod
    def listen(server: llm_mcp.MCP, resources: list[str], wait: float) -> None:
        """``server.listen(resources=...)``; while it cannot be reached, try again every
        `RETRY_EVERY` seconds for up to ``wait`` seconds. Raises ``CommandError``."""
        deadline = time.monotonic() + max(wait, 0.0)
        while True:
            try:
                with reporting_errors():
                    server.listen(resources=resources)
                return
            except CommandError as exc:
                left = deadline - time.monotonic()
                if not isinstance(exc.__cause__, llm_mcp.ConnectionError) or left <= 0:
                    raise
                log.info("MCP server %s cannot be reached yet (%s); trying again for %.0f s more", server.name,
                         exc.__cause__, left)
                server.close()
                time.sleep(min(RETRY_EVERY, left))
