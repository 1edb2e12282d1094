"""A loaded skill survives the process: one process's chat loads a skill from the skills kit server
(stdio, 2026-07-28); another process, with its own server process, continues the saved chat and
reads a file of the skill without loading it again (marks ``slow``, ``db``).

Real parts: separate Python processes (``support/steps.py``) on one migrated database, the skills
kit server started by each of them, the scripted model through the official OpenAI SDK.
"""

from __future__ import annotations

import pytest

from llm_mcp.testing.scripted_model import ScriptedModel, reply, tool_call
from llm_mcp_tests.support.skills import FORMS_READ, PDF_LOADED
from llm_mcp_tests.support.workers import step

pytestmark = [pytest.mark.slow, pytest.mark.db]


def test_a_skill_loaded_in_one_process_is_read_in_another(shared_db):
    """The first process loads docs/pdf-processing; the second continues the chat, reads
    references/FORMS.md (verified against the entry it lists afresh) and the model gets the file."""
    with ScriptedModel() as model:
        env = {**shared_db, "LLM_MCP_TEST_BASE_URL": model.openai_base_url}
        model.add(tool_call("load_skill", {"skill": "docs/pdf-processing"}, id="c1"), reply("Loaded."))
        first = step(env, "skills-chat", "Get ready to fill forms").json
        assert first["content"] == "Loaded."

        model.add(tool_call("read_skill_file", {"skill": "docs/pdf-processing", "path": "references/FORMS.md"},
                            id="c2"), reply("Filled."))
        assert step(env, "ask", str(first["chat"]), "Fill it for Ada").json["content"] == "Filled."
        dumped = step(env, "dump", str(first["chat"])).json
    assert [(c["name"], c["result"]) for c in dumped["calls"]] == [
        ("load_skill", PDF_LOADED), ("read_skill_file", FORMS_READ)]
    assert not any(m["is_error"] for m in dumped["messages"])
    assert model.requests[3].messages[-1]["content"] == FORMS_READ
