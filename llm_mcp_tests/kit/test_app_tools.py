"""The kit's MCP App tools: ``resource_uri`` and ``visibility`` published as ``_meta.ui``, checked
when the class is made; ``ui://`` resources with ``_meta.ui`` (served in both eras: see
client/test_apps.py, which reads them through the client)."""

from __future__ import annotations

import pytest

from llm_mcp.testing import Resource, Tool


def test_resource_uri_and_visibility_become_meta_ui():
    class Board(Tool):
        name = "board"
        resource_uri = "ui://demo/board.html"
        visibility = ["app"]
        meta = {"ui": {"prefersBorder": True}, "other": 1}

        def call(self):
            return "x"

    assert Board.definition()["_meta"] == {"ui": {"prefersBorder": True, "resourceUri": "ui://demo/board.html",
                                                  "visibility": ["app"]}, "other": 1}

    class Plain(Tool):
        name = "plain"

        def call(self):
            return "x"

    assert "_meta" not in Plain.definition()


@pytest.mark.parametrize(("attributes", "words"), [
    ({"resource_uri": "https://x/board.html"}, "must be a ui:// URI"),
    ({"resource_uri": "ui://x", "visibility": ["user"]}, "visibility must be a list of 'model' and 'app'"),
    ({"resource_uri": "ui://x", "visibility": "app"}, "visibility must be a list"),
])
def test_bad_app_definitions_are_refused_at_class_creation(attributes, words):
    with pytest.raises(ValueError, match=words):
        type("Bad", (Tool,), {"name": "bad", "call": lambda self: "x", **attributes})


def test_ui_resource_meta_on_listing_and_contents():
    class Page(Resource):
        uri = "ui://demo/page.html"
        name = "page"
        mime_type = "text/html;profile=mcp-app"
        meta = {"ui": {"csp": {"connectDomains": ["https://api.example.com"]}}}

        def read(self):
            return "<p>hi</p>"

    listing = Page.definition()
    assert listing["_meta"]["ui"]["csp"] == {"connectDomains": ["https://api.example.com"]}
    (item,) = Page()._contents(Page.uri)
    assert item["_meta"] == listing["_meta"] and item["mimeType"] == "text/html;profile=mcp-app"
