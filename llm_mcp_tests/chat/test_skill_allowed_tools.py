"""A skill's ``allowed-tools`` in chats: ignored unless the server's ``skill_allowed_tools`` setting
grants it for that skill (spec "No implicit permission grants"); when granted, calls of the skill's
own server's tools it names skip the ``requires_approval`` pause while the skill is loaded.

Real parts: kit servers (``llm_mcp.testing.Server``) over Streamable HTTP on 2026-07-28, in this
process so their tools can count calls, and the scripted model through the official OpenAI SDK.
"""

from __future__ import annotations

import hashlib

import pytest

import llm_mcp
from llm_mcp.testing import Server, Skill, Tool, running_server
from llm_mcp.testing.scripted_model import reply, tool_call
from llm_mcp_tests.support.skills import by_name

REFUNDS = ("---\nname: refunds\ndescription: Refund a customer's order\nallowed-tools: refund lookup\n---\n\n"
           "Call refund with the order id.\n")


class Refunds(Skill):
    files = {"SKILL.md": REFUNDS}


class Notes(Skill):
    files = {"SKILL.md": "---\nname: notes\ndescription: Takes notes\n---\n\nNothing to approve.\n"}


class Refund(Tool):
    name = "refund"
    description = "Refund an order."
    input_schema = {"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]}

    def call(self):
        return self.respond_with(content=self.text_content(text=f"refunded {self.arguments['order']}"))


@pytest.fixture(scope="module")
def shop():
    with running_server(Server("shop", tools=[Refund], skills=[Refunds, Notes]), era="modern") as running:
        yield running


@pytest.fixture(scope="module")
def bank():
    with running_server(Server("bank", tools=[Refund]), era="modern") as running:
        yield running


def refund_turn(chat_on, *servers: llm_mcp.MCP, skill: str | None = "shop/refunds", tool: str = "refund"):
    script = [tool_call("load_skill", {"skill": skill}, id="c1")] if skill else []
    chat = chat_on([*script, tool_call(tool, {"order": "A-1"}, id="c2"), reply("Refunded.")]).with_mcp(*servers)
    chat.ask("Refund order A-1")
    return chat


def test_allowed_tools_ignored_without_the_setting(shop, chat_on, model):
    """The loaded skill's allowed-tools names ``refund``; without ``skill_allowed_tools`` the call still
    waits for approval, and runs once approved."""
    server = shop.mcp(name="shop", extensions="skills", requires_approval=["refund"])
    try:
        skill = by_name(server)["refunds"]
        assert skill.allowed_tools == ["refund", "lookup"]
        chat = refund_turn(chat_on, server)
        assert chat.waiting and [c.name for c in chat.pending_approvals] == ["refund"]
        assert not [m for m in chat.messages if m.role == "tool" and "refunded" in str(m.content)]
        chat.pending_approvals[0].approve()
        assert chat.complete().content == "Refunded."
        assert [m.content for m in chat.messages if m.role == "tool"][-1] == "refunded A-1"
    finally:
        server.close()


def pinned(skill: llm_mcp.Skill) -> bool:
    """Grant only the exact bytes reviewed: the listed digest of the skill's SKILL.md."""
    digest = "sha256:" + hashlib.sha256(REFUNDS.encode()).hexdigest()
    return skill.name == "refunds" and [f.digest for f in skill.files] == [digest]


@pytest.mark.parametrize("grant", [["refunds"], ["skill://refunds/SKILL.md"], pinned],
                         ids=["by-name", "by-uri", "callable"])
def test_granted_skill_preapproves_its_tools(shop, chat_on, model, grant):
    """With ``skill_allowed_tools`` naming the skill (by name, by URI, or a callable given the Skill),
    the loaded skill's ``refund`` runs without a pause."""
    server = shop.mcp(name="shop", extensions="skills", requires_approval=["refund"], skill_allowed_tools=grant)
    try:
        chat = refund_turn(chat_on, server)
    finally:
        server.close()
    assert not chat.waiting and chat.messages[-1].content == "Refunded."
    assert [m.content for m in chat.messages if m.role == "tool"][-1] == "refunded A-1"
    assert all(c.approval is None for m in chat.messages for c in m.tool_calls)


@pytest.mark.parametrize("skill", [None, "shop/notes"], ids=["none-loaded", "another-loaded"])
def test_grant_needs_the_skill_loaded(shop, chat_on, model, skill):
    """The grant holds only while the skill is loaded in the conversation: with no skill loaded, or
    another one, refund still waits for approval."""
    server = shop.mcp(name="shop", extensions="skills", requires_approval=["refund"],
                      skill_allowed_tools=["refunds"])
    try:
        chat = refund_turn(chat_on, server, skill=skill)
    finally:
        server.close()
    assert [c.name for c in chat.pending_approvals] == ["refund"]


def test_a_skill_never_preapproves_another_servers_tool(shop, bank, chat_on, model):
    """shop's granted skill names ``refund``; bank's ``refund`` (offered as ``bank_refund``) still waits:
    a skill's grant covers its own server's tools only."""
    server = shop.mcp(name="shop", extensions="skills", skill_allowed_tools=["refunds"], only=["skill:refunds"])
    other = bank.mcp(name="bank", prefix="bank", requires_approval=["refund"])
    try:
        chat = refund_turn(chat_on, server, other, tool="bank_refund")
    finally:
        server.close()
        other.close()
    assert [c.name for c in chat.pending_approvals] == ["bank_refund"]


@pytest.mark.parametrize(("value", "message"), [
    (True, "name the skills"),
    ("refunds", "must be a list of skill names"),
    ([""], "must be a list of skill names"),
])
def test_bad_setting_is_refused(value, message):
    """``skill_allowed_tools = True`` (every skill) or a value that is no list of names is refused
    when the server is built."""
    with pytest.raises(ValueError, match=message):
        llm_mcp.mcp(url="http://127.0.0.1:9/mcp", name="x", skill_allowed_tools=value)


def test_a_resumed_chat_verifies_the_skill_before_its_grant(shop, chat_on, model):
    """The skill was loaded with one server object; the chat goes on with a new one that has read
    nothing. The grant still holds, after the new object reads and verifies SKILL.md (loaded)."""
    first = shop.mcp(name="shop", extensions="skills", requires_approval=["refund"], skill_allowed_tools=["refunds"])
    chat = chat_on([tool_call("load_skill", {"skill": "shop/refunds"}, id="c1"), reply("Loaded."),
                    tool_call("refund", {"order": "B-2"}, id="c2"), reply("Refunded.")]).with_mcp(first)
    chat.ask("Load the refunds skill")
    chat.with_mcp(None)
    first.close()
    second = shop.mcp(name="shop", extensions="skills", requires_approval=["refund"], skill_allowed_tools=["refunds"])
    try:
        assert not by_name(second)["refunds"].loaded
        assert chat.with_mcp(second).ask("Refund order B-2").content == "Refunded."
        assert by_name(second)["refunds"].loaded
    finally:
        second.close()
    assert not chat.waiting and [m.content for m in chat.messages if m.role == "tool"][-1] == "refunded B-2"


class Swapped(Skill):
    """Verifies until a test swaps the SKILL.md it serves (same entry, other bytes)."""
    files = {"SKILL.md": REFUNDS.replace("name: refunds", "name: swapped")}
    served: dict = {}


def test_a_skill_that_no_longer_verifies_grants_nothing(chat_on, model):
    """Loaded in one server object, then the server serves other bytes for its SKILL.md: the next
    object cannot verify it, so refund waits for approval again."""
    with running_server(Server("shop", tools=[Refund], skills=[Swapped]), era="modern") as running:
        options = {"name": "shop", "extensions": "skills", "requires_approval": ["refund"],
                   "skill_allowed_tools": ["swapped"]}
        first = running.mcp(**options)
        chat = chat_on([tool_call("load_skill", {"skill": "shop/swapped"}, id="c1"), reply("Loaded."),
                        tool_call("refund", {"order": "C-3"}, id="c2"), reply("Refunded.")]).with_mcp(first)
        chat.ask("Load it")
        chat.with_mcp(None)
        first.close()
        Swapped.served = {"SKILL.md": Swapped.files["SKILL.md"].replace("Call refund", "Call refund now")}
        second = running.mcp(**options)
        try:
            chat.with_mcp(second).ask("Refund order C-3")
        finally:
            second.close()
            Swapped.served = {}
    assert [c.name for c in chat.pending_approvals] == ["refund"]
