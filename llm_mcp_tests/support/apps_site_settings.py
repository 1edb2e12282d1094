"""Settings of the example site with the chat pages offering `apps.AppsAgent` (the apps kit server and
the echo server) and the MCP Apps sandbox on ``LLM_MCP_APPS_SANDBOX_ORIGIN`` (set by the test)."""

import os

from example_project.settings import *  # noqa: F401,F403
from example_project.settings import LLM_MCP

LLM_MCP["CHAT_AGENTS"] = [os.environ.get("LLM_MCP_TEST_AGENT", "llm_mcp_tests.support.apps.AppsAgent")]
LLM_MCP["APPS_SANDBOX_ORIGIN"] = os.environ["LLM_MCP_APPS_SANDBOX_ORIGIN"]
