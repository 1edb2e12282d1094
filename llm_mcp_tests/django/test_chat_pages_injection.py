"""Model and server text never becomes markup on the pages that show it: the chat page, the events'
conversation HTML, the chat list and the admin (marker ``db``).

A reply, a user message, a tool's arguments and result (text, structured content, attachment names,
URIs and MIME types) and a server's question carry ``<script>``, ``javascript:`` links and ``onerror``
attributes; every page is parsed and may hold no script but the app's own, no ``on*`` attribute, and no
``javascript:``/``data:`` address except the inline images the app itself encodes.
"""

from __future__ import annotations

import base64
from html.parser import HTMLParser

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, RequestFactory
from django.urls import reverse

from llm_mcp import Question
from llm_mcp.chat_views import conversation_html
from llm_mcp.conversation import Conversation
from llm_mcp.models import ToolCall

from llm_mcp_tests.support.chat_ui import chat_rows
from llm_mcp_tests.support.servers.chat_ui import chart_png

pytestmark = [pytest.mark.db, pytest.mark.django_db]

XSS = ('<script>alert("s")</script> <img src=x onerror=alert("i")> [link](javascript:alert("j")) '
       '<a href="javascript:alert(\'a\')">a</a> "><svg onload=alert("v")> <iframe src="javascript:x"></iframe>')
APP_SCRIPTS = {"/static/llm_mcp/chat.js", "/static/admin/js/vendor/jquery/jquery.js"}


class Markup(HTMLParser):
    """Collects what a page would run or fetch."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag in ("script", "iframe", "object", "embed"):  # (the admin's own svg icons carry no handler)
            src = attributes.get("src") or ""
            if not (tag == "script" and (src in APP_SCRIPTS or src.startswith("/static/admin/") or
                                         src.startswith("/admin/jsi18n/"))):
                self.problems.append(f"<{tag} {attrs}>")
        for name, value in attrs:
            value = (value or "").strip().lower()
            if name.startswith("on"):
                self.problems.append(f"{tag} {name}={value}")
            if name in ("href", "src", "action", "formaction") and value.startswith("javascript:"):
                self.problems.append(f"{tag} {name}={value}")
            if name in ("href", "src") and value.startswith("data:") and not (
                    tag == "img" and value.startswith("data:image/png;base64,")):
                self.problems.append(f"{tag} {name}={value[:40]}")


def problems(html: str) -> list[str]:
    parser = Markup()
    parser.feed(html)
    return parser.problems


def hostile_chat(owner):
    png = base64.b64encode(chart_png()).decode()
    svg = base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>').decode()
    question = Question("q", {"message": XSS, "requestedSchema": {"type": "object", "properties": {
        "pick": {"type": "string", "title": XSS, "description": XSS, "enum": [XSS, "ok"]}}}}, server=XSS)
    link = Question("u", {"mode": "url", "message": XSS, "url": "javascript:alert(1)", "elicitationId": "u"}, server="s")
    attachments = [
        {"kind": "image", "mime_type": "image/png", "content": {"base64": png}, "name": XSS, "uri": None, "meta": {}},
        {"kind": "image", "mime_type": "image/svg+xml", "content": {"base64": svg}, "name": "x.svg", "uri": None,
         "meta": {}},
        {"kind": "image", "mime_type": 'image/png" onerror="alert(1)', "content": {"base64": png}, "name": "y",
         "uri": None, "meta": {}},
        {"kind": "resource_link", "mime_type": "text/html", "content": None, "name": XSS,
         "uri": "javascript:alert(1)", "meta": {}},
        {"kind": "resource", "mime_type": "text/html", "content": XSS, "name": None, "uri": "file:///x.html",
         "meta": {}},
    ]
    return chat_rows(owner, user_text=XSS, reply_text=XSS, calls=[
        {"tool_call_id": "c1", "name": XSS, "arguments": {"html": XSS}, "approval": "approved",
         "mcp_result": {"content": [{"type": "text", "text": XSS}], "structuredContent": {XSS: [{XSS: XSS}], "n": XSS}}},
        {"tool_call_id": "c2", "name": "ask", "arguments": {XSS: XSS}, "approval": "pending"},
        {"tool_call_id": "c3", "name": "forms", "pending_questions": [question.to_dict(), link.to_dict()]},
    ], tool_results=[(0, {"content": XSS, "is_error": True, "attachments": attachments})])


def test_chat_page_and_events_html_show_hostile_text_as_text(monkeypatch):
    monkeypatch.setattr("llm_mcp.conversation.tool_schemas", lambda record: {"ask": {
        "type": "object", "properties": {"x": {"type": "string", "description": XSS}}, "additionalProperties": False}})
    ada = get_user_model().objects.create_user("ada", password="pw")
    record = hostile_chat(ada)
    client = Client()
    client.force_login(ada)
    page = client.get(reverse("llm_mcp:chat_detail", args=[record.pk])).content.decode()
    assert problems(page) == []
    assert page.count('<img src="data:image/png;base64,') == 1  # the PNG only: not the SVG, not the odd MIME type
    assert "&lt;script&gt;alert(&quot;s&quot;)&lt;/script&gt;" in page  # shown, as text
    assert "Additional properties are not allowed" in page  # the schema check ran on the hostile arguments
    request = RequestFactory().get("/")
    request.user = ada
    fragment = conversation_html(request, record, Conversation.of(record))
    assert problems(fragment) == [] and "&lt;script&gt;" in fragment
    listing = client.get(reverse("llm_mcp:chat_list")).content.decode()
    assert problems(listing) == [] and "&lt;script&gt;" in listing


def test_admin_pages_show_hostile_text_as_text():
    root = get_user_model().objects.create_superuser("root", password="pw")
    record = hostile_chat(root)
    client = Client()
    client.force_login(root)
    call = ToolCall.objects.get(tool_call_id="c1")
    for url in [reverse("admin:llm_mcp_chat_changelist"), reverse("admin:llm_mcp_chat_change", args=[record.pk]),
                reverse("admin:llm_mcp_toolcall_changelist"), reverse("admin:llm_mcp_toolcall_change", args=[call.pk])]:
        response = client.get(url)
        assert response.status_code == 200, url
        assert problems(response.content.decode()) == [], url
