"""The real example site in a real headless Chromium (marks ``browser`` and ``slow``): its own agent
(``DemoAgent``, the demo server) on the app's chat pages, signed in through the site's login page.

``manage.py migrate`` and ``manage.py runserver`` in a subprocess on a temporary SQLite database (the
path ``make run`` takes), with a ``ScriptedModel`` standing in for OpenAI through
``OPENAI_BASE_URL``/``OPENAI_API_KEY``, and without any model key (``llm_mcp_tests/support/site.py``).
The views behind it, through Django's test client, are tested in ``django/test_example_site.py``.
"""

from __future__ import annotations

import json
import re

import pytest

from example_project.providers import OFFLINE_REPLY
from llm_mcp.testing.scripted_model import ScriptedModel, reply, tool_call
from llm_mcp_tests.support.chat_ui import PASSWORD, create_user


def sign_in_and_start_a_chat(page, site) -> None:
    """From ``/``: the login page (anonymous), then the chat list, New chat, Start chat."""
    from playwright.sync_api import expect

    page.goto(site.url + "/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/mcp/chats/"))
    page.get_by_label("Username").fill("ada")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(r"/mcp/chats/$"))
    expect(page.locator("header")).to_contain_text("llm_mcp example")  # the site's override of base.html
    page.get_by_role("link", name="New chat").first.click()
    expect(page.get_by_text("DemoAgent")).to_be_visible()
    page.get_by_role("button", name="Start chat").click()
    expect(page).to_have_url(re.compile(r"/mcp/chats/\d+/$"))


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_site_with_a_model_tool_call_approve_result(start_site, browser_page):
    """MCP-APPROVAL-02, MCP-APPROVAL-05, MCP-PERSIST-02, MCP-PERSIST-03: in a real browser on the
    real site, a signed-in user's chat asks the (scripted) model, which calls the demo server's
    ``echo``; the call shows as pending with its arguments; Approve runs it and the page shows the
    demo tool's result and the model's final answer."""
    from playwright.sync_api import expect

    message = "Hello from Chromium 4711"
    with ScriptedModel([tool_call("echo", {"message": message}, id="call_site_1"),
                        reply("The demo server echoed your message.")]) as model:
        site = start_site(OPENAI_BASE_URL=model.openai_base_url, OPENAI_API_KEY="test-key",
                          LLM_MCP_EXAMPLE_MODEL="gpt-test")
        create_user(site, "ada")
        page = browser_page
        sign_in_and_start_a_chat(page, site)
        expect(page.locator("h1")).to_contain_text("gpt-test")
        page.get_by_label("Message", exact=True).fill("Please echo my greeting")
        page.get_by_role("button", name="Send").click()

        call = page.locator('.llm-mcp-call[data-call-id="call_site_1"]')
        expect(call.locator(".llm-mcp-tool-name")).to_have_text("echo", timeout=30_000)  # the demo server starts
        expect(call.locator(".llm-mcp-approval")).to_have_text("pending")
        assert json.loads(call.locator(".llm-mcp-arguments pre").text_content()) == {"message": message}
        expect(call.locator(".llm-mcp-result")).to_have_count(0)
        assert len(model.requests) == 1 and "echo" in model.requests[0].tool_names

        call.get_by_role("button", name="Approve").click()
        call = page.locator('.llm-mcp-call[data-call-id="call_site_1"]')
        expect(call.locator(".llm-mcp-approval")).to_have_text("approved")
        expect(call.locator(".llm-mcp-result-text")).to_have_text(message, timeout=30_000)  # echo returns the message unchanged
        expect(page.locator(".llm-mcp-message.role-assistant .llm-mcp-content").last).to_have_text(
            "The demo server echoed your message.")
        expect(page.get_by_text("Approved echo.")).to_be_visible()
        assert model.requests[1].tool_results[0]["tool_call_id"] == "call_site_1"
        assert model.requests[1].tool_results[0]["content"] == message
    assert "Traceback" not in site.output()


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_site_without_a_model_key_answers_offline(start_site, browser_page):
    """With no model key, the site's chats use the offline stand-in: signed in, New chat, a message
    is answered with its fixed note (streamed to the page), and no tool is called."""
    from playwright.sync_api import expect

    site = start_site()
    create_user(site, "ada")
    page = browser_page
    sign_in_and_start_a_chat(page, site)
    expect(page.locator("h1")).to_contain_text("offline")
    page.get_by_label("Message", exact=True).fill("Add 2 and 40")
    page.get_by_role("button", name="Send").click()
    expect(page.locator(".llm-mcp-message.role-assistant .llm-mcp-content").last).to_have_text(OFFLINE_REPLY,
                                                                                             timeout=30_000)
    expect(page.locator(".llm-mcp-message.role-user .llm-mcp-content").last).to_have_text("Add 2 and 40")
    expect(page.locator(".llm-mcp-call")).to_have_count(0)
    page.reload()  # saved, not only streamed
    expect(page.locator(".llm-mcp-message.role-assistant .llm-mcp-content").last).to_have_text(OFFLINE_REPLY)
    assert "Traceback" not in site.output()
