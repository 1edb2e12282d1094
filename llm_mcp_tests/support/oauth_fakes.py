"""Small scriptable HTTP servers on 127.0.0.1 for OAuth tests that need a misbehaving peer.

    with FakeServer() as site:
        site.route("/.well-known/oauth-protected-resource/mcp", json={"resource": ..., ...})
        site.route("/mcp", status=401, headers={"WWW-Authenticate": 'Bearer scope="read"'})
        site.url                    # http://127.0.0.1:PORT
        site.requests               # [Seen(method, path, query, headers, body), ...] in order

A route answers with a fixed response (``status``, ``headers``, ``json`` or ``body``) or with a
``handler(seen) -> (status, headers, body)`` for answers that depend on the request. Paths
without a route answer 404. Used where the real test authorization server
(``oauth_servers.py``) cannot be made to misbehave: issuer mix-ups, impostor resources,
``javascript:`` endpoints, redirects, well-known URLs guarded by a CDN (401/403).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qsl, urlsplit

import llm_mcp

__all__ = ["FakeServer", "Seen"]


@dataclass
class Seen:
    """One request a :class:`FakeServer` received."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes = b""

    @property
    def form(self) -> dict[str, str]:
        """The body as a form (``application/x-www-form-urlencoded``)."""
        return dict(parse_qsl(self.body.decode()))

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


Handler = Callable[[Seen], "tuple[int, dict[str, str], Any]"]


@dataclass
class _Route:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    handler: Handler | None = None


class FakeServer:
    """An HTTP server answering scripted routes (see the module docstring).

    Attributes:
        url: ``http://127.0.0.1:PORT`` once started.
        requests: every request received, in order (``Seen``).
    """

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], _Route] = {}
        self.requests: list[Seen] = []
        self.url = ""
        self._server: ThreadingHTTPServer | None = None
        self._lock = threading.Lock()

    def route(self, path: str, *, method: str = "GET", status: int = 200, headers: dict[str, str] | None = None,
              json: Any = None, body: bytes | str | None = None, handler: Handler | None = None) -> None:
        """Answer ``method path`` with a fixed response, or with ``handler(seen)``."""
        payload: Any = body if body is not None else json
        self.routes[(method.upper(), path)] = _Route(status, dict(headers or {}), payload, handler)

    def paths(self, method: str | None = None) -> list[str]:
        """The paths requested so far (optionally with one method), in order."""
        with self._lock:
            return [s.path for s in self.requests if method is None or s.method == method]

    def start(self) -> FakeServer:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("content-length") or 0)
                seen = Seen(self.command, parts.path, dict(parse_qsl(parts.query)),
                            {k.lower(): v for k, v in self.headers.items()}, self.rfile.read(length) if length else b"")
                with fake._lock:
                    fake.requests.append(seen)
                route = fake.routes.get((self.command, parts.path))
                if route is None:
                    status, headers, body = 404, {}, {"error": "not_found"}
                elif route.handler is not None:
                    status, headers, body = route.handler(seen)
                else:
                    status, headers, body = route.status, route.headers, route.body
                if isinstance(body, (dict, list)):
                    data = json.dumps(body).encode()
                    headers = {"Content-Type": "application/json", **headers}
                else:
                    data = body.encode() if isinstance(body, str) else (body or b"")
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = _serve

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True,
                         name="fake-oauth").start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Hostile:
    """An MCP server, its protected resource metadata and its authorization server on one
    127.0.0.1 port, where one document misbehaves: ``drip`` (headers, then a byte every 0.2 s
    for two minutes), ``huge`` (20 MB in 64 KiB chunks), or fixed ``bytes``.

    Attributes:
        url: the MCP endpoint (``/mcp``, always 401 with ``resource_metadata``).
        sent: bytes of the misbehaving body written before the client hung up.
    """

    HUGE = 20 * 1024 * 1024

    def __init__(self, *, path: str, mode: str, body: bytes = b"") -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.sent = 0
        self.finished = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _json(self, status: int, data: dict, headers: dict | None = None) -> None:
                import json

                payload = json.dumps(data).encode()
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", "Content-Length": str(len(payload)),
                                    **(headers or {})}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            def _hostile(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if mode == "bytes":
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    if mode == "drip":
                        for _ in range(600):
                            self.wfile.write(b" ")
                            self.wfile.flush()
                            outer.sent += 1
                            time.sleep(0.2)
                    else:
                        chunk = b" " * 65536
                        while outer.sent < outer.HUGE:
                            self.wfile.write(chunk)
                            outer.sent += len(chunk)
                except OSError:
                    pass
                finally:
                    outer.finished.set()
                    self.close_connection = True

            def _route(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                base = outer.base
                if self.path == path:
                    self._hostile()
                elif self.path == "/mcp":
                    self._json(401, {"error": "invalid_token"},
                               {"WWW-Authenticate": f'Bearer resource_metadata="{base}/prm"'})
                elif self.path == "/prm":
                    self._json(200, {"resource": f"{base}/mcp", "authorization_servers": [base]})
                elif self.path == "/.well-known/oauth-authorization-server":
                    self._json(200, {"issuer": base, "token_endpoint": f"{base}/token",
                                     "authorization_endpoint": f"{base}/authorize",
                                     "registration_endpoint": f"{base}/register",
                                     "code_challenge_methods_supported": ["S256"]})
                else:
                    self._json(404, {"error": "not_found"})

            do_GET = do_POST = _route

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.url = f"{self.base}/mcp"

    def __enter__(self) -> Hostile:
        import threading

        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def hostile_user_server(url: str) -> llm_mcp.MCP:
    """A user-authorized server object on ``url`` (a ``Hostile`` one), with a 2 s timeout."""
    return llm_mcp.mcp(url=url, name="hostile", timeout=2, oauth={"owner": "review"})


DEEP = b"[" * 100_000 + b"]" * 100_000
"""A JSON document nested 100,000 levels deep."""
