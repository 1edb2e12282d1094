"""The public names of question handling (the work is done by ``llm_mcp.client.server.questions``).

    from llm_mcp.client.asking import MAX_INPUT_ROUNDS, Resume, resuming

    with resuming(Resume.from_stored(stored_questions, request_state)):
        server.call("deploy")        # the first matching request carries the stored answers

See ``docs/how-to/questions.md``. Spec: MCP 2026-07-28 "Multi Round-Trip Requests".
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from . import context
from .server.questions import (
    MAX_INPUT_REQUESTS,
    MAX_INPUT_ROUNDS,
    Resume,
    answers_payload,
)
from .server.settings import TABLE

__all__ = ["MAX_INPUT_REQUESTS", "MAX_INPUT_ROUNDS", "QUESTION_SETTINGS", "Resume", "answers_payload", "current_resume",
           "resuming"]

QUESTION_SETTINGS = tuple(setting.name for setting in TABLE if setting.group == "questions")
"""The server settings about questions (``group="questions"`` in the settings table)."""


@contextlib.contextmanager
def resuming(resume: Resume | None) -> Iterator[None]:
    """Within the block, the first matching request a server sends carries ``resume``'s answers
    (the ``resume`` of the current `CallContext`)."""
    with context.with_changes(resume=resume).active():
        yield


def current_resume() -> Resume | None:
    """The paused call going on in this context (see `resuming`), or ``None``."""
    current = context.current()
    return current.resume if current is not None else None
