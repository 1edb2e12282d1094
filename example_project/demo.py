"""Server classes of the example project.

``ProtectedServer`` is an HTTP server that needs each user's authorization (OAuth), at
``settings.EXAMPLE_OAUTH_MCP_URL``; the Connections page connects it through llm_mcp's views.

``DemoServer`` starts the small stdio server in ``example_project/demo_server.py``
with the same Python interpreter that runs Django, so it works in any virtualenv:

    python manage.py mcp_inspect example_project.demo.DemoServer
    python manage.py mcp_call example_project.demo.DemoServer add --arguments '{"a": 2, "b": 3}'
"""

import sys
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
