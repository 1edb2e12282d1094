"""MkDocs hooks for the llm_mcp docs site (``hooks:`` in mkdocs.yml).

``<!-- server-settings -->`` in a page becomes the table of server settings, rendered
from the one declared table in ``llm_mcp/client/server/settings.py``, so the docs can
never list a setting the code lacks or miss one it has.
"""

from __future__ import annotations

from llm_mcp.client.server.settings import settings_reference

MARKER = "<!-- server-settings -->"


def on_page_markdown(markdown: str, **kwargs: object) -> str:
    """Replace the settings marker with the table (pages without it are left as they are)."""
    if MARKER in markdown:
        return markdown.replace(MARKER, settings_reference())
    return markdown
