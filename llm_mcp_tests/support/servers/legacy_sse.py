"""Serve a kit server over the 2024-11-05 HTTP+SSE transport (the ``mcp`` SDK's ``SseServerTransport``).

Usage::

    python -m llm_mcp_tests.support.servers.legacy_sse MODULE PORT

``MODULE`` names a module with a kit ``server`` (``llm_mcp_tests.support.servers.changing``).
GET ``http://127.0.0.1:PORT/mcp`` opens the event stream (POST there is 405, as a server that
predates Streamable HTTP answers), whose ``endpoint`` event names ``/messages/?session_id=...``
for the client's POSTs.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from typing import Any

__all__ = ["serve"]


def serve(kit_server: Any, port: int) -> None:
    """Serve ``kit_server`` (an ``llm_mcp.testing.Server``) on ``127.0.0.1:port`` until stopped."""
    import uvicorn
    from mcp.server.sse import SseServerTransport
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Mount, Route

    lowlevel = kit_server.build()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        transport = SseServerTransport("/messages/")

    async def stream(request):  # type: ignore[no-untyped-def]
        async with transport.connect_sse(request.scope, request.receive, request._send) as (read, write):
            await lowlevel.run(read, write, lowlevel.create_initialization_options())
        return Response()

    app = Starlette(routes=[Route("/mcp", endpoint=stream, methods=["GET"]),
                            Mount("/messages/", app=transport.handle_post_message)])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    serve(importlib.import_module(sys.argv[1]).server, int(sys.argv[2]))
