"""Server-sent events for the chat pages, under WSGI (runserver, gunicorn) and ASGI (uvicorn, daphne).

    stream = EventStream(lambda emit: emit("token", "Hel"))
    return event_response(request, stream)     # text/event-stream, unbuffered

A producer function runs in its own thread and calls ``emit(event, data)``; the response
hands the events to the client as they come: a plain iterator under WSGI, an asynchronous one
under ASGI (Django would read a plain iterator to its end before sending anything there).
The producer does the database work in its thread, which closes its connections when done.
A comment line every `HEARTBEAT` seconds keeps proxies from closing a quiet stream, and
``X-Accel-Buffering: no`` asks nginx not to buffer it. Spec: WHATWG HTML "Server-sent events".
"""

from __future__ import annotations

import asyncio
import json
import logging
import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from django.db import connections
from django.http import HttpRequest, StreamingHttpResponse

__all__ = ["HEARTBEAT", "EventStream", "event_response", "sse_event"]

log = logging.getLogger("llm_mcp.streaming")

HEARTBEAT = 15.0
"""Seconds between keep-alive comments on a quiet stream."""

_END = object()

Emit = Callable[[str, Any], None]


def sse_event(event: str, data: Any) -> str:
    """One event as the ``text/event-stream`` format writes it; ``data`` as JSON, one line."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}\n\n"


class EventStream:
    """The events one producer emits, in order, as an iterator of SSE text.

    Args:
        produce: ``produce(emit, stopped)``: called once in a new thread; ``emit(event, data)``
            sends an event, ``stopped`` (a ``threading.Event``) is set when the client is gone.
            An exception it raises becomes an ``error`` event (its type only), then the end.
    """

    def __init__(self, produce: Callable[[Emit, threading.Event], None], *, heartbeat: float = HEARTBEAT):
        self.produce = produce
        self.heartbeat = heartbeat
        self.stopped = threading.Event()
        self._queue: queue.Queue[Any] = queue.Queue()
        self._thread: threading.Thread | None = None

    def emit(self, event: str, data: Any) -> None:
        self._queue.put(sse_event(event, data))

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="llm-mcp-events", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        try:
            self.produce(self.emit, self.stopped)
        except Exception as exc:
            log.exception("an event stream's producer failed")
            self.emit("error", {"error": type(exc).__name__})
        finally:
            connections.close_all()  # this thread's connections
            self._queue.put(_END)

    def __iter__(self) -> Iterator[str]:
        self.start()
        try:
            yield ": stream open\n\n"
            while True:
                try:
                    item = self._queue.get(timeout=self.heartbeat)
                except queue.Empty:
                    yield ": keep-alive\n\n"
                    continue
                if item is _END:
                    return
                yield item
        finally:
            self.stopped.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        """The same events for an ASGI server: each wait for the next one runs in a thread."""
        events = iter(self)
        try:
            while True:
                item = await asyncio.to_thread(next, events, None)
                if item is None:
                    return
                yield item
        finally:
            events.close()  # the client is gone (or the stream ended): tell the producer
            self.stopped.set()


def _is_asgi(request: HttpRequest) -> bool:
    from django.core.handlers.asgi import ASGIRequest

    return isinstance(request, ASGIRequest)


def event_response(request: HttpRequest, stream: EventStream) -> StreamingHttpResponse:
    """A ``text/event-stream`` response for ``stream``: asynchronous under ASGI, plain under
    WSGI; not cached, not buffered by nginx (``X-Accel-Buffering: no``)."""
    content: Any = stream.__aiter__() if _is_asgi(request) else iter(stream)
    response = StreamingHttpResponse(content, content_type="text/event-stream; charset=utf-8")
    response["Cache-Control"] = "no-cache, no-transform"
    response["X-Accel-Buffering"] = "no"
    return response
