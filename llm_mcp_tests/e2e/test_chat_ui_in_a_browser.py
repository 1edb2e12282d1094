"""The app's chat pages (``llm_mcp.urls``) in a real headless Chromium (marks ``browser`` and ``slow``).

The example site under ``manage.py runserver`` with the chat pages offering the test agent
(``support/chat_ui.py``: the chat-ui kit server over stdio) and a ``ScriptedModel`` standing in for
OpenAI. Each state is saved as a screenshot; with ``LLM_MCP_SCREENSHOTS=docs/img/chat-ui`` they go
into the docs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from llm_mcp.testing.scripted_model import ScriptedModel, reply, tool_call
from llm_mcp_tests.support.chat_ui import SETTINGS, create_user, send, sign_in
from llm_mcp_tests.support.processes import REPO_ROOT
from llm_mcp_tests.support.servers.chat_ui import chart_png

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(240)]

MARKDOWN = ("Here is **the plan**, in a table:\n\n| step | owner |\n| --- | --- |\n| build | Ada |\n| ship | Linus |\n\n"
            "Run `make test` first.")


def shot(page, tmp_path: Path, name: str) -> None:
    folder = os.environ.get("LLM_MCP_SCREENSHOTS")
    target = (REPO_ROOT / folder if folder else tmp_path) / f"{name}.png"
    target.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(target), full_page=True)


def test_chat_ui_stream_markdown_image_schema_question_and_owner(start_site, browser_page, tmp_path):
    """MCP-APPROVAL-01, MCP-APPROVAL-05, MCP-PERSIST-02, MCP-QUEST-22: sign in, start a chat with the scripted model, see the streamed reply rendered as markdown, a tool
    call card with the image result, approve a call whose arguments fail the schema only after the page
    says why, answer a question form (refused once on the server), and another user gets 404."""
    from playwright.sync_api import expect

    script = [reply(MARKDOWN),
              tool_call("chart", {"title": "Sales"}, id="call_chart"), reply("There is your chart."),
              tool_call("add", {"a": "two", "b": 2}, id="call_add"), reply("The server refused the sum."),
              tool_call("deploy", {"service": "web"}, id="call_deploy"), reply("Deployed.")]
    with ScriptedModel(script, chunk_size=3, chunk_delay=0.03) as model:
        site = start_site(DJANGO_SETTINGS_MODULE=SETTINGS, OPENAI_BASE_URL=model.openai_base_url,
                          OPENAI_API_KEY="test-key")
        create_user(site, "ada")
        create_user(site, "bob")
        page = browser_page
        sign_in(page, site, "ada")
        page.get_by_role("link", name="New chat").first.click()
        page.get_by_role("button", name="Start chat").click()
        expect(page.locator("h1")).to_contain_text("gpt-test")
        chat_url = page.url

        # a streamed reply: pieces arrive in a streaming bubble, then the saved row shows as markdown
        send(page, "What is the plan?", wait=False)
        expect(page.locator(".llm-mcp-message.is-streaming")).to_be_visible()
        reply_box = page.locator(".llm-mcp-message.role-assistant .llm-mcp-content.markdown").last
        expect(reply_box.locator("strong")).to_have_text("the plan")
        expect(reply_box.locator("table tr")).to_have_count(3)
        expect(reply_box.locator("code")).to_have_text("make test")
        assert "**" not in reply_box.inner_text()
        assert model.requests[0].stream  # the model was asked for a stream
        shot(page, tmp_path, "1-streamed-reply")

        # a tool call card; approved, its image result shows inline
        send(page, "Draw the sales chart")
        card = page.locator('.llm-mcp-call[data-call-id="call_chart"]')
        expect(card.locator(".llm-mcp-approval")).to_have_text("pending")
        expect(card.locator(".llm-mcp-checked")).to_be_visible()
        shot(page, tmp_path, "2-approval-pending")
        card.get_by_role("button", name="Approve").click()
        image = card.locator("img.llm-mcp-image")
        expect(image).to_be_visible()
        assert image.get_attribute("src").startswith("data:image/png;base64,")
        assert image.evaluate("img => [img.naturalWidth, img.naturalHeight]") == [48, 24]  # chart_png's size
        expect(card.locator(".llm-mcp-result-text")).to_have_text("Chart: Sales")
        expect(page.locator(".llm-mcp-content.markdown").last).to_have_text("There is your chart.")
        shot(page, tmp_path, "3-image-result")

        # arguments that fail the tool's schema: the page says why before the Approve button is used
        send(page, "Add two and 2")
        card = page.locator('.llm-mcp-call[data-call-id="call_add"]')
        problems = card.locator(".llm-mcp-problems")
        expect(problems).to_be_visible()
        expect(problems).to_contain_text("a: 'two' is not of type 'number'")
        shot(page, tmp_path, "4-schema-problem")
        card.get_by_role("button", name="Approve").click()
        expect(card.locator(".llm-mcp-result.is-error")).to_be_visible()
        expect(card.locator(".llm-mcp-error-label")).to_have_text("The tool reported an error")
        shot(page, tmp_path, "5-tool-error")

        # a question form from the server: a value the question refuses is refused on the server
        send(page, "Deploy web")
        card = page.locator('.llm-mcp-call[data-call-id="call_deploy"]')
        form = card.locator("form.llm-mcp-question-form")
        expect(card.locator(".llm-mcp-question-message")).to_contain_text("Where should the service go?")
        form.get_by_label("Environment").select_option("production")
        form.get_by_label("Replicas").fill("9")
        form.get_by_role("button", name="Answer").click()
        form = page.locator('.llm-mcp-call[data-call-id="call_deploy"] form.llm-mcp-question-form')
        expect(form.locator(".errorlist")).to_contain_text("between 1 and 5")
        shot(page, tmp_path, "6-question-refused")
        form.get_by_label("Replicas").fill("3")
        form.get_by_role("button", name="Answer").click()
        card = page.locator('.llm-mcp-call[data-call-id="call_deploy"]')
        expect(card.locator(".llm-mcp-result-text")).to_have_text("deployed web to production x3")
        expect(page.locator(".llm-mcp-content.markdown").last).to_have_text("Deployed.")
        shot(page, tmp_path, "7-question-answered")

        page.goto(site.url + "/mcp/chats/")
        expect(page.locator(".llm-mcp-chats tbody tr")).to_have_count(1)
        expect(page.locator(".llm-mcp-chats tbody tr td").first).to_have_text("What is the plan?")
        shot(page, tmp_path, "8-chat-list")

        # another user: 404 on the chat, and an empty list
        other = page.context.browser.new_context()
        try:
            bob = other.new_page()
            sign_in(bob, site, "bob")
            expect(bob.locator(".llm-mcp-chats")).to_have_count(0)
            response = bob.goto(chat_url)
            assert response.status == 404
        finally:
            other.close()
    assert chart_png()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Traceback" not in site.output()


def test_chat_ui_cancel_a_running_turn(start_site, browser_page, tmp_path):
    """A long reply streams; Cancel stops the turn at its next piece: the page says Cancelled, the
    partial reply is not saved, and Resume is offered."""
    from playwright.sync_api import expect

    long_reply = "word " * 600  # 600 pieces, 0.1 s apart: a minute of streaming, however slow the machine
    with ScriptedModel([reply(long_reply)], chunk_size=5, chunk_delay=0.1) as model:
        site = start_site(DJANGO_SETTINGS_MODULE=SETTINGS, OPENAI_BASE_URL=model.openai_base_url,
                          OPENAI_API_KEY="test-key")
        create_user(site, "ada")
        page = browser_page
        sign_in(page, site, "ada")
        page.goto(site.url + "/mcp/chats/new/")
        page.get_by_role("button", name="Start chat").click()
        send(page, "Tell me a long story", wait=False)
        # things that should happen get generous waits (a loaded machine is slow to start the stream)
        expect(page.locator(".llm-mcp-message.is-streaming")).to_be_visible(timeout=30_000)
        expect(page.locator(".llm-mcp-state")).to_have_attribute("data-state", "running", timeout=30_000)
        shot(page, tmp_path, "9-running")
        page.locator(".llm-mcp-state").get_by_role("button", name="Cancel").click()
        expect(page.locator(".llm-mcp-state")).to_have_attribute("data-state", "cancelled", timeout=30_000)
        expect(page.locator(".llm-mcp-state .llm-mcp-badge")).to_have_text("Cancelled", timeout=30_000)
        expect(page.get_by_role("button", name="Resume")).to_be_visible(timeout=30_000)
        expect(page.locator(".llm-mcp-message.role-assistant")).to_have_count(0)  # no partial reply saved
        shot(page, tmp_path, "10-cancelled")
        assert len(model.requests) == 1
    assert "Traceback" not in site.output()
