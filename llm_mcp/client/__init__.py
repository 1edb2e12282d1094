"""The MCP client: describe servers, explore them, call their tools. No Django import.

    import llm_mcp
    docs = llm_mcp.mcp(url="https://learn.microsoft.com/api/mcp")
    docs.call("microsoft_docs_search", query="Azure Blob Storage").text
"""

from .cancel import CancelScope
from .errors import (
    AddressRefusedError,
    CancelledError,
    ConfigurationError,
    ConnectionError,
    ExtensionRequiredError,
    ForbiddenError,
    InputRequiredError,
    InsufficientScopeError,
    InvalidToolChoiceError,
    MCPError,
    ProcessExitedError,
    ServerTimeoutError,
    SkillVerificationError,
    StartupFailedError,
    TaskProtocolError,
    TurnLimitError,
    UnauthorizedError,
)
from .httpcontext import HTTPContext
from .progress import Progress
from .prompt import Prompt, PromptArgument, PromptMessage
from .question import Field, Question
from .resource import Resource, ResourceTemplate
from .result import Attachment, Result
from .server import MCP, Servers, mcp
from .session import Client
from .skill import Skill, SkillDirectoryEntry, SkillFile
from .task import Task
from .tool import Tool
from .transports import Transport

__all__ = [
    "MCP",
    "AddressRefusedError",
    "Attachment",
    "CancelScope",
    "CancelledError",
    "Client",
    "ConfigurationError",
    "ConnectionError",
    "ExtensionRequiredError",
    "Field",
    "HTTPContext",
    "ForbiddenError",
    "InputRequiredError",
    "InsufficientScopeError",
    "InvalidToolChoiceError",
    "MCPError",
    "ProcessExitedError",
    "Progress",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "Question",
    "Resource",
    "ResourceTemplate",
    "Result",
    "ServerTimeoutError",
    "Servers",
    "Skill",
    "SkillDirectoryEntry",
    "SkillFile",
    "SkillVerificationError",
    "StartupFailedError",
    "TaskProtocolError",
    "Task",
    "Tool",
    "Transport",
    "TurnLimitError",
    "UnauthorizedError",
    "mcp",
]


def __getattr__(name: str) -> object:
    """``PublicAddressesOnly`` (an httpx transport) is imported on first use, so that
    ``import llm_mcp.client`` loads no httpx; it stays out of ``__all__`` for the same reason."""
    if name == "PublicAddressesOnly":
        from .addresses import PublicAddressesOnly

        globals()[name] = PublicAddressesOnly
        return PublicAddressesOnly
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
