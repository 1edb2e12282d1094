"""The kit's resources, resource templates and prompts: template matching, definitions checked,
rendering and completing a prompt."""

from __future__ import annotations

import base64

import pytest

from llm_mcp.testing import Prompt, Resource, ResourceTemplate

from llm_mcp_tests.support.kit_tools import Greet, Notes


def test_resource_template_matching() -> None:
    assert Notes.match("notes://ann/a/b%20c.txt") == {"owner": "ann", "path": "a/b c.txt"}
    assert Notes.match("notes://ann") is None
    assert Notes.match("other://ann/x") is None
    assert Notes.read_contents("notes://bob/x") == [{"uri": "notes://bob/x", "blob": base64.b64encode(b"bob:x").decode()}]
    assert Notes.definition() == {"uriTemplate": "notes://{owner}/{+path}", "name": "notes"}
    with pytest.raises(ValueError, match="does not match"):
        Notes.read_contents("notes://")


def test_resource_definitions_checked() -> None:
    with pytest.raises(TypeError, match="Bad.uri"):
        type("Bad", (Resource,), {"uri": 3, "name": "x"})
    with pytest.raises(TypeError, match="Bad.size"):
        type("Bad", (Resource,), {"uri": "file:///x", "name": "x", "size": -2})
    with pytest.raises(TypeError, match=r"Bad.completions\['x'\]"):
        type("Bad", (ResourceTemplate,), {"uri_template": "a://{x}", "name": "x", "completions": {"x": [1]}})
    with pytest.raises(TypeError, match="needs uri and name"):
        type("NoUri", (Resource,), {"name": "x"}).definition()


def test_prompt_render_and_complete() -> None:
    assert Greet.definition() == {"name": "greet", "description": "Says hello.",
                                  "arguments": [{"name": "who", "required": True}, {"name": "style"}]}
    assert Greet.render({"who": "Ann"}) == {
        "description": "Says hello.", "messages": [{"role": "user", "content": {"type": "text", "text": "Hello Ann"}}]}
    with pytest.raises(ValueError, match=r"missing required argument\(s\) \['who'\]"):
        Greet.render({})
    assert Greet.complete("style", "f") == {"values": ["formal", "Friendly", "funny"], "total": 3, "hasMore": False}
    assert Greet.complete("style", "FO") == {"values": ["formal"], "total": 1, "hasMore": False}
    assert Greet.complete("who", "an", {"style": "formal"}) == {"values": ["an-formal"], "total": 1,
                                                                "hasMore": False}
    assert Greet.complete("unknown", "") == {"values": [], "total": 0, "hasMore": False}
    with pytest.raises(TypeError, match="Bad.arguments"):
        type("Bad", (Prompt,), {"name": "bad", "arguments": {"who": True}})
