"""``AppsSandboxMiddleware``: the MCP Apps sandbox origin serves the sandbox proxy page and nothing else.

    MIDDLEWARE = [..., "llm_mcp.middleware.AppsSandboxMiddleware"]   # first is best

An App runs on ``LLM_MCP["APPS_SANDBOX_ORIGIN"]`` (same-origin with its proxy). Were the rest of
the site reachable there, someone signed in on that origin would hand every App their session:
so a request on that origin for any other URL answers 404 before a view, a session or a cookie
is touched. Needed when the sandbox origin reaches the same Django process (the development
setup ``make run`` uses, or one application behind two host names).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseNotFound
from django.urls import reverse

from . import conf

__all__ = ["AppsSandboxMiddleware"]


class AppsSandboxMiddleware:
    """404 for every request on the sandbox origin but the sandbox page (``llm_mcp:app_sandbox``)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> Any:
        sandbox = conf.get("APPS_SANDBOX_ORIGIN")
        if sandbox:
            from .app_views import request_origin

            try:
                origin = request_origin(request)
            except Exception:  # noqa: BLE001 - a Host header ALLOWED_HOSTS refuses: Django answers it later
                origin = None
            if origin == sandbox.rstrip("/") and request.path != reverse("llm_mcp:app_sandbox"):
                return HttpResponseNotFound(b"Not Found")
        return self.get_response(request)


