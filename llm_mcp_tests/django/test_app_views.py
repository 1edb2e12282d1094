"""The MCP Apps views and rows: ``mcp_result``/``parent_tool_call`` on message rows after a reload, the
app view's JSON, the app tool-call view (403 unless visibility has "app", same server only, 4xx for
bad bodies with nothing reaching a server, CSRF), the resource view, the sandbox page (only on its
origin, CSP built from meta), ownership 404 on every view, and a chat whose servers cannot be rebuilt.

A real chat: the scripted model through the OpenAI SDK, the apps kit server over Streamable HTTP in
both eras, the echo server as a second server of the same chat (marker ``db``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from django.urls import reverse

from llm_mcp.app_views import sign_csp
from llm_mcp.models import Chat, Message, ToolCall
from llm_mcp.testing.scripted_model import reply, tool_call

from llm_mcp_tests.support.apps import (APPS_URL_ENV, ECHO_URL_ENV, AppsAgent, AppsServer, ShapedAppsAgent,
                                        apps_server)

pytestmark = [pytest.mark.db, pytest.mark.django_db]

SANDBOX = "http://localhost:8123"
CONNECT = "http://127.0.0.1:9"


@pytest.fixture(scope="module", params=["modern", "handshake"])
def apps(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppsServer]:
    with apps_server(request.param, tmp_path_factory.mktemp("apps"), connect=CONNECT) as server:
        yield server


@pytest.fixture
def site(apps, model, echo_http_url, monkeypatch):
    """Settings pointing the agent at the servers and the scripted model, with a sandbox origin."""
    monkeypatch.setenv(APPS_URL_ENV, apps.running.url)
    monkeypatch.setenv(ECHO_URL_ENV, echo_http_url)
    options = {**settings.LLM_MCP, "APPS_SANDBOX_ORIGIN": SANDBOX,
               "PROVIDER_OPTIONS": {"openai": {"base_url": model.openai_base_url, "api_key": "test-key"}}}
    with override_settings(LLM_MCP=options):
        yield apps


def user(name: str):
    return get_user_model().objects.create_user(name, password="pw")


def signed_in(account, **options) -> Client:
    client = Client(**options)
    client.force_login(account)
    return client


def forecast_chat(model, owner, city="Oslo"):
    """A saved chat of ``owner`` in which the model called ``forecast`` and answered; its tool-result row."""
    model.add(tool_call("forecast", {"city": city}, id="call_f"), reply("Here it is."))
    record = AppsAgent.chat(user=owner)
    record.ask(f"Weather in {city}?")
    record.close()
    return record, Message.objects.get(chat=record, role="tool")


def post_json(client, url, body, **extra):
    return client.post(url, json.dumps(body), content_type="application/json", **extra)


def test_mcp_apps_05_mcp_result_identical_after_reload(site, model):
    """MCP-APPS-05 (and MCP-APPS-09 on rows): the live message's mcp_result and parent_tool_call equal
    what a reloaded chat and the message row give."""
    ada = user("ada")
    model.add(tool_call("forecast", {"city": "Oslo"}, id="call_f"), reply("Here it is."))
    record = AppsAgent.chat(user=ada)
    record.ask("Weather in Oslo?")
    live = next(m for m in record.messages if m.role == "tool")  # read back through the store
    record.close()
    again = Chat.objects.get(pk=record.pk)
    reloaded = next(m for m in again.messages if m.role == "tool")
    row = Message.objects.get(chat=record, role="tool")
    for message in (live, reloaded, row):
        assert message.mcp_result.ui_uri == "ui://weather/forecast"
        assert message.mcp_result.structured["city"] == "Oslo"
        assert message.parent_tool_call.arguments == {"city": "Oslo"}
    assert live.mcp_result.to_dict() == reloaded.mcp_result.to_dict() == row.mcp_result.to_dict()
    assert row.mcp_result.to_dict() == ToolCall.objects.get(tool_call_id="call_f").mcp_result
    assert Message.objects.get(chat=record, role="user").mcp_result is None
    assert Message.objects.get(chat=record, role="user").parent_tool_call is None


def test_app_view_json(site, model):
    """The app view: {html, csp, permissions, input, result} read through the chat's server, plus the
    policy built from csp (the spec's reference construction) and the allow attribute."""
    ada = user("ada")
    _, row = forecast_chat(model, ada, "Bergen")
    data = signed_in(ada).get(reverse("llm_mcp:app", args=[row.pk])).json()
    assert data["html"].startswith("<!doctype html>") and "Refresh" in data["html"]
    assert data["csp"] == {"connectDomains": [CONNECT], "resourceDomains": []}
    assert data["permissions"] == {"clipboardWrite": {}}
    assert data["input"] == {"city": "Bergen"}
    assert data["result"] == ToolCall.objects.get(tool_call_id="call_f").mcp_result
    assert data["result"]["structuredContent"]["city"] == "Bergen"
    assert data["policy"] == ("default-src 'none'; script-src 'self' 'unsafe-inline'; "
                              "style-src 'self' 'unsafe-inline'; connect-src 'self' http://127.0.0.1:9; "
                              "img-src 'self' data:; font-src 'self'; media-src 'self' data:; frame-src 'none'; "
                              "object-src 'none'; base-uri 'self'")
    assert data["allow"] == "clipboard-write"


def test_mcp_apps_11_tool_call_view(site, model):
    """MCP-APPS-11: the app tool-call view answers call(...).to_dict() for a tool with "app" (refresh is
    app-only), 403 for a tool without "app" (model_only), and nothing reaches the server then."""
    ada = user("ada")
    _, row = forecast_chat(model, ada)
    client = signed_in(ada)
    url = reverse("llm_mcp:app_tool_call", args=[row.pk])
    before = len(site.received())
    answer = post_json(client, url, {"name": "refresh", "arguments": {"city": "Oslo"}})
    assert answer.status_code == 200
    got = site.received()[before:]
    assert [r["tool"] for r in got] == ["refresh"] and got[0]["arguments"] == {"city": "Oslo"}
    body = answer.json()
    assert body["structuredContent"]["city"] == "Oslo" and body["content"][0]["type"] == "text"
    assert json.loads(body["content"][0]["text"]) == body["structuredContent"]
    forged = post_json(client, url, {"name": "model_only", "arguments": {"city": "Oslo"}})
    assert forged.status_code == 403 and "not callable by apps" in forged.json()["error"]
    assert len(site.received()) == before + 1  # the 403 reached no server


def test_tool_call_view_refuses_a_tool_the_server_class_leaves_out(site, model):
    """A tool the server class drops with ``only``/``exclude`` is not the App's either: 403, and nothing
    reaches the server (the view used to call every tool the server lists); the others still answer."""
    ada = user("ada")
    model.add(tool_call("forecast", {"city": "Oslo"}, id="call_f"), reply("Here it is."))
    record = ShapedAppsAgent.chat(user=ada)
    record.ask("Weather in Oslo?")
    record.close()
    row = Message.objects.get(chat=record, role="tool")
    client = signed_in(ada)
    url = reverse("llm_mcp:app_tool_call", args=[row.pk])
    before = len(site.received())
    refused = post_json(client, url, {"name": "plain", "arguments": {}})
    assert refused.status_code == 403 and "exclude" in refused.json()["error"]
    assert len(site.received()) == before
    assert post_json(client, url, {"name": "refresh", "arguments": {"city": "Oslo"}}).status_code == 200


def test_tool_call_view_refuses_bad_requests_before_any_server(site, model, caplog):
    """Another server's tool (echo's add), an unknown tool, a non-JSON body, JSON that is not an object,
    a missing name: 4xx, and the apps server receives nothing."""
    ada = user("ada")
    _, row = forecast_chat(model, ada)
    client = signed_in(ada)
    url = reverse("llm_mcp:app_tool_call", args=[row.pk])
    before = len(site.received())
    assert post_json(client, url, {"name": "add", "arguments": {"a": 1, "b": 2}}).status_code == 404
    assert post_json(client, url, {"name": "nope"}).status_code == 404
    assert client.post(url, {"name": "refresh"}).status_code == 415  # a form body
    assert client.post(url, "{not json", content_type="application/json").status_code == 400
    assert post_json(client, url, ["refresh"]).status_code == 400
    assert post_json(client, url, {"arguments": {}}).status_code == 400
    assert post_json(client, url, {"name": "refresh", "arguments": "x"}).status_code == 400
    assert client.get(url).status_code == 405
    assert len(site.received()) == before


def test_a_lone_surrogate_or_nan_in_the_body_is_400_not_500(site, model):
    """JSON may escape a lone surrogate (\\ud800), which no UTF-8 request to a server can carry, and Python
    reads NaN/Infinity, which JSON has not: the tool-call and resource views answer 400 naming the
    problem (they used to answer 500), and nothing reaches the server."""
    ada = user("ada")
    _, row = forecast_chat(model, ada)
    client = signed_in(ada)
    before = len(site.received())
    call = client.post(reverse("llm_mcp:app_tool_call", args=[row.pk]),
                       '{"name": "refresh", "arguments": {"city": "\\ud800"}}', content_type="application/json")
    assert call.status_code == 400 and "surrogate" in call.json()["error"]
    read = client.post(reverse("llm_mcp:app_resource", args=[row.pk]), '{"uri": "ui://weather/\\udfff"}',
                       content_type="application/json")
    assert read.status_code == 400 and "surrogate" in read.json()["error"]
    for constant in ("NaN", "Infinity", "-Infinity"):  # Python's json reads them; JSON has no such values
        answer = client.post(reverse("llm_mcp:app_tool_call", args=[row.pk]),
                             f'{{"name": "refresh", "arguments": {{"city": {constant}}}}}',
                             content_type="application/json")
        assert answer.status_code == 400 and constant in answer.json()["error"], constant
    assert len(site.received()) == before


def test_huge_bodies_are_refused_before_any_server(site, model):
    """A body over app_views.MAX_BODY answers 413, one over Django's DATA_UPLOAD_MAX_MEMORY_SIZE 400;
    neither reaches the server."""
    from llm_mcp.app_views import MAX_BODY

    ada = user("ada")
    _, row = forecast_chat(model, ada)
    client = signed_in(ada)
    url = reverse("llm_mcp:app_tool_call", args=[row.pk])
    before = len(site.received())
    big = post_json(client, url, {"name": "refresh", "arguments": {"city": "x" * (MAX_BODY + 1)}})
    assert big.status_code == 413 and str(MAX_BODY) in big.json()["error"]
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 2_621_440
    assert post_json(client, url, {"name": "refresh", "arguments": {"city": "x" * (limit + 1)}}).status_code == 400
    assert len(site.received()) == before


def test_csrf_is_required_on_the_posts(site, model):
    """POSTs need the CSRF token (cookie + X-CSRFToken): without it 403 and nothing runs."""
    ada = user("ada")
    _, row = forecast_chat(model, ada)
    client = signed_in(ada, enforce_csrf_checks=True)
    url = reverse("llm_mcp:app_tool_call", args=[row.pk])
    before = len(site.received())
    assert post_json(client, url, {"name": "refresh", "arguments": {}}).status_code == 403
    assert post_json(client, reverse("llm_mcp:app_resource", args=[row.pk]), {"uri": "ui://weather/listed"}
                     ).status_code == 403
    assert len(site.received()) == before
    client.get(reverse("llm_mcp:chat_detail", args=[row.chat_id]))  # sets the csrftoken cookie
    token = client.cookies["csrftoken"].value
    assert post_json(client, url, {"name": "refresh", "arguments": {}}, HTTP_X_CSRFTOKEN=token).status_code == 200


def test_resource_view(site, model):
    """The resource view reads a resource of the message's server for the App."""
    ada = user("ada")
    _, row = forecast_chat(model, ada)
    client = signed_in(ada)
    answer = post_json(client, reverse("llm_mcp:app_resource", args=[row.pk]), {"uri": "ui://weather/listed"})
    assert answer.json() == {"contents": [{"uri": "ui://weather/listed", "mimeType": "text/html;profile=mcp-app",
                                           "text": "<p>listed</p>"}]}
    missing = post_json(client, reverse("llm_mcp:app_resource", args=[row.pk]), {"uri": "ui://nope"})
    assert missing.status_code == 502
    assert post_json(client, reverse("llm_mcp:app_resource", args=[row.pk]), {"uri": 3}).status_code == 400


def test_resource_uri_cannot_forge_log_lines(site, model, caplog):
    """The resource view logs the App's URI quoted: a line break in it cannot start a forged log line."""
    ada = user("ada")
    _, row = forecast_chat(model, ada)
    with caplog.at_level(logging.INFO, logger="llm_mcp.apps"):
        post_json(signed_in(ada), reverse("llm_mcp:app_resource", args=[row.pk]),
                  {"uri": "ui://weather/listed\nWARNING forged"})
    lines = [r.getMessage() for r in caplog.records if r.name == "llm_mcp.apps"]
    assert lines and all("\n" not in line for line in lines)
    assert any("ui://weather/listed\\nWARNING forged" in line for line in lines)


def test_another_users_chat_is_404_on_every_app_view(site, model):
    """The CHAT_ACCESS hook on every App view: another user's chat answers 404, nothing reaches a server;
    a message without an App, or not a tool result, is 404 too."""
    ada, bob = user("ada"), user("bob")
    record, row = forecast_chat(model, ada)
    client = signed_in(bob)
    before = len(site.received())
    assert client.get(reverse("llm_mcp:app", args=[row.pk])).status_code == 404
    assert post_json(client, reverse("llm_mcp:app_tool_call", args=[row.pk]),
                     {"name": "refresh", "arguments": {}}).status_code == 404
    assert post_json(client, reverse("llm_mcp:app_resource", args=[row.pk]), {"uri": "ui://weather/listed"}
                     ).status_code == 404
    assert len(site.received()) == before
    user_row = Message.objects.get(chat=record, role="user")
    assert signed_in(ada).get(reverse("llm_mcp:app", args=[user_row.pk])).status_code == 404


def test_signed_out_app_requests_get_a_json_403_not_the_login_page(site, model):
    """A visitor whose session ended (the page's script still holds the csrftoken cookie) gets a JSON 403
    on every App view, not a redirect to the login page: the script followed it and handed the App an
    empty {} as the tool's result. Nothing reaches the server."""
    ada = user("ada")
    _, row = forecast_chat(model, ada)
    anonymous = Client()
    before = len(site.received())
    answers = [anonymous.get(reverse("llm_mcp:app", args=[row.pk])),
               post_json(anonymous, reverse("llm_mcp:app_tool_call", args=[row.pk]), {"name": "refresh", "arguments": {}}),
               post_json(anonymous, reverse("llm_mcp:app_resource", args=[row.pk]), {"uri": "ui://weather/listed"})]
    for answer in answers:
        assert answer.status_code == 403 and answer["Content-Type"] == "application/json"
        assert "sign in" in answer.json()["error"]
    assert len(site.received()) == before


def test_a_chat_whose_servers_cannot_be_rebuilt_is_404_and_logged(site, model, caplog):
    ada = user("ada")
    record, row = forecast_chat(model, ada)
    Chat.objects.filter(pk=record.pk).update(agent_class="no_such_module.Agent")
    with caplog.at_level(logging.WARNING, logger="llm_mcp.apps"):
        assert signed_in(ada).get(reverse("llm_mcp:app", args=[row.pk])).status_code == 404
    assert any("cannot be rebuilt" in r.getMessage() and "no_such_module" in r.getMessage() for r in caplog.records)


def test_sandbox_only_on_its_origin_with_the_built_policy(site):
    """The sandbox proxy page: 404 on the host's origin; on the sandbox origin its CSP header is the
    policy built from ?csp= (undeclared domains never allowed; entries that would break out dropped)."""
    url = reverse("llm_mcp:app_sandbox")
    assert Client().get(url).status_code == 404  # testserver: the host's origin
    csp = {"connectDomains": ["https://api.example.com", "x; script-src *"], "frameDomains": ["https://f.example"]}
    answer = Client().get(url, {"csp": sign_csp(csp), "host": "http://127.0.0.1:8000"}, HTTP_HOST="localhost:8123")
    assert answer.status_code == 200
    assert answer["Content-Security-Policy"] == (
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
        "connect-src 'self' https://api.example.com; img-src 'self' data:; font-src 'self'; "
        "media-src 'self' data:; frame-src https://f.example; object-src 'none'; base-uri 'self'")
    assert "X-Frame-Options" not in answer
    strict = Client().get(url, HTTP_HOST="localhost:8123")
    assert strict["Content-Security-Policy"] == (
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; media-src 'self' data:; connect-src 'none'; object-src 'none'")


STRICT_POLICY = ("default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
                 "img-src 'self' data:; media-src 'self' data:; connect-src 'none'; object-src 'none'")


def test_sandbox_csp_an_app_writes_itself_gets_the_strict_default(site):
    """An App runs on its proxy's origin, so it could load the sandbox page again with a looser ?csp=:
    only the policy AppView signed is honoured; plain JSON, an altered token or another salt's token
    all get the strict default."""
    loose = {"connectDomains": ["https://evil.example"]}
    url = reverse("llm_mcp:app_sandbox")
    token = sign_csp({"connectDomains": ["https://ok.example"]})
    from django.core import signing

    for forged in (json.dumps(loose), token[:-2] + ("AA" if not token.endswith("AA") else "BB"),
                   signing.dumps(loose), "", "null"):
        answer = Client().get(url, {"csp": forged}, HTTP_HOST="localhost:8123")
        assert answer.status_code == 200 and answer["Content-Security-Policy"] == STRICT_POLICY, forged
    assert "https://ok.example" in Client().get(url, {"csp": token}, HTTP_HOST="localhost:8123")[
        "Content-Security-Policy"]


def test_sandbox_csp_with_line_breaks_quotes_and_semicolons(site):
    """?csp= entries carrying a line break, a quote or a semicolon are dropped: the page answers 200 with
    a one-line header holding only the plain source (a line break used to make Django refuse the header)."""
    csp = {"connectDomains": ["https://a.example\n", "https://b.example'", "https://c.example;x", "https://ok.example"]}
    answer = Client().get(reverse("llm_mcp:app_sandbox"), {"csp": sign_csp(csp)}, HTTP_HOST="localhost:8123")
    assert answer.status_code == 200
    assert "connect-src 'self' https://ok.example;" in answer["Content-Security-Policy"]
    assert not any(name in answer["Content-Security-Policy"] for name in ("a.example", "b.example", "c.example"))


def test_the_sandbox_origin_serves_nothing_else(site, model):
    """AppsSandboxMiddleware (in the example settings): on the sandbox origin every other URL is 404,
    even for a signed-in user; the host's origin is unchanged."""
    ada = user("ada")
    record, row = forecast_chat(model, ada)
    client = signed_in(ada)
    for url in (reverse("llm_mcp:chat_detail", args=[record.pk]), reverse("llm_mcp:app", args=[row.pk]),
                "/admin/", "/"):
        assert client.get(url, HTTP_HOST="localhost:8123").status_code == 404, url
    assert client.get(reverse("llm_mcp:app_sandbox"), HTTP_HOST="localhost:8123").status_code == 200
    assert client.get(reverse("llm_mcp:chat_detail", args=[record.pk])).status_code == 200


def test_the_sandbox_host_serves_nothing_else_behind_a_tls_proxy(site, model):
    """Behind a front server that ends TLS (no SECURE_PROXY_SSL_HEADER), Django sees http on the sandbox's
    https host name: the middleware still answers 404 there for every other URL (it used to compare
    whole origins and let the site through)."""
    ada = user("ada")
    record, _ = forecast_chat(model, ada)
    client = signed_in(ada)
    with override_settings(LLM_MCP={**settings.LLM_MCP, "APPS_SANDBOX_ORIGIN": "https://localhost:8123"}):
        for url in (reverse("llm_mcp:chat_detail", args=[record.pk]), "/admin/", "/"):
            assert client.get(url, HTTP_HOST="localhost:8123").status_code == 404, url
        assert client.get(reverse("llm_mcp:chat_detail", args=[record.pk])).status_code == 200


def test_chat_page_places_the_app(site, model):
    """chat_detail renders an App placeholder for the result, with its URLs and the sandbox origin."""
    ada = user("ada")
    record, row = forecast_chat(model, ada)
    html = signed_in(ada).get(reverse("llm_mcp:chat_detail", args=[record.pk])).content.decode()
    assert f'data-mcp-app="{reverse("llm_mcp:app", args=[row.pk])}"' in html
    assert f'data-sandbox-origin="{SANDBOX}"' in html and "llm_mcp/apps.js" in html
    with override_settings(LLM_MCP={**settings.LLM_MCP, "APPS_SANDBOX_ORIGIN": None}):
        html = signed_in(ada).get(reverse("llm_mcp:chat_detail", args=[record.pk])).content.decode()
    assert "data-mcp-app" not in html and "APPS_SANDBOX_ORIGIN" in html
