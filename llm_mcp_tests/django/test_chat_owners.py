"""Chat owners and the checks on a chat row: ``Chat.user``, ``Agent.chat(owner=...)``, an agent's ``user``
input, and ``provider``/``model`` validated on save so a bad chat leaves no row (marker ``db``)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

import llm_mcp
from llm_mcp.models import Chat

from llm_mcp_tests.support.chat_ui import ChatUIAgent

pytestmark = [pytest.mark.db, pytest.mark.django_db]


class NoUserAgent(llm_mcp.Agent):
    chat_class = "llm_mcp.models.Chat"
    model = "gpt-test"
    provider = "openai"
    inputs = ["team"]


class BadProviderAgent(llm_mcp.Agent):
    chat_class = "llm_mcp.models.Chat"
    model = "gpt-test"
    provider = "no-such-provider"


class PlainAgent(llm_mcp.Agent):
    model = "gpt-test"


def test_agent_user_input_sets_the_owner():
    ada = get_user_model().objects.create_user("ada")
    record = ChatUIAgent.chat(user=ada)
    assert Chat.objects.get(pk=record.pk).user == ada
    assert ChatUIAgent.chat(user=None).user is None


def test_agent_chat_owner_argument():
    ada, bob = get_user_model().objects.create_user("ada"), get_user_model().objects.create_user("bob")
    assert Chat.objects.get(pk=NoUserAgent.chat(owner=bob, team="x").pk).user == bob
    assert Chat.objects.get(pk=ChatUIAgent.chat(user=ada, owner=bob).pk).user == bob  # owner= wins
    with pytest.raises(TypeError, match="owner must be a saved User"):
        NoUserAgent.chat(owner="bob")
    with pytest.raises(TypeError, match="needs a chat_class"):
        PlainAgent.chat(owner=ada)


def test_empty_model_and_unknown_provider_are_refused_on_save():
    with pytest.raises(ValidationError) as raised:
        Chat.objects.create(model="  ", provider="openai")
    assert "a chat needs a model id" in raised.value.message_dict["model"][0]
    with pytest.raises(ValidationError) as raised:
        Chat.objects.create(model="gpt-test", provider="opnai")
    message = raised.value.message_dict["provider"][0]
    assert "'opnai' is not a registered provider; known: anthropic, " in message and "openai" in message
    record = Chat.objects.create(model="gpt-test", provider="openai")
    record.provider = "nope"
    with pytest.raises(ValidationError):
        record.save()
    assert Chat.objects.get(pk=record.pk).provider == "openai" and Chat.objects.count() == 1


def test_an_agent_with_a_bad_provider_leaves_no_row():
    with pytest.raises(ValidationError, match="no-such-provider"):
        BadProviderAgent.chat()
    assert Chat.objects.count() == 0
