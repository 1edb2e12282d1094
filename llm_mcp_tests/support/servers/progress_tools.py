"""A kit test server for progress, server logs and cancellation, that records what it received.

Usage::

    python -m llm_mcp_tests.support.servers.progress_tools [--http PORT] [--era modern|handshake|auto]
        [--context record=/some/file.jsonl] [--json-response]

With ``--context record=PATH``, the server appends one JSON line to PATH for each
``tools/call`` (``{"method": "tools/call", "tool": ..., "id": request id, "meta": {...}}``: the request's
``_meta`` as it arrived, progress token and log level included), each
``logging/setLevel`` (``{"method": "logging/setLevel", "level": ...}``) and each
``notifications/cancelled`` (``{"method": "notifications/cancelled", "requestId": ...,
"reason": ...}``), so tests can assert what reached the server.

Tools:

* ``report_progress``: progress 10/100 "starting", 30/100 "a third", 20/100 "going back"
  (a decreasing value), 30/100 "again" (an equal one), 60 without a total "no total",
  100/100 "done"; answers ``reported``.
* ``log_levels``: one client log message per protocol level (``"<level> message"``).
* ``steps``: ``count`` steps of ``interval`` seconds; each appends ``step N`` to the file
  ``path``, then reports progress N/count and logs ``step N`` at debug. Cancellable: a
  cancel appends ``cancelled`` and stops. Completing appends ``completed``.
* ``ask_in_line``: (handshake era) appends ``asking`` to ``path``, then sends one form question
  with ``channel.send_elicit`` inside ``cancellable`` and appends ``answered <action>``, or
  ``cancelled`` when the client cancels while the question waits (``ToolCancelled``), or
  ``failed: <exception class>``. On 2026-07-28 it appends ``no stream``.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from llm_mcp.testing import Server, Tool, ToolCancelled

__all__ = ["PROGRESS_REPORTS", "SERVER", "SERVER_NAME", "main"]

SERVER_NAME = "progress-tools"

PROGRESS_REPORTS = [(10, 100, "starting"), (30, 100, "a third"), (20, 100, "going back"), (30, 100, "again"),
                    (60, None, "no total"), (100, 100, "done")]
"""What ``report_progress`` sends, in order: ``(progress, total, message)``."""

_write_lock = threading.Lock()


def _append(path: str | None, line: str) -> None:
    if path:
        with _write_lock, open(path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")
            handle.flush()


class ReportProgress(Tool):
    name = "report_progress"
    description = "Reports progress, including a value that goes down and one that stays."
    input_schema = {"type": "object", "properties": {}}

    def call(self) -> Any:
        for value, total, message in PROGRESS_REPORTS:
            self.channel.progress(value, total, message)
        return self.respond_with(content=self.text_content(text="reported"))


class LogLevels(Tool):
    name = "log_levels"
    description = "Logs one client message at every protocol level."
    input_schema = {"type": "object", "properties": {}}

    def call(self) -> Any:
        for level in ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"):
            self.client_logger.log(level, f"{level} message")
        return self.respond_with(content=self.text_content(text="logged"))


class Steps(Tool):
    name = "steps"
    description = "Slow work in steps, each leaving a line in a file."
    input_schema = {"type": "object", "properties": {"count": {"type": "integer"}, "interval": {"type": "number"},
                                                     "path": {"type": "string"}}, "required": ["path"]}

    def call(self) -> Any:
        count = int(self.arguments.get("count", 10))
        interval = float(self.arguments.get("interval", 0.2))
        path = self.arguments["path"]

        def work() -> None:
            for step in range(1, count + 1):
                self.check_cancelled()
                _append(path, f"step {step}")
                self.channel.progress(step, count, f"step {step}")
                self.client_logger.debug(f"step {step}")
                self.sleep(interval)

        try:
            self.cancellable(work)
        except ToolCancelled:
            _append(path, "cancelled")
            raise
        _append(path, "completed")
        return self.respond_with(content=self.text_content(text=f"{count} steps done"))


class AskInLine(Tool):
    name = "ask_in_line"
    description = "Asks one question on the call's stream (handshake era), leaving a line in a file."
    input_schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}

    def call(self) -> Any:
        path = self.arguments["path"]
        if self.channel.send_elicit is None:  # 2026-07-28: no stream to ask on
            _append(path, "no stream")
            return self.respond_with(content=self.text_content(text="no stream"))
        question = {"message": "Go on?", "requestedSchema": {"type": "object", "properties": {
            "go": {"type": "boolean"}}}}
        _append(path, "asking")
        try:
            reply = self.cancellable(lambda: self.channel.send_elicit(question))
        except ToolCancelled:
            _append(path, "cancelled")
            raise
        except Exception as exc:
            _append(path, f"failed: {type(exc).__name__}")
            raise
        _append(path, f"answered {reply.get('action')}")
        return self.respond_with(content=self.text_content(text=str(reply.get("action"))))


def _plain(value: Any) -> Any:
    """A request's ``_meta`` as JSON, keys as on the wire (the SDK names the token ``progress_token``)."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(by_alias=True, exclude_none=True)
    if not isinstance(value, dict):
        return value
    plain = {str(k): v for k, v in value.items()}
    if "progress_token" in plain:
        plain["progressToken"] = plain.pop("progress_token")
    return plain


class RecordingServer(Server):
    """A kit server that also appends what it received to ``context["record"]`` (JSON lines)."""

    def _record(self, entry: dict[str, Any]) -> None:
        _append(self.context.get("record"), json.dumps(entry, default=str))

    def _build(self) -> Any:
        import mcp_types as types

        server = super()._build()
        call = server.get_request_handler("tools/call")
        set_level = server.get_request_handler("logging/setLevel")
        kit = self

        async def recorded_call(ctx: Any, params: Any) -> Any:
            kit._record({"method": "tools/call", "tool": getattr(params, "name", None),
                         "id": getattr(ctx, "request_id", None), "meta": _plain(getattr(ctx, "meta", None)) or {}})
            return await call.handler(ctx, params)

        async def recorded_level(ctx: Any, params: Any) -> Any:
            kit._record({"method": "logging/setLevel", "level": getattr(params, "level", None)})
            return await set_level.handler(ctx, params)

        server.add_request_handler("tools/call", call.params_type, recorded_call)
        server.add_request_handler("logging/setLevel", set_level.params_type, recorded_level)
        cancelled = server.get_notification_handler("notifications/cancelled")
        if cancelled is not None:
            async def recorded_cancel(ctx: Any, params: Any) -> Any:
                kit._record({"method": "notifications/cancelled", "requestId": getattr(params, "request_id", None),
                             "reason": getattr(params, "reason", None)})
                return await cancelled.handler(ctx, params)

            server.add_notification_handler("notifications/cancelled", cancelled.params_type, recorded_cancel)
        else:
            async def noted_cancel(ctx: Any, params: Any) -> None:
                kit._record({"method": "notifications/cancelled", "requestId": getattr(params, "request_id", None),
                             "reason": getattr(params, "reason", None)})

            server.add_notification_handler("notifications/cancelled", types.CancelledNotificationParams,
                                            noted_cancel)
        return server


SERVER = RecordingServer(SERVER_NAME, tools=[ReportProgress, LogLevels, Steps, AskInLine])


def main(argv: list[str] | None = None) -> None:
    """Serve as the command line says (see the module docstring)."""
    SERVER.serve(argv)


if __name__ == "__main__":
    main()


def records(path: Path) -> list[dict[str, Any]]:
    """The JSON lines a recording server wrote to ``path`` ([] when none)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
