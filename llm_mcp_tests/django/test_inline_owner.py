"""An inline server's OAuth credentials kept under an owner object, such as the saved server row
(MCP-INLINE-04), in the app's encrypted credential store."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType

import llm_mcp
from llm_mcp.models import Credential

from llm_mcp_tests.support.oauth_servers import oauth_servers

REDIRECT = "http://127.0.0.1:8000/callback"


@pytest.mark.db
@pytest.mark.django_db(transaction=True)
def test_inline_04_credentials_are_kept_under_the_owner_object():
    """MCP-INLINE-04: ``llm_mcp.mcp(url=..., oauth={"owner": row})``: the tokens are stored under that
    row (its content type and primary key) and a server built again for the same row is authorized."""
    row = get_user_model().objects.create_user("server-row")  # any saved model: here a user row
    other = get_user_model().objects.create_user("other-row")
    with oauth_servers() as servers:
        server = llm_mcp.mcp(url=servers.mcp_url, name="saved", oauth={"owner": row})
        url = server.authorization_url(redirect_uri=REDIRECT)
        callback = servers.approve(url, user="someone")
        server.authorize(dict(parse_qsl(urlsplit(callback).query)))
        assert server.call("add", a=2, b=2).text == "4"
        (stored,) = Credential.objects.filter(owner_type=ContentType.objects.get_for_model(row),
                                              owner_id=str(row.pk)).exclude(secret=None)
        assert stored.owner == row and stored.data["access_token"]
        assert llm_mcp.mcp(url=servers.mcp_url, name="saved", oauth={"owner": row}).authorized
        assert not llm_mcp.mcp(url=servers.mcp_url, name="saved", oauth={"owner": other}).authorized
        server.close()
