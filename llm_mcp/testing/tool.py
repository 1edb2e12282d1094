"""``Tool``: a server-side MCP tool for test servers, defined in a few lines.

    class Double(Tool):
        name = "double"; input_schema = {"type": "object", "properties": {"number": {"type": "string"}}}
        def call(self): return self.respond_with(content=self.text_content(text=str(2 * int(self.arguments["number"]))))

Definitions (class attributes, callables returning them, or a ``define()`` hook):
``name``, ``title``, ``description``, ``input_schema``, ``output_schema``,
``annotations``, ``security_schemes``, ``meta``, and for an MCP App tool ``resource_uri`` (its
``ui://`` resource) and ``visibility`` (``["model", "app"]``, ``["app"]``, ...), published as
``_meta.ui``. Spec: MCP 2026-07-28 "Tools"; MCP Apps 2026-01-26 "Resource Discovery".
"""

from __future__ import annotations

import inspect
import json
import threading
import time
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from . import content as _content
from .asking import Asking, InputNotAccepted, InputRequired, run_asking
from .definition import Definable, check_dict, check_schema, check_text, named_entry
from .results import check_block, check_call_result
from .runtime import (
    CallChannel,
    CallState,
    InvalidResult,
    OutputSchemaError,
    ToolCancelled,
    ToolError,
    bind_call,
)

__all__ = ["ANNOTATION_HINTS", "Tool", "check_annotations"]

T = TypeVar("T")

ANNOTATION_HINTS = {
    "read_only_hint": "readOnlyHint",
    "destructive_hint": "destructiveHint",
    "idempotent_hint": "idempotentHint",
    "open_world_hint": "openWorldHint",
}
"""The behaviour hints a tool may declare, and their names on the wire."""



def check_annotations(owner: str, annotations: Any) -> dict[str, bool] | None:
    """The wire form of ``annotations`` (snake_case hints -> camelCase), checked.

        check_annotations("Fetch", {"read_only_hint": True})    # {"readOnlyHint": True}
        check_annotations("Fetch", {"readonly": True})           # ValueError: unknown hint
        check_annotations("Fetch", {"read_only_hint": "yes"})    # TypeError: not a bool

    Only the hints given are sent; the client applies the protocol's defaults for the
    others (read-only False, destructive True, idempotent False, open-world True).
    """
    if annotations is None:
        return None
    if not isinstance(annotations, dict):
        raise TypeError(f"{owner}.annotations must be a dict of hints; got {type(annotations).__name__}")
    unknown = sorted(str(k) for k in annotations if k not in ANNOTATION_HINTS)
    if unknown:
        raise ValueError(f"{owner}.annotations: unknown hint(s) {unknown}; known: {', '.join(ANNOTATION_HINTS)}")
    wire: dict[str, bool] = {}
    for key, value in annotations.items():
        if not isinstance(value, bool):
            raise TypeError(f"{owner}.annotations[{key!r}] must be True or False; got {value!r}")
        wire[ANNOTATION_HINTS[key]] = value
    return wire


def _check_security_schemes(owner: str, schemes: Any) -> list[dict[str, Any]] | None:
    if schemes is None:
        return None
    if not isinstance(schemes, list) or not all(isinstance(s, dict) for s in schemes):
        raise TypeError(f"{owner}.security_schemes must be a list of dicts; got {schemes!r}")
    for scheme in schemes:
        if not isinstance(scheme.get("type"), str):
            raise ValueError(  # noqa: TRY004 - a missing key, not a wrong type
                f"{owner}.security_schemes: every scheme needs a str 'type'; got {scheme!r}")
    return [dict(s) for s in schemes]


