"""The progress kit server (``progress_tools``) over the 2024-11-05 HTTP+SSE transport.

Usage::

    python -m llm_mcp_tests.support.servers.progress_sse PORT [RECORD_FILE]

GET ``http://127.0.0.1:PORT/mcp`` opens the event stream (POST there is 405, as a server
that predates Streamable HTTP answers), whose ``endpoint`` event names ``/messages/?session_id=...``
for the client's POSTs. ``RECORD_FILE`` is the server's ``record`` context (see
``progress_tools``). Uses the ``mcp`` SDK's ``SseServerTransport``.
"""

from __future__ import annotations

import sys
import warnings


def main(argv: list[str] | None = None) -> None:
    import uvicorn
    from mcp.server.sse import SseServerTransport
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Mount, Route

    from .progress_tools import SERVER

    args = list(sys.argv[1:] if argv is None else argv)
    port = int(args[0])
    if len(args) > 1:
        SERVER.context["record"] = args[1]
    lowlevel = SERVER.build()
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
    main()
