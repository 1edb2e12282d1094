"""The kit's ``subscriptions/listen`` handler: list and resource changes (the SDK's events) and
task status (``notifications/tasks``, Tasks extension ``io.modelcontextprotocol/tasks``, draft
"Task Status Notifications"), on one stream per request.

A client names the tasks it wants news of in ``notifications.taskIds``. The acknowledgement
(``notifications/subscriptions/acknowledged``, always the first frame) grants the flags and
resource URIs asked for, and of the task ids only those the server knows (an unknown or expired
id is left out, so the client sees it was refused). Then every status change of a granted task
(a new ``statusMessage``, ``completed`` with its ``result``, ``failed`` with its ``error``,
``cancelled``) is sent as ``notifications/tasks`` carrying the whole task as ``tasks/get`` would
answer it. A client that asks for ``taskIds`` without declaring the extension gets ``-32021``.
Every frame carries the listen request's id in ``_meta["io.modelcontextprotocol/subscriptionId"]``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["TASK_NOTIFICATION", "ListenHandler"]

log = logging.getLogger("llm_mcp.testing")

TASK_NOTIFICATION = "notifications/tasks"
"""The method of a task status notification."""

ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
"""The method of the first frame: what the server grants."""

MAX_BUFFERED = 1024
"""Frames a stream holds for a client that stopped reading before the stream is ended."""


class _Frame:
    """A notification as the SDK's session sends it (``model_dump``), built from a wire dict, so
    ``ttlMs: null`` and the task's other fields reach the client exactly as given."""

    def __init__(self, method: str, params: dict[str, Any]) -> None:
        self.method, self.params = method, params

    def model_dump(self, **_: Any) -> dict[str, Any]:
        return {"method": self.method, "params": self.params}


class ListenHandler:
    """Serves ``subscriptions/listen`` for a kit server (register as ``on_subscriptions_listen``).

    Args:
        bus: the SDK's subscription bus the kit publishes list and resource changes on.
        tasks: the server's ``TaskStore`` (its ``watch`` reports each task change, from any thread).
        declared: whether a request's client declared the Tasks extension.
        refused: the ``-32021`` error to raise when it did not.
    """

    def __init__(self, bus: Any, tasks: Any, declared: Callable[[Any], bool], refused: Callable[[], Exception]):
        self.bus, self.tasks, self.declared, self.refused = bus, tasks, declared, refused
        self._streams: set[Any] = set()

    def close(self) -> None:
        """End every open stream gracefully: each sends what it holds, then its final result
        (call it on the server's event loop)."""
        for stream in list(self._streams):
            stream.close()

    async def __call__(self, ctx: Any, params: Any) -> Any:
        import anyio
        import anyio.from_thread
        import anyio.lowlevel
        from mcp.shared.exceptions import MCPError
        from mcp.shared.subscriptions import (
            SUBSCRIPTION_ID_META_KEY,
            event_matches,
            event_to_notification,
        )
        from mcp_types import (
            INVALID_PARAMS,
            INVALID_REQUEST,
            SubscriptionFilter,
            SubscriptionsAcknowledgedNotificationParams,
            SubscriptionsListenResult,
        )

        subscription_id = ctx.request_id
        if subscription_id is None:
            raise MCPError(INVALID_REQUEST, "subscriptions/listen needs a request id")
        requested = params.notifications
        task_ids = (requested.model_extra or {}).get("taskIds")
        if task_ids is not None:
            if not isinstance(task_ids, list) or not all(isinstance(i, str) for i in task_ids):
                raise MCPError(INVALID_PARAMS, "notifications.taskIds must be a list of task id strings")
            if not self.declared(ctx):
                raise self.refused()
        granted_tasks = [i for i in dict.fromkeys(task_ids or ()) if self.tasks.get(i) is not None]
        honored = SubscriptionFilter(
            tools_list_changed=True if requested.tools_list_changed else None,
            prompts_list_changed=True if requested.prompts_list_changed else None,
            resources_list_changed=True if requested.resources_list_changed else None,
            resource_subscriptions=list(requested.resource_subscriptions) if requested.resource_subscriptions
            else None)
        uris = frozenset(honored.resource_subscriptions or ())
        meta: dict[str, Any] = {SUBSCRIPTION_ID_META_KEY: subscription_id}
        send, receive = anyio.create_memory_object_stream[Any](MAX_BUFFERED)
        token, loop_thread = anyio.lowlevel.current_token(), threading.get_ident()

        def put(item: Any) -> None:  # on the event loop
            try:
                send.send_nowait(item)
            except anyio.WouldBlock:
                log.warning("listen stream %r: the client stopped reading; ending the stream", subscription_id)
                send.close()
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass

        def on_event(event: Any) -> None:
            if event_matches(honored, uris, event):
                put(event_to_notification(event, meta))

        watched = set(granted_tasks)

        def on_task(task_id: str, wire: dict[str, Any]) -> None:  # any thread
            if task_id not in watched:
                return
            frame = _Frame(TASK_NOTIFICATION, {**wire, "_meta": dict(meta)})
            if threading.get_ident() == loop_thread:
                put(frame)
                return
            try:
                anyio.from_thread.run_sync(put, frame, token=token)
            except Exception as exc:  # noqa: BLE001 - the server is stopping: the client misses the news
                log.debug("could not send a task notification: %s", exc)

        unsubscribe_bus = self.bus.subscribe(on_event)
        unwatch = self.tasks.watch(on_task)
        self._streams.add(send)
        try:
            acknowledged = SubscriptionsAcknowledgedNotificationParams(notifications=honored, _meta=meta)
            ack = acknowledged.model_dump(by_alias=True, mode="json", exclude_none=True)
            if task_ids is not None:
                ack["notifications"]["taskIds"] = granted_tasks
            await ctx.session.send_notification(_Frame(ACKNOWLEDGED, ack), related_request_id=subscription_id)
            async for frame in receive:
                await ctx.session.send_notification(frame, related_request_id=subscription_id)
        finally:
            self._streams.discard(send)
            unwatch()
            unsubscribe_bus()
            send.close()
            receive.close()
        return SubscriptionsListenResult(_meta=meta)
