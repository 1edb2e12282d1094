"""Where a chat keeps its conversation: the `Store` base class, the default `MemoryStore`,
and the functions that read a stored conversation's state (what waits, what is open), for a
chat and for the Django app alike.

A database-backed store (`llm_mcp.db.store.DatabaseStore`) subclasses the same class, so a
chat behaves the same whether its messages live in a list or in tables.
"""

from __future__ import annotations

import functools
import threading
from contextlib import AbstractContextManager
from typing import Any

from ..client.question import Question, open_entries
from .messages import Message, ToolCall

__all__ = ["MemoryStore", "Store", "is_waiting", "pending_approvals", "pending_questions", "unanswered",
           "with_answer"]


class Store:
    """Keeps one conversation. A custom store subclasses it and writes the five required members:

        class ListStore(llm_mcp.chat.Store):
            def __init__(self):
                self.rows, self.stopped = [], False
            def messages(self):
                return self.rows
            def add(self, message):
                message.id = len(self.rows) + 1
                self.rows.append(message)
                return message
            def save(self, message):
                pass                  # the objects are the data
            @property
            def cancelled(self):
                return self.stopped
            def set_cancelled(self, value):
                self.stopped = value

        chat = llm_mcp.chat(model="gpt-4.1-mini", store=ListStore())

    Required (each raises `NotImplementedError` here): `messages()`, `add(message)`,
    `save(message)`, `cancelled`, `set_cancelled(value)`.
    Optional, with defaults that suit a store used by one process: `lock`,
    `save_call(message, call)`, `save_question(message, call, question)`; a store shared
    between processes overrides them (as the database store does). `held_answer` and
    `cancelled_and_messages` combine reads a store may answer in one query.
    """

    # -- required ---------------------------------------------------------------------------

    def messages(self) -> list[Message]:
        """Every message, oldest first (the same objects each time, until reloaded)."""
        raise NotImplementedError(f"{type(self).__name__} must define messages()")

    def add(self, message: Message) -> Message:
        """Append a message (and its tool calls); sets `message.id`; returns the message as
        stored (a store may return the one stored before, e.g. a second result for a call)."""
        raise NotImplementedError(f"{type(self).__name__} must define add()")

    def save(self, message: Message) -> None:
        """Write back changes to a stored message or its tool calls (approval, pause state)."""
        raise NotImplementedError(f"{type(self).__name__} must define save()")

    @property
    def cancelled(self) -> bool:
        """Whether someone asked the running turn to stop (read fresh each time: the chat
        reads it before each step and at each event a server streams)."""
        raise NotImplementedError(f"{type(self).__name__} must define cancelled")

    def set_cancelled(self, value: bool) -> None:
        """Set (`True`) or clear (`False`) the cancel flag."""
        raise NotImplementedError(f"{type(self).__name__} must define set_cancelled()")

    # -- optional ---------------------------------------------------------------------------

    @property
    def lock(self) -> AbstractContextManager[Any]:
        """A context manager a chat holds for a whole turn, so a turn runs once even when two
        resume it at the same time; re-entrant in one thread.

        Default: one `threading.RLock` per store (enough within a process), made on first
        use. A store shared between processes sets its own (the database store: a lock on
        the chat's row) by assigning `self.lock` or overriding this property."""
        lock = self.__dict__.get("_lock")
        if lock is None:
            lock = self.__dict__.setdefault("_lock", threading.RLock())  # one lock, whichever thread asks first
        return lock

    @lock.setter
    def lock(self, value: AbstractContextManager[Any]) -> None:
        self.__dict__["_lock"] = value

    def cancelled_and_messages(self) -> tuple[bool, list[Message]]:
        """`cancelled`, then `messages()`: what a turn reads first (`llm_mcp.Chat.complete`).

        Default: the two reads. A store that can read both at once overrides it (the database
        store reads the flag as a column of the messages' query: one query less per turn)."""
        return self.cancelled, self.messages()

    def save_call(self, message: Message, call: ToolCall) -> None:
        """Write back one tool call of `message` (its approval, pause state, `mcp_result`).

        Default: `save(message)`, the whole message. A store shared between processes
        writes the one call only, so a decision made elsewhere on a sibling call is not
        overwritten; it raises `ValueError` when a decision was already taken elsewhere."""
        self.save(message)

    def save_question(self, message: Message, call: ToolCall, question: Question) -> None:
        """Record the answer of one of `call`'s questions (what `question.answer()` runs).

        Default: the call's `pending_questions` entry is replaced (see `with_answer`)
        and the call saved with `save_call`. A store shared between processes reads the
        stored entry first and refuses a question answered elsewhere meanwhile.
        Raises `ValueError` for a question answered already, or one the call no longer asks."""
        call.pending_questions = with_answer(call.pending_questions, question, call)
        self.save_call(message, call)

    def held_answer(self, message: Message, call: ToolCall, key: str) -> tuple[dict[str, Any] | None, bool]:
        """What a chat holding a question open polls: the stored response of `call`'s question
        `key` (``None`` while unanswered) and whether the chat was cancelled.

        Default: read from the call object (answers given in this process land there) and
        `cancelled`. A store shared between processes reads both fresh, in one query."""
        for data in call.pending_questions:
            if isinstance(data, dict) and data.get("key") == key:
                return data.get("response"), self.cancelled
        return None, self.cancelled


