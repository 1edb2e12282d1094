"""The conformance suite's ``auth/*`` client scenarios, played by an app using only the public API.

The app here does what a web app does with a browser: it asks the server for
``authorization_url``, "visits" it (a GET that does not follow the redirect, reading
``code``, ``state`` and ``iss`` from the ``Location``), and hands the callback's parameters
to ``authorize``. When the server answers ``InsufficientScopeError``, the app decides to
ask for the union of the scopes it asked for before and those challenged (the library never
does that by itself), at most :data:`MAX_AUTHORIZATIONS` times in all.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx

import llm_mcp
from llm_mcp.client.config import configure

log = logging.getLogger("conformance.auth")

REDIRECT_URI = "http://localhost:3000/callback"
"""The app's callback; never contacted: the redirect's Location is read instead."""

CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""The app's client ID metadata document (the URL the suite expects)."""

MAX_AUTHORIZATIONS = 3
"""Authorizations the app runs per scenario before giving up (the first and two step-ups)."""


class App:
    """The app: one server, the scopes it last asked for, how many authorizations it ran."""

    def __init__(self, url: str, context: dict[str, Any]):
        oauth: dict[str, Any] = {"redirect_uri": REDIRECT_URI}
        if context.get("client_id"):
            oauth["client_id"] = context["client_id"]
        if context.get("client_secret"):
            oauth["client_secret"] = context["client_secret"]
        self.server = llm_mcp.mcp(url=url, name="conformance", oauth=oauth)
        self.scopes: list[str] = []
        self.authorizations = 0

    def authorize(self, scopes: list[str] | None = None) -> None:
        """Send the "user" through the authorization URL and finish with the callback."""
        self.authorizations += 1
        url = self.server.authorization_url(redirect_uri=REDIRECT_URI, scopes=scopes)
        self.scopes = dict(parse_qsl(urlsplit(url).query)).get("scope", "").split()
        with httpx.Client(follow_redirects=False, timeout=30) as browser:
            response = browser.get(url)
        location = response.headers.get("location")
        if not location:
            raise RuntimeError(f"the authorization endpoint answered HTTP {response.status_code} without a redirect")
        self.server.authorize(dict(parse_qsl(urlsplit(location).query)))

    def use(self) -> None:
        """List the tools and call each one, as a chat would."""
        for tool in self.server.refresh_tools():
            self.server.call(tool.server_name)

    def play(self) -> None:
        while True:
            try:
                self.use()
                return
            except llm_mcp.InsufficientScopeError as exc:
                if self.authorizations >= MAX_AUTHORIZATIONS:
                    log.info("still refused after %d authorizations: %s; giving up", self.authorizations, exc)
                    return
                wider = list(dict.fromkeys([*self.scopes, *exc.scopes]))
                log.info("step-up: asking for %s", wider)
                self.authorize(wider)
            except llm_mcp.UnauthorizedError:
                if self.authorizations >= MAX_AUTHORIZATIONS:
                    raise
                self.authorize()


def run(scenario: str, url: str, context: dict[str, Any]) -> None:
    configure(client_id=CLIENT_METADATA_URL, client_name="llm_mcp conformance client")
    app = App(url, context)
    try:
        app.play()
    except llm_mcp.MCPError as exc:
        # A refusal (mix-up, issuer mismatch, impostor resource...) is the expected outcome of
        # several scenarios; the suite judges from what reached its servers.
        log.info("refused: %s: %s", type(exc).__name__, exc)
