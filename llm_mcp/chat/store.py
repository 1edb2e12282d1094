"""Where a chat keeps its conversation: the :class:`Store` interface and :class:`MemoryStore`.

A database-backed store implements the same interface, so a chat behaves the same
whether its messages live in a list or in tables.
"""

from __future__ import annotations

import threading
from typing import Protocol, runtime_checkable

from .messages import Message

__all__ = ["MemoryStore", "Store"]


@runtime_checkable
class Store(Protocol):
    """Keeps one conversation.

        store = MemoryStore()
        store.add(Message("user", "Hello"))
        store.messages()          # [Message(role="user", content="Hello", ...)]
    """

    def messages(self) -> list[Message]:
        """Every message, oldest first (the same objects each time, until reloaded)."""
        ...

    def add(self, message: Message) -> Message:
        """Append a message (and its tool calls); sets ``message.id``; returns it."""
        ...

    def save(self, message: Message) -> None:
        """Write back changes to a stored message or its tool calls (approval, pause state)."""
        ...

    @property
    def cancelled(self) -> bool:
        """Whether someone asked the running turn to stop (read fresh each time)."""
        ...

    def set_cancelled(self, value: bool) -> None:
        """Set or clear the cancel flag."""
        ...


# Optional, for stores shared between processes or threads:
# - ``lock``: a context manager that chats hold for a whole turn, so a turn runs once even
#   when two of them resume it at the same time;
# - ``save_call(message, call)``: write back one tool call (its approval, pause state,
#   ``mcp_result``) without touching its siblings, which may have been decided elsewhere.


class MemoryStore:
    """The default store: a list in this process."""

    def __init__(self, messages: list[Message] | None = None) -> None:
        self._messages: list[Message] = list(messages or [])
        self._cancelled = False
        self.lock = threading.RLock()

    def messages(self) -> list[Message]:
        return self._messages

    def add(self, message: Message) -> Message:
        message.id = len(self._messages) + 1
        self._messages.append(message)
        return message

    def save(self, message: Message) -> None:
        pass  # the objects are the data

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def set_cancelled(self, value: bool) -> None:
        self._cancelled = value
