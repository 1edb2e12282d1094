"""llm_mcp: Model Context Protocol servers for Django projects' LLM chats.

    import llm_mcp
    server = llm_mcp.mcp(command=["npx", "-y", "@modelcontextprotocol/server-everything"])
    server.call("echo", message="hi").text

The client (``llm_mcp.client``) imports no Django; the Django app lives beside it.
"""

from ._version import __version__
from .client import (
    MCP,
    Attachment,
    CancelledError,
    Client,
    ConfigurationError,
    ConnectionError,
    ForbiddenError,
    InputRequiredError,
    InsufficientScopeError,
    MCPError,
    Result,
    Servers,
    Tool,
    Transport,
    UnauthorizedError,
    mcp,
)

__all__ = [
    "MCP",
    "Attachment",
    "CancelledError",
    "Client",
    "ConfigurationError",
    "ConnectionError",
    "ForbiddenError",
    "InputRequiredError",
    "InsufficientScopeError",
    "MCPError",
    "Result",
    "Servers",
    "Tool",
    "Transport",
    "UnauthorizedError",
    "__version__",
    "mcp",
]
