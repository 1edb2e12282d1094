"""``manage.py mcp_inspect``: connect to an MCP server and show what it offers."""

from __future__ import annotations

import io
import shutil
from typing import Any

from django.core.management.base import BaseCommand
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from llm_mcp.management.targets import add_server_arguments, build_server, dumps, reporting_errors

DESCRIPTION_WIDTH = 80
WIDE = 200  # columns when the output is not a terminal: rows stay on one line

# (column heading, Tool attribute, annotation key in the wire format)
HINTS = (
    ("read-only", "read_only", "readOnlyHint"),
    ("destructive", "destructive", "destructiveHint"),
    ("idempotent", "idempotent", "idempotentHint"),
    ("open-world", "open_world", "openWorldHint"),
)


def shorten(text: str | None, width: int = DESCRIPTION_WIDTH) -> str:
    """The first line of ``text``, cut to ``width`` characters with an ellipsis."""
    if not text:
        return ""
    line = text.strip().splitlines()[0].strip() if text.strip() else ""
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


def yes_no(value: Any) -> str:
    if value is None:
        return "?"
    return "yes" if value else "no"


class Command(BaseCommand):
    help = (
        "Connect to an MCP server and print its identity, the negotiated protocol revision, "
        "its instructions and its tools. TARGET is the dotted path of an llm_mcp.MCP subclass; "
        "use --url or --command instead for a server that has no class."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("target", nargs="?", metavar="TARGET", help="Dotted path of an llm_mcp.MCP subclass.")
        add_server_arguments(parser)

    def handle(self, *args, **options):
        server = build_server(options["target"], options)
        with reporting_errors(), server:
            report = self.collect(server)
        if options["json"]:
            self.stdout.write(dumps(report))
        else:
            tty = self.stdout.isatty()
            width = shutil.get_terminal_size((120, 24)).columns if tty else WIDE
            self.stdout.write(self.render(report, width=width, color=tty and not options["no_color"]), ending="")

    @staticmethod
    def collect(server) -> dict[str, Any]:
        """Everything the command shows, as plain JSON-ready data."""
        info = dict(server.server_info or {})
        tools = []
        for tool in server.tools:
            tools.append(
                {
                    "name": tool.name,
                    "title": tool.title,
                    "description": tool.description,
                    "input_schema": tool.input_schema,
                    "output_schema": tool.output_schema,
                    "annotations": dict(tool.annotations or {}),
                    "hints": {attr: getattr(tool, attr) for _, attr, _ in HINTS},
                    "meta": tool.meta,
                }
            )
        return {
            "server": {"name": info.get("name"), "version": info.get("version"), "title": info.get("title")},
            "server_info": info,
            "protocol_version": server.protocol_version,
            "instructions": server.instructions,
            "capabilities": server.capabilities,
            "tools": tools,
        }

    @staticmethod
    def render(report: dict[str, Any], *, width: int = 120, color: bool = False) -> str:
        buffer = io.StringIO()
        console = Console(file=buffer, width=width, force_terminal=color, no_color=not color, highlight=False)

        server = report["server"]
        title = f" ({server['title']})" if server.get("title") else ""
        identity = f"{server.get('name') or '?'} {server.get('version') or ''}".rstrip() + title
        console.print(f"[bold]Server:[/bold] {escape(identity)}", soft_wrap=True)
        console.print(f"[bold]Protocol revision:[/bold] {escape(str(report['protocol_version']))}")
        instructions = (report.get("instructions") or "").strip()
        if instructions:
            console.print("[bold]Instructions:[/bold]")
            console.print(instructions, markup=False, soft_wrap=True)
        else:
            console.print("[bold]Instructions:[/bold] (none)")

        tools = report["tools"]
        console.print(f"[bold]Tools ({len(tools)}):[/bold]")
        table = Table(show_lines=False)
        table.add_column("Name", no_wrap=True)
        table.add_column("Title / description")
        for heading, _, _ in HINTS:
            table.add_column(heading, justify="center")
        for tool in tools:
            summary = tool["title"] or ""
            description = shorten(tool["description"])
            if description and description != summary:
                summary = f"{summary}: {description}" if summary else description
            table.add_row(
                escape(tool["name"]),
                escape(summary),
                *(yes_no(tool["hints"][attr]) for _, attr, _ in HINTS),
            )
        console.print(table)
        return buffer.getvalue()
