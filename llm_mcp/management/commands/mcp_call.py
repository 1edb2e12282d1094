"""``manage.py mcp_call``: call one tool of an MCP server and print the result."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from llm_mcp.management.targets import (
    add_server_arguments,
    build_server,
    dumps,
    reporting_errors,
    uses_inline_server,
)


def parse_arguments(raw: str) -> dict[str, Any]:
    """Parse ``--arguments``: it must be a JSON object."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise CommandError(f"--arguments is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise CommandError(f"--arguments must be a JSON object, got {type(value).__name__}: {raw.strip()}")
    return value


def describe_size(size: int | None) -> str:
    return "size unknown" if size is None else f"{size} bytes"


class Command(BaseCommand):
    help = (
        "Call a tool of an MCP server and print its text, structured content, attachments and "
        "error flag. Usage: mcp_call TARGET TOOL [--arguments JSON], or "
        'mcp_call --url URL TOOL / mcp_call --command "CMD ARGS" TOOL. Exits non-zero when the '
        "tool reports an error."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument(
            "first",
            metavar="TARGET",
            help="Dotted path of an llm_mcp.MCP subclass (with --url or --command: the tool name).",
        )
        parser.add_argument("second", nargs="?", metavar="TOOL", help="The tool to call.")
        parser.add_argument(
            "--arguments",
            "-a",
            default="{}",
            metavar="JSON",
            help='The tool arguments as a JSON object, e.g. \'{"message": "hi"}\' (default: {}).',
        )
        add_server_arguments(parser)

    def handle(self, *args, **options):
        names = [n for n in (options["first"], options["second"]) if n is not None]
        if uses_inline_server(options):
            if len(names) != 1:
                raise CommandError("With --url or --command give only the TOOL name.")
            target, tool = None, names[0]
        else:
            if len(names) != 2:
                raise CommandError("Give a TARGET and a TOOL name (or --url/--command and a TOOL name).")
            target, tool = names
        arguments = parse_arguments(options["arguments"])

        server = build_server(target, options)
        with reporting_errors(), server:
            result = server.call(tool, **arguments)

        if options["json"]:
            self.stdout.write(dumps(result.to_dict()))
        else:
            self.stdout.write(self.render(result), ending="")
        if result.is_error:
            raise CommandError(f"The tool {tool!r} reported an error.")

    @staticmethod
    def render(result) -> str:
        lines: list[str] = []
        lines.append("Text:")
        lines.extend(f"  {line}" for line in (result.text or "(none)").splitlines() or [""])
        if result.structured is not None:
            lines.append("Structured content:")
            lines.extend(f"  {line}" for line in dumps(result.structured).splitlines())
        if result.attachments:
            lines.append(f"Attachments ({len(result.attachments)}):")
            for attachment in result.attachments:
                parts = [attachment.kind, attachment.mime_type or "no MIME type", describe_size(attachment.size)]
                if attachment.uri:
                    parts.append(attachment.uri)
                if attachment.name:
                    parts.append(f"name={attachment.name}")
                lines.append("  - " + ", ".join(parts))
        lines.append(f"Error: {'yes' if result.is_error else 'no'}")
        return "\n".join(lines) + "\n"
