"""ASGI pieces of the test servers that read a request's body before passing it on
(with ``llm_mcp.testing.serve.read_body``): ``replay``, the kit's own (its ASGI filters read
bodies too)."""

from __future__ import annotations

from llm_mcp.testing.serve import replay

__all__ = ["replay"]
