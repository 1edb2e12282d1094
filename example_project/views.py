"""Views of the example site beside the app's chat pages (``llm_mcp.urls`` under ``/mcp/``).

    /connections/    servers that need the user's authorization: Connect/Disconnect
                     (llm_mcp's views under /mcp/oauth/), and their tools once connected
    /live-tools/     the demo server's tools as the Procfile's listener last heard them;
                     POST: ask the shared demo server to learn a tool (``learn_shout``)

The chats themselves (list, new chat, the chat page, approvals, questions, cancel, resume)
are the app's views; this project only overrides ``llm_mcp/base.html`` for its header.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from llm_mcp import conf as llm_mcp_conf
from llm_mcp.views import build_server

from . import demo

__all__ = ["connections", "live_tools"]

log = logging.getLogger("example_project")


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text[:500]}"


# -- connections (OAuth) ---------------------------------------------------------------------

@require_GET
def connections(request: HttpRequest) -> HttpResponse:
    """The servers of ``LLM_MCP["OAUTH_SERVERS"]``: for a signed-in user, whether each is
    connected (``authorized``), a Connect or Disconnect button, and a connected server's tools."""
    rows = []
    for name in llm_mcp_conf.get("OAUTH_SERVERS"):
        row: dict[str, Any] = {"name": name, "authorized": False, "tools": [], "error": ""}
        if request.user.is_authenticated:
            server = build_server(name, request)
            try:
                row["authorized"] = server.authorized
                if row["authorized"]:
                    row["tools"] = [tool.name for tool in server.tools]
            except Exception as exc:  # the server is down, or the grant was revoked there
                log.warning("listing the tools of %s failed: %s", name, type(exc).__name__)
                row["error"] = _describe(exc)
            finally:
                server.close()
        rows.append(row)
    return render(request, "example_project/connections.html", {"rows": rows})


def live_tools(request: HttpRequest) -> HttpResponse:
    """The shared demo server's tools as the listener (``manage.py mcp_listen
    example_project.demo.LiveDemoServer``) last heard them; POST asks the server to learn
    ``shout``, which it announces, so the list here grows once the listener heard it."""
    if request.method == "POST":
        server = demo.LiveDemoServer()
        try:
            server.call("learn_shout")
            messages.success(request, "The demo server learnt to shout; the listener hears it and this page shows it.")
        except Exception as exc:  # the demo process is not running
            messages.error(request, f"The demo server could not be reached: {_describe(exc)}")
        finally:
            server.close()
        return redirect("live_tools")
    heard = demo.live_tools()
    return render(request, "example_project/live_tools.html", {
        "heard": heard, "url": settings.EXAMPLE_DEMO_MCP_URL,
        "at": datetime.fromtimestamp(heard["at"], UTC) if heard else None})
