"""Log messages servers send while they work (``notifications/message``), into Python logging.

    class Deploys(llm_mcp.MCP):
        url = "https://deploys.example.com/mcp"
        log_level = "warning"       # warning and above, written under the logger llm_mcp.server.deploys

A server sends log messages only when asked: on 2026-07-28 the level rides on every
request as ``_meta["io.modelcontextprotocol/logLevel"]``; handshake-era servers that
declare ``logging`` get ``logging/setLevel`` after ``initialize``. Without a level nothing
is asked for, and messages a server sends anyway are not written.
Spec: MCP 2026-07-28 and 2025-11-25, "Utilities" > "Logging" (levels of RFC 5424 §6.2.1).
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

__all__ = ["LOG_LEVELS", "LOG_LEVEL_META", "check_log_level", "printable", "python_level", "wanted", "write"]

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""The protocol's levels, least severe first."""

LOG_LEVEL_META = "io.modelcontextprotocol/logLevel"
"""The ``_meta`` key carrying the level on each 2026-07-28 request."""

_PYTHON_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO, "warning": logging.WARNING,
                  "error": logging.ERROR, "critical": logging.CRITICAL, "alert": logging.CRITICAL,
                  "emergency": logging.CRITICAL}

MAX_LOG_CHARS = 10_000
"""Characters of one server log message written; the rest is cut."""

_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""Control characters (tab excepted), line and paragraph separators, and bidi overrides."""


def printable(text: str) -> str:
    r"""``text`` with control characters escaped as Python writes them (``\n``, ``\x1b``,
    ``\u2028``), so a server's text can never start a log line of its own or rewrite a terminal.

        printable("done\n2026 ERROR forged")      # "done\\n2026 ERROR forged": one line
    """
    return _CONTROL.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


def check_log_level(value: Any, where: str = "log_level") -> str | None:
    """``value`` when it is one of `LOG_LEVELS` (or ``None``).

        check_log_level("warning")      # "warning"
        check_log_level("verbose")      # ValueError: log_level must be one of debug, info, ...

    Raises:
        ValueError: naming ``where`` (the setting) for anything else.
    """
    if value is None or (isinstance(value, str) and value in LOG_LEVELS):
        return value
    raise ValueError(f"{where} must be one of {', '.join(LOG_LEVELS)} (or None), not {value!r}")


def python_level(level: str) -> int:
    """The Python logging level a protocol level is written at (``notice`` -> INFO;
    ``critical``, ``alert`` and ``emergency`` -> CRITICAL); unknown levels -> INFO."""
    return _PYTHON_LEVELS.get(level, logging.INFO)


def wanted(level: Any, threshold: str | None) -> bool:
    """Whether a message at ``level`` is at or above ``threshold`` (never without a threshold)."""
    if threshold is None or level not in LOG_LEVELS:
        return False
    return LOG_LEVELS.index(level) >= LOG_LEVELS.index(threshold)


def write(logger: logging.Logger, params: dict[str, Any]) -> None:
    """Write one ``notifications/message`` params dict to ``logger``: ``data`` as the message
    (text as it is, other values as JSON, cut at `MAX_LOG_CHARS`, control characters
    escaped by `printable`); the server's own ``logger`` name, when it gives one, goes on
    the record as ``mcp_logger`` (escaped too)."""
    data = params.get("data")
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    if len(text) > MAX_LOG_CHARS:
        text = text[:MAX_LOG_CHARS] + " [cut]"
    name = params.get("logger")
    logger.log(python_level(str(params.get("level"))), "%s", printable(text),
               extra={"mcp_logger": printable(name[:200]) if isinstance(name, str) else None})
