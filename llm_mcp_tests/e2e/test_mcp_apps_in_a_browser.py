"""MCP Apps on the chat page in a real headless Chromium (marks ``browser`` and ``slow``).

The example site (``manage.py runserver`` on 127.0.0.1) with the chat pages offering
``support/apps.py``'s agent (the apps kit server over Streamable HTTP, the echo server), a
``ScriptedModel`` standing in for OpenAI, and the Apps sandbox on ``localhost`` at the same port, a
different origin. Two plain HTTP servers on two more loopback ports stand for "a domain the App
declared" and "a domain it did not".
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from llm_mcp.testing.scripted_model import ScriptedModel, reply, tool_call
from llm_mcp_tests.support.apps import (
    APPS_URL_ENV,
    ECHO_URL_ENV,
    VANILLA_ARGV_ENV,
    apps_server,
    find_vanilla,
)
from llm_mcp_tests.support.chat_ui import PASSWORD, create_user
from llm_mcp_tests.support.processes import free_port
from llm_mcp_tests.support.site import shot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(240)]

SETTINGS = "llm_mcp_tests.support.apps_site_settings"


class Open(BaseHTTPRequestHandler):
    def do_GET(self):
        body = b'{"ok": true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Access-Control-Allow-Origin", "*")  # CORS allows it: only the CSP may block it
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def loopback_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Open)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def sign_in_and_ask(page, site, text: str) -> None:
    from playwright.sync_api import expect

    page.goto(site.url + "/mcp/chats/")
    page.get_by_label("Username").fill("ada")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("link", name="New chat").first.click()
    page.get_by_role("button", name="Start chat").click()
    page.get_by_label("Message", exact=True).fill(text)
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#llm-mcp-composer[data-busy]")).to_have_count(0, timeout=30_000)


def app_frames(page, sandbox_origin: str, ready: str = "typeof window.appRequest == 'function'"):
    """The proxy frame (on the sandbox origin) and the App's frame inside it, once both exist."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        for frame in page.frames:
            parent = frame.parent_frame
            if frame.url == "about:srcdoc" and parent is not None and parent.url.startswith(sandbox_origin + "/"):
                if frame.evaluate(f"() => {ready}"):
                    return parent, frame
        page.wait_for_timeout(100)  # lets Playwright take in the frames' events
    raise AssertionError(f"no App frame under {sandbox_origin}: {[f.url for f in page.frames]}")


