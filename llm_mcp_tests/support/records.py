"""Chat records for the Django tests: a saved chat on the scripted model, and the same row loaded
again as another process would (both point the row's provider at the scripted model); two agents
whose chats are records."""

from __future__ import annotations

import llm_mcp
from llm_mcp.models import Chat as ChatRecord
from llm_mcp.testing.scripted_model import ScriptedModel

from llm_mcp_tests.support.chats import MODEL


def record_on(model: ScriptedModel, *script, **fields) -> ChatRecord:
    """A saved chat on the scripted model, with ``script`` queued."""
    model.add(*script)
    record = ChatRecord.objects.create(model=MODEL, provider="openai", **fields)
    record.provider_options = {"base_url": model.openai_base_url, "api_key": "test-key"}
    return record


def reload(record: ChatRecord, model: ScriptedModel) -> ChatRecord:
    """The same row as a new instance, as another process would load it."""
    fresh = ChatRecord.objects.get(pk=record.pk)
    fresh.provider_options = {"base_url": model.openai_base_url, "api_key": "test-key"}
    return fresh


class Plain(llm_mcp.Agent):
    """An agent of chat records with one input, ``settings``."""

    chat_class = ChatRecord
    model = MODEL
    inputs = ["settings"]


class Other(llm_mcp.Agent):
    """Another agent of chat records (a chat of Other is not found through Plain)."""

    chat_class = ChatRecord
    model = MODEL
