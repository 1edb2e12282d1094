"""What the chat pages make of model and server content (llm_mcp.rendering): markdown, structured
content, media size caps and types, and a failed call that may have partly run (marker ``db`` for the
page test)."""

from __future__ import annotations

import base64

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from django.urls import reverse

from llm_mcp.client.shaping import PARTLY_RUN
from llm_mcp.rendering import attachment_views, markdown_html, structured_html

from llm_mcp_tests.support.chat_ui import chat_rows


def media(kind: str, mime: str, data: bytes) -> dict:
    return {"kind": kind, "mime_type": mime, "content": {"base64": base64.b64encode(data).decode()}, "name": "m",
            "uri": None, "meta": {}}


def test_markdown_is_rendered_and_links_are_kept_safe():
    html = str(markdown_html("# Title\n\n- **a**\n- [site](https://example.test/x) [bad](javascript:alert(1))\n\n"
                             "| x | y |\n|---|--:|\n| 1 | 2 |\n\n![pic](https://tracker.test/p.png)"))
    assert "<h1>Title</h1>" in html and "<strong>a</strong>" in html
    assert '<a href="https://example.test/x" rel="noopener noreferrer nofollow">site</a>' in html
    assert "javascript:" not in html.replace("[bad](javascript:alert(1))", "")  # left as text, never a link
    assert '<td style="text-align:right">2</td>' in html
    assert "tracker.test" not in html and '<img alt="pic">' in html  # an image in a reply is never fetched


def test_structured_content_is_a_table_or_a_tree():
    assert str(structured_html({"sum": 42})) == ('<table class="llm-mcp-structured"><tr><th scope="row">sum</th>'
                                                 '<td>42</td></tr></table>')
    rows = str(structured_html([{"a": 1, "b": None}, {"a": 2, "c": True}]))
    assert "<thead><tr><th scope=\"col\">a</th><th scope=\"col\">b</th><th scope=\"col\">c</th></tr></thead>" in rows
    assert "<td>null</td>" in rows and "<td>true</td>" in rows
    tree = str(structured_html({"n": [[1, 2], {"k": "v"}]}))
    assert '<ol class="llm-mcp-tree" start="0"><li><ol class="llm-mcp-tree" start="0"><li>1</li>' in tree


def test_media_inline_only_for_allowed_types_within_the_cap():
    png, wav = b"\x89PNG\r\n\x1a\n" + b"0" * 100, b"RIFF" + b"0" * 100
    with override_settings(LLM_MCP={"CHAT_INLINE_MEDIA_BYTES": 108}):
        views = attachment_views([media("image", "image/png", png), media("audio", "audio/wav", wav),
                                  media("image", "image/svg+xml", b"<svg/>"),
                                  media("image", "image/png", png + b"x")])
    assert [v["inline"] for v in views] == ["image", "audio", "", ""]  # SVG never; one byte over the cap: not inline
    assert views[0]["data_uri"] == "data:image/png;base64," + base64.b64encode(png).decode()
    assert views[3]["size"] == 109 and views[3]["data_uri"] == ""
    link = attachment_views([{"kind": "resource_link", "mime_type": None, "content": None, "name": "r.pdf",
                              "uri": "https://files.test/r.pdf", "meta": {}}])[0]
    assert link["inline"] == "" and link["data_uri"] == "" and link["uri"] == "https://files.test/r.pdf"


@pytest.mark.db
@pytest.mark.django_db
def test_tool_errors_and_partly_run_calls_are_set_apart():
    ada = get_user_model().objects.create_user("ada", password="pw")
    failed = "The MCP server 'ui' failed to run deploy: timed out." + PARTLY_RUN
    record = chat_rows(ada, calls=[{"tool_call_id": "c1", "name": "deploy", "approval": ""},
                                   {"tool_call_id": "c2", "name": "add", "approval": ""}],
                       tool_results=[(0, {"content": failed, "is_error": True}),
                                     (1, {"content": "bad arguments", "is_error": True})], reply_text="ok")
    client = Client()
    client.force_login(ada)
    page = client.get(reverse("llm_mcp:chat_detail", args=[record.pk])).content.decode()
    assert page.count('class="llm-mcp-result is-error partly-run"') == 1
    assert page.count('class="llm-mcp-result is-error"') == 1
    assert "may have partly run: check its effects before calling it again" in page
    assert page.count("The tool reported an error") == 1
