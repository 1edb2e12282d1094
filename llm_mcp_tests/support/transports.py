"""Custom transports for tests: objects with the four methods the docs ask of a transport, and
two with the ``listen`` hook (a 2026-07-28 server, and an older one)."""

from __future__ import annotations

import time
from typing import Any

import llm_mcp


class Duck:
    """Four methods, no base class: a custom transport as the docs show it. Answers every
    request with an empty result."""

    def request(self, message: dict[str, Any], *, version: str | None, timeout: float | None = None,
                headers: dict[str, str] | None = None, on_message: Any = None) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": message["id"], "result": {}}

    def notify(self, message: dict[str, Any], *, version: str | None) -> None:
        pass

    def cancel(self, notification: dict[str, Any], *, version: str | None) -> None:
        pass

    def close(self) -> None:
        pass


class Acknowledging(Duck):
    """A custom transport (no base class) speaking 2026-07-28, with a ``listen`` hook that
    acknowledges what it is asked (all of it, or all but the resources) and, per ``script``,
    ends the subscription gracefully ("ok": a result; "cancelled": ``notifications/cancelled``), fails before the acknowledgement ("fail"), never
    acknowledges ("silent"), ends it with a result and no acknowledgement ("unacknowledged") or
    answers with a JSON-RPC error ("error"); with no script left it waits, passing on notifications from
    ``queue``, until cancelled."""

    def __init__(self, *, grant_resources: bool = True, script: list[str] | None = None):
        self.grant_resources = grant_resources
        self.script = list(script or [])
        self.attempts = 0
        self.messages: list[Any] = []
        self.queue: list[dict[str, Any]] = []
        self.stopped_by: BaseException | None = None

    def request(self, message: dict[str, Any], *, version: str | None, timeout: float | None = None,
                headers: dict[str, str] | None = None, on_message: Any = None) -> dict[str, Any]:
        if message["method"] == "server/discover":
            return {"jsonrpc": "2.0", "id": message["id"], "result": {
                "supportedVersions": ["2026-07-28"], "capabilities": {
                    "tools": {"listChanged": True}, "resources": {"subscribe": True}},
                "serverInfo": {"name": "tunnel", "version": "1"}}}
        return {"jsonrpc": "2.0", "id": message["id"], "result": {"tools": [], "resultType": "complete"}}

    def cancel(self, notification: dict[str, Any], *, version: str | None) -> None:
        self.messages.append(notification)

    def listen(self, message: dict[str, Any] | None, *, version: str | None, on_message: Any) -> dict[str, Any]:
        self.attempts += 1
        self.messages.append(message)
        step = self.script.pop(0) if self.script else "stay"
        if step == "fail":
            raise llm_mcp.ConnectionError("the tunnel is down")
        if step == "error":  # refuses the subscription with a JSON-RPC error whose text tries a second line
            assert message is not None
            return {"jsonrpc": "2.0", "id": message["id"],
                    "error": {"code": -32603, "message": "no listening today\n2026 ERROR forged"}}
        if step == "unacknowledged":  # ends the subscription at once, without acknowledging it
            assert message is not None
            return {"jsonrpc": "2.0", "id": message["id"], "result": {"resultType": "complete"}}
        if step == "silent":  # never acknowledges; stops when cancelled
            try:
                while True:
                    time.sleep(0.01)
                    on_message({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "debug"}})
            except llm_mcp.CancelledError as exc:
                self.stopped_by = exc
                raise
        assert message is not None
        asked = message["params"]["notifications"]
        granted = dict(asked)
        if not self.grant_resources:
            granted.pop("resourceSubscriptions", None)
        meta = {"io.modelcontextprotocol/subscriptionId": message["id"]}
        on_message({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                    "params": {"notifications": granted, "_meta": meta}})
        if step == "ok":
            return {"jsonrpc": "2.0", "id": message["id"], "result": {"resultType": "complete", "_meta": meta}}
        if step == "cancelled":  # the other graceful end: notifications/cancelled for the subscription
            on_message({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": message["id"], "_meta": meta}})
        try:
            while True:
                while self.queue:
                    on_message(self.queue.pop(0))
                time.sleep(0.01)
                on_message({"jsonrpc": "2.0", "method": "notifications/message",
                            "params": {"level": "debug", "data": "idle"}})  # a cancel check
        except llm_mcp.CancelledError as exc:
            self.stopped_by = exc
            raise


class OldTunnel(Duck):
    """A custom transport to a 2025-11-25 server: its ``listen`` hook gets ``None`` and passes on
    what the server sends unprompted."""

    def __init__(self) -> None:
        self.given: list[Any] = []
        self.queue: list[dict[str, Any]] = []

    def request(self, message: dict[str, Any], *, version: str | None, timeout: float | None = None,
                headers: dict[str, str] | None = None, on_message: Any = None) -> dict[str, Any]:
        if message["method"] == "server/discover":
            return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}}
        if message["method"] == "initialize":
            return {"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"prompts": {"listChanged": True}},
                "serverInfo": {"name": "old", "version": "1"}}}
        return super().request(message, version=version)

    def listen(self, message: Any, *, version: str | None, on_message: Any) -> None:
        self.given.append((message, version))
        while True:
            while self.queue:
                on_message(self.queue.pop(0))
            time.sleep(0.01)
            on_message({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "debug"}})
