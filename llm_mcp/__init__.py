"""llm_mcp: Model Context Protocol servers for Django projects' LLM chats.

    import llm_mcp
    server = llm_mcp.mcp(command=["npx", "-y", "@modelcontextprotocol/server-everything"])
    server.call("echo", message="hi").text

The client (``llm_mcp.client``) imports no Django; the Django app lives beside it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from . import client
from ._version import __version__
from .client import *  # noqa: F403 - the client's public names are ours
from .client.httpcontext import context  # llm_mcp.context(transport=...): HTTP settings for a group of servers

if TYPE_CHECKING:
    from . import chat  # callable: llm_mcp.chat(model=..., provider=...)
    from .chat import Agent, Chat, ChatTool

_FROM_CHAT = ("Agent", "Chat", "ChatTool")

__all__ = [*client.__all__, "Agent", "Chat", "ChatTool", "__version__", "chat", "context"]


def __getattr__(name: str) -> object:
    """``llm_mcp.chat`` (and its ``Agent``, ``Chat``, ``ChatTool``) and ``llm_mcp.PublicAddressesOnly``
    (with httpx), imported on first use: ``import llm_mcp.client`` loads neither."""
    if name == "chat":
        return importlib.import_module(".chat", __name__)  # also binds llm_mcp.chat for later lookups
    if name in _FROM_CHAT:
        value = getattr(importlib.import_module(".chat", __name__), name)
        globals()[name] = value  # bound here: later reads skip this function
        return value
    if name == "PublicAddressesOnly":
        return client.PublicAddressesOnly
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The names bound here and those of ``__all__`` that `__getattr__` provides (the chat's), without
    importing them: tab completion and ``help(llm_mcp)`` see them as when they were imported eagerly."""
    return sorted({*globals(), *__all__})
