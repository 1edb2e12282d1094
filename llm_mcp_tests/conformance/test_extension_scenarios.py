"""The official conformance suite's extension scenarios (authorization, Skills), run against our client.

These scenarios belong to extensions (``io.modelcontextprotocol/oauth-client-credentials``,
``io.modelcontextprotocol/enterprise-managed-authorization``, the unfinalized
``io.modelcontextprotocol/auth/wif`` and ``io.modelcontextprotocol/auth/dpop``), so they run
without ``--spec-version``. Our side is ``llm_mcp_tests/support/conformance/machine.py`` (public API
only); the suite's own servers check every request they receive. The Skills scenarios (SEP-2640)
run against ``llm_mcp_tests/support/conformance/skills.py``.
"""

from __future__ import annotations

import pytest

from llm_mcp_tests.support.conformance.suite import assert_passed, run_scenario

SCENARIOS = [
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/enterprise-managed-authorization",
    "auth/wif-jwt-bearer",
    "auth/dpop",
    "auth/dpop-nonce",
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
]

OWN_CHECK = "sep-2640-"
"""The Skills scenarios' checks start with it: each such scenario must have run its one check."""


@pytest.mark.conformance
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_extension_scenario(scenario, tmp_path):
    """MCP-CC-01, MCP-CC-04, MCP-PKJWT-01, MCP-WIF-01, MCP-SSO-02, MCP-DPOP-01, MCP-DPOP-03: the official
    suite passes the authorization extension scenario (every check SUCCESS).

    The Skills extension scenarios (SEP-2640) pass with their own check run: no file read before a
    skill is loaded; a SKILL.md whose digest, size or frontmatter differs from the listed entry is
    refused (the supporting file is never read). Our side: ``llm_mcp_tests/support/conformance/skills.py``."""
    checks, output = run_scenario(scenario, None, tmp_path)
    if scenario.startswith(OWN_CHECK):
        assert [c["status"] for c in checks if c["id"].startswith(OWN_CHECK)] == ["SUCCESS"], checks
    assert_passed(checks, output)
