"""Encodings the tests write out by hand: base64 as MCP content blocks carry it, and the
``=?base64?...?=`` form of an ``Mcp-Param-*`` header value."""

from __future__ import annotations

import base64


def b64(data: bytes) -> str:
    """``data`` in standard base64, as the ``data``/``blob`` of a content block carries it."""
    return base64.b64encode(data).decode("ascii")


def header_b64(text: str) -> str:
    """``text`` (UTF-8) as a base64-encoded ``Mcp-Param-*`` header value: ``=?base64?...?=``."""
    return "=?base64?" + b64(text.encode("utf-8")) + "?="
