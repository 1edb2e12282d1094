"""Chat records and credentials under bad or hostile input (found by a fresh user's review)."""

from __future__ import annotations

import logging
import pathlib

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

import llm_mcp
from llm_mcp import conf, tasks
from llm_mcp.models import Chat as ChatRecord
from llm_mcp.models import Credential
from llm_mcp.models import ToolCall as ToolCallRow
from llm_mcp.testing.scripted_model import ScriptedModel, reply, tool_call, turn

from llm_mcp_tests.support.chats import MODEL

pytestmark = [pytest.mark.db, pytest.mark.django_db(transaction=True)]


def on(model: ScriptedModel, record: ChatRecord) -> ChatRecord:
    record.provider_options = {"base_url": model.openai_base_url, "api_key": "k"}
    return record


class Plain(llm_mcp.Agent):
    chat_class = ChatRecord
    model = MODEL
    inputs = ["settings"]


class Other(llm_mcp.Agent):
    chat_class = ChatRecord
    model = MODEL


def test_a_row_never_names_just_any_callable(tmp_path):
    """``agent_class`` must be an llm_mcp.Agent: a row naming ``os.system`` runs nothing."""
    marker = tmp_path / "ran"
    row = ChatRecord.objects.create(model=MODEL, agent_class="os.system",
                                    agent_inputs={"command": {"$json": f"touch {marker}"}})
    with pytest.raises(TypeError, match="not an llm_mcp.Agent subclass"):
        ChatRecord.objects.get(pk=row.pk).chat  # noqa: B018
    assert not marker.exists()
    assert ChatRecord.objects.get(pk=row.pk).messages == []  # reading needs no agent


def test_call_ids_repeated_across_chats_and_within_a_reply(model):
    """Providers that reuse ids (``call_1`` in every chat, or twice in one reply) do not break
    storage: ids are unique per message, and the chat renames a repeat within a conversation."""
    def noop() -> str:
        """Do nothing."""
        return "done"

    answers = []
    for _ in range(2):  # two chats, the same call id
        model.add(tool_call("noop", {}, id="call_1"), reply("ok"))
        answers.append(on(model, ChatRecord.objects.create(model=MODEL)).with_tools(noop).ask("go").content)
    assert answers == ["ok", "ok"]
    model.add(turn(tool_calls=[tool_call("noop", {}, id="same"), tool_call("noop", {}, id="same")]), reply("both"))
    record = on(model, ChatRecord.objects.create(model=MODEL)).with_tools(noop)
    assert record.ask("twice").content == "both"
    ids = list(ToolCallRow.objects.filter(message__chat=record).values_list("tool_call_id", flat=True))
    assert ids[0] == "same" and ids[1] != "same" and ids[1].startswith("call_")
    assert [r["tool_call_id"] for r in model.requests[-1].tool_results] == ids
    model.add(tool_call("noop", {}, id="same"), reply("again"))  # an id used in an earlier turn
    assert record.ask("once more").content == "again"
    assert all(len(m.tool_calls) == 0 or m.tool_calls[0].id != "same" for m in record.messages[-3:])


def test_long_names_and_ids_from_the_model_are_stored(model):
    """A hallucinated 300-character tool name or call id is answered, not a database error."""
    model.add(tool_call("x" * 300, {}, id="c" * 300), reply("sorry"))
    record = on(model, ChatRecord.objects.create(model=MODEL))
    assert record.ask("go").content == "sorry"
    call = ToolCallRow.objects.get(message__chat=record)
    assert call.name == "x" * 300 and len(call.tool_call_id) <= 200
    assert call.result.content.startswith("There is no tool named")


def test_dict_inputs_round_trip_even_when_they_look_like_references(model):
    """A plain dict input shaped like a model reference stays a dict."""
    User.objects.create(username="alice")
    record = Plain.chat(settings={"$model": "auth.user", "pk": 1})
    assert Plain.find(record.pk).chat.agent.settings == {"$model": "auth.user", "pk": 1}
    with pytest.raises(TypeError, match="input 'settings' cannot be stored"):
        Plain.chat(settings={"who": User.objects.get()})  # a model inside a dict


def test_find_refuses_a_chat_of_another_agent():
    record = Other.chat()
    with pytest.raises(ValueError, match="was set up by .*Other, not .*Plain"):
        Plain.find(record.pk)


