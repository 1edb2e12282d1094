"""ASGI pieces of the test servers that read a request's body before passing it on
(with ``llm_mcp.testing.serve.read_body``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any


def replay(body: bytes, receive: Callable[[], Awaitable[dict[str, Any]]]) -> Callable[[], Awaitable[dict[str, Any]]]:
    """A ``receive`` that gives the app the already-read ``body`` as one ``http.request`` message,
    then defers to the real ``receive`` (for ``http.disconnect``)."""
    sent = False

    async def receive_again() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return receive_again
