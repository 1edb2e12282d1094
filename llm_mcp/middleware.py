"""``AppsSandboxMiddleware``: the MCP Apps sandbox origin serves the sandbox proxy page and nothing else.

    MIDDLEWARE = [..., "llm_mcp.middleware.AppsSandboxMiddleware"]   # first is best

An App runs on ``LLM_MCP["APPS_SANDBOX_ORIGIN"]`` (same-origin with its proxy). Were the rest of
the site reachable there, someone signed in on that origin would hand every App their session:
so a request on that host name (and port; whatever the scheme) for any other URL answers 404 before a view, a session or a cookie
is touched. Needed when the sandbox origin reaches the same Django process (the development
setup ``make run`` uses, or one application behind two host names).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from django.http import HttpRequest, HttpResponse, HttpResponseNotFound
from django.urls import reverse

from . import conf

__all__ = ["AppsSandboxMiddleware"]


def _host(origin: str) -> str:
    """``host[:port]`` of ``scheme://host[:port]``, lower case, ports 80 and 443 left out (as for the
    request's host)."""
    parts = urlsplit(origin.rstrip("/"))
    port = parts.port
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    return host if port in (None, 80, 443) else f"{host}:{port}"


class AppsSandboxMiddleware:
    """404 for every request on the sandbox origin but the sandbox page (``llm_mcp:app_sandbox``)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> Any:
        sandbox = conf.get("APPS_SANDBOX_ORIGIN")
        if sandbox:
            try:
                host = re.sub(r":(80|443)$", "", request.get_host().lower())
            except Exception:  # noqa: BLE001 - a Host header ALLOWED_HOSTS refuses: Django answers it later
                host = None
            # The host name and port alone: behind a front server that ends TLS Django may see http
            # for an https sandbox, and the site must stay off that host name all the same.
            if host == _host(sandbox) and request.path != reverse("llm_mcp:app_sandbox"):
                return HttpResponseNotFound(b"Not Found")
        return self.get_response(request)


