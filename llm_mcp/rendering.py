"""What the chat pages show of model and server text: rendered when shown, never stored rendered.

    markdown_html("**Hi** <script>x</script>")     # '<p><strong>Hi</strong> &lt;script&gt;x&lt;/script&gt;</p>'
    structured_html({"sum": 42})                  # a key/value table
    attachment_views(row.attachments)             # images and audio as data: URIs, resources as names

Markdown is parsed by markdown-it-py (CommonMark, tables, strikethrough; raw HTML off) and the
result sanitized by nh3 (Ammonia): an allow-list of tags and attributes, links only to
``http``, ``https`` and ``mailto`` and with ``rel="noopener noreferrer nofollow"``. Nothing the
model or a server wrote reaches a page otherwise than through this module or Django's
auto-escaping: no template marks such text ``|safe``.

Images and audio are shown inline only from bytes the server sent in its result (a ``data:``
URI of an allow-listed MIME type, at most ``LLM_MCP["CHAT_INLINE_MEDIA_BYTES"]``), never from
a URL the server named: a resource link is a named attachment the page does not fetch.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import nh3
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

from . import conf

__all__ = ["AUDIO_TYPES", "IMAGE_TYPES", "attachment_views", "markdown_html", "structured_html"]

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""Image types shown inline (no SVG: it is a document that can carry script)."""

AUDIO_TYPES = frozenset({"audio/mpeg", "audio/mp3", "audio/wav", "audio/x-wav", "audio/ogg", "audio/webm",
                         "audio/mp4", "audio/aac", "audio/flac"})
"""Audio types shown inline, with the browser's player."""

TAGS = {"p", "br", "hr", "strong", "em", "del", "s", "code", "pre", "blockquote", "ul", "ol", "li", "a",
        "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td", "img"}
ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "th": {"style"}, "td": {"style"}, "code": {"class"},
              "img": {"alt", "title"}}
URL_SCHEMES = {"http", "https", "mailto"}

MAX_TREE_DEPTH = 20
"""Nesting shown as a tree; deeper values are shown as their JSON text."""

_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable(
    ["table", "strikethrough"])


def _safe_style(tag: str, attribute: str, value: str) -> str | None:
    if attribute == "style":  # markdown-it aligns table cells with style="text-align:..."; nothing else passes
        return value if value in ("text-align:left", "text-align:right", "text-align:center") else None
    if attribute == "class":
        return value if value.startswith("language-") and value[9:].replace("-", "").isalnum() else None
    return value


def markdown_html(text: str) -> SafeString:
    """``text`` (markdown from a model or a server) as sanitized HTML.

    Raw HTML in the text is shown as text, ``javascript:``/``data:`` links lose their ``href``,
    and images keep no ``src`` (a reply cannot make the browser fetch an address)."""
    html = _markdown.render(text or "")
    return mark_safe(nh3.clean(html, tags=TAGS, attributes=ATTRIBUTES, url_schemes=URL_SCHEMES,
                               link_rel="noopener noreferrer nofollow", attribute_filter=_safe_style,
                               strip_comments=True))


def structured_html(value: Any, depth: int = 0) -> SafeString:
    """``value`` (structured content, JSON) as escaped HTML: a flat object as a key/value table,
    a list of flat objects as a table with a column per key, nested values as a tree of lists."""
    if depth >= MAX_TREE_DEPTH:
        return format_html("<code>{}</code>", json.dumps(value, ensure_ascii=False)[:2000])
    if isinstance(value, dict):
        if not value:
            return format_html('<span class="llm-mcp-empty">{}</span>', "{}")
        rows = format_html_join("", "<tr><th scope=\"row\">{}</th><td>{}</td></tr>",
                                ((key, structured_html(item, depth + 1)) for key, item in value.items()))
        return format_html('<table class="llm-mcp-structured">{}</table>', rows)
    if isinstance(value, list):
        if value and all(isinstance(item, dict) and item and all(_scalar(v) for v in item.values())
                         for item in value):
            keys = list(dict.fromkeys(key for item in value for key in item))
            head = format_html_join("", "<th scope=\"col\">{}</th>", ((key,) for key in keys))
            body = format_html_join("", "<tr>{}</tr>", (
                (format_html_join("", "<td>{}</td>", ((_scalar_text(item.get(key, "")),) for key in keys)),)
                for item in value))
            return format_html('<table class="llm-mcp-structured"><thead><tr>{}</tr></thead><tbody>{}</tbody></table>',
                               head, body)
        if not value:
            return format_html('<span class="llm-mcp-empty">{}</span>', "[]")
        items = format_html_join("", "<li>{}</li>", ((structured_html(item, depth + 1),) for item in value))
        return format_html('<ol class="llm-mcp-tree" start="0">{}</ol>', items)
    return format_html("{}", _scalar_text(value))


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _scalar_text(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def attachment_views(attachments: Any) -> list[dict[str, Any]]:
    """What a message's stored attachments (``attachment_to_dict`` dicts) look like on a page:
    each ``{"kind", "name", "mime_type", "size", "inline", "data_uri", "text", "uri"}``.

    ``inline`` is ``"image"`` or ``"audio"`` for media shown in the page (``data_uri`` set),
    else ``""`` (a named attachment; ``text`` holds an embedded text resource, ``uri`` the
    resource's address, shown as text and never fetched)."""
    limit = conf.get("CHAT_INLINE_MEDIA_BYTES")
    views = []
    for data in attachments if isinstance(attachments, list) else []:
        if not isinstance(data, dict):
            continue
        content = data.get("content")
        raw = content.get("base64") if isinstance(content, dict) else None
        payload: bytes | None = None
        if isinstance(raw, str):
            try:
                payload = base64.b64decode(raw, validate=True)
            except ValueError:
                payload = None
        mime = str(data.get("mime_type") or "").split(";")[0].strip().lower()
        kind = str(data.get("kind") or "")
        view = {"kind": kind, "name": str(data.get("name") or data.get("uri") or kind or "attachment")[:300],
                "mime_type": mime, "size": len(payload) if payload is not None else
                (len(content.encode()) if isinstance(content, str) else None),
                "inline": "", "data_uri": "", "text": content if isinstance(content, str) else "",
                "uri": str(data.get("uri") or "")[:2000]}
        if payload is not None and len(payload) <= limit:
            if kind == "image" and mime in IMAGE_TYPES:
                view["inline"] = "image"
            elif kind == "audio" and mime in AUDIO_TYPES:
                view["inline"] = "audio"
            if view["inline"]:
                view["data_uri"] = f"data:{mime};base64,{base64.b64encode(payload).decode('ascii')}"
        views.append(view)
    return views
