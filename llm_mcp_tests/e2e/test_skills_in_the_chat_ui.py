"""The chat page shows which skills a turn loaded, in a real headless Chromium (marks ``browser`` and
``slow``).

The example site under ``manage.py runserver`` offering ``SkillsUIAgent`` (the skills kit server
over stdio, ``support/chat_ui.py``) and a ``ScriptedModel`` standing in for OpenAI. Screenshots go
to ``tmp_path``, or with ``LLM_MCP_SCREENSHOTS=docs/img/chat-ui`` into the docs.
"""

from __future__ import annotations

import re

import pytest

from llm_mcp.testing.scripted_model import ScriptedModel, reply, tool_call
from llm_mcp_tests.support.chat_ui import PASSWORD, SKILLS_SETTINGS, create_user
from llm_mcp_tests.support.servers import skills as kit
from llm_mcp_tests.support.site import shot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(240)]


def send(page, text: str) -> None:
    from playwright.sync_api import expect

    page.get_by_label("Message", exact=True).fill(text)
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#llm-mcp-composer[data-busy]")).to_have_count(0, timeout=30_000)


def test_the_page_shows_the_skills_a_turn_loaded(start_site, browser_page, tmp_path):
    """A turn that loads docs/pdf-processing and reads a file of it is marked "Skills loaded this turn:
    docs/pdf-processing" under its answer; a turn that loads no skill has no such line; a turn whose
    skill file is tampered with shows the tool error on its card and names the skill it loaded."""
    from playwright.sync_api import expect

    script = [tool_call("load_skill", {"skill": "docs/pdf-processing"}, id="c1"),
              tool_call("read_skill_file", {"skill": "docs/pdf-processing", "path": "references/FORMS.md"}, id="c2"),
              reply("The form needs a name, a date and a signature."),
              reply("You are welcome."),
              tool_call("load_skill", {"skill": "docs/tampered"}, id="c3"),
              tool_call("read_skill_file", {"skill": "docs/tampered", "path": "notes.md"}, id="c4"),
              reply("The refund notes did not verify, so I will not use them.")]
    with ScriptedModel(script) as model:
        site = start_site(DJANGO_SETTINGS_MODULE=SKILLS_SETTINGS, OPENAI_BASE_URL=model.openai_base_url,
                          OPENAI_API_KEY="test-key")
        create_user(site, "ada")
        page = browser_page
        page.goto(site.url + "/mcp/chats/")
        page.get_by_label("Username").fill("ada")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        expect(page).to_have_url(re.compile(r"/mcp/chats/$"))
        page.get_by_role("link", name="New chat").first.click()
        page.get_by_role("button", name="Start chat").click()

        send(page, "What does the PDF form need?")
        answer = page.locator(".llm-mcp-message.role-assistant").filter(has_text="The form needs a name")
        expect(answer.locator(".llm-mcp-skills")).to_have_text("Skills loaded this turn: docs/pdf-processing")
        expect(page.locator(".llm-mcp-skill")).to_have_count(1)
        forms = page.locator('.llm-mcp-call[data-call-id="c2"]')
        expect(forms.locator(".llm-mcp-result-text")).to_contain_text(kit.FORMS.strip())

        send(page, "Thanks")
        thanks = page.locator(".llm-mcp-message.role-assistant").filter(has_text="You are welcome.")
        expect(thanks.locator(".llm-mcp-skills")).to_have_count(0)

        send(page, "What is the refund limit?")
        tampered = page.locator('.llm-mcp-call[data-call-id="c4"]')
        expect(tampered.locator(".llm-mcp-result.is-error")).to_be_visible()
        expect(tampered).to_contain_text("the sha256 digest of skill://tampered/notes.md differs from its entry")
        expect(tampered).not_to_contain_text("99 EUR")
        last = page.locator(".llm-mcp-message.role-assistant").filter(has_text="did not verify")
        expect(last.locator(".llm-mcp-skill")).to_have_text(["docs/tampered"])
        expect(page.locator(".llm-mcp-skill")).to_have_count(2)
        shot(page, tmp_path, "skills-loaded")
        print("screenshot:", tmp_path / "skills-loaded.png")
