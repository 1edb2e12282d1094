"""A small authorization server on 127.0.0.1 that records every request and answers as scripted.

    with RecordingAS() as auth_server:
        auth_server.answers.append((400, {"error": "invalid_client"}, {}))   # next answer
        ...                                                                     # POST auth_server.url("/token")
        auth_server.requests[0].form["grant_type"]

Used by the token endpoint, machine grant and DPoP tests (helper B). Without a scripted answer,
a POST to ``/token`` issues ``{"access_token": "tok-<n>", "token_type": ..., "expires_in": 3600}``
and GET of a metadata path answers ``metadata``.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, unquote_plus, urlsplit

__all__ = ["Recorded", "RecordingAS", "basic_credentials"]


@dataclass
class Recorded:
    """One request the server received: ``method``, ``path``, ``headers`` (lower-cased names),
    ``form`` (the urlencoded body, or the query of a GET; one value per name)."""

    method: str
    path: str
    headers: dict[str, str]
    form: dict[str, str] = field(default_factory=dict)


Answer = tuple[int, Any, dict[str, str]]


class RecordingAS:
    """The server. ``answers``: scripted answers (status, JSON body or ``bytes``, headers), used
    first-in first-out by POST requests; ``handler``: optional ``callable(Recorded) -> Answer | None``
    consulted before the default token; ``get_handler``: the same for GET requests other than
    metadata; ``metadata``: what GET of a ``/.well-known/...`` path returns."""

    def __init__(self, token_type: str = "Bearer") -> None:
        self.requests: list[Recorded] = []
        self.answers: list[Answer] = []
        self.handler: Callable[[Recorded], Answer | None] | None = None
        self.get_handler: Callable[[Recorded], Answer | None] | None = None
        self.token_type = token_type
        self.metadata: dict[str, Any] = {}
        self._count = 0
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _record(self) -> Recorded:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode("utf-8") if length else ""
                form = {key: values[0] for key, values in parse_qs(raw, keep_blank_values=True).items()}
                parts = urlsplit(self.path)
                if parts.query and not form:
                    form = {key: values[0] for key, values in parse_qs(parts.query, keep_blank_values=True).items()}
                recorded = Recorded(self.command, parts.path,
                                    {key.lower(): value for key, value in self.headers.items()}, form)
                with outer._lock:
                    outer.requests.append(recorded)
                return recorded

            def _send(self, answer: Answer) -> None:
                status, body, headers = answer
                payload = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json" if not isinstance(body, bytes) else "text/plain")
                self.send_header("Content-Length", str(len(payload)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                recorded = self._record()
                answer = None
                if recorded.path.startswith("/.well-known/") and outer.metadata:
                    answer = (200, outer.metadata, {})
                elif outer.get_handler is not None:
                    answer = outer.get_handler(recorded)
                self._send(answer or (404, {"error": "not_found"}, {}))

            def do_POST(self) -> None:
                recorded = self._record()
                answer = None
                if outer.handler is not None:
                    answer = outer.handler(recorded)
                if answer is None:
                    with outer._lock:
                        answer = outer.answers.pop(0) if outer.answers else None
                        outer._count += 1
                        count = outer._count
                    if answer is None:
                        answer = (200, {"access_token": f"tok-{count}", "token_type": outer.token_type,
                                        "expires_in": 3600}, {"Cache-Control": "no-store"})
                self._send(answer)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        """``http://127.0.0.1:<port>``: the issuer."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def url(self, path: str) -> str:
        return self.base + path

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def basic_credentials(headers: dict[str, str]) -> tuple[str, str]:
    """The client id and secret of a recorded request's ``Authorization: Basic`` header (RFC 6749
    section 2.3.1: each form-urlencoded before base64); fails if the scheme is not Basic."""
    scheme, _, encoded = headers["authorization"].partition(" ")
    assert scheme == "Basic"
    user, _, password = base64.b64decode(encoded).decode().partition(":")
    return unquote_plus(user), unquote_plus(password)
