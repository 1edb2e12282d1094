"""The official conformance suite's ``auth/*`` client scenarios (authorization code, discovery,
registration, scopes, RFC 9207 ``iss``), run against our conformance client.

The client (``llm_mcp_tests/support/conformance/auth.py``) plays the app through the public API:
it follows the authorization URL itself and answers step-up challenges by asking for wider
scopes. The suite's authorization and MCP servers check every request it sends. The
extension scenarios (client credentials, enterprise-managed, DPoP, workload identity) are in
``test_extension_scenarios.py``.
"""

from __future__ import annotations

import pytest

from llm_mcp_tests.support.conformance.suite import assert_passed, run_scenario

BOTH = ["auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3", "auth/basic-cimd",
        "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported", "auth/scope-omitted-when-undefined",
        "auth/scope-step-up", "auth/scope-retry-limit", "auth/token-endpoint-auth-basic",
        "auth/token-endpoint-auth-post", "auth/token-endpoint-auth-none", "auth/pre-registration"]
"""Scenarios required for both 2026-07-28 and 2025-11-25."""

LATEST_ONLY = ["auth/resource-mismatch", "auth/offline-access-scope", "auth/offline-access-not-supported",
               "auth/authorization-server-migration", "auth/iss-supported", "auth/iss-not-advertised",
               "auth/iss-supported-missing", "auth/iss-wrong-issuer", "auth/iss-unexpected", "auth/iss-normalized",
               "auth/metadata-issuer-mismatch"]
"""Scenarios introduced by 2026-07-28."""

SCENARIOS = [
    *[(s, "2026-07-28") for s in BOTH + LATEST_ONLY],
    *[(s, "2025-11-25") for s in BOTH],
    ("auth/2025-03-26-oauth-metadata-backcompat", "2025-03-26"),
    ("auth/2025-03-26-oauth-endpoint-fallback", "2025-03-26"),
]


@pytest.mark.conformance
@pytest.mark.parametrize(("scenario", "version"), SCENARIOS, ids=[f"{s}@{v}" for s, v in SCENARIOS])
def test_conformance_auth_scenario(scenario, version, tmp_path):
    """MCP-AUTH-02..07, MCP-AUTHAPP-01, MCP-SCOPE-01, MCP-REG-02, MCP-REG-04: the official suite passes the
    scenario with no check below SUCCESS (a WARNING, such as a scope not taken from the challenge, fails)."""
    assert_passed(*run_scenario(scenario, version, tmp_path))