class MemoryStore(Store):
    """The default store: a list in this process (its `lock` is the default `RLock`)."""

    def __init__(self, messages: list[Message] | None = None) -> None:
        self._messages: list[Message] = list(messages or [])
        self._cancelled = False

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


# -- a stored conversation's state -----------------------------------------------------------

def unanswered(messages: list[Message]) -> tuple[Message | None, list[ToolCall]]:
    """The last assistant message with tool calls, and those of its calls that have no result yet.

        assistant, open_calls = unanswered(store.messages())

    `(None, [])` when the conversation does not end with tool calls waiting for results."""
    answered: set[str] = set()
    for message in reversed(messages):
        if message.role == "tool" and message.tool_call_id:
            answered.add(message.tool_call_id)
        elif message.role == "assistant":
            return message, [call for call in message.tool_calls if call.id not in answered]
        else:
            break
    return None, []


def is_waiting(store: Store) -> bool:
    """Whether the conversation in `store` waits for a person (approval, questions) or a server task."""
    return any(call.waiting for call in unanswered(store.messages())[1])


def pending_approvals(store: Store) -> list[ToolCall]:
    """The calls in `store` that wait for a decision; their `approve()`/`decline()` save it
    at once (`store.save_call`)."""
    assistant, calls = unanswered(store.messages())
    pending = [call for call in calls if call.approval == "pending"]
    for call in pending:
        call.on_decide(functools.partial(store.save_call, assistant, call))
    return pending


def pending_questions(store: Store) -> list[Question]:
    """The open questions of the paused calls in `store`, as `Question`
    objects (`tool_call_id` set); answering one saves it at once (`store.save_question`)."""
    assistant, calls = unanswered(store.messages())
    found = []
    for call in calls:
        for data in open_entries(call.pending_questions):
            question = Question.from_dict(data)
            question.tool_call_id = call.id
            question._save = functools.partial(store.save_question, assistant, call)
            found.append(question)
    return found


def with_answer(stored: list[Any], question: Question, call: ToolCall, *, elsewhere: bool = False) -> list[Any]:
    """A copy of `stored` (a call's `pending_questions` dicts) with `question`'s entry
    replaced by `question.to_dict()`.

    Raises `ValueError` when that entry has a response already (`elsewhere`: say it was
    answered elsewhere, by another process), or the call no longer asks the question."""
    stored = list(stored)
    for index, data in enumerate(stored):
        if isinstance(data, dict) and data.get("key") == question.key:
            if data.get("response") is not None:
                raise ValueError(f"question {question.key!r} of tool call {call.id} was answered "
                                 f"{'elsewhere ' if elsewhere else ''}already ({data['response'].get('action')})")
            stored[index] = question.to_dict()
            return stored
    raise ValueError(f"tool call {call.id} ({call.name}) no longer asks question {question.key!r}")
