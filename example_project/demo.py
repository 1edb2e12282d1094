"""Server classes of the example project.

``ProtectedServer`` is an HTTP server that needs each user's authorization (OAuth), at
``settings.EXAMPLE_OAUTH_MCP_URL``; the Connections page connects it through llm_mcp's views.

``DemoServer`` starts the small stdio server in ``example_project/demo_server.py``
with the same Python interpreter that runs Django, so it works in any virtualenv:

    python manage.py mcp_inspect example_project.demo.DemoServer
    python manage.py mcp_call example_project.demo.DemoServer add --arguments '{"a": 2, "b": 3}'

``LiveDemoServer`` is the same demo server shared over HTTP (the Procfile's ``demo`` process,
at ``settings.EXAMPLE_DEMO_MCP_URL``); the Procfile's ``listener`` listens to it and writes
the tools it heard of to ``settings.EXAMPLE_LIVE_TOOLS_FILE``, which the "Live tools" page
shows:

    python manage.py mcp_listen example_project.demo.LiveDemoServer
"""

import json
import os
import sys
import tempfile
import time
from pathlib import Path

from django.conf import settings

import llm_mcp

PROJECT_ROOT = Path(__file__).resolve().parent.parent


class DemoServer(llm_mcp.MCP):
    name = "demo"
    command = [sys.executable, "-m", "example_project.demo_server"]
    # Run from the project root so ``-m example_project.demo_server`` imports
    # whatever the current directory is.
    directory = str(PROJECT_ROOT)
    timeout = 30
    extensions = "apps"  # MCP Apps: dice_board's board renders on the chat page


class ProtectedServer(llm_mcp.MCP):
    """A server each user authorizes (OAuth) before use; its credentials are theirs.

        ProtectedServer(user=request.user).authorized      # connected?
    """

    name = "protected"
    url = "configured_url"
    inputs = ["user"]
    oauth = {"owner": "user"}
    timeout = 30

    def configured_url(self) -> str:
        return settings.EXAMPLE_OAUTH_MCP_URL


class LiveDemoServer(llm_mcp.MCP):
    """The demo server over HTTP, listened to by ``manage.py mcp_listen`` (see the Procfile).

    ``after_change`` runs in the listener's thread for each change the server announces; here
    it lists the tools again and keeps them where the site reads them (`live_tools`).
    """

    name = "live_demo"
    url = "configured_url"
    timeout = 30
    after_change = "remember_tools"

    def configured_url(self) -> str:
        return settings.EXAMPLE_DEMO_MCP_URL

    def remember_tools(self, change) -> None:
        if change == "tools":
            save_live_tools([tool.name for tool in self.tools])


def save_live_tools(names: list[str]) -> None:
    """Keep the tool names the listener heard of, with the time, for the "Live tools" page
    (written to a temporary file, then renamed: the page never reads half a file)."""
    path = Path(settings.EXAMPLE_LIVE_TOOLS_FILE)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".live-tools-")
    with os.fdopen(fd, "w") as out:
        json.dump({"tools": names, "at": time.time()}, out)
    os.replace(temporary, path)


def live_tools() -> dict | None:
    """What the listener last wrote (``{"tools": [...], "at": seconds since the epoch}``), or
    ``None`` before it heard anything."""
    try:
        return json.loads(Path(settings.EXAMPLE_LIVE_TOOLS_FILE).read_text())
    except (OSError, ValueError):
        return None