class Tool(Definable, CallState, Asking):
    """Base class of a kit tool: define it, then implement ``call()``.

        class Fetch(Tool):
            name = "fetch"; annotations = {"read_only_hint": True, "open_world_hint": False}
            def call(self): return self.respond_with(content=self.text_content(text=self.arguments["id"]))

    Inside ``call()``:
        arguments: the client's arguments, a dict with str keys (already checked
            against ``input_schema``; a mismatch answers ``isError`` before ``call`` runs).
        context: the server's context values (``{}`` when there are none).
        client_logger: sends ``notifications/message`` (``.info(msg)``, ... ``.emergency(msg)``).
        server_logger: a ``logging.Logger`` (``llm_mcp.testing.tools.<name>``); never sent.

    ``call()`` returns what ``respond_with`` builds (a ``str`` is taken as one text
    block); it must be a plain ``def`` (it runs in a worker thread). Raising
    [`ToolError`][llm_mcp.testing.ToolError] answers a tool error; any other exception (``SystemExit``
    too) answers a tool error naming it (and is logged with its traceback on the
    server). An answer the protocol does not accept (``None``, a bare block, bad
    block fields, structured content that is not an object) raises
    [`InvalidResult`][llm_mcp.testing.InvalidResult], which the server answers with JSON-RPC -32603.

    Raises (at class creation): TypeError/ValueError for a bad definition.
    """

    DEFINITIONS = ("name", "title", "description", "input_schema", "output_schema", "annotations",
                   "security_schemes", "meta", "resource_uri", "visibility")
    WORK_METHOD = "call"
    CALLABLE_DEFINITIONS = ("input_schema", "output_schema", "security_schemes", "annotations", "meta")

    name: ClassVar[str | None] = None
    title: ClassVar[str | None] = None
    description: ClassVar[str | None] = None
    input_schema: ClassVar[Any] = {"type": "object", "properties": {}}
    output_schema: ClassVar[Any] = None
    annotations: ClassVar[Any] = None
    security_schemes: ClassVar[Any] = None
    meta: ClassVar[Any] = None
    resource_uri: ClassVar[str | None] = None
    visibility: ClassVar[Any] = None
    task: ClassVar[str | None] = None
    """Run as a task (Tasks extension, 2026-07-28 only): ``None`` never, ``"optional"`` when the
    client declared the extension, ``"required"`` always (``-32021`` to a client that did not)."""
    task_poll_interval_ms: ClassVar[int | None] = None
    """The task's ``pollIntervalMs`` (``None``: not sent)."""
    task_ttl_ms: ClassVar[int | None] = 60_000
    """The task's ``ttlMs``: after it the task is forgotten (``-32602``); ``None`` keeps it."""

    _wire_annotations: ClassVar[dict[str, bool] | None] = None
    _validator: ClassVar[Any] = None
    _output_validator: ClassVar[Any] = None

    # content helpers, also usable as self.text_content(...)
    text_content = staticmethod(_content.text_content)
    image_content = staticmethod(_content.image_content)
    audio_content = staticmethod(_content.audio_content)
    embedded_resource_content = staticmethod(_content.embedded_resource_content)
    resource_link = staticmethod(_content.resource_link)
    resource_contents = staticmethod(_content.resource_contents)

    @classmethod
    def _check_definitions(cls) -> None:
        owner = cls.__name__
        cls._check_identity()
        check_schema(owner, "input_schema", cls.input_schema, required=True)
        check_schema(owner, "output_schema", cls.output_schema)
        cls._wire_annotations = check_annotations(owner, cls.annotations)
        _check_security_schemes(owner, cls.security_schemes)
        meta = check_dict(owner, "meta", cls.meta)
        if meta and "securitySchemes" in meta and cls.security_schemes is not None:
            raise ValueError(f"{owner}: security_schemes and meta['securitySchemes'] both given; use security_schemes")
        uri = check_text(owner, "resource_uri", cls.resource_uri)
        if uri is not None and not uri.startswith("ui://"):
            raise ValueError(f"{owner}: resource_uri must be a ui:// URI, not {uri!r}")
        if cls.visibility is not None and (not isinstance(cls.visibility, (list, tuple)) or
                                           not set(cls.visibility) <= {"model", "app"}):
            raise ValueError(f"{owner}: visibility must be a list of 'model' and 'app', not {cls.visibility!r}")
        if cls.task not in (None, "optional", "required"):
            raise ValueError(f"{owner}: task must be None, 'optional' or 'required', not {cls.task!r}")
        for label in ("task_poll_interval_ms", "task_ttl_ms"):
            value = getattr(cls, label)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                raise ValueError(f"{owner}: {label} must be an int >= 0 or None, not {value!r}")
        cls._validator = None
        cls._output_validator = None

    # -- the definition ------------------------------------------------------------------------

    @classmethod
    def definition(cls) -> dict[str, Any]:
        """The tool's ``tools/list`` entry.

            Fetch.definition()
            # {"name": "fetch", "inputSchema": {...}, "annotations": {"readOnlyHint": True, ...}}
            # TypeError when the class has no name

        ``security_schemes`` are published as ``_meta["securitySchemes"]`` (the SDK's tool
        model keeps no unknown top-level keys, so ``_meta`` is where they survive the wire).
        """
        entry = named_entry(cls, "tool")
        entry["inputSchema"] = cls.input_schema
        if cls.output_schema is not None:
            entry["outputSchema"] = cls.output_schema
        if cls._wire_annotations is not None:
            entry["annotations"] = dict(cls._wire_annotations)
        meta = dict(cls.meta or {})
        if cls.security_schemes is not None:
            meta.setdefault("securitySchemes", [dict(s) for s in cls.security_schemes])
        if cls.resource_uri is not None or cls.visibility is not None:
            ui = dict(meta.get("ui") or {})
            if cls.resource_uri is not None:
                ui["resourceUri"] = cls.resource_uri
            if cls.visibility is not None:
                ui["visibility"] = list(cls.visibility)
            meta["ui"] = ui
        if meta:
            entry["_meta"] = meta
        return entry

    # -- running -------------------------------------------------------------------------------

    def __init__(self, arguments: dict[str, Any] | None = None, context: dict[str, Any] | None = None, *,
                 channel: CallChannel | None = None) -> None:
        self.arguments: dict[str, Any] = dict(arguments or {})
        bind_call(self, "tools", context, channel)
        self._cancellable_depth = 0
        self._depth_lock = threading.Lock()

    def task_status(self, message: str) -> None:
        """Set the ``statusMessage`` of the task this call runs as (a no-op when it is not a task)."""
        task = getattr(self.channel, "task", None)
        if task is not None:
            task.set_status(message)

    def call(self) -> Any:
        """The tool's work; override it and return ``self.respond_with(...)``."""
        raise NotImplementedError(f"{type(self).__name__}.call() is not implemented")

    @classmethod
    def run(cls, arguments: dict[str, Any] | None = None, context: dict[str, Any] | None = None,
            channel: CallChannel | None = None) -> dict[str, Any]:
        """Check the arguments, run ``call()`` and return the ``tools/call`` result dict.

            Double.run({"number": "21"})
            # {"content": [{"type": "text", "text": "21 doubled is 42"}]}
            # ToolCancelled when cancelled; InvalidResult (OutputSchemaError among them) for a bad answer
        """
        arguments = dict(arguments or {})
        problems = cls._argument_errors(arguments)
        if problems:
            return cls._error_result(f"Invalid arguments for {cls.name}: {problems[0]}")
        channel = channel if channel is not None else CallChannel()
        return run_asking(channel, f"{cls.__name__}.call()", cls._run_once, arguments, context, channel)

    @classmethod
    def _run_once(cls, arguments: dict[str, Any], context: dict[str, Any] | None,
                  channel: CallChannel) -> dict[str, Any]:
        tool = cls(arguments, context, channel=channel)
        owner = f"{cls.__name__}.call()"
        try:
            answer = tool.call()
        except (ToolCancelled, InputRequired, InputNotAccepted):
            raise
        except InvalidResult as exc:
            if cls.__name__ in str(exc):
                raise
            raise type(exc)(f"{owner}: {exc}") from exc
        except ToolError as exc:
            return cls._error_result(str(exc))
        except (Exception, SystemExit) as exc:  # SystemExit too: it would end an HTTP server's event loop
            tool.server_logger.exception("tool %s failed", cls.name)
            return cls._error_result(f"{cls.name} failed: {type(exc).__name__}: {exc}")
        if isinstance(answer, str):
            answer = tool.respond_with(content=tool.text_content(text=answer))
        if answer is None:
            raise InvalidResult(f"{owner} returned None: did you forget `return self.respond_with(...)`?")
        if inspect.isawaitable(answer):
            if inspect.iscoroutine(answer):
                answer.close()
            raise InvalidResult(f"{owner} returned an awaitable; call() must be a plain def returning "
                                f"self.respond_with(...)")
        if isinstance(answer, dict) and "type" in answer and "content" not in answer:
            raise InvalidResult(f"{owner} returned a content block; wrap it: return self.respond_with(content=...)")
        if isinstance(answer, list):
            raise InvalidResult(f"{owner} returned a list; wrap it: return self.respond_with(content=[...])")
        return check_call_result(owner, answer, output_schema=cls.output_schema is not None)

    @classmethod
    def _argument_errors(cls, arguments: dict[str, Any]) -> list[str]:
        if cls._validator is None:
            from jsonschema.validators import validator_for

            cls._validator = validator_for(cls.input_schema)(cls.input_schema)
        return [e.message for e in cls._validator.iter_errors(arguments)]

    @staticmethod
    def _error_result(message: str) -> dict[str, Any]:
        return {"content": [_content.text_content(text=message)], "isError": True}

    # -- answers -------------------------------------------------------------------------------

    def respond_with(self, kind: str | None = None, /, *, content: Any = None, structured_content: Any = None,
                     error: str | None = None, text: str | None = None,
                     meta: dict[str, Any] | None = None) -> dict[str, Any]:
        """Build the ``tools/call`` result: one block, several blocks, structured content or a tool error.

            return self.respond_with(content=self.text_content(text="hi"))       # one block
            return self.respond_with(structured_content={"temperature": 22.5})   # checked vs output_schema
            return self.respond_with(error="not found")  # or respond_with("error", text="not found")

        Structured content comes with a text block holding its JSON (indented by 2)
        unless ``content`` is given too. ``meta`` becomes the result's ``_meta``.

        Raises:
            InvalidResult (a ValueError): no answer, two kinds of answer at once, an unknown
                ``kind``, a block the protocol does not accept, structured content that is not a
                JSON object (or holds NaN). The server answers the call with error -32603.
            OutputSchemaError: ``structured_content`` does not match ``output_schema``.
        """
        owner = f"{type(self).__name__}.respond_with"
        if kind is not None:
            if kind != "error":
                raise InvalidResult(f"{owner}: the positional form is respond_with('error', text=...); got {kind!r}")
            if error is not None or text is None:
                raise InvalidResult(f"{owner}('error', ...) needs text= (and no error=)")
            error = text
        elif text is not None:
            raise InvalidResult(f"{owner}: text= belongs to the form respond_with('error', text=...)")
        given = [k for k, v in (("content", content), ("structured_content", structured_content),
                                ("error", error)) if v is not None]
        if not given:
            raise InvalidResult(f"{owner} needs content=, structured_content= or error=")
        if error is not None and len(given) > 1:
            raise InvalidResult(f"{owner}: error= cannot be combined with {given}")
        if error is not None:
            if not isinstance(error, str) or not error:
                raise InvalidResult(f"{owner}: error= must be a non-empty str; got {error!r}")
            result = self._error_result(error)
        else:
            blocks: list[dict[str, Any]] = []
            if content is not None:
                items = content if isinstance(content, list) else [content]
                blocks = [check_block(owner, block, f"content[{i}]") for i, block in enumerate(items)]
            result = {"content": blocks, "isError": False}
            if structured_content is not None:
                self._check_output(structured_content)
                result["structuredContent"] = structured_content
                if content is None:
                    result["content"] = [_content.text_content(text=json.dumps(structured_content, indent=2))]
        if meta is not None:
            if not isinstance(meta, dict):
                raise InvalidResult(f"{owner}: meta= must be a dict; got {type(meta).__name__}")
            result["_meta"] = dict(meta)
        return check_call_result(owner, result, output_schema=False)

    def _check_output(self, data: Any) -> None:
        cls = type(self)
        if not isinstance(data, dict):
            raise InvalidResult(f"{cls.__name__}.respond_with: structured_content must be a JSON object (a dict); "
                                f"got {type(data).__name__}")
        if cls.output_schema is None:
            return
        if cls._output_validator is None:
            from jsonschema.validators import validator_for

            cls._output_validator = validator_for(cls.output_schema)(cls.output_schema)
        problems = [e.message for e in cls._output_validator.iter_errors(data)]
        if problems:
            raise OutputSchemaError(f"{cls.__name__} ({cls.name}): structured content does not match output_schema: "
                                    + "; ".join(problems[:5]))

    # -- long-running work ---------------------------------------------------------------------

    @property
    def cancelled(self) -> bool:
        """Whether the client has cancelled this call."""
        return self.channel.cancelled

    def check_cancelled(self) -> None:
        """Raise `ToolCancelled` if the client has cancelled this call (inside ``cancellable``)."""
        if self._cancellable_depth and self.channel.cancelled:
            raise ToolCancelled(f"{self.name}: cancelled by the client")

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``; inside ``cancellable`` a cancel ends the wait by raising `ToolCancelled`.

            self.cancellable(lambda: self.sleep(3))   # stops as soon as the client cancels
        """
        if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or seconds < 0:
            raise ValueError(f"seconds must be a number >= 0; got {seconds!r}")
        if self._cancellable_depth:
            if self.channel.cancel_event.wait(seconds):
                raise ToolCancelled(f"{self.name}: cancelled by the client")
        else:
            time.sleep(seconds)

    def cancellable(self, fn: Callable[[], T]) -> T:
        """Run ``fn()`` so that the client may cancel it; return its value.

            result = self.cancellable(lambda: (self.sleep(3), "done")[1])
            # the client cancels -> ToolCancelled inside fn, and no result is sent

        Work inside notices a cancel at ``self.sleep(...)`` and ``self.check_cancelled()``;
        a cancel that arrives while ``fn`` runs is also raised when it returns. Both eras:
        ``notifications/cancelled``, or a closed response stream on 2026-07-28 HTTP.
        Spec: MCP 2026-07-28 "Utilities" > "Cancellation".
        """
        if not callable(fn):
            raise TypeError(f"cancellable() takes a callable; got {type(fn).__name__}")
        with self._depth_lock:
            self._cancellable_depth += 1
        try:
            self.check_cancelled()
            value = fn()
            self.check_cancelled()
            return value
        finally:
            with self._depth_lock:
                self._cancellable_depth -= 1

    def progressable(self, fn: Callable[[], T], *, max_duration: float, message: str | None = None,
                     interval: float | None = None) -> T:
        """Run ``fn()`` while sending progress notifications measured against ``max_duration`` seconds.

            items = self.progressable(lambda: self.cancellable(work), max_duration=2, message="Processing 10 items")
            # notifications/progress: progress rising towards total=100, then 100 when fn returns

        Progress is the elapsed share of ``max_duration`` in percent (``total`` 100), held
        below 100 until ``fn`` returns; values only rise. Sent only when the request
        carried a ``progressToken``. ``interval`` (seconds) defaults to a tenth of
        ``max_duration``, between 0.02 and 1. Spec: MCP 2026-07-28 "Utilities" > "Progress".

        Raises:
            ValueError: ``max_duration`` or ``interval`` not a positive number.
        """
        if not callable(fn):
            raise TypeError(f"progressable() takes a callable; got {type(fn).__name__}")
        for label, value in (("max_duration", max_duration), ("interval", interval)):
            if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0):
                raise ValueError(f"{label} must be a number of seconds > 0; got {value!r}")
        if message is not None:
            check_text(type(self).__name__, "progressable message", message)
        if not self.channel.progress_requested:
            return fn()
        step = interval if interval is not None else min(1.0, max(0.02, max_duration / 10))
        done = threading.Event()
        lock = threading.Lock()
        started = time.monotonic()
        last = [-1.0]

        def send(value: float) -> None:
            with lock:
                if value > last[0]:
                    last[0] = value
                    self.channel.progress(value, 100, message)

        def tick() -> None:
            while not done.wait(step):
                if self.channel.cancelled:
                    return
                send(round(min(99.0, 100 * (time.monotonic() - started) / max_duration), 1))

        ticker = threading.Thread(target=tick, name=f"progress-{self.name}", daemon=True)
        ticker.start()
        try:
            value = fn()
        finally:
            done.set()
            ticker.join()
        send(100.0)
        return value
