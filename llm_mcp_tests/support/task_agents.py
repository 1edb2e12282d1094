"""An agent whose chats are records and whose server runs tools as tasks: what a Celery job (or
another process) sets up again to check a paused chat's tasks.

    record = TaskAgent.chat(url=running.url)       # the tasking kit server at that URL
"""

from __future__ import annotations

import os
from typing import Any

import llm_mcp

from llm_mcp_tests.support.chats import MODEL

__all__ = ["OddTaskAgent", "TaskAgent"]


class TaskAgent(llm_mcp.Agent):
    """Chats on the scripted model (``LLM_MCP_TEST_BASE_URL``) with the tasking kit server at
    the input ``url``, named ``reports``, the Tasks extension declared."""

    chat_class = "llm_mcp.models.Chat"
    model = MODEL
    inputs = ["url"]
    mcp = "servers"

    @property
    def provider_options(self) -> dict[str, Any]:  # type: ignore[override]
        return {"base_url": os.environ.get("LLM_MCP_TEST_BASE_URL", "http://127.0.0.1:9/v1"), "api_key": "test-key"}

    def servers(self) -> list[llm_mcp.MCP]:
        return [llm_mcp.mcp(name="reports", url=self.url, extensions=["tasks"], timeout=5)]


class OddTaskAgent(TaskAgent):
    """Like `TaskAgent`, with the stdio server whose ``tasks/get`` answers break the extension
    (input ``case``; see servers/odd_tasks.py), named ``odd``."""

    inputs = ["case"]

    def servers(self) -> list[llm_mcp.MCP]:
        from llm_mcp_tests.support.processes import odd_tasks_command

        return [llm_mcp.mcp(name="odd", command=odd_tasks_command(self.case), extensions=["tasks"], timeout=5)]