def test_local_agents_warn_and_their_chats_stay_readable(caplog):
    """An agent defined in a function cannot be imported by a job: creating its chat warns,
    and a process without it can still read the messages."""
    class Local(llm_mcp.Agent):
        chat_class = ChatRecord
        model = MODEL

    with caplog.at_level(logging.WARNING, logger="llm_mcp.records"):
        record = Local.chat()
    assert "no other process can import it" in caplog.text
    fresh = ChatRecord.objects.get(pk=record.pk)
    assert fresh.messages == [] and fresh.waiting is False and fresh.pending_approvals == []
    with pytest.raises(ImportError, match="cannot be imported here"):
        fresh.chat  # noqa: B018


def test_a_failed_agent_declaration_saves_no_row():
    class BadServers(llm_mcp.Agent):
        chat_class = ChatRecord
        model = MODEL
        mcp = ["not a server"]

    before = ChatRecord.objects.count()
    with pytest.raises(TypeError, match="with_mcp"):
        BadServers.chat()
    assert ChatRecord.objects.count() == before


def test_unsaved_chats_keys_and_empty_resumes(model):
    with pytest.raises(ValueError, match="save the Chat first"):
        ChatRecord(model=MODEL).ask("hi")
    record = on(model, ChatRecord.objects.create(model=MODEL))
    with pytest.raises(ValueError, match="1 to 255"):
        record.ask("hi", key="k" * 300)
    model.add(reply("hello"))
    record.ask("hi", key="job-7")
    with pytest.raises(ValueError, match="another text"):
        record.ask("something else", key="job-7")
    empty = ChatRecord.objects.create(model=MODEL)
    assert tasks.resume_chat.apply(args=(empty.pk,)).get() == "empty"


def test_credential_errors_name_the_problem(settings):
    with pytest.raises(TypeError, match="owner must be a saved model instance"):
        Credential.objects.write("k:1", {"a": 1}, owner="alice")
    with pytest.raises(TypeError, match="credentials for 'k:1' cannot be stored"):
        Credential.objects.write("k:1", {"when": pathlib.Path("/")})
    Credential.objects.write("k:2", {"access_token": "tok"})
    settings.SALT_KEY = "another-salt"  # the keys changed, with no fallback
    Credential._meta.get_field("secret").__dict__.pop("keys", None)
    Credential._meta.get_field("secret").__dict__.pop("f", None)
    try:
        with pytest.raises(ValueError, match="cannot be decrypted with the current SECRET_KEY"):
            Credential.objects.read("k:2")
        del settings.SALT_KEY
        with pytest.raises(ImproperlyConfigured, match="SALT_KEY is not set"):
            Credential.objects.read("k:2")
    finally:
        Credential._meta.get_field("secret").__dict__.pop("keys", None)
        Credential._meta.get_field("secret").__dict__.pop("f", None)


def test_setting_values_are_checked(settings):
    settings.LLM_MCP = {"TURN_LOCK_TIMEOUT": "ten", "PROVIDER_OPTIONS": "openai"}
    with pytest.raises(ImproperlyConfigured, match=r"LLM_MCP\['TURN_LOCK_TIMEOUT'\] must be a positive number"):
        conf.get("TURN_LOCK_TIMEOUT")
    from llm_mcp.apps import check_settings

    found = check_settings()
    assert [p.id for p in found] == ["llm_mcp.E002", "llm_mcp.E002"]
    assert "PROVIDER_OPTIONS" in found[1].msg or "PROVIDER_OPTIONS" in found[0].msg
    settings.LLM_MCP = ["PROVIDER_OPTIONS"]
    assert [p.msg for p in check_settings()] == ["settings.LLM_MCP must be a dict, not list"]
    settings.SALT_KEY = 42
    assert any("SALT_KEY must be a non-empty string" in p.msg for p in check_settings())


def test_admin_never_edits_the_agent_of_a_chat(admin_client):
    record = Other.chat()
    page = admin_client.get(f"/admin/llm_mcp/chat/{record.pk}/change/").content.decode()
    assert 'name="agent_class"' not in page and 'name="agent_inputs"' not in page
    assert "Other" in page  # shown, read-only
    assert connection.vendor in ("sqlite", "postgresql")


def test_what_json_columns_cannot_hold_is_stored_safely(model):
    """Unpaired surrogates and NaN, from a model or a server, do not fail the turn: arguments
    that hold them reach the model as malformed (a tool error), text keeps U+FFFD."""
    def echo(message: str) -> str:
        """Echo."""
        return message

    model.add(tool_call("echo", raw_arguments='{"message": NaN}', id="call_nan"), reply("bad \ud800 text"))
    record = on(model, ChatRecord.objects.create(model=MODEL)).with_tools(echo)
    assert record.ask("go").content == "bad \ufffd text"
    call = ToolCallRow.objects.get(message__chat=record)
    assert call.arguments == {"_raw_arguments": '{"message": NaN}'}
    assert call.result.is_error and "not a JSON object" in call.result.content