def test_an_app_renders_calls_an_app_only_tool_and_is_held_to_its_policy(start_site, browser_page, tmp_path,
                                                                         echo_http_url):
    """MCP-APPS-01, MCP-APPS-11 in the browser: the App renders the tool's result beside its call,
    its Refresh button calls the app-only tool through the view and shows the new reading; the proxy
    is on another origin; the inner frame runs under the policy built from _meta.ui.csp (the declared
    port is reachable, an undeclared one blocked by CSP); a forged tools/call for a tool without "app"
    gets the 403 and reaches no server; a message from a foreign window is ignored; ui/message adds a
    user message to the chat."""
    from playwright.sync_api import expect

    declared, declared_url = loopback_server()
    undeclared, undeclared_url = loopback_server()
    port = free_port()
    sandbox = f"http://localhost:{port}"
    script = [tool_call("forecast", {"city": "Oslo"}, id="call_f"), reply("Here is the forecast."),
              reply("Oslo is cold in winter.")]
    with apps_server("modern", tmp_path, connect=declared_url) as apps, ScriptedModel(script) as model:
        site = start_site(port=port, DJANGO_SETTINGS_MODULE=SETTINGS, OPENAI_BASE_URL=model.openai_base_url,
                          OPENAI_API_KEY="test-key", LLM_MCP_APPS_SANDBOX_ORIGIN=sandbox,
                          **{APPS_URL_ENV: apps.running.url, ECHO_URL_ENV: echo_http_url})
        create_user(site, "ada")
        page = browser_page
        sign_in_and_ask(page, site, "Weather in Oslo?")
        page.reload()  # the App renders on a page load too, without a click

        card = page.locator('.llm-mcp-call[data-call-id="call_f"]')
        expect(card.locator("iframe.llm-mcp-app-frame")).to_be_visible()
        proxy, app = app_frames(page, sandbox)
        first = apps.received()[-1]
        assert first["tool"] == "forecast"
        expect(app.locator("#reading")).to_have_text(str(
            json.loads(page.evaluate("u => fetch(u).then(r => r.text())", card.locator("[data-mcp-app]")
                                     .get_attribute("data-mcp-app")))["result"]["structuredContent"]["reading"]))
        expect(app.locator("#city")).to_have_text("Oslo")
        assert app.evaluate("() => window.appEvents") == ["ui/notifications/tool-input", "ui/notifications/tool-result"]
        assert app.evaluate("() => window.hostContext.displayMode") == "inline"
        shot(page, tmp_path, "app-rendered")

        # the double iframe: the proxy on the sandbox origin, not the page's
        page_origin = page.evaluate("() => location.origin")
        assert proxy.evaluate("() => location.origin") == sandbox != page_origin
        assert card.locator("iframe.llm-mcp-app-frame").get_attribute("sandbox") == \
            "allow-scripts allow-same-origin allow-forms"

        # Refresh: an app-only tool, through the view, and the App shows the new reading
        before = len(apps.received())
        app.get_by_role("button", name="Refresh").click()
        expect(app.locator("#reading")).not_to_have_text(app.locator("#reading").inner_text(), timeout=10_000)
        refreshed = apps.received()[before:]
        assert [r["tool"] for r in refreshed] == ["refresh"] and refreshed[0]["arguments"] == {"city": "Oslo"}

        # the inner frame's policy is the one built from the resource's meta
        policy = app.evaluate(
            "() => document.querySelector('meta[http-equiv=Content-Security-Policy]').content")
        assert f"connect-src 'self' {declared_url};" in policy and "default-src 'none'" in policy
        outcome = app.evaluate("""async ([ok, blocked]) => {
            const violations = [];
            document.addEventListener("securitypolicyviolation", e => violations.push(e.blockedURI));
            const tryFetch = u => fetch(u).then(r => r.status, e => "blocked: " + e.name);
            const result = [await tryFetch(ok + "/x"), await tryFetch(blocked + "/x")];
            await new Promise(r => setTimeout(r, 200));
            return [result, violations];
        }""", [declared_url, undeclared_url])
        assert outcome[0] == [200, "blocked: TypeError"]
        assert {v.rstrip("/") for v in outcome[1]} == {undeclared_url + "/x"}  # once per policy: header and meta

        # a forged tools/call for a tool without "app": 403 from the view, nothing reaches the server
        before = len(apps.received())
        forged = app.evaluate("""() => window.appRequest("tools/call", {name: "model_only", arguments: {}})
            .then(r => ["answered", r], e => ["refused", e.message])""")
        assert forged == ["refused", "tool 'model_only' is not callable by apps"]
        # a message from a foreign window (a frame of the page that is not the App's proxy), and one
        # the page posts to itself: ignored, no answer, nothing reaches the server
        page.evaluate("""() => {
            const forged = {jsonrpc: "2.0", id: 99, method: "tools/call", params: {name: "refresh", arguments: {}}};
            const foreign = document.createElement("iframe");
            foreign.srcdoc = "<script>parent.postMessage(" + JSON.stringify(forged) + ", '*')<\\/script>";
            document.body.appendChild(foreign);
            window.postMessage(forged, "*");
        }""")
        page.wait_for_timeout(1500)
        assert len(apps.received()) == before

        # ui/message: the App adds a user message, and the model answers it
        app.get_by_role("button", name="Tell the chat").click()
        expect(page.locator(".llm-mcp-message.role-user").last).to_contain_text("Tell me more about Oslo")
        expect(page.locator(".llm-mcp-content.markdown").last).to_have_text("Oslo is cold in winter.",
                                                                            timeout=30_000)
        assert re.search("Tell me more about Oslo", json.dumps(model.requests[-1].messages))
    declared.shutdown()
    undeclared.shutdown()


