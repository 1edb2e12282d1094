"""The kit's servers change while they serve: ``Server.add``/``remove``/``announce``, announced
to listening clients in both eras and over both transports, so users can test their listeners."""

from __future__ import annotations

import pytest

from llm_mcp.testing import Prompt, Resource, Server, Tool, running_server
from llm_mcp_tests.support.listening import Heard

CHANGING = "llm_mcp_tests.support.servers.changing"


class Plain(Tool):
    name = "plain"

    def call(self):
        return self.respond_with(content=self.text_content(text="plain"))


class Other(Tool):
    name = "other"

    def call(self):
        return self.respond_with(content=self.text_content(text="other"))


class Doc(Resource):
    uri = "memo://doc"
    name = "doc"

    def read(self):
        return "doc"


class Hello(Prompt):
    name = "hello"

    def messages(self):
        return [self.user_message("hi")]


def test_add_and_remove_change_what_a_server_lists_before_it_serves():
    """``add`` takes kit classes of every kind; ``remove`` takes a tool or prompt name or a resource URI."""
    server = Server("x", tools=[Plain])
    server.add(Other, Doc, Hello)  # nothing serves yet: nothing is announced, nothing fails
    assert [t.name for t in server.tools] == ["plain", "other"]
    assert [r.uri for r in server.resources] == ["memo://doc"] and [p.name for p in server.prompts] == ["hello"]
    server.remove("plain", "memo://doc", "hello")
    assert [t.name for t in server.tools] == ["other"] and not server.resources and not server.prompts


def test_bad_changes_are_refused_by_name():
    """A class of the wrong kind, a name served twice or a name nothing has: a clear error."""
    server = Server("x", tools=[Plain])
    with pytest.raises(TypeError, match="kit Tool"):
        server.add(str)
    with pytest.raises(ValueError, match="plain"):
        server.add(Plain)
    with pytest.raises(KeyError, match="nothing"):
        server.remove("nothing")
    with pytest.raises(ValueError, match="uri="):
        server.announce("resource")
    with pytest.raises(ValueError, match="announce"):
        server.announce("tasks")


def test_a_refused_change_leaves_the_server_as_it_was():
    """A refused ``add`` (a name already served, or one bad class among good ones) changes
    nothing: the server lists what it listed before and later changes still work."""
    server = Server("x", tools=[Plain])
    with pytest.raises(ValueError, match="plain"):
        server.add(Plain)
    with pytest.raises(TypeError, match="kit Tool"):
        server.add(Other, str)
    assert [t.name for t in server.tools] == ["plain"]
    server.add(Other)
    server.remove("plain")
    assert [t.name for t in server.tools] == ["other"]


def test_kit_servers_announce_list_changed_in_their_capabilities():
    """A kit server says its lists may change: ``listChanged`` for tools, prompts and resources,
    and ``resources.subscribe``, in the handshake era (2026-07-28 derives them from listen)."""
    capabilities = Server("x", tools=[Plain]).build().create_initialization_options().capabilities
    assert capabilities.tools.list_changed and capabilities.prompts.list_changed
    assert capabilities.resources.list_changed and capabilities.resources.subscribe


@pytest.mark.parametrize("era", ["modern", "handshake"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_kit_server_removing_a_tool_is_heard_by_a_listener(era, transport):
    """``remove`` from a tool is announced to a listening client in each era and transport."""
    heard = Heard()
    with running_server(CHANGING, transport=transport, era=era) as running:
        client = running.mcp(after_change=heard)
        try:
            client.listen()
            assert "edit" in {t.name for t in client.tools}
            client.call("remove_tool", name="edit")
            assert heard.wait_for("tools")
            assert "edit" not in {t.name for t in client.tools}
        finally:
            client.close()
