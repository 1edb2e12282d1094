"""Server classes the ``mcp_listen`` tests name by dotted path (the command imports them).

``ChangingOverHTTP`` reaches the kit's changing server at ``$LLM_MCP_TEST_LISTEN_URL``;
``ChangingOverStdio`` starts it as its own child process. ``ReportsOverHTTP`` is the
tasking server at ``$LLM_MCP_TEST_LISTEN_URL`` as the task agents' chats name it (``reports``,
Tasks extension declared), for ``mcp_listen --tasks``.
"""

from __future__ import annotations

import os
import sys

import llm_mcp

from .processes import REPO_ROOT

__all__ = ["ChangingOverHTTP", "ChangingOverStdio", "NeedsArguments", "ReportsOverHTTP"]

CHANGING = "llm_mcp_tests.support.servers.changing"


class ChangingOverHTTP(llm_mcp.MCP):
    name = "changing"
    url = "from_environment"

    def from_environment(self) -> str:
        return os.environ["LLM_MCP_TEST_LISTEN_URL"]


class ReportsOverHTTP(llm_mcp.MCP):
    name = "reports"
    url = "from_environment"
    extensions = ["tasks"]
    timeout = 10

    def from_environment(self) -> str:
        return os.environ["LLM_MCP_TEST_LISTEN_URL"]


class ChangingOverStdio(llm_mcp.MCP):
    name = "changing"
    command = [sys.executable, "-m", CHANGING]
    directory = str(REPO_ROOT)


class NeedsArguments(llm_mcp.MCP):
    """A server class a command cannot build: its constructor wants an argument."""

    name = "needs_arguments"
    url = "http://127.0.0.1:9/mcp"

    def __init__(self, token: str):
        super().__init__()
        self.token = token