def test_a_third_party_app_from_npm(start_site, browser_page, tmp_path, node_executable):
    """MCP-APPS-01, MCP-APPS-02, MCP-APPS-10 against ``@modelcontextprotocol/server-basic-vanillajs`` (npm, pinned
    in package.json; its App is built on the official ext-apps ``App`` class): the model calls
    ``get-time``, the page renders its App with the tool's time, the App's button calls ``get-time``
    through the app tool-call view and shows the new time, in the double iframe."""
    from playwright.sync_api import expect

    script = find_vanilla()
    if script is None:
        pytest.skip("@modelcontextprotocol/server-basic-vanillajs is not installed (npm ci)")
    port = free_port()
    sandbox = f"http://localhost:{port}"
    with ScriptedModel([tool_call("get-time", {}, id="call_t"), reply("That is the time.")]) as model:
        site = start_site(port=port, DJANGO_SETTINGS_MODULE=SETTINGS, OPENAI_BASE_URL=model.openai_base_url,
                          OPENAI_API_KEY="test-key", LLM_MCP_APPS_SANDBOX_ORIGIN=sandbox,
                          LLM_MCP_TEST_AGENT="llm_mcp_tests.support.apps.VanillaAgent",
                          **{VANILLA_ARGV_ENV: json.dumps([node_executable, str(script), "--stdio"])})
        create_user(site, "ada")
        page = browser_page
        sign_in_and_ask(page, site, "What time is it?")
        page.reload()
        card = page.locator('.llm-mcp-call[data-call-id="call_t"]')
        expect(card.locator("iframe.llm-mcp-app-frame")).to_be_visible()
        proxy, app = app_frames(page, sandbox, "!!document.getElementById('get-time-btn')")
        assert proxy.evaluate("() => location.origin") == sandbox != page.evaluate("() => location.origin")
        result = json.loads(page.evaluate("u => fetch(u).then(r => r.text())",
                                          card.locator("[data-mcp-app]").get_attribute("data-mcp-app")))["result"]
        first = result["structuredContent"]["time"]
        expect(app.locator("#server-time")).to_have_text(first, timeout=15_000)
        shot(page, tmp_path, "vanilla-app")
        page.wait_for_timeout(50)  # the next reading is a later time
        app.get_by_role("button", name="Get Server Time").click()
        expect(app.locator("#server-time")).not_to_have_text(first, timeout=15_000)
        later = app.locator("#server-time").inner_text()
        assert later > first  # ISO 8601 times sort as text


def test_the_example_sites_dice_board(start_site, browser_page, tmp_path):
    """The example site as ``make run`` serves it (its own agent and demo server, the sandbox on
    localhost): the model's dice_board call, once approved, renders the board App; "Roll again"
    calls the app-only reroll and the board changes. The screenshot is the docs' (LLM_MCP_SCREENSHOTS=docs/img)."""
    from playwright.sync_api import expect

    port = free_port()
    sandbox = f"http://localhost:{port}"
    with ScriptedModel([tool_call("dice_board", {"count": 3}, id="call_d"), reply("Three dice, rolled.")]) as model:
        site = start_site(port=port, OPENAI_BASE_URL=model.openai_base_url, OPENAI_API_KEY="test-key",
                          LLM_MCP_APPS_SANDBOX_ORIGIN=sandbox)
        create_user(site, "ada")
        page = browser_page
        sign_in_and_ask(page, site, "Roll three dice on a board")
        card = page.locator('.llm-mcp-call[data-call-id="call_d"]')
        card.get_by_role("button", name="Approve").click()
        expect(card.locator("iframe.llm-mcp-app-frame")).to_be_visible(timeout=30_000)
        _, app = app_frames(page, sandbox, "!!document.getElementById('again')")
        expect(app.locator("#total")).not_to_have_text("?")
        assert len(app.locator("#dice").inner_text().split()) == 3
        shot(page, tmp_path, "mcp-app")
        board = [app.locator("#dice").inner_text()]
        for _ in range(5):  # a new roll may repeat the last one (1 in 216): roll until it differs
            calls = app.evaluate("() => window.rolls = (window.rolls || 0) + 1")
            app.get_by_role("button", name="Roll again").click()
            # each App request rebuilds the chat's servers (here a stdio process): wait for the answer
            expect(app.locator("#total")).to_have_attribute("data-rolls", str(calls), timeout=20_000)
            board.append(app.locator("#dice").inner_text())
            if board[-1] != board[0]:
                break
        assert board[-1] != board[0] and len(board[-1].split()) == 3
