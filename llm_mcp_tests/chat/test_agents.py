"""Agents: ``llm_mcp.Agent`` subclasses build chats with their servers and inputs; their declarations
are checked when the class is made (inputs may not shadow methods, ``mcp`` must name methods).
"""

from __future__ import annotations

import pytest

import llm_mcp
from llm_mcp.testing.scripted_model import reply, tool_call

from llm_mcp_tests.support.processes import echo_command


def test_agent_builds_chats_with_servers_and_inputs(model, tmp_path):
    """MCP-AGENT-01, MCP-AGENT-02, MCP-DOWN-15: mcp is evaluated per chat with the inputs; nothing is contacted."""
    marker = tmp_path / "started"
    base_url = model.openai_base_url

    class Files(llm_mcp.MCP):
        def command(self):
            marker.write_text("started")
            return echo_command()

    class TriageAgent(llm_mcp.Agent):
        model = "gpt-test"
        provider = "openai"
        provider_options = {"base_url": base_url, "api_key": "k"}
        inputs = ["user"]
        instructions = "Triage incoming bug reports."

        def mcp(self):
            return [llm_mcp.mcp(command=echo_command(), name=f"echo_{self.user}", prefix=self.user), Files]

    chat = TriageAgent.chat(user="ann")
    assert [s.name for s in chat.mcp] == ["echo_ann", "files"] and not marker.exists()
    model.add(tool_call("ann_echo", {"message": "triaged"}), reply("done"))
    assert chat.ask("Triage the new reports").content == "done"
    assert model.requests[0].system == "Triage incoming bug reports."
    assert model.requests[1].tool_results[0]["content"] == "triaged"
    other = TriageAgent.chat(user="bob")
    assert other.mcp["echo_bob"] is not chat.mcp["echo_ann"]
    with pytest.raises(TypeError, match="inputs"):
        TriageAgent.chat(group="x")
    for server in [*chat.mcp, *other.mcp]:
        server.close()


def test_agent_declarations_are_checked_when_the_class_is_made():
    with pytest.raises(ValueError, match="'model' cannot be an input name"):
        class Shadowing(llm_mcp.Agent):
            model = "m"
            inputs = ["model"]

    def roll_dice(sides: int = 6) -> int:
        return 4

    with pytest.raises(TypeError, match="tools must be a list"):
        class BareFunction(llm_mcp.Agent):
            model = "m"
            tools = roll_dice

    with pytest.raises(TypeError, match="model must be a string"):
        class ComputedModel(llm_mcp.Agent):
            model = lambda self: "gpt"

    class ListInstructions(llm_mcp.Agent):
        model = "m"
        provider_options = {"api_key": "k"}
        instructions = ["a", "b"]

    with pytest.raises(TypeError, match="instructions must be a string"):
        ListInstructions.chat()


def test_agent_inputs_may_not_shadow_its_methods():
    with pytest.raises(ValueError, match="'describe' cannot be an input name"):
        class Agent(llm_mcp.Agent):
            model = "m"
            inputs = ["describe"]

            def describe(self) -> str:
                return "x"


def test_agent_mcp_naming_no_method_fails_at_class_creation():
    """A typo in ``mcp = "servrs"`` is reported where the agent is defined, naming the attribute."""
    with pytest.raises(TypeError, match=r"Typo\.mcp is the string 'servrs', which names no method"):
        class Typo(llm_mcp.Agent):
            model = "m"
            mcp = "servrs"

            def servers(self):
                return []
