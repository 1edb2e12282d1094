"""llm_mcp: Model Context Protocol servers for Django projects' LLM chats.

    import llm_mcp
    server = llm_mcp.mcp(command=["npx", "-y", "@modelcontextprotocol/server-everything"])
    server.call("echo", message="hi").text

The client (``llm_mcp.client``) imports no Django; the Django app lives beside it.
"""

from . import client
from ._version import __version__
from .client import *  # noqa: F403 - the client's public names are ours
from . import chat  # noqa: E402 - callable: llm_mcp.chat(model=..., provider=...)
from .chat import Agent, Chat, ChatTool
from .client.httpcontext import context  # llm_mcp.context(transport=...): HTTP settings for a group of servers

__all__ = [*client.__all__, "Agent", "Chat", "ChatTool", "__version__", "chat", "context"]


def __getattr__(name: str) -> object:
    """``llm_mcp.PublicAddressesOnly``, imported (with httpx) on first use."""
    if name == "PublicAddressesOnly":
        return client.PublicAddressesOnly
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
