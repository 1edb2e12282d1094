"""Steps of the authorization tests that run in processes of their own:
``python -m llm_mcp_tests.support.oauth_steps STEP ...``, each printing one JSON line on stdout.

The database comes from the environment as in ``llm_mcp_tests/support/steps.py`` (``DJANGO_DB_PATH``,
or ``DJANGO_DB_ENGINE=postgresql`` and ``DJANGO_DB_*``); the protected MCP server's URL from
``LLM_MCP_TEST_OAUTH_MCP_URL`` (the test runs :class:`~llm_mcp_tests.support.oauth_servers.OAuthServers`).

* ``connect USERNAME``    create the user, connect :class:`ProtectedServer` through the views
                          (Django's test client; the authorization server approves at once)
* ``expire USERNAME``     mark the user's stored access token expired (the client will refresh)
* ``call USERNAME GO``    wait until the file GO exists, then call ``add`` (2 + 40) as the user
* ``state USERNAME``      the user's stored credentials, with the secrets replaced by their hashes
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import llm_mcp

from llm_mcp_tests.support.oauth_servers import OAuthServers, oauth_servers

__all__ = ["ProtectedServer", "connect_through_views", "main"]

MCP_URL_ENV = "LLM_MCP_TEST_OAUTH_MCP_URL"
STEP_TIMEOUT = 60.0


class ProtectedServer(llm_mcp.MCP):
    """The protected test MCP server, connected per user (``oauth = {"owner": "user"}``)."""

    name = "protected"
    url = "configured_url"
    inputs = ("user",)
    oauth = {"owner": "user"}  # noqa: RUF012 - a server setting, read by the class machinery
    timeout = 30

    def configured_url(self) -> str:
        return os.environ[MCP_URL_ENV]


def connect_through_views(client: Any, *, next_url: str = "/done/") -> dict[str, Any]:
    """Connect ``ProtectedServer`` for the user logged in on ``client`` (a Django test client
    whose host is loopback), following the authorization server's redirect as a browser
    would; returns the responses' statuses and locations."""
    import httpx
    from django.urls import reverse

    started = client.post(reverse("llm_mcp:oauth_connect", args=["protected"]), {"next": next_url})
    if started.status_code != 302:
        raise AssertionError(f"connect answered {started.status_code}: {started.content[:2000]!r}")
    authorization_url = started["Location"]
    answer = httpx.get(authorization_url, follow_redirects=False, timeout=30)
    if answer.status_code != 302:
        raise AssertionError(f"the authorization server answered {answer.status_code}: {answer.text[:500]}")
    callback_url = answer.headers["location"]
    finished = client.get(callback_url)
    return {"authorization_url": authorization_url, "callback_url": callback_url, "status": finished.status_code,
            "location": finished.get("Location"), "content": finished.content.decode()[:2000]}


def _user(username: str) -> Any:
    from django.contrib.auth import get_user_model

    user, _ = get_user_model().objects.get_or_create(username=username)
    return user


def _hash(value: Any) -> Any:
    return hashlib.sha256(value.encode()).hexdigest()[:16] if isinstance(value, str) else value


class Unowned(llm_mcp.MCP):
    """``oauth`` without an input as owner: the views cannot build it for a user."""

    url = "http://127.0.0.1:9/mcp"
    oauth = {"owner": "some_owner"}  # noqa: RUF012

    def some_owner(self) -> str:
        return "everyone"


def protected_for(request: Any) -> ProtectedServer:
    """An ``OAUTH_SERVERS`` entry may name a function of the request."""
    return ProtectedServer(user=request.user)


@pytest.fixture
def servers(monkeypatch) -> Iterator[OAuthServers]:
    """The test authorization and MCP servers (``OAuthServers``), their MCP URL in ``$LLM_MCP_TEST_OAUTH_MCP_URL``
    for ``ProtectedServer`` (a fixture: import it into a test module to use it)."""
    with oauth_servers() as running:
        monkeypatch.setenv(MCP_URL_ENV, running.mcp_url)
        yield running


def main(argv: list[str]) -> int:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")
    django.setup()
    from django.conf import settings
    from django.test import Client

    settings.LLM_MCP = {**settings.LLM_MCP, "OAUTH_SERVERS": {"protected": "llm_mcp_tests.support.oauth_steps.ProtectedServer"}}
    step, username, *args = argv
    out: dict[str, Any]
    if step == "connect":
        client = Client(HTTP_HOST="127.0.0.1")
        client.force_login(_user(username))
        out = connect_through_views(client)
    elif step == "expire":
        from llm_mcp.models import Credential

        key = ProtectedServer(user=_user(username)).oauth_flow.key
        store = Credential.objects
        with store.synchronize(key):
            record = store.read(key) or {}
            record["expires_at"] = time.time() - 5
            store.write(key, record)
        out = {"expired": key}
    elif step == "call":
        go = Path(args[0])
        Path(f"{go}.{os.getpid()}.ready").write_text("ready")
        deadline = time.monotonic() + STEP_TIMEOUT
        while not go.exists():
            if time.monotonic() > deadline:
                raise SystemExit("the test never said go")
            time.sleep(0.01)
        server = ProtectedServer(user=_user(username))
        try:
            out = {"text": server.call("add", a=2, b=40).text}
        finally:
            server.close()
    elif step == "state":
        server = ProtectedServer(user=_user(username))
        record = server.oauth_flow.store.read(server.oauth_flow.key) or {}
        out = {key: _hash(record.get(key)) for key in ("access_token", "refresh_token", "expires_at")}
    else:
        raise SystemExit(f"unknown step {step!r}")
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
