"""Debug pages and 500 e-mails without MCP tokens: `SecretsReporterFilter`.

Django's technical 500 page (``DEBUG = True``) and the e-mails ``AdminEmailHandler``
sends list each frame's local variables. An exception inside a token refresh, an
authorization or an MCP request has access tokens, refresh tokens, client secrets and
``Authorization`` headers among them. `SecretsReporterFilter` shows none of the locals of
those frames, nor of any frame they called (httpx's, say), and cleanses variables whose
names look secret in every other frame. ``INSTALLED_APPS = [..., "llm_mcp"]`` installs it
when ``DEFAULT_EXCEPTION_REPORTER_FILTER`` is Django's default; a site with its own filter
subclasses this one (system check ``llm_mcp.W003`` says so otherwise).
"""

from __future__ import annotations

import re
from types import FrameType
from typing import Any

from django.views.debug import SafeExceptionReporterFilter

__all__ = ["SENSITIVE_MODULES", "SecretsReporterFilter"]

SENSITIVE_MODULES = (
    "llm_mcp.client.oauth",
    "llm_mcp.client.server.auth",
    "llm_mcp.client.server.connection",
    "llm_mcp.client.transports",
    "llm_mcp.client.session",
    "llm_mcp.credentials",
    "llm_mcp.views",
)
"""Modules whose frames (and the frames they call) show no locals on a debug page."""


def _sensitive(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in SENSITIVE_MODULES)


class SecretsReporterFilter(SafeExceptionReporterFilter):
    """Django's `SafeExceptionReporterFilter`, plus: every local of a frame in (or called from)
    `SENSITIVE_MODULES` is replaced by ``cleansed_substitute``, and anywhere else a variable
    named like a secret (``token``, ``secret``, ``authorization``, ``bearer``, ``dpop``,
    ``password``, ``key``, ...) is, with dict values under such keys.

    ``DEFAULT_EXCEPTION_REPORTER_FILTER = "llm_mcp.debug.SecretsReporterFilter"``.
    """

    hidden_settings = re.compile(
        "API|TOKEN|KEY|SECRET|PASS|SIGNATURE|HTTP_COOKIE|AUTHORIZATION|BEARER|DPOP|CREDENTIAL|ASSERTION|VERIFIER",
        flags=re.IGNORECASE)

    def get_traceback_frame_variables(self, request: Any, tb_frame: FrameType) -> Any:
        frame: FrameType | None = tb_frame
        while frame is not None:
            if _sensitive(frame.f_globals.get("__name__", "")):
                return [(name, self.cleansed_substitute) for name in tb_frame.f_locals]
            frame = frame.f_back
        return [(name, self.cleanse_setting(name, value))
                for name, value in super().get_traceback_frame_variables(request, tb_frame)]
