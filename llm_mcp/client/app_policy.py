"""What a host lets an MCP App do: the Content Security Policy built from a UI resource's
``_meta.ui.csp`` and the iframe ``allow`` attribute from ``_meta.ui.permissions``.

    content_security_policy({"connectDomains": ["https://api.weather.example"]})
    # "default-src 'none'; script-src 'self' 'unsafe-inline'; ...; connect-src 'self' https://api.weather.example; ..."
    content_security_policy(None)       # the spec's strict default (no network at all)
    allow_attribute({"camera": {}, "clipboardWrite": {}})   # "camera; clipboard-write"

Spec: MCP Apps (``modelcontextprotocol/ext-apps``) 2026-01-26, "Security Implications",
"Content Security Policy Enforcement" (the reference construction) and "UI Resource Format"
(the default when ``csp`` is absent). A domain entry that could break out of its directive
(whitespace, ``;``, ``,``, quotes, control characters) is dropped, never passed on: the host may
tighten the policy, never loosen it.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["DEFAULT_POLICY", "allow_attribute", "content_security_policy", "source_list"]

DEFAULT_POLICY = ("default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
                  "img-src 'self' data:; media-src 'self' data:; connect-src 'none'; object-src 'none'")
"""The policy for a resource that declares no ``csp`` (the spec's default, with the draft's ``object-src``)."""

_SOURCE = re.compile(r"[A-Za-z0-9*][A-Za-z0-9+.\-]*:(//)?[A-Za-z0-9*.\-\[\]:]*(/[^\s;,'\"\x00-\x1f\x7f]*)?"
                     r"|[A-Za-z0-9*.\-\[\]]+(:[0-9*]+)?")
PERMISSIONS = (("camera", "camera"), ("microphone", "microphone"), ("geolocation", "geolocation"),
               ("clipboardWrite", "clipboard-write"))
"""``_meta.ui.permissions`` keys and the Permissions Policy features they allow."""


def source_list(domains: Any) -> list[str]:
    """The entries of a ``*Domains`` list that are plain CSP sources (``https://api.example.com``,
    ``https://*.example.com``, ``wss://live.example.com:8443``); anything else is dropped."""
    if not isinstance(domains, list):
        return []
    return [d for d in domains if isinstance(d, str) and d.isascii() and _SOURCE.fullmatch(d) and d not in ("*",)]


def content_security_policy(csp: Any) -> str:
    """The policy for an App whose resource declares ``csp`` (``_meta.ui.csp``: ``connectDomains``,
    ``resourceDomains``, ``frameDomains``, ``baseUriDomains``); `DEFAULT_POLICY` when ``csp`` is
    not a dict. Undeclared domains are never allowed."""
    if not isinstance(csp, dict):
        return DEFAULT_POLICY
    resources = " ".join(source_list(csp.get("resourceDomains")))
    connect = " ".join(source_list(csp.get("connectDomains")))
    frames = " ".join(source_list(csp.get("frameDomains"))) or "'none'"
    bases = " ".join(source_list(csp.get("baseUriDomains"))) or "'self'"

    def directive(name: str, base: str, extra: str) -> str:
        return f"{name} {base} {extra}".rstrip()

    return "; ".join([
        "default-src 'none'",
        directive("script-src", "'self' 'unsafe-inline'", resources),
        directive("style-src", "'self' 'unsafe-inline'", resources),
        directive("connect-src", "'self'", connect),
        directive("img-src", "'self' data:", resources),
        directive("font-src", "'self'", resources),
        directive("media-src", "'self' data:", resources),
        f"frame-src {frames}",
        "object-src 'none'",
        f"base-uri {bases}",
    ])


def allow_attribute(permissions: Any) -> str:
    """The iframe ``allow`` attribute for ``_meta.ui.permissions`` (``""`` when none is asked for)."""
    if not isinstance(permissions, dict):
        return ""
    return "; ".join(feature for key, feature in PERMISSIONS if key in permissions)
