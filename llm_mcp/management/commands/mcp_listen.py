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

``--tasks`` also listens to the server tasks that stored chats wait on (tool calls paused on a
task of this server, by its name) and enqueues ``llm_mcp.tasks.check_tasks(chat_id)`` for each
chat when one of its tasks changes; the paused calls are read again every ``--rescan`` seconds
(5) for newly paused chats (see ``llm_mcp.task_watch.TaskWatch``). With
``LLM_MCP["TASK_CHECKS"] = "listen"``, ``check_tasks`` then no longer polls on its own.
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
from llm_mcp.client.extensions import TASKS_EXTENSION
from llm_mcp.client.server.listener import resource_uris, tasks_refused
from llm_mcp.management.targets import build_server, reporting_errors
from llm_mcp.task_watch import DEFAULT_RESCAN, TaskWatch

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
        "With --tasks, also listens to the server tasks paused chats wait on and enqueues "
        "llm_mcp.tasks.check_tasks for a chat when one of its tasks changes. "
        "Usage: mcp_listen myapp.mcp.Handbook [--resource URI ...] [--tasks [--rescan SECONDS]] [--wait SECONDS]."
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
        parser.add_argument("--tasks", action="store_true",
                            help="Listen to the tasks of this server that paused chats wait on, and enqueue "
                                 "llm_mcp.tasks.check_tasks(chat_id) when one changes (TARGET must declare "
                                 "extensions = [\"tasks\"]).")
        parser.add_argument("--rescan", type=float, default=DEFAULT_RESCAN, metavar="SECONDS",
                            help=f"With --tasks: seconds between two looks for newly paused chats "
                                 f"(default {DEFAULT_RESCAN:g}).")

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
        if options["rescan"] is None or not options["rescan"] > 0:
            raise CommandError(f"--rescan must be a number of seconds above 0, not {options['rescan']}")
        server = build_server(options["target"], {"timeout": options.get("timeout")})
        if options["tasks"] and TASKS_EXTENSION not in (server.declared_capabilities("modern").get("extensions")
                                                        or {}):
            raise CommandError(f"--tasks: {type(server).__name__} does not declare the Tasks extension; add "
                               f"extensions = [\"tasks\"] to the class")
        handler = show_changes_on_stderr()
        previous = {sig: signal.signal(sig, on_signal) for sig in STOP_SIGNALS}
        watch: TaskWatch | None = None
        try:
            self.listen(server, options["resource"], options["wait"])
            if options["tasks"]:
                refusal = tasks_refused(server.connection.client, server.name, [])
                if refusal is not None:
                    raise CommandError(f"--tasks: {refusal}")
                watch = TaskWatch(server, resources=options["resource"], rescan=options["rescan"])
                watch.start()
            starting[0] = False
            if watch is not None:
                log.info("Watching the tasks paused chats wait on (looking for new ones every %g s)",
                         options["rescan"])
            if server.listening or watch is not None:
                log.info("Stop with Ctrl-C or SIGTERM")
            else:
                log.warning("MCP server %s announces no changes: nothing to listen to (waiting for Ctrl-C or "
                            "SIGTERM)", server.name)
            while not stop.wait(0.5):  # short waits: signals are handled between them
                if watch is not None:
                    starting[0] = True  # a signal interrupts a subscription that waits for the server
                    watch.tick()
                    starting[0] = False
            log.info("Stopping: closing the subscription to MCP server %s", server.name)
        except KeyboardInterrupt:  # a signal before the server confirmed the subscription
            log.info("Stopping before MCP server %s confirmed the subscription", server.name)
        except CommandError:
            raise
        finally:
            starting[0] = False
            if watch is not None:
                watch.stop()
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
