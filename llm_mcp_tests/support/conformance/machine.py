"""The conformance client's part in the authorization extension scenarios (public API only).

``llm_mcp_tests.support.conformance.client`` dispatches these scenarios here:

* ``auth/client-credentials-basic`` and ``auth/client-credentials-jwt``: ``grant="client_credentials"``
  with the context's secret or private key (``io.modelcontextprotocol/oauth-client-credentials``);
* ``auth/wif-jwt-bearer``: ``assertion`` with the context's workload JWT;
* ``auth/enterprise-managed-authorization``: ``identity_provider`` with the context's ID token;
* ``auth/dpop`` and ``auth/dpop-nonce``: an ordinary user authorization (the client plays the app:
  it follows the authorization URL itself and hands the callback to ``authorize``); DPoP comes from
  the server's challenge with nothing configured.

Each scenario ends by listing the server's tools, which needs a token.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

import llm_mcp

log = logging.getLogger("llm_mcp_tests.conformance")

REDIRECT_URI = "http://localhost:3000/callback"


def _oauth(scenario: str, context: dict[str, Any]) -> dict[str, Any]:
    """The ``oauth`` setting an app would write for the scenario, from what the suite passes."""
    if scenario == "auth/client-credentials-basic":
        return {"grant": "client_credentials", "client_id": context["client_id"],
                "client_secret": context["client_secret"]}
    if scenario == "auth/client-credentials-jwt":
        return {"grant": "client_credentials", "client_id": context["client_id"],
                "private_key": context["private_key_pem"]}
    if scenario == "auth/wif-jwt-bearer":
        token = context["valid_jwt"]
        return {"assertion": lambda: token}
    if scenario == "auth/enterprise-managed-authorization":
        id_token = context["idp_id_token"]
        return {"client_id": context["client_id"], "client_secret": context["client_secret"],
                "identity_provider": {"issuer": context["idp_issuer"], "client_id": context["idp_client_id"],
                                      "id_token": lambda: id_token}}
    if scenario in ("auth/dpop", "auth/dpop-nonce"):
        return {"redirect_uri": REDIRECT_URI}
    raise ValueError(f"no machine-auth handling for scenario {scenario!r}")


def _authorize_as_the_user(server: llm_mcp.MCP) -> None:
    """What a browser and the app's callback view would do: open the authorization URL, take the
    redirect back, and finish with ``authorize``."""
    url = server.authorization_url(redirect_uri=REDIRECT_URI)
    with httpx.Client(follow_redirects=False, timeout=30) as browser:
        response = browser.get(url)
    location = response.headers.get("location")
    if response.status_code not in (301, 302, 303, 307, 308) or not location:
        raise RuntimeError(f"the authorization endpoint answered {response.status_code} without a redirect")
    params = {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}
    server.authorize(params)


def run(scenario: str, url: str, context: dict[str, Any]) -> None:
    with llm_mcp.mcp(url=url, name="conformance", oauth=_oauth(scenario, context)) as server:
        if scenario in ("auth/dpop", "auth/dpop-nonce"):
            try:
                server.connect()
            except llm_mcp.UnauthorizedError:
                _authorize_as_the_user(server)
            log.info("tools: %s", [tool.name for tool in server.tools])
            server.call("test-tool")
        else:
            log.info("tools: %s", [tool.name for tool in server.tools])
