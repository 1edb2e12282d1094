"""A server's sampling request approved or declined on the chat page, in a real headless Chromium
(marks ``browser`` and ``slow``).

The chat-ui kit server's ``summarize`` asks for sampling with a 2026-07-28 input request; its server
class has ``sampling = True`` and ``requires_approval`` naming ``"sampling"``, so the turn (running in
the page's request) holds the request for a person. The page shows what the server asked (its system
prompt, its message and maxTokens) with Approve and Decline; the admin's tool call page shows the same.
"""

from __future__ import annotations

import pytest

from llm_mcp.testing.scripted_model import ScriptedModel, reply, tool_call
from llm_mcp_tests.support.chat_ui import PASSWORD, SETTINGS, create_user, send, sign_in
from llm_mcp_tests.support.servers.chat_ui import SUMMARY_SYSTEM
from llm_mcp_tests.support.site import shot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(240)]

NOTES = "Version 2.2 adds <b>dark mode</b> & fixes the login loop."


def test_sampling_request_shown_approved_and_declined_on_the_chat_page(start_site, browser_page, tmp_path):
    """the held sampling request shows the server's system prompt, its message (markup shown as
    text) and maxTokens; Approve runs it on the chat's model and the server's result says what the model wrote;
    a second request declined never reaches the model, and the chat's model is told. The admin's tool call page
    shows the request while it waits."""
    from playwright.sync_api import expect

    script = [tool_call("summarize", {"text": NOTES}, id="call_sum1"), reply("Dark mode and a login fix."),
              reply("Summarized."),
              tool_call("summarize", {"text": "Secret roadmap"}, id="call_sum2"), reply("The summary was refused.")]
    with ScriptedModel(script) as model:
        site = start_site(DJANGO_SETTINGS_MODULE=SETTINGS, OPENAI_BASE_URL=model.openai_base_url,
                          OPENAI_API_KEY="test-key")
        create_user(site, "ada", superuser=True)
        page = browser_page
        sign_in(page, site, "ada")
        page.goto(site.url + "/mcp/chats/new/")
        page.get_by_role("button", name="Start chat").click()
        chat_url = page.url

        send(page, "Summarize the release notes", wait=False)
        card = page.locator('.llm-mcp-call[data-call-id="call_sum1"]')
        request = card.locator(".llm-mcp-sampling")
        expect(request).to_be_visible(timeout=30_000)
        expect(request.locator(".llm-mcp-question-message")).to_contain_text("ui asks to run a model completion")
        expect(request.locator(".llm-mcp-sampling-system")).to_have_text(SUMMARY_SYSTEM)
        expect(request.locator(".llm-mcp-sampling-max-tokens")).to_have_text("60 tokens")
        message = request.locator(".llm-mcp-sampling-message")
        expect(message).to_have_count(1)
        expect(message.locator(".llm-mcp-sampling-role")).to_have_text("user")
        expect(message.locator(".llm-mcp-sampling-text")).to_have_text(f"Summarize: {NOTES}")
        assert request.locator("b").count() == 0  # the server's markup is text, not HTML
        assert len(model.requests) == 1  # nothing was sampled before the approval
        shot(page, tmp_path, "sampling-1-waiting")

        other = page.context.browser.new_context()
        admin = other.new_page()
        admin.goto(f"{site.url}/admin/login/?next=/admin/llm_mcp/toolcall/")
        admin.get_by_label("Username").fill("ada")
        admin.get_by_label("Password").fill(PASSWORD)
        admin.get_by_role("button", name="Log in").click()
        admin.locator("#result_list tbody tr th a").first.click()  # the newest call: summarize's
        shown = admin.locator(".field-sampling_requests")
        expect(shown.locator(".llm-mcp-sampling-system")).to_have_text(SUMMARY_SYSTEM)
        expect(shown.locator(".llm-mcp-sampling-text")).to_have_text(f"Summarize: {NOTES}")
        expect(shown.locator(".llm-mcp-sampling-max-tokens")).to_have_text("60 tokens")
        shot(admin, tmp_path, "sampling-2-admin")
        other.close()

        request.get_by_role("button", name="Approve").click()
        page.goto(chat_url)
        card = page.locator('.llm-mcp-call[data-call-id="call_sum1"]')
        expect(card.locator(".llm-mcp-result-text")).to_have_text("summary: Dark mode and a login fix.",
                                                                   timeout=30_000)
        expect(page.locator(".llm-mcp-content.markdown").last).to_have_text("Summarized.", timeout=30_000)
        sampled = model.requests[1]
        assert sampled.system == SUMMARY_SYSTEM and sampled.last_user_text == f"Summarize: {NOTES}"
        assert sampled.body["max_tokens"] == 60 and sampled.tools == []
        assert "Summarize the release notes" not in str(sampled.messages)  # no chat history
        shot(page, tmp_path, "sampling-3-approved")

        send(page, "Summarize the roadmap", wait=False)
        card = page.locator('.llm-mcp-call[data-call-id="call_sum2"]')
        expect(card.locator(".llm-mcp-sampling")).to_be_visible(timeout=30_000)
        card.locator(".llm-mcp-sampling").get_by_role("button", name="Decline").click()
        page.goto(chat_url)
        card = page.locator('.llm-mcp-call[data-call-id="call_sum2"]')
        expect(card.locator(".llm-mcp-result")).to_contain_text("did not approve the sampling request",
                                                                timeout=30_000)
        expect(page.locator(".llm-mcp-content.markdown").last).to_have_text("The summary was refused.",
                                                                            timeout=30_000)
        shot(page, tmp_path, "sampling-4-declined")
        assert len(model.requests) == 5  # the declined request never reached the model
        assert "did not approve the sampling request" in model.requests[-1].tool_results[-1]["content"]
    assert "Traceback" not in site.output()
    assert PASSWORD not in site.output()

