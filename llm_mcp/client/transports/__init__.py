"""Transports: stdio (a subprocess), Streamable HTTP, and the 2024-11-05 HTTP+SSE fallback."""

from .base import MessageHandler, Transport

__all__ = ["MessageHandler", "Transport"]
