"""Agents: a chat's model, instructions, tools and MCP servers, declared once as a class.

    class TriageAgent(llm_mcp.Agent):
        model = "gpt-4.1-mini"
        inputs = ["user"]
        instructions = "Triage incoming bug reports."
        mcp = lambda self: [Linear(user=self.user), Files]

    TriageAgent.chat(user=request.user).ask("Triage the new reports")
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Protocol, runtime_checkable

from ..client.declared import evaluate, names_method
from .chat import Chat

__all__ = ["Agent", "RecordClass"]


@runtime_checkable
class RecordClass(Protocol):
    """What an agent's ``chat_class`` names: a class whose rows are chats, such as
    ``llm_mcp.models.Chat`` (which gets both methods from ``llm_mcp.db.record.ChatRecord``).

        class SupportAgent(llm_mcp.Agent):
            chat_class = "llm_mcp.models.Chat"
    """

    def for_agent(self, agent: Agent) -> Any:
        """A new saved chat set up by ``agent`` (what ``Agent.chat()`` returns)."""
        ...

    def find_for_agent(self, agent_class: type[Agent], pk: Any) -> Any:
        """The saved chat ``pk``, set up by ``agent_class`` with its stored inputs (what
        ``Agent.find(pk)`` returns); raises the model's ``DoesNotExist``."""
        ...


class Agent:
    """A kind of chat: subclass it and set the class attributes below.

        chat = TriageAgent.chat(user=user)     # servers connected, none contacted yet
        chat.ask("Triage the new reports")

    Attributes:
        model: the model id.
        provider: a provider name (``"openai"``, ``"anthropic"``) or instance.
        provider_options: keyword arguments for the provider (``base_url``, ``api_key``, ...).
        inputs: names of the keyword arguments ``chat()`` takes; each becomes an attribute.
        instructions: text, or a callable (or method name) returning text, evaluated per chat.
        tools: tools for ``with_tools`` (or a callable/method name returning them).
        mcp: servers (instances or classes), or a callable/method name returning them,
            evaluated each time a chat is built, with the inputs available.
        concurrency: tool calls of one turn that may run at once.
        chat_class: a chat model (a class with ``for_agent``/``find_for_agent``, such as
            ``llm_mcp.models.Chat``) or its import path: ``chat()`` then returns a saved
            record, and ``find(pk)`` loads one.
    """

    model: str = ""
    provider: Any = None
    provider_options: dict[str, Any] = {}
    inputs: Any = ()
    instructions: Any = None
    tools: Any = ()
    mcp: Any = ()
    concurrency: int = 1
    chat_class: Any = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in [cls.inputs] if isinstance(cls.inputs, str) else list(cls.inputs or ()):
            if not isinstance(name, str) or not name.isidentifier() or name.startswith("_") or hasattr(cls, name):
                raise ValueError(f"{cls.__name__}.inputs: {name!r} cannot be an input name (it must be an "
                                 f"identifier that is not an attribute of {cls.__name__} or llm_mcp.Agent)")
        if not isinstance(cls.model, str):
            raise TypeError(f"{cls.__name__}.model must be a string (the model id), not {type(cls.model).__name__}")
        servers = inspect.getattr_static(cls, "mcp")
        if isinstance(servers, str) and not names_method(cls, servers, Agent):
            raise TypeError(f"{cls.__name__}.mcp is the string {servers!r}, which names no method of "
                            f"{cls.__name__}: give servers, a callable, or the name of a method returning them")
        tools = inspect.getattr_static(cls, "tools")
        if not isinstance(tools, (list, tuple)) and not names_method(cls, tools, Agent):
            raise TypeError(f"{cls.__name__}.tools must be a list of tools, or the name of a method returning "
                            "one (a function there would be ambiguous: a tool, or a function returning tools?)")

    def __init__(self, **inputs: Any):
        declared = [self.inputs] if isinstance(self.inputs, str) else list(self.inputs or ())
        unknown = sorted(set(inputs) - set(declared))
        if unknown:
            raise TypeError(f"{type(self).__name__} takes the inputs {declared}, not {unknown}")
        for name in declared:
            setattr(self, name, inputs.get(name))

    @classmethod
    def chat(cls, *, owner: Any = None, **inputs: Any) -> Any:
        """A new chat for these inputs: a `Chat`, or a saved record of ``chat_class``.
        Contacts no server and no model.

        ``owner`` (a saved record only): the user the row belongs to (its ``user``); without
        it, an input named ``user`` holding a user sets it. Raises ``TypeError`` for an owner
        without a ``chat_class``."""
        agent = cls(**inputs)
        record_class = cls._record_class()
        if record_class is None:
            if owner is not None:
                raise TypeError(f"{cls.__name__}.chat(owner=...) needs a chat_class (a chat model with a user)")
            return agent.build_chat()
        return record_class.for_agent(agent) if owner is None else record_class.for_agent(agent, owner=owner)

    @classmethod
    def find(cls, pk: Any) -> Any:
        """The saved chat ``pk`` of ``chat_class``, set up by this agent with the inputs stored
        with it. Contacts no server. Raises ``TypeError`` without a ``chat_class``, and the
        model's ``DoesNotExist`` for an unknown ``pk``."""
        record_class = cls._record_class()
        if record_class is None:
            raise TypeError(f"{cls.__name__}.find() needs a chat_class (a chat model) to load chats from")
        return record_class.find_for_agent(cls, pk)

    @classmethod
    def _record_class(cls) -> Any:
        value = cls.chat_class
        if isinstance(value, str):
            module, _, name = value.rpartition(".")
            value = getattr(importlib.import_module(module), name)
        if value is not None and not isinstance(value, RecordClass):
            raise TypeError(f"{cls.__name__}.chat_class must be a chat model (with for_agent and "
                            f"find_for_agent, like llm_mcp.models.Chat), not {value!r}")
        return value

    def build_chat(self, chat: Chat | None = None) -> Chat:
        """Set up ``chat`` (a new one unless given) with this agent's instructions, tools and
        servers. A chat you pass keeps its own model, provider and concurrency."""
        if not self.model and chat is None:
            raise ValueError(f"{type(self).__name__} needs a model")
        chat = chat or Chat(self.model, self.provider, concurrency=self.concurrency, **self.provider_options)
        instructions = self._evaluate("instructions")
        if instructions:
            chat.with_instructions(instructions)  # TypeError unless a string
        tools = self._evaluate("tools") or ()
        if not isinstance(tools, (list, tuple)):
            raise TypeError(f"{type(self).__name__}.tools gave {type(tools).__name__}, not a list of tools")
        if tools:
            chat.with_tools(*tools)
        servers = self._evaluate("mcp") or ()
        servers = list(servers) if isinstance(servers, (list, tuple)) else [servers]
        if servers:
            chat.with_mcp(*servers)
        chat.agent = self  # type: ignore[attr-defined]
        return chat

    def _evaluate(self, key: str) -> Any:
        """A declaration's value: a method name or callable is called (with the agent when it
        takes an argument); anything else is taken as it is."""
        return evaluate(self, inspect.getattr_static(type(self), key), Agent)
