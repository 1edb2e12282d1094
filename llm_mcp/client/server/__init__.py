"""The servers an app connects to: [`MCP`][llm_mcp.MCP], [`mcp`][llm_mcp.mcp], [`Servers`][llm_mcp.Servers].

``MCP`` is a thin facade over collaborators with one concern each:

    settings.py    the one table of settings (name, default, check, doc, when evaluated)
    connection.py  headers, the stdio process, the protocol client (built on first use)
    catalog.py     tools, resources, resource templates, prompts: listed once, kept, forgotten
    calls.py       tools/call: the call context, progress, question rounds, the -32020 retry
    questions.py   the server's questions: screening, before_input_request, rounds of answers
    auth.py        the oauth setting and the OAuth flow
    servers.py     Servers, by name
    base.py        MCP and mcp()
"""

from __future__ import annotations

from .base import MCP, mcp
from .connection import DEFAULT_TIMEOUT
from .servers import Servers
from .settings import SETTINGS, check_url, settings_reference

__all__ = ["DEFAULT_TIMEOUT", "MCP", "SETTINGS", "Servers", "check_url", "mcp", "settings_reference"]
