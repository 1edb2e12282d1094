"""The example site's agent: every chat of the site has the demo MCP server connected.

    record = new_chat()                         # a saved llm_mcp.models.Chat, demo server connected
    record.ask("Add 2 and 40")                  # the model calls demo's `add`; the call waits
    DemoAgent.find(record.pk)                   # what a Celery job gets back: the same setup

The agent's path is stored in each chat row (``agent_class``), so a job that loads the chat
by its primary key (``llm_mcp.tasks.resume_chat``) sets it up again, demo server included.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

import llm_mcp

from . import providers
from .demo import DemoServer

__all__ = ["DemoAgent", "SiteDemoServer", "model_choices", "new_chat"]

INSTRUCTIONS = (
    "You are the assistant of the llm_mcp example site. The `demo` MCP server is connected: use its "
    "tools (echo, add, now, roll_dice) when they help. Each call waits for the user's approval on the "
    "chat page, so say briefly what you are about to do. Keep answers short."
)


class SiteDemoServer(DemoServer):
    """The demo server as the site connects it: every tool call waits for a person's approval
    (MCP-APPROVAL-02), so the approve/decline flow is visible on the chat page."""

    requires_approval = True


def model_choices() -> list[dict[str, str]]:
    """The configured models (``settings.EXAMPLE_MODELS``), each ``{"provider", "model"}``;
    the first one is the default."""
    return list(getattr(settings, "EXAMPLE_MODELS", None) or [{"provider": "offline", "model": "offline"}])


class DemoAgent(llm_mcp.Agent):
    """Chats of the example site, saved as ``llm_mcp.models.Chat`` rows (MCP-PERSIST-02)."""

    chat_class = "llm_mcp.models.Chat"
    # the first configured model; new_chat() may choose another per chat
    model = model_choices()[0]["model"]
    provider = model_choices()[0]["provider"]
    inputs = ["user"]  # the chat pages pass the signed-in user: the chat is theirs
    instructions = INSTRUCTIONS
    mcp = [SiteDemoServer]


def new_chat(provider: str | None = None, model: str | None = None, *, user: Any = None) -> Any:
    """A new saved chat of :class:`DemoAgent` on a configured model (the default one unless
    ``provider``/``model`` name another), owned by ``user`` (the chat pages create theirs with the
    signed-in user). Raises ``ValueError`` for a model that is not configured. Contacts no server
    and no model."""
    choices = model_choices()
    if provider is None and model is None:
        choice = choices[0]
    else:
        matching = [c for c in choices if c["provider"] == provider and (model is None or c["model"] == model)]
        if not matching:
            known = ", ".join(f"{c['provider']}:{c['model']}" for c in choices)
            asked = f"{provider}:{model}" if model else provider
            raise ValueError(f"{asked!r} is not a configured model (configured: {known})")
        choice = matching[0]
    record = DemoAgent.chat(user=user) if user is not None else DemoAgent.chat()
    record.model, record.provider = choice["model"], choice["provider"]
    record.save(update_fields=["model", "provider"])
    return record
