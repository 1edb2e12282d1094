"""DPoP (RFC 9449): when a server requires it, and what the client sends then."""

from __future__ import annotations

from llm_mcp.client.oauth.dpop import required


def test_required_by_the_challenge_scheme_or_the_resource_metadata():
    """MCP-DPOP-01: the 401 challenge (``WWW-Authenticate: DPoP ...``) or the protected resource's
    ``dpop_bound_access_tokens_required`` asks for DPoP."""
    assert required(challenge='DPoP resource_metadata="https://mcp.example.com/.well-known/x"')
    assert required(challenge='Bearer realm="mcp", DPoP algs="ES256"')
    assert required(challenge="dpop")
    assert required(resource_metadata={"dpop_bound_access_tokens_required": True})
    assert not required(resource_metadata={"dpop_bound_access_tokens_required": False})
    assert not required(challenge='Bearer error="invalid_token", error_description="x, DPoP required"')
    assert not required(challenge='Bearer realm="a\\"b, DPoP c"')
    assert not required(challenge=None, resource_metadata=None)


def test_an_authorization_server_that_merely_supports_dpop_does_not_require_it():
    """An authorization server advertising ``dpop_signing_alg_values_supported`` can bind tokens; a
    resource server that challenges with Bearer only would refuse DPoP tokens, so Bearer stays."""
    assert not required(challenge='Bearer resource_metadata="https://x"',
                        server_metadata={"dpop_signing_alg_values_supported": ["ES256"]})
