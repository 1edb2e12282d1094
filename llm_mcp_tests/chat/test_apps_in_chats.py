"""MCP Apps in chats: App tools called by the model like any other, the tool-result message's
``mcp_result`` (the whole Result, for tools with a UI only) and ``parent_tool_call``, app-only tools
never offered (also through ``with_tools``).

Real chats through the official SDK on the scripted model; the apps kit server over Streamable HTTP
in both eras.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from llm_mcp.testing.scripted_model import reply, tool_call

from llm_mcp_tests.support.apps import AppsServer, apps_server
from llm_mcp_tests.support.chats import tool_result_text

FORECAST = "ui://weather/forecast"


@pytest.fixture(scope="module", params=["modern", "handshake"])
def apps(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppsServer]:
    with apps_server(request.param, tmp_path_factory.mktemp("apps")) as server:
        yield server


def tool_messages(chat):
    return [m for m in chat.messages if m.role == "tool"]


def test_mcp_apps_03_04_09_result_message(chat_on, model, apps):
    """MCP-APPS-03, MCP-APPS-04, MCP-APPS-09: the model calls an App tool and reads its text; the
    tool-result message's mcp_result is the server's whole Result (ui_uri, structured, to_dict()),
    and parent_tool_call.arguments are the call's."""
    server = apps.mcp(extensions="apps")
    chat = chat_on([tool_call("forecast", {"city": "Tromsø"}, id="call_f"), reply("Cold.")]).with_mcp(server)
    chat.ask("Weather in Tromsø?")
    (message,) = tool_messages(chat)
    direct = server.call("forecast", city="Tromsø")  # the same tool, called directly: what a result looks like
    server.close()
    result = message.mcp_result
    assert result.ui_uri == FORECAST
    assert result.structured["city"] == "Tromsø" and isinstance(result.structured["reading"], int)
    assert result.to_dict()["structuredContent"] == result.structured
    assert set(result.to_dict()) == set(direct.to_dict())
    assert message.parent_tool_call.arguments == {"city": "Tromsø"}
    assert message.parent_tool_call.id == "call_f"
    assert json.loads(tool_result_text(model.requests[1].tool_results[0])) == result.structured  # the model read it


def test_mcp_apps_03_06_failed_calls(chat_on, model, apps):
    """MCP-APPS-03, MCP-APPS-06: an isError result still has mcp_result (the UI may render it) and the
    model reads its text; a call that raised (JSON-RPC error) has mcp_result None and an error
    content; a tool without a UI has mcp_result None."""
    server = apps.mcp(extensions="apps")
    chat = chat_on([tool_call("failing_forecast", {}, id="c1"), tool_call("broken_forecast", {}, id="c2"),
                    tool_call("plain", {}, id="c3"), reply("done")]).with_mcp(server)
    chat.ask("go")
    server.close()
    failing, broken, plain = tool_messages(chat)
    assert failing.is_error and failing.mcp_result.is_error and failing.mcp_result.text == "no forecast today"
    assert failing.mcp_result.ui_uri == FORECAST
    assert "no forecast today" in tool_result_text(model.requests[1].tool_results[0])
    assert broken.mcp_result is None and broken.is_error and broken.parent_tool_call.id == "c2"
    assert broken.parent_tool_call.mcp_result is None
    assert plain.mcp_result is None and plain.content == "plain text"
    assert plain.parent_tool_call.mcp_result is not None  # kept on the call for the chat page, not an App result


def test_mcp_apps_08_app_only_never_offered_even_with_tools(chat_on, model, apps, caplog):
    """MCP-APPS-08: refresh (visibility ["app"]) is listed and callable, never offered, even when passed to
    with_tools (a debug line says why); model_only (["model"]) is offered."""
    server = apps.mcp(extensions="apps")
    refresh = server.tool("refresh")
    assert refresh in server.tools
    offered = chat_on([reply("ok")]).with_mcp(server)
    offered.ask("hi")
    assert "refresh" not in model.requests[0].tool_names and "forecast" in model.requests[0].tool_names
    chat = chat_on([reply("ok")])
    with caplog.at_level(logging.DEBUG, logger="llm_mcp.chat"):
        chat.with_tools(refresh, server.tool("model_only"))
    chat.ask("hi")
    assert model.requests[1].tool_names == ["model_only"]
    assert any("refresh" in r.getMessage() and "visibility" in r.getMessage() for r in caplog.records)
    assert server.call("refresh", city="x").structured["city"] == "x"
    server.close()
