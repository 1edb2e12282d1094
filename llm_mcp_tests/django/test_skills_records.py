"""Skills in saved chats (``llm_mcp.models.Chat``): a loaded skill is part of the conversation, so a
chat loaded again (new row instance, new server object, new server connection) still has it and
reads its files; the chat page's view marks each turn with the skills it loaded. On SQLite and
PostgreSQL (marker ``db``).

Real parts: the skills kit server (``support/servers/skills.py``) over Streamable HTTP and stdio on
2026-07-28, the scripted model through the official OpenAI SDK, the database.
"""

from __future__ import annotations

import pytest

from llm_mcp.conversation import Conversation
from llm_mcp.testing.scripted_model import reply, tool_call
from llm_mcp_tests.support.records import record_on, reload
from llm_mcp_tests.support.skills import FORMS_READ, PDF_LOADED, skills_client

pytestmark = [pytest.mark.db, pytest.mark.django_db(transaction=True)]

PDF = "docs/pdf-processing"


def test_a_resumed_chat_still_has_its_skill_and_reads_its_files(skills_running, model):
    """A saved chat loads a skill; the row is loaded again as a new instance, with a new client of the
    server (a new connection; a new process for stdio). The skill is still loaded there: the model is
    sent its instructions again as part of the conversation, and read_skill_file reads a listed file
    without another load_skill."""
    record = record_on(model, tool_call("load_skill", {"skill": PDF}, id="c1"), reply("Skill loaded."))
    with skills_client(skills_running) as docs:
        assert record.with_mcp(docs).ask("Prepare to fill the form").content == "Skill loaded."
        record.with_mcp(None)

    model.add(tool_call("read_skill_file", {"skill": PDF, "path": "references/FORMS.md"}, id="c2"), reply("Done."))
    fresh = reload(record, model)
    assert fresh is not record
    with skills_client(skills_running) as docs:
        assert not any(s.loaded for s in docs.skills)  # nothing of the skill is held by the new objects
        assert fresh.with_mcp(docs).ask("Now fill it for Ada").content == "Done."
        fresh.with_mcp(None)

    tools = [m for m in fresh.messages if m.role == "tool"]
    assert [(m.content, m.is_error) for m in tools] == [(PDF_LOADED, False), (FORMS_READ, False)]
    sent = model.requests[2].messages  # the first request of the resumed turn
    assert any(m.get("role") == "tool" and m.get("content") == PDF_LOADED for m in sent)
    assert model.requests[3].messages[-1]["content"] == FORMS_READ


def test_a_skill_not_loaded_before_the_resume_is_still_refused(skills_running, model):
    """The conversation is what says a skill is loaded: after a resume, a file of a skill the chat never
    loaded is still a tool error."""
    record = record_on(model, reply("Hello."))
    with skills_client(skills_running) as docs:
        record.with_mcp(docs).ask("Hi")
        record.with_mcp(None)
    model.add(tool_call("read_skill_file", {"skill": PDF, "path": "references/FORMS.md"}, id="c1"), reply("No."))
    fresh = reload(record, model)
    with skills_client(skills_running) as docs:
        fresh.with_mcp(docs).ask("Read the forms")
        fresh.with_mcp(None)
    [tool] = [m for m in fresh.messages if m.role == "tool"]
    assert tool.is_error and f"load the skill {PDF!r} with load_skill first" in tool.content


def test_the_page_marks_each_turn_with_the_skills_it_loaded(skills_running, model):
    """``Conversation.of`` gives the last assistant message of a turn the ids of the skills its
    load_skill calls loaded: none for a turn that loaded none, not the skill whose load failed."""
    record = record_on(model, reply("Hi."),
                       tool_call("load_skill", {"skill": PDF}, id="c1"),
                       tool_call("load_skill", {"skill": "docs/wrong-size"}, id="c2"),
                       tool_call("load_skill", {"skill": "docs/reports/daily"}, id="c3"),
                       reply("Two skills loaded."))
    with skills_client(skills_running) as docs:
        record.with_mcp(docs).ask("Hello")
        record.ask("Load what you need")
        record.with_mcp(None)
    view = Conversation.of(record, check_arguments=False)
    marked = [(e["row"].role, e["row"].content, e.get("skills")) for e in view.entries if e["row"].role != "tool"]
    assert marked == [("user", "Hello", None), ("assistant", "Hi.", []),
                      ("user", "Load what you need", None),
                      ("assistant", "", None), ("assistant", "", None), ("assistant", "", None),
                      ("assistant", "Two skills loaded.", [PDF, "docs/reports/daily"])]
