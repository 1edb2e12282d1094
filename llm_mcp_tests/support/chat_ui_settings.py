"""Settings of the example site with the chat pages offering the test agent (`chat_ui.ChatUIAgent`)."""

from example_project.settings import *  # noqa: F401,F403
from example_project.settings import LLM_MCP

LLM_MCP["CHAT_AGENTS"] = ["llm_mcp_tests.support.chat_ui.ChatUIAgent"]

import os  # noqa: E402

# "celery": the chat page's messages run as jobs of a worker (tests set it with the environment)
LLM_MCP["CHAT_RUN_TURNS"] = os.environ.get("LLM_MCP_CHAT_RUN_TURNS", "request")
