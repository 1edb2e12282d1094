"""A remote MCP server cannot aim the app's OAuth requests at the app's own machine.

Plain http is allowed to loopback OAuth endpoints so that local development works; a server
that is not itself on loopback must not use that to make the app fetch metadata from, or post
its client secret to, a service on 127.0.0.1 (review finding 16 of issue 6).
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

import llm_mcp
from llm_mcp.client.hosts import is_loopback
from llm_mcp.client.oauth.discovery import check_endpoint, check_metadata, discover


class Recorder:
    """An HTTP server on 127.0.0.1 that answers 404 to everything and counts what reached it."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                outer.paths.append(self.path)
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_POST = do_GET  # noqa: N815

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def recorder():
    server = Recorder()
    yield server
    server.close()


@pytest.mark.parametrize("host", ["localhost", "api.localhost", "127.0.0.1", "127.9.9.9", "[::1]", "::1", "LOCALHOST"])
def test_loopback_hosts(host):
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["", None, "example.com", "localhost.example.com", "10.0.0.1", "192.0.2.2", "[::2]"])
def test_hosts_that_are_not_loopback(host):
    assert not is_loopback(host)


def test_a_remote_servers_resource_metadata_on_this_machine_is_never_fetched(recorder):
    """MCP-AUTH-02: the 401 of a server at ``mcp.invalid`` names ``resource_metadata`` on
    127.0.0.1: the URL is ignored (nothing reaches the loopback service) and discovery goes on
    at the server's own well-known URLs (which do not resolve here)."""
    challenge = {"resource_metadata": f"{recorder.url}/.well-known/oauth-protected-resource"}
    with httpx.Client(follow_redirects=False, timeout=5) as http, pytest.raises(llm_mcp.MCPError):
        discover(http, "https://mcp.invalid/mcp", challenge, server_name="remote")
    assert recorder.paths == []


def test_a_loopback_servers_resource_metadata_on_this_machine_is_fetched(recorder):
    """The same challenge from a server on loopback (local development) is followed (and, with
    no metadata anywhere, discovery falls back to the 2025-03-26 default endpoints there)."""
    challenge = {"resource_metadata": f"{recorder.url}/.well-known/oauth-protected-resource"}
    with httpx.Client(follow_redirects=False, timeout=5) as http:
        found = discover(http, f"{recorder.url}/mcp", challenge, server_name="local")
    assert recorder.paths[0] == "/.well-known/oauth-protected-resource"
    assert found.fallback and found.metadata["token_endpoint"] == f"{recorder.url}/token"


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/token", "https://127.0.0.1/token", "https://localhost/token",
                                 "http://[::1]:8080/token"])
def test_endpoints_on_this_machine_are_refused_for_a_remote_server(url):
    with pytest.raises(llm_mcp.MCPError, match="on this machine"):
        check_endpoint(url, "token endpoint", "remote", local=False)
    metadata = {"issuer": "https://as.example.com", "token_endpoint": url,
                "authorization_endpoint": "https://as.example.com/authorize"}
    with pytest.raises(llm_mcp.MCPError, match="on this machine"):
        check_metadata(metadata, "remote", local=False)
    assert check_endpoint(url, "token endpoint", "local", local=True) == url


def test_remote_endpoints_stay_allowed_for_a_remote_server():
    metadata = {"issuer": "https://as.example.com", "token_endpoint": "https://as.example.com/token",
                "authorization_endpoint": "https://as.example.com/authorize"}
    check_metadata(metadata, "remote", local=False)
