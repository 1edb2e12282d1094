"""``llm_mcp.testing``: write a real MCP server for your tests in a few lines, and run it.

    from llm_mcp.testing import Server, Tool, running_server
    class Double(Tool):
        name = "double"; input_schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
        def call(self): return self.respond_with(content=self.text_content(text=str(2 * self.arguments["n"])))

See docs/how-to/testing.md. Importing this package needs neither Django nor ``mcp``;
building or serving a server needs ``mcp`` (``pip install 'django-llm-mcp[testing]'``).
"""

from __future__ import annotations

from typing import Any

from .content import (
    audio_content,
    embedded_resource_content,
    image_content,
    resource_contents,
    resource_link,
    text_content,
)
from .fixtures import RunningServer, running_server
from .prompts import Prompt
from .resources import Resource, ResourceTemplate
from .runtime import (
    LOG_LEVELS,
    CallChannel,
    ClientLogger,
    InvalidResult,
    OutputSchemaError,
    ToolCancelled,
    ToolError,
)
from .serve import ERAS
from .server import Server
from .skills import Skill
from .tasks import TaskFailed
from .tool import Tool

_SCRIPTED = ("RecordedRequest", "ScriptedModel", "ScriptedToolCall", "Turn", "api_error", "reply", "tool_call", "turn")
"""The scripted model's names (llm_mcp.testing.scripted_model), imported on first use."""

__all__ = [
    "ERAS",
    "LOG_LEVELS",
    "CallChannel",
    "ClientLogger",
    "InvalidResult",
    "OutputSchemaError",
    "Prompt",
    "Resource",
    "ResourceTemplate",
    "RunningServer",
    *_SCRIPTED,
    "Server",
    "Skill",
    "TaskFailed",
    "Tool",
    "ToolCancelled",
    "ToolError",
    "audio_content",
    "embedded_resource_content",
    "image_content",
    "resource_contents",
    "resource_link",
    "running_server",
    "text_content",
]


def __getattr__(name: str) -> Any:
    if name in _SCRIPTED:
        from . import scripted_model

        return getattr(scripted_model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
