"""A URLconf whose views fail inside a token refresh, for the debug-page tests.

``/refresh/<port>/`` asks for a token with a refresh token at ``http://127.0.0.1:<port>/token``
(nothing listens there: the request fails inside ``llm_mcp.client.oauth``), holding the
token in the view's own locals too. The tokens are `REFRESH_TOKEN`, `ACCESS_TOKEN`.
"""

from __future__ import annotations

import secrets

from django.http import HttpRequest, HttpResponse
from django.urls import path

from llm_mcp.client.oauth.tokens import ClientAuth, request_token

REFRESH_TOKEN = f"rt-{secrets.token_hex(12)}"  # made at import, so no source line shown on the page holds them
ACCESS_TOKEN = f"at-{secrets.token_hex(12)}"
CLIENT_SECRET = f"cs-{secrets.token_hex(12)}"


def refresh(request: HttpRequest, port: int) -> HttpResponse:
    access_token = ACCESS_TOKEN  # a local of a frame outside the client, named like a secret
    settings_of_view = {"authorization": f"Bearer {access_token}"}
    request_token(None, f"http://127.0.0.1:{port}/token", {"grant_type": "refresh_token",
                                                          "refresh_token": REFRESH_TOKEN},
                  client=ClientAuth(client_id="app", client_secret=CLIENT_SECRET),
                  auth_method="client_secret_post")
    return HttpResponse(str(settings_of_view))


urlpatterns = [path("refresh/<int:port>/", refresh)]
