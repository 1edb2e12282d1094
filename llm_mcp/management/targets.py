"""What the llm_mcp management commands share: choosing the server to talk to.

A command names its server in one of three ways:

* ``TARGET``: the dotted path of an `llm_mcp.MCP` subclass, imported and
  instantiated with no arguments (``example_project.demo.DemoServer``);
* ``--url URL``: a Streamable HTTP endpoint;
* ``--command "CMD ARGS"``: a stdio server, split like a POSIX shell would
  (no shell runs it).

``--name`` gives the server a name for messages and tool prefixes when
``--url`` or ``--command`` is used.
"""

from __future__ import annotations

import inspect
import json
import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.utils.module_loading import import_string

import llm_mcp

__all__ = ["add_server_arguments", "build_server", "dumps", "reporting_errors", "split_command",
           "uses_inline_server"]


def add_server_arguments(parser: CommandParser) -> None:
    """Add ``--url``, ``--command``, ``--name`` and ``--json`` to a command's parser."""
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--url", help="URL of a Streamable HTTP MCP endpoint, instead of TARGET.")
    source.add_argument(
        "--command",
        dest="server_command",
        metavar="COMMAND",
        help='Command line that starts a stdio MCP server, e.g. "node server.js stdio", instead of TARGET.',
    )
    parser.add_argument("--name", help="Name for the server given by --url or --command.")
    parser.add_argument("--timeout", type=float, metavar="SECONDS",
                        help="Seconds each request may take (default: the server's own, else 60).")
    parser.add_argument("--allow-http", action="store_true",
                        help="Allow plain http:// to a host that is not loopback (a network you trust).")
    parser.add_argument("--json", action="store_true", help="Print a JSON document instead of text.")


def uses_inline_server(options: dict[str, Any]) -> bool:
    """Whether the server is given by ``--url`` or ``--command`` rather than a TARGET."""
    return bool(options.get("url") or options.get("server_command"))


def build_server(target: str | None, options: dict[str, Any]) -> llm_mcp.MCP:
    """Return an unopened server object for TARGET or ``--url``/``--command``.

    Raises CommandError for a missing or conflicting choice, a path that does not
    import, a class that is not an ``llm_mcp.MCP`` subclass or that needs constructor
    arguments, and a configuration the client rejects.
    """
    url = options.get("url")
    command_line = options.get("server_command")
    name = options.get("name")

    if target and (url or command_line):
        raise CommandError("Give either TARGET or --url/--command, not both.")
    if not target and not (url or command_line):
        raise CommandError("Name a server: a TARGET class path, --url URL or --command \"CMD ARGS\".")

    extra: dict[str, Any] = {"name": name} if name else {}
    if options.get("timeout") is not None:
        extra["timeout"] = options["timeout"]
    if options.get("allow_http"):
        if target:
            raise CommandError("--allow-http applies to --url; a TARGET class sets allow_http itself.")
        extra["allow_http"] = True
    try:
        if url:
            return llm_mcp.mcp(url=url, **extra)
        if command_line:
            argv = split_command(command_line)
            extra.pop("allow_http", None)
            return llm_mcp.mcp(command=argv, **extra)
        return _instantiate(target, timeout=extra.get("timeout"))
    except ValueError as exc:
        raise CommandError(f"Invalid server configuration: {exc}") from exc


def split_command(command_line: str) -> list[str]:
    """``--command`` split like a POSIX shell would; ``CommandError`` when it is empty or unbalanced."""
    try:
        argv = shlex.split(command_line)
    except ValueError as error:
        raise CommandError(f"Cannot split --command {command_line!r}: {error}.") from None
    if not argv:
        raise CommandError("--command is empty; give the command line that starts the server.")
    return argv


def _instantiate(target: str, *, timeout: float | None = None) -> llm_mcp.MCP:
    if "." not in target:
        raise CommandError(f"TARGET must be a dotted path such as 'myapp.mcp.MyServer', got {target!r}.")
    try:
        cls = import_string(target)
    except ImportError as exc:
        raise CommandError(f"Cannot import {target!r}: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, llm_mcp.MCP)):
        raise CommandError(f"{target!r} is not a subclass of llm_mcp.MCP.")
    try:
        inspect.signature(cls).bind()
    except TypeError as exc:
        raise CommandError(f"{target!r} cannot be built with no arguments ({exc}); a command creates TARGET() "
                           "itself, so give it a class whose arguments all have defaults.") from None
    except ValueError:  # no signature to inspect: let the call tell
        pass
    if timeout is not None:
        cls = type(cls.__name__, (cls,), {"timeout": timeout, "__module__": cls.__module__})
    return cls()


@contextmanager
def reporting_errors() -> Iterator[None]:
    """Turn client errors into CommandError so manage.py prints the error (with a stdio server's stderr tail,
    when it has one) and exits 1."""
    try:
        yield
    except CommandError:
        raise
    except llm_mcp.MCPError as exc:
        raise CommandError(f"{type(exc).__name__}: {exc}") from exc
    except ValueError as exc:
        raise CommandError(f"Invalid server configuration: {exc}") from exc


def dumps(data: Any) -> str:
    """JSON for people: indented, non-ASCII kept, unknown objects as strings."""
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)
