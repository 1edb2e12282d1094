"""The progress kit server (``progress_tools``) over the 2024-11-05 HTTP+SSE transport.

Usage::

    python -m llm_mcp_tests.support.servers.progress_sse PORT [RECORD_FILE]

GET ``http://127.0.0.1:PORT/mcp`` opens the event stream (POST there is 405, as a server
that predates Streamable HTTP answers), whose ``endpoint`` event names ``/messages/?session_id=...``
for the client's POSTs. ``RECORD_FILE`` is the server's ``record`` context (see
``progress_tools``). Served by ``legacy_sse`` (the ``mcp`` SDK's ``SseServerTransport``).
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    from .legacy_sse import serve
    from .progress_tools import SERVER

    args = list(sys.argv[1:] if argv is None else argv)
    port = int(args[0])
    if len(args) > 1:
        SERVER.context["record"] = args[1]
    serve(SERVER, port)


if __name__ == "__main__":
    main()
