"""Text a chat writes for the model from what servers sent: descriptions cut to a length.

    shortened("Fill PDF forms", 300)     # -> "Fill PDF forms"
    shortened("x" * 400)                 # -> 297 x's and "..."

Used for the tool-search results (`llm_mcp.chat.tools.ToolSearch`) and the skill catalogue
(`llm_mcp.chat.skills.LoadSkill`), where a server's long description would crowd the model's context.
"""

from __future__ import annotations

__all__ = ["DESCRIPTION_LIMIT", "shortened"]

DESCRIPTION_LIMIT = 300
"""Characters of a description the model is shown in a listing (tool search, skill catalogue)."""


def shortened(text: str, limit: int = DESCRIPTION_LIMIT) -> str:
    """``text`` when it has at most ``limit`` characters, else its first ``limit - 3`` and ``"..."``
    (``limit`` counts characters and is at least 4)."""
    return text if len(text) <= limit else text[:limit - 3] + "..."
