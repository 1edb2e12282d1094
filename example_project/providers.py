"""The example site's ``offline`` provider: a stand-in model for when no model key is set.

    register_provider("offline", OfflineProvider)      # done when this module is imported
    llm_mcp.chat(model="offline", provider="offline").ask("Hi").content   # OFFLINE_REPLY

It never calls a tool and never contacts anything: it answers every request with
:data:`OFFLINE_REPLY`. With it, the example site works without a model key: a person calls a
demo tool from the chat page ("Call a tool"), approves the call, and the chat's next model turn
(this provider) closes the turn with a short note under the tool's result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llm_mcp.chat import Message
from llm_mcp.chat.providers import ModelRequest, Provider, register_provider

__all__ = ["OFFLINE_MODEL", "OFFLINE_REPLY", "OfflineProvider"]

OFFLINE_MODEL = "offline"

OFFLINE_REPLY = ("No model is configured: set OPENAI_API_KEY, OPENAI_BASE_URL or ANTHROPIC_API_KEY and "
                 "restart the site to chat with one.")


class OfflineProvider(Provider):
    """A provider that answers every request with :data:`OFFLINE_REPLY` and no tool calls.

    It takes (and ignores) the options a provider gets (``base_url``, ``api_key``, ...), so a
    chat configured for another provider can be switched to it without changing its options."""

    name = "offline"

    def __init__(self, **options: Any):
        self.options = options

    def complete(self, request: ModelRequest, *, on_text: Callable[[str], None] | None = None) -> Message:
        if on_text is not None:
            on_text(OFFLINE_REPLY)
        return Message("assistant", OFFLINE_REPLY, model=request.model or OFFLINE_MODEL)


register_provider("offline", OfflineProvider)
