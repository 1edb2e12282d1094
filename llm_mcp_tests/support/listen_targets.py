"""Server classes the ``mcp_listen`` tests name by dotted path (the command imports them).

``ChangingOverHTTP`` reaches the kit's changing server at ``$LLM_MCP_TEST_LISTEN_URL``;
``ChangingOverStdio`` starts it as its own child process.
"""

from __future__ import annotations

import os
import sys

import llm_mcp

from .processes import REPO_ROOT

__all__ = ["ChangingOverHTTP", "ChangingOverStdio"]

CHANGING = "llm_mcp_tests.support.servers.changing"


class ChangingOverHTTP(llm_mcp.MCP):
    name = "changing"
    url = "from_environment"

    def from_environment(self) -> str:
        return os.environ["LLM_MCP_TEST_LISTEN_URL"]


class ChangingOverStdio(llm_mcp.MCP):
    name = "changing"
    command = [sys.executable, "-m", CHANGING]
    directory = str(REPO_ROOT)
