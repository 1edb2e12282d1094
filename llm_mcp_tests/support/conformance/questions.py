"""Conformance scenarios about questions from servers, with llm_mcp's public API only.

* ``sep-2322-client-request-state`` (2026-07-28, "Multi Round-Trip Requests"): the server answers
  with an ``InputRequiredResult``; a ``before_input_request`` callback answers the question, and
  the client sends the request again with a new id, ``inputResponses`` and the ``requestState``
  exactly as sent (none when none was sent), and nothing of it on other calls.
* ``elicitation-sep1034-client-defaults`` (2025-11-25): the server sends ``elicitation/create``
  on the open stream; the callback accepts, and every field left out takes its default (SEP-1034).
"""

from __future__ import annotations

import logging
from typing import Any

import llm_mcp


def confirm(question: llm_mcp.Question) -> None:
    """Say yes to a one-field question; take the defaults of any other form; agree to visit a URL."""
    if len(question.fields) == 1 and question.fields[0].type == "boolean":
        question.answer(True)
    else:
        question.answer()


def run(scenario: str, url: str, context: dict[str, Any]) -> None:
    with llm_mcp.mcp(url=url, name="conformance", before_input_request=confirm) as server:
        if scenario.startswith("sep-2322-"):
            for name in ("test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state",
                         "test_mrtr_no_result_type"):
                logging.getLogger("conformance").info("%s: %s", name, server.call(name).text)
        elif scenario.startswith("elicitation-"):
            for tool in server.tools:
                logging.getLogger("conformance").info("%s: %s", tool.server_name, server.call(tool.server_name).text)
        else:
            raise SystemExit(f"conformance_questions has no scenario {scenario!r}")
