"""A kit server whose tools run as tasks (Tasks extension) when the client declared it.

Usage::

    python -m llm_mcp_tests.support.servers.tasking [--http PORT] [--era auto|modern|handshake]

Tools:

- ``report(steps, delay)``: a task when declared (``pollIntervalMs`` 20); sets the status message
  ``"step I of N"`` before each step, sleeps ``delay`` seconds per step (``tasks/cancel`` stops it:
  ``cancelled``), then answers ``"report with N steps"``. A plain call otherwise.
- ``only_as_task``: ``task = "required"``: ``-32021`` without the extension, else answers ``"ran as a task"``.
- ``broken``: a task that fails (JSON-RPC error ``"the archive is unreadable"``).
- ``stubborn(delay)``: a task that ignores ``tasks/cancel`` and completes with ``"finished anyway"``.
- ``fleeting``: a task with ``ttlMs`` 1 and no ``pollIntervalMs``: forgotten at once (``-32602``).
- ``curious``: a task whose tool asks ``year`` ("Which year?", one integer field): the task is
  ``input_required`` until ``tasks/update`` answers, then completes with ``"year <answer>"``.
- ``gated(path)``: a task (``pollIntervalMs`` 20) with the status message ``"waiting for the gate"``
  until the file ``path`` exists, then ``"gate open"``, completing with ``"passed the gate at PATH"``
  (the test decides when it ends).
- ``hang_up``: ends every ``subscriptions/listen`` stream gracefully (``Server.end_subscriptions``).
- ``nosy``: a task whose tool asks 101 questions at once (more than a client takes).
- ``echo(text)``: never a task.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from llm_mcp.testing import Server, TaskFailed, Tool

__all__ = ["server"]


class Report(Tool):
    name = "report"
    input_schema = {"type": "object", "properties": {"steps": {"type": "integer"}, "delay": {"type": "number"}}}
    task = "optional"
    task_poll_interval_ms = 20
    task_ttl_ms = 60_000

    def call(self) -> Any:
        steps, delay = int(self.arguments.get("steps", 2)), float(self.arguments.get("delay", 0.05))
        for step in range(1, steps + 1):
            self.task_status(f"step {step} of {steps}")
            self.cancellable(lambda: self.sleep(delay))
        return self.respond_with(content=self.text_content(text=f"report with {steps} steps"))


def _task_tool(name: str, answer: Callable[[Tool], Any], *, task: str = "optional",
               poll_interval_ms: int | None = 10, ttl_ms: int | None = None) -> type[Tool]:
    """A kit tool without arguments, run as a task: ``answer(tool)`` is its whole ``call()``."""
    attributes: dict[str, Any] = {"name": name, "task": task, "task_poll_interval_ms": poll_interval_ms,
                                  "call": lambda self: answer(self)}
    if ttl_ms is not None:
        attributes["task_ttl_ms"] = ttl_ms
    return type("".join(part.title() for part in name.split("_")), (Tool,), attributes)


def _unreadable(tool: Tool) -> Any:
    raise TaskFailed("the archive is unreadable")


def _ask_the_year(tool: Tool) -> Any:
    answer = tool.ask("year", "Which year?", schema={"type": "object", "properties": {"year": {"type": "integer"}}})
    return f"year {(answer.get('content') or {}).get('year')}" if answer.get("action") == "accept" else "no year"


def _ask_too_much(tool: Tool) -> Any:
    from llm_mcp.testing.asking import input_request

    tool.ask_all({f"q{i}": input_request(f"Question {i}?", schema={"type": "object", "properties": {}})
                  for i in range(101)})
    return "asked"


OnlyAsTask = _task_tool("only_as_task", lambda tool: "ran as a task", task="required")
Broken = _task_tool("broken", _unreadable)
Fleeting = _task_tool("fleeting", lambda tool: "gone soon", poll_interval_ms=None, ttl_ms=1)
Curious = _task_tool("curious", _ask_the_year)
Nosy = _task_tool("nosy", _ask_too_much)


class Stubborn(Tool):
    name = "stubborn"
    input_schema = {"type": "object", "properties": {"delay": {"type": "number"}}}
    task = "optional"
    task_poll_interval_ms = 20

    def call(self) -> Any:
        self.sleep(float(self.arguments.get("delay", 0.3)))  # not cancellable: a cancel changes nothing
        return "finished anyway"


class Gated(Tool):
    name = "gated"
    input_schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    task = "optional"
    task_poll_interval_ms = 20

    def call(self) -> Any:
        path = str(self.arguments["path"])
        self.task_status("waiting for the gate")
        while not os.path.exists(path):
            self.cancellable(lambda: self.sleep(0.02))
        self.task_status("gate open")
        return f"passed the gate at {path}"


class HangUp(Tool):
    name = "hang_up"

    def call(self) -> Any:
        self.channel.server.end_subscriptions()
        return "hung up"


class Echo(Tool):
    name = "echo"
    input_schema = {"type": "object", "properties": {"text": {"type": "string"}}}

    def call(self) -> Any:
        return str(self.arguments.get("text", ""))


server = Server("tasking", tools=[Report, OnlyAsTask, Broken, Stubborn, Fleeting, Curious, Nosy, Gated, HangUp,
                                      Echo])

if __name__ == "__main__":
    server.serve()
