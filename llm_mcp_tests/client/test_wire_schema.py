"""Every message the client sends validates against the official wire models (``mcp-types``).

The engine builds plain dicts (importing the wire models costs ~250 ms, over the import
budget of the whole client); this test checks those dicts against ``mcp_types`` for the
revision each request declares, for both eras, like the conformance suite's wire check.
"""

from __future__ import annotations

import json

import pytest
from mcp_types import methods

import llm_mcp


@pytest.mark.parametrize(("era", "version"), [("modern", "2026-07-28"), (None, "2025-11-25")])
def test_conn_01_outgoing_messages_match_the_wire_schema(raw_http, era, version):
    """MCP-CONN-01, MCP-TRANS-14: requests and notifications validate for the declared revision."""
    with llm_mcp.mcp(url=raw_http.url("basic", era=era)) as server:
        server.echo(message="wire")
        server.client.list("tools/list", "tools")
    bodies = [json.loads(e["body"]) for e in raw_http.log() if e["method"] == "POST" and e["body"]]
    checked = set()
    for body in bodies:
        # The discovery probe always speaks 2026-07-28, whatever the server turns out to speak.
        declared = ((body.get("params") or {}).get("_meta") or {}).get("io.modelcontextprotocol/protocolVersion")
        assert declared in (None, "2026-07-28")
        if "id" in body:
            methods.validate_client_request(body["method"], declared or version, body.get("params"))
        else:
            methods.validate_client_notification(body["method"], declared or version, body.get("params"))
        checked.add(body["method"])
    expected = {"tools/list", "tools/call"} | ({"server/discover"} if era else {"initialize",
                                                                               "notifications/initialized"})
    assert expected <= checked
