"""What a chat offers the model: the `ToolLike` contract every chat tool meets, and the
`Toolbox` of one model request.

Two kinds of tools meet the contract: `llm_mcp.Tool` (a tool of an MCP server) and
`ChatTool` (a tool written in Python, plain functions included).

    box = Toolbox(chat.mcp, [Weather()], listed=set(), deferred_servers=set(), history=lambda: [])
    box.offered        # {"weather": <Weather name='weather'>, "linear_search": <Tool ...>}
    box.resolve("weather")
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from ..client import outages
from ..client.errors import CancelledError, ConfigurationError, InvalidToolChoiceError, MCPError
from ..client.shaping import is_refusal
from .messages import Message
from .providers import ToolSpec
from .schemas import fill_schema, schema_problem, wire_name
from .skills import OfferedSkills
from .tools import ToolSearch

if TYPE_CHECKING:
    from ..client.server import MCP

__all__ = ["ToolLike", "Toolbox", "Unavailable"]

log = logging.getLogger("llm_mcp.chat")


class ToolLike(Protocol):
    """What a chat needs of a tool. `llm_mcp.Tool` and `ChatTool`
    (with its defaults) both have every member; a chat reads no other attribute of a tool.

        def offer(tool: ToolLike) -> ToolSpec:
            return ToolSpec(tool.name, tool.description, tool.params_schema)
    """

    @property
    def name(self) -> str:
        """The name the model calls it by (unique in a chat; made safe for the provider by the toolbox)."""
        ...

    @property
    def description(self) -> str:
        """What it does, for the model (`""` when nobody said)."""
        ...

    @property
    def params_schema(self) -> dict[str, Any]:
        """The JSON Schema (an `"object"` schema, as a dict) of the arguments the model fills in."""
        ...

    @property
    def requires_approval(self) -> bool:
        """`True` when each call pauses until a person approves it (`ToolCall.approve()`)."""
        ...

    @property
    def deferred(self) -> bool:
        """`True` when the tool is left out of the model's first list: the model finds it
        with the tool-search tool (`search_tools`)."""
        ...

    @property
    def server(self) -> MCP | None:
        """The MCP server the tool belongs to (its outages are tracked around each call), or
        `None` for a tool of no server."""
        ...

    @property
    def server_name(self) -> str:
        """The tool's own name before any renaming: its name on its MCP server (what
        `tools/call` sends, what the server's shaping settings name); a Python tool's name."""
        ...

    def call(self, /, **arguments: Any) -> Any:
        """Run the tool with the model's arguments (a `tool_call` keyword is dropped).

        Returns a `str`, a JSON-able `dict`/`list`, a `Result`, a chat
        `Message`, or `{"error": text}` for a failure the model should hear about. Raises
        `InputRequiredError` to pause the call on questions,
        `CancelledError`, and failures that should stop the chat."""
        ...


class Unavailable:
    """Stands for a tool of a server that is down, so the model hears why the call did not run.

    Attributes:
        text: what the model is told (the tool message's content).
    """

    def __init__(self, name: str, servers: list[str]):
        self.text = (f"The tool {name!r} is not available right now: its MCP server ({', '.join(servers)}) "
                     "is unavailable. It was not called.")


class Toolbox:
    """The tools of one model request: names made safe and unique, deferred tools held back.

    Built from the chat's servers (each listed now, unless its outage backoff runs) and the
    tools given with `with_tools`.

    Args:
        servers: the chat's connected servers (`chat.mcp`).
        tools: the tools given with `with_tools`.
        listed: names of the servers whose tools this chat listed; a server that is down but
            in it is still offered (its tools come from its cache). Servers listed now are added.
        deferred_servers: names of the servers whose every tool is deferred (`with_mcp(defer=True)`).
        history: returns the conversation, read only when some tool is deferred (to find the
            deferred tools earlier searches made available).
        owner: the chat the tool-search tool belongs to.

    Attributes:
        offered: `{name the provider gets: tool}`, in the order the model sees them.
        by_name: every tool, deferred ones included, by its own name and its offered name.
        unavailable: names of the servers that are down or could not list their tools.
        skills: the skills offered (`llm_mcp.chat.skills.OfferedSkills`).

    Raises `ValueError` when two tools have one name, and what listing a server raises when
    retrying will not fix it (a refusal, a configuration error, a cancellation).
    """

    def __init__(self, servers: Iterable[MCP], tools: Iterable[Any], *, listed: set[str],
                 deferred_servers: set[str], history: Callable[[], list[Message]], owner: Any = None):
        self.servers = list(servers)
        self.offered: dict[str, ToolLike] = {}
        self.by_name: dict[str, ToolLike] = {}
        self.unavailable: list[str] = []
        sources: dict[str, str] = {}
        entries: list[tuple[ToolLike, str, bool]] = []
        for server in self.servers:
            if server.name not in listed and outages.is_down(server):
                self.unavailable.append(server.name)  # its backoff runs: not contacted
                continue
            try:
                server_tools = server.model_tools
            except MCPError as exc:
                if is_refusal(exc) or isinstance(exc, (ConfigurationError, CancelledError)):
                    raise
                if outages.is_outage(exc):
                    outages.record(server, exc)
                else:
                    log.warning("MCP server %s could not list its tools (%s); they are left out", server.name,
                                type(exc).__name__)
                self.unavailable.append(server.name)
                continue
            listed.add(server.name)
            for tool in server_tools:
                entries.append((tool, f"MCP server {server.name!r}",
                                server.name in deferred_servers or bool(tool.deferred)))
        reachable = [server for server in self.servers if server.name not in self.unavailable]
        self.skills = OfferedSkills(reachable, history)
        entries.extend((tool, "skills", False) for tool in self.skills.tools)
        entries.extend((tool, "with_tools", False) for tool in tools)
        offer: list[ToolLike] = []
        deferred: list[ToolLike] = []
        discovered = self._discovered(history()) if any(entry[2] for entry in entries) else set()
        for tool, source, is_deferred in entries:
            problem = schema_problem(tool.name, tool.params_schema)
            if problem:
                log.warning("tool %r from %s is left out: %s", tool.name, source, problem)
                continue
            if tool.name in sources:
                raise ValueError(f"two tools are named {tool.name!r}: one from {sources[tool.name]}, one from "
                                 f"{source}; rename one (tool_options 'as') or give a server a prefix")
            sources[tool.name] = source
            self.by_name[tool.name] = tool
            (deferred if is_deferred and tool.name not in discovered else offer).append(tool)
        if deferred:
            offer.append(ToolSearch(owner, deferred))
        # names that are already safe keep them; the others get a safe one that is not taken
        assigned: dict[int, str] = {}
        for tool in offer:
            if wire_name(tool.name) == tool.name and tool.name not in assigned.values():
                assigned[id(tool)] = tool.name
        taken = set(assigned.values())
        for tool in offer:
            if id(tool) not in assigned:
                assigned[id(tool)] = wire_name(tool.name, taken)
                taken.add(assigned[id(tool)])
        for tool in offer:
            self.offered[assigned[id(tool)]] = tool
            self.by_name.setdefault(assigned[id(tool)], tool)

    def requires_approval(self, tool: ToolLike) -> bool:
        """Whether a call of ``tool`` pauses for approval: its ``requires_approval``, unless a skill
        loaded in the conversation pre-approves it (`OfferedSkills.preapproves`, off by default)."""
        return bool(tool.requires_approval) and not self.skills.preapproves(tool)

    @functools.cached_property
    def specs(self) -> list[ToolSpec]:
        """The tools as the provider gets them (built only for a model request)."""
        return [ToolSpec(name, tool.description or "", fill_schema(tool.params_schema))
                for name, tool in self.offered.items()]

    def resolve(self, name: str) -> ToolLike | Unavailable | None:
        """The tool a model's call names (its safe name, or its own name); for a tool of a
        server that is down now, an `Unavailable` saying so;
        `None` for a name no tool has."""
        tool = self.offered.get(name) or self.by_name.get(name)
        if tool is not None or not self.unavailable:
            return tool
        for server in self.servers:
            if server.name in self.unavailable:
                for known in server.catalog.listed_tools or ():
                    if name in (known.name, wire_name(known.name)):
                        return Unavailable(known.name, [server.name])
        return Unavailable(name, self.unavailable)  # never listed here; most likely one of theirs

    @staticmethod
    def _discovered(messages: list[Message]) -> set[str]:
        """Names of deferred tools that searches in this conversation found (they are offered)."""
        names = {ToolSearch.name, wire_name(ToolSearch.name, {ToolSearch.name})}  # its name, or its name when taken
        found: set[str] = set()
        search_ids = {call.id for m in messages if m.role == "assistant" for call in m.tool_calls
                      if call.name in names}
        for message in messages:
            if message.role == "tool" and message.tool_call_id in search_ids:
                found.update(ToolSearch.discovered(message.content))
        return found

    def check_choice(self, choice: str | None) -> str | None:
        """The tool choice to send; raises `InvalidToolChoiceError`
        when it cannot be met."""
        if choice is None or choice in ("auto", "none"):
            return choice
        down = f" (unavailable MCP servers: {', '.join(self.unavailable)})" if self.unavailable else ""
        if choice == "required":
            if not self.offered:
                raise InvalidToolChoiceError(f"the tool choice is 'required' but the chat has no tools to offer{down}")
            return choice
        for name, tool in self.offered.items():
            if choice in (name, tool.name):
                return name
        raise InvalidToolChoiceError(f"the tool choice names {choice!r}, which this chat cannot offer{down}")
