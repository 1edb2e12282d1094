"""An httpx transport that records every request it carries, for the HTTP-context tests."""

from __future__ import annotations

import threading

import httpx


class RecordingTransport(httpx.HTTPTransport):
    """``httpx.HTTPTransport`` that appends ``(method, host:port, path)`` of each request to
    ``seen`` (and its ``Mcp-Method`` header to ``mcp_methods``) before sending it. Thread-safe."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, str, str]] = []
        self.mcp_methods: list[str] = []  # the Mcp-Method header of each request that had one (2026-07-28)
        self._lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        with self._lock:
            self.seen.append((request.method, f"{request.url.host}:{request.url.port}", request.url.path))
            if "mcp-method" in request.headers:
                self.mcp_methods.append(request.headers["mcp-method"])
        return super().handle_request(request)

    def paths(self, method: str | None = None) -> list[str]:
        with self._lock:
            return [path for m, _, path in self.seen if method is None or m == method]
