"""A chat whose MCP tool the server runs as a task. Until the chat pauses on tasks (issue 20,
not built yet), the turn waits for the task and the model receives its result, or its failure
as the tool's error."""

from __future__ import annotations

from llm_mcp.testing import reply, running_server, tool_call
from llm_mcp_tests.support.chats import make_chat

TASKING = "llm_mcp_tests.support.servers.tasking"


def test_a_task_in_a_turn_is_waited_for_and_the_model_gets_its_result(model):
    with running_server(TASKING, transport="http", era="modern") as running:
        server = running.mcp(name="reports", extensions=["tasks"])
        chat = make_chat(model, [tool_call("report", {"steps": 2, "delay": 0.05}), reply("done")])
        chat.with_mcp(server)
        answer = chat.ask("make the report")
        assert answer.content == "done"
        results = model.requests[1].tool_results
        assert len(results) == 1 and results[0]["content"] == "report with 2 steps"


def test_a_failed_task_is_one_tool_error_for_the_model(model):
    with running_server(TASKING, transport="http", era="modern") as running:
        server = running.mcp(name="reports", extensions=["tasks"])
        chat = make_chat(model, [tool_call("broken", {}), reply("sorry")])
        chat.with_mcp(server)
        assert chat.ask("read the archive").content == "sorry"
        results = model.requests[1].tool_results
        assert len(results) == 1 and "the archive is unreadable" in results[0]["content"]
