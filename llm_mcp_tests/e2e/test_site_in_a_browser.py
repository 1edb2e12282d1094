"""The real example site in a real headless Chromium (marks ``browser`` and ``slow``).

``manage.py migrate`` and ``manage.py runserver`` in a subprocess on a temporary SQLite database (the
path ``make run`` takes), with a ``ScriptedModel`` standing in for OpenAI through
``OPENAI_BASE_URL``/``OPENAI_API_KEY``, and without any model key (``llm_mcp_tests/support/site.py``).
The views behind it, through Django's test client, are tested in ``django/test_example_site.py``.
"""

from __future__ import annotations

import json

import pytest

from example_project.providers import OFFLINE_REPLY
from llm_mcp.testing.scripted_model import ScriptedModel, reply, tool_call


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_site_with_a_model_tool_call_approve_result(start_site, browser_page):
    """MCP-APPROVAL-02, MCP-APPROVAL-05, MCP-PERSIST-02, MCP-PERSIST-03: in a real browser on the
    real site, a chat asks the (scripted) model, which calls the demo server's ``echo``; the call
    shows as pending with its arguments; Approve runs it and the page shows the demo tool's
    result and the model's final answer."""
    from playwright.sync_api import expect

    message = "Hello from Chromium 4711"
    with ScriptedModel([tool_call("echo", {"message": message}, id="call_site_1"),
                        reply("The demo server echoed your message.")]) as model:
        site = start_site(OPENAI_BASE_URL=model.openai_base_url, OPENAI_API_KEY="test-key",
                          LLM_MCP_EXAMPLE_MODEL="gpt-test")
        page = browser_page
        page.goto(site.url + "/")
        expect(page.locator("select#model")).to_have_value("openai:gpt-test")
        page.get_by_role("button", name="New chat").click()
        expect(page.locator("h1")).to_contain_text("Chat 1")
        page.get_by_label("Message", exact=True).fill("Please echo my greeting")
        page.get_by_role("button", name="Send").click()

        call = page.locator('.tool-call[data-call-id="call_site_1"]')
        expect(call.locator(".tool-name")).to_have_text("echo")
        expect(call.locator(".approval-state")).to_have_text("pending")
        assert json.loads(call.locator(".arguments").inner_text()) == {"message": message}
        expect(call.locator(".tool-result")).to_have_count(0)
        assert len(model.requests) == 1 and "echo" in model.requests[0].tool_names

        call.get_by_role("button", name="Approve").click()
        expect(call.locator(".approval-state")).to_have_text("approved")
        expect(call.locator(".tool-result")).to_have_text(message)  # echo returns the message unchanged
        expect(page.locator(".message.role-assistant .content").last).to_have_text(
            "The demo server echoed your message.")
        assert model.requests[1].tool_results[0]["tool_call_id"] == "call_site_1"
        assert model.requests[1].tool_results[0]["content"] == message
    assert "Traceback" not in site.output()


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_site_without_a_model_key_call_a_tool_approve_result(start_site, browser_page):
    """MCP-APPROVAL-02, MCP-APPROVAL-05: with no model key, the page's "Call a tool" form records
    a call of the demo server's ``add``, which waits for approval; Approve runs it and shows the
    sum, and the offline stand-in says no model is configured."""
    from playwright.sync_api import expect

    site = start_site()
    page = browser_page
    page.goto(site.url + "/")
    expect(page.locator("select#model")).to_have_value("offline:offline")
    page.get_by_role("button", name="New chat").click()
    form = page.locator('form.call-tool[data-tool="add"]')
    form.locator("textarea").fill('{"a": 2.5, "b": 40}')
    form.get_by_role("button", name="Call add").click()

    call = page.locator('.tool-call[data-tool="add"]')
    expect(call.locator(".approval-state")).to_have_text("pending")
    assert json.loads(call.locator(".arguments").inner_text()) == {"a": 2.5, "b": 40}
    call.get_by_role("button", name="Approve").click()
    expect(call.locator(".approval-state")).to_have_text("approved")
    result = call.locator(".tool-result")
    expect(result).to_have_count(1)
    assert json.loads(result.inner_text()) == {"sum": 2.5 + 40}
    expect(page.locator(".message.role-assistant .content").last).to_have_text(OFFLINE_REPLY)
    expect(page.get_by_text("Approved add.")).to_be_visible()
    assert "Traceback" not in site.output()
