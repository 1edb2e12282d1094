"""Settings of the example site with the chat pages offering the skills test agent (`chat_ui.SkillsUIAgent`)."""

from llm_mcp_tests.support.chat_ui_settings import *  # noqa: F401,F403
from llm_mcp_tests.support.chat_ui_settings import LLM_MCP

LLM_MCP["CHAT_AGENTS"] = ["llm_mcp_tests.support.chat_ui.SkillsUIAgent"]
