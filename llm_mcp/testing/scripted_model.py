"""A scripted model server for tests: real HTTP, OpenAI and Anthropic wire formats.

    with ScriptedModel([tool_call("add", {"a": 1, "b": 2}), reply("3")]) as model:
        provider = OpenAIProvider(base_url=model.openai_base_url, api_key="test")
        model.requests[1].tool_results    # [{"tool_call_id": "call_1", "content": "3", "is_error": None}]

[`ScriptedModel`][llm_mcp.testing.scripted_model.ScriptedModel] listens on a loopback port and answers

* ``POST /v1/chat/completions``: OpenAI Chat Completions, plain JSON or, with
  ``"stream": true``, SSE ``data: {...}`` chunks ending with ``data: [DONE]`` (a usage chunk
  comes last when ``stream_options.include_usage`` is set);
* ``POST /v1/messages``: Anthropic Messages, plain JSON or, with ``"stream": true``, the SSE
  events ``message_start``, ``content_block_start``/``_delta``/``_stop``, ``message_delta``,
  ``message_stop``;

each request with the next turn of its script, and records every request
(`RecordedRequest`). The official SDKs talk to it unchanged: point the OpenAI client
at `ScriptedModel.openai_base_url` and the Anthropic client at
`ScriptedModel.anthropic_base_url`.

A script is a list of turns. A turn is `reply` (text), `tool_call` (one call),
`turn` (text and/or several calls), `api_error` (an HTTP error in the API's
format), a plain ``str`` (a reply), a list of turns (merged into one), or a callable that
receives the `RecordedRequest` and returns any of those (a dynamic script).

When the script runs out, the server answers HTTP 500 with a JSON error whose message says
at which request it ran out and what that request asked, with ``x-should-retry: false`` so
the SDKs raise at once instead of retrying.

No Django import; only the standard library.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self, Union

__all__ = [
    "RecordedRequest",
    "ScriptedModel",
    "ScriptedToolCall",
    "Turn",
    "api_error",
    "reply",
    "scripted_model",
    "tool_call",
    "turn",
]

DEFAULT_INPUT_TOKENS = 10
DEFAULT_OUTPUT_TOKENS = 5


# --------------------------------------------------------------------------- turns


@dataclass(frozen=True)
class ScriptedToolCall:
    """One tool call in a scripted turn.

    Attributes:
        name: the tool name the model "calls".
        arguments: the arguments (sent as JSON).
        id: the call id; ``None`` numbers it ``call_<k>`` (OpenAI) or ``toolu_<k>``
            (Anthropic), ``k`` counting this server's tool calls from 1.
        raw_arguments: when set, sent as the arguments string verbatim instead of
            ``arguments`` (to script malformed JSON). OpenAI only: the Anthropic format
            carries an object, so there it is sent through ``input_json_delta`` when
            streaming and ignored otherwise.
    """

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    raw_arguments: str | None = None

    def arguments_json(self) -> str:
        return self.raw_arguments if self.raw_arguments is not None else json.dumps(self.arguments)


@dataclass(frozen=True)
class Turn:
    """One scripted answer.

    Attributes:
        text: the assistant text (``""`` for none).
        tool_calls: the tool calls of the answer.
        thinking: Anthropic only: a thinking block (with a fixed signature ``"sig"``)
            placed before the text; ignored in the OpenAI format.
        model: the model name answered; ``None`` echoes the request's ``model``.
        input_tokens, output_tokens: usage numbers; ``None`` uses the server's defaults.
        status, error: set by `api_error`: answer this HTTP status with this message.
    """

    text: str = ""
    tool_calls: tuple[ScriptedToolCall, ...] = ()
    thinking: str | None = None
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    status: int | None = None
    error: str | None = None


TurnLike = Union[Turn, str, Sequence["TurnLike"], Callable[["RecordedRequest"], Any]]  # noqa: UP007 (runtime alias)


def reply(text: str, *, model: str | None = None, input_tokens: int | None = None,
          output_tokens: int | None = None, thinking: str | None = None) -> Turn:
    """A turn that answers with text.

        ScriptedModel([reply("Hello!")])
        ScriptedModel([reply("4", input_tokens=120, output_tokens=1)])
        ScriptedModel([reply("Yes", thinking="The user wants yes.")])   # Anthropic thinking block
    """
    return Turn(text=text, thinking=thinking, model=model, input_tokens=input_tokens,
                output_tokens=output_tokens)


def tool_call(name: str, arguments: dict[str, Any] | None = None, id: str | None = None, *,
              raw_arguments: str | None = None) -> Turn:
    """A turn that calls one tool (combine several with `turn` or a list).

        ScriptedModel([tool_call("add", {"a": 1, "b": 2}), reply("3")])
        ScriptedModel([tool_call("add", {"a": 1}, id="call_abc")])
        ScriptedModel([tool_call("add", raw_arguments='{"a": 1')])     # malformed JSON (OpenAI)
    """
    return Turn(tool_calls=(ScriptedToolCall(name, dict(arguments or {}), id, raw_arguments),))


def turn(text: str = "", tool_calls: Sequence[Turn | ScriptedToolCall] = (), *, thinking: str | None = None,
         model: str | None = None, input_tokens: int | None = None, output_tokens: int | None = None) -> Turn:
    """A turn with text and any number of tool calls.

        turn("Let me look.", tool_calls=[tool_call("search", {"q": "x"}), tool_call("now")])
        turn(tool_calls=[tool_call("a"), tool_call("b")], output_tokens=42)
        turn("plain text")                                           # same as reply("plain text")

    Raises ``TypeError`` for an item of ``tool_calls`` that is neither a call nor a turn.
    """
    calls: list[ScriptedToolCall] = []
    for item in tool_calls:
        if isinstance(item, ScriptedToolCall):
            calls.append(item)
        elif isinstance(item, Turn):
            calls.extend(item.tool_calls)
        else:
            raise TypeError(f"turn(tool_calls=...) takes tool_call(...) items, not {type(item).__name__}")
    return Turn(text=text, tool_calls=tuple(calls), thinking=thinking, model=model, input_tokens=input_tokens,
                output_tokens=output_tokens)


def api_error(status: int, message: str = "scripted error") -> Turn:
    """A turn that fails with an HTTP error in the API's error format (no retry by the SDKs).

        ScriptedModel([api_error(429, "slow down")])       # openai.RateLimitError / anthropic.RateLimitError
        ScriptedModel([api_error(400, "bad request")])     # BadRequestError
        ScriptedModel([api_error(401)])                    # AuthenticationError
    """
    if not 400 <= status <= 599:
        raise ValueError(f"api_error status must be 4xx or 5xx, not {status}")
    return Turn(status=status, error=message)


def _as_turn(item: Any, request: RecordedRequest) -> Turn:
    """Resolve one script item (callables are called with the request) to a `Turn`."""
    for _ in range(10):  # a callable may return another callable; stop at some point
        if not callable(item) or isinstance(item, (Turn, str)):
            break
        item = item(request)
    if isinstance(item, Turn):
        return item
    if isinstance(item, str):
        return reply(item)
    if isinstance(item, ScriptedToolCall):
        return Turn(tool_calls=(item,))
    if isinstance(item, (list, tuple)):
        parts = [_as_turn(part, request) for part in item]
        merged = turn(" ".join(p.text for p in parts if p.text), [c for p in parts for c in p.tool_calls])
        thinking = next((p.thinking for p in parts if p.thinking), None)
        return Turn(text=merged.text, tool_calls=merged.tool_calls, thinking=thinking)
    raise TypeError(f"a script turn must be reply(...), tool_call(...), turn(...), api_error(...), a str, "
                    f"a list of those or a callable returning one, not {type(item).__name__}")


# --------------------------------------------------------------------------- recorded requests


def _text_of(content: Any) -> str:
    """Text of a content value in either format: a string, or a list of text parts/blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content
                         if isinstance(part, dict) and part.get("type") == "text")
    return ""


@dataclass
class RecordedRequest:
    """One request the server received, with helpers that read both wire formats alike.

        request = model.requests[0]
        request.api, request.tool_names, request.system     # ("openai", ["add"], "Be brief.")
        request.body["messages"][-1]                        # the raw JSON as sent

    Attributes:
        index: 1-based position among the server's requests.
        path: the request path, e.g. ``"/v1/chat/completions"``.
        headers: the HTTP headers, names in lower case.
        body: the parsed JSON body (``{}`` when it was not JSON).
        api: ``"openai"`` or ``"anthropic"`` (from the path).
    """

    index: int
    path: str
    headers: dict[str, str] = field(repr=False)  # may hold API keys: kept out of repr
    body: dict[str, Any] = field(repr=False)
    api: str = "openai"

    @property
    def model(self) -> str | None:
        """The ``model`` the request asked for."""
        return self.body.get("model")

    @property
    def stream(self) -> bool:
        """Whether the request asked for a streamed answer."""
        return self.body.get("stream") is True

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The ``messages`` list exactly as sent."""
        return list(self.body.get("messages") or [])

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tools offered, each as ``{"name", "description", "parameters"}`` (the JSON Schema)."""
        tools = []
        for tool in self.body.get("tools") or []:
            if self.api == "openai":
                function = tool.get("function") or {}
                tools.append({"name": function.get("name"), "description": function.get("description"),
                              "parameters": function.get("parameters")})
            else:
                tools.append({"name": tool.get("name"), "description": tool.get("description"),
                              "parameters": tool.get("input_schema")})
        return tools

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools offered, in order."""
        return [tool["name"] for tool in self.tools]

    @property
    def tool_choice(self) -> Any:
        """The ``tool_choice`` as sent (``None`` when absent)."""
        return self.body.get("tool_choice")

    @property
    def system(self) -> str:
        """The instructions: OpenAI system/developer messages, or Anthropic ``system``, joined by blank lines."""
        if self.api == "anthropic":
            system = self.body.get("system")
            if isinstance(system, list):
                return "\n\n".join(_text_of([block]) for block in system if isinstance(block, dict)
                                   and block.get("type") == "text")
            return _text_of(system)
        return "\n\n".join(_text_of(m.get("content")) for m in self.messages
                           if m.get("role") in ("system", "developer"))

    @property
    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool result in the conversation, in order: ``{"tool_call_id", "content", "is_error"}``.

        ``content`` is the result's text; ``is_error`` is the Anthropic ``is_error`` flag
        (``False`` when absent), and ``None`` in the OpenAI format, which has no such flag.
        """
        results = []
        for message in self.messages:
            if self.api == "openai":
                if message.get("role") == "tool":
                    results.append({"tool_call_id": message.get("tool_call_id"),
                                    "content": _text_of(message.get("content")), "is_error": None})
                continue
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    results.append({"tool_call_id": block.get("tool_use_id"),
                                    "content": _text_of(block.get("content")),
                                    "is_error": block.get("is_error") is True})
        return results

    @property
    def last_user_text(self) -> str:
        """The text of the last user message (tool results excluded), ``""`` when there is none."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                text = _text_of(message.get("content"))
                if text or not isinstance(message.get("content"), list):
                    return text
        return ""


# --------------------------------------------------------------------------- answers


def _pieces(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] if text else []


class _Answer:
    """Builds the answer of one turn in one format (ids numbered by the server)."""

    def __init__(self, model: ScriptedModel, the_turn: Turn, request: RecordedRequest, call_ids: list[str]):
        self.turn = the_turn
        self.request = request
        self.call_ids = call_ids
        self.model_name = the_turn.model or request.model or "scripted-model"
        self.input_tokens = the_turn.input_tokens if the_turn.input_tokens is not None else model.input_tokens
        self.output_tokens = the_turn.output_tokens if the_turn.output_tokens is not None else model.output_tokens
        self.chunk_size = model.chunk_size

    # OpenAI ------------------------------------------------------------------

    def openai_json(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.turn.text or None, "refusal": None}
        if self.turn.tool_calls:
            message["tool_calls"] = [
                {"id": call_id, "type": "function", "function": {"name": call.name, "arguments": call.arguments_json()}}
                for call, call_id in zip(self.turn.tool_calls, self.call_ids)]
        return {"id": f"chatcmpl-{self.request.index}", "object": "chat.completion", "created": 0,
                "model": self.model_name,
                "choices": [{"index": 0, "message": message, "logprobs": None,
                             "finish_reason": "tool_calls" if self.turn.tool_calls else "stop"}],
                "usage": self._openai_usage()}

    def _openai_usage(self) -> dict[str, int]:
        return {"prompt_tokens": self.input_tokens, "completion_tokens": self.output_tokens,
                "total_tokens": self.input_tokens + self.output_tokens}

    def openai_chunks(self) -> Iterator[dict[str, Any]]:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {"id": f"chatcmpl-{self.request.index}", "object": "chat.completion.chunk", "created": 0,
                    "model": self.model_name,
                    "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

        yield chunk({"role": "assistant", "content": ""})
        for piece in _pieces(self.turn.text, self.chunk_size):
            yield chunk({"content": piece})
        for index, (call, call_id) in enumerate(zip(self.turn.tool_calls, self.call_ids)):
            yield chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                         "function": {"name": call.name, "arguments": ""}}]})
            for piece in _pieces(call.arguments_json(), self.chunk_size):
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        yield chunk({}, "tool_calls" if self.turn.tool_calls else "stop")
        options = self.request.body.get("stream_options") or {}
        if options.get("include_usage"):
            yield {"id": f"chatcmpl-{self.request.index}", "object": "chat.completion.chunk", "created": 0,
                   "model": self.model_name, "choices": [], "usage": self._openai_usage()}

    # Anthropic ---------------------------------------------------------------

    def _anthropic_blocks(self) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if self.turn.thinking is not None:
            blocks.append({"type": "thinking", "thinking": self.turn.thinking, "signature": "sig"})
        if self.turn.text:
            blocks.append({"type": "text", "text": self.turn.text})
        for call, call_id in zip(self.turn.tool_calls, self.call_ids):
            blocks.append({"type": "tool_use", "id": call_id, "name": call.name, "input": call.arguments})
        return blocks

    def _anthropic_message(self, content: list[dict[str, Any]], stop: str | None, output_tokens: int) -> dict[str, Any]:
        return {"id": f"msg_{self.request.index}", "type": "message", "role": "assistant", "model": self.model_name,
                "content": content, "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": self.input_tokens, "output_tokens": output_tokens}}

    def _stop_reason(self) -> str:
        return "tool_use" if self.turn.tool_calls else "end_turn"

    def anthropic_json(self) -> dict[str, Any]:
        return self._anthropic_message(self._anthropic_blocks(), self._stop_reason(), self.output_tokens)

    def anthropic_events(self) -> Iterator[tuple[str, dict[str, Any]]]:
        yield "message_start", {"type": "message_start", "message": self._anthropic_message([], None, 1)}
        yield "ping", {"type": "ping"}
        calls = dict(zip(self.call_ids, self.turn.tool_calls))
        for index, block in enumerate(self._anthropic_blocks()):
            kind = block["type"]
            if kind == "text":
                yield "content_block_start", {"type": "content_block_start", "index": index,
                                              "content_block": {"type": "text", "text": ""}}
                for piece in _pieces(block["text"], self.chunk_size):
                    yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                                  "delta": {"type": "text_delta", "text": piece}}
            elif kind == "thinking":
                yield "content_block_start", {"type": "content_block_start", "index": index,
                                              "content_block": {"type": "thinking", "thinking": "", "signature": ""}}
                for piece in _pieces(block["thinking"], self.chunk_size):
                    yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                                  "delta": {"type": "thinking_delta", "thinking": piece}}
                yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": {"type": "signature_delta", "signature": block["signature"]}}
            else:
                yield "content_block_start", {"type": "content_block_start", "index": index,
                                              "content_block": {"type": "tool_use", "id": block["id"],
                                                                "name": block["name"], "input": {}}}
                for piece in _pieces(calls[block["id"]].arguments_json(), self.chunk_size):
                    yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                                  "delta": {"type": "input_json_delta", "partial_json": piece}}
            yield "content_block_stop", {"type": "content_block_stop", "index": index}
        yield "message_delta", {"type": "message_delta",
                                "delta": {"stop_reason": self._stop_reason(), "stop_sequence": None},
                                "usage": {"output_tokens": self.output_tokens}}
        yield "message_stop", {"type": "message_stop"}


def _error_body(api: str, status: int, message: str) -> dict[str, Any]:
    if api == "anthropic":
        kind = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": "scripted_error", "param": None, "code": None}}


# --------------------------------------------------------------------------- the server


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle delay between writes

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read model.requests instead
        pass

    def do_GET(self) -> None:
        self._send_json(404, _error_body("openai", 404, f"ScriptedModel: no GET route {self.path}"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0]
        if path.endswith("/chat/completions"):
            api = "openai"
        elif path.endswith("/messages"):
            api = "anthropic"
        else:
            self._send_json(404, _error_body("openai", 404, f"ScriptedModel: no route POST {path} "
                                                            "(known: /v1/chat/completions, /v1/messages)"))
            return
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        if not isinstance(body, dict):
            body = {}
        owner = self.server.owner
        request, item, position = owner._record(path, {k.lower(): v for k, v in self.headers.items()}, body, api)
        if position is None:
            last = request.last_user_text
            message = (f"ScriptedModel: the script ran out at request {request.index} "
                       f"(it has {owner.script_length} turns): POST {path}, model {request.model!r}, "
                       f"tools {request.tool_names}, last user text {last[:200]!r}")
            self._send_json(500, _error_body(api, 500, message))
            return
        try:
            the_turn = _as_turn(item, request)
        except Exception as exc:  # noqa: BLE001 - a dynamic turn failed: make the test failure readable
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            self._send_json(500, _error_body(api, 500, f"ScriptedModel: script turn {position + 1} "
                                                       f"(request {request.index}) raised {detail}"))
            return
        if the_turn.status is not None:
            self._send_json(the_turn.status, _error_body(api, the_turn.status, the_turn.error or ""))
            return
        answer = _Answer(owner, the_turn, request, owner._call_ids(api, the_turn))
        if api == "openai":
            if request.stream:
                self._send_sse((None, chunk) for chunk in answer.openai_chunks())
            else:
                self._send_json(200, answer.openai_json())
        elif request.stream:
            self._send_sse(answer.anthropic_events())
        else:
            self._send_json(200, answer.anthropic_json())

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-should-retry", "false")
        self.end_headers()
        self.wfile.write(data)

    def _send_sse(self, events: Iterator[tuple[str | None, dict[str, Any]]]) -> None:
        lines = []
        for name, data in events:
            if name:
                lines.append(f"event: {name}\n")
            lines.append(f"data: {json.dumps(data)}\n\n")
        if self.server.owner_api_is_openai(self.path):
            lines.append("data: [DONE]\n\n")
        delay = self.server.owner.chunk_delay
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        if delay > 0:  # one event at a time, the body ending when the connection closes
            self.send_header("Connection", "close")
            self.close_connection = True
            self.end_headers()
            try:
                for line in lines:
                    self.wfile.write(line.encode())
                    self.wfile.flush()
                    time.sleep(delay)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client stopped reading (a cancelled turn): the rest is not wanted
            return
        payload = "".join(lines).encode()
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: ScriptedModel

    @staticmethod
    def owner_api_is_openai(path: str) -> bool:
        return path.split("?", 1)[0].endswith("/chat/completions")


class ScriptedModel:
    """A loopback HTTP model server that answers from a script and records every request.

        with ScriptedModel([tool_call("add", {"a": 1, "b": 2}), reply("3")]) as model:
            client = openai.OpenAI(base_url=model.openai_base_url, api_key="test")
            model.requests[0].tool_names

    Args:
        script: the turns, answered in order, one per request, whichever the API.
        input_tokens, output_tokens: default usage numbers of every answer (a turn may
            set its own).
        chunk_size: streamed text and tool arguments come in pieces of this many characters.
        chunk_delay: seconds between streamed events (0: the whole stream at once), to watch
            a reply arrive piece by piece or cancel it midway.

    Attributes:
        url: ``http://127.0.0.1:<port>`` once started.
        openai_base_url: ``url + "/v1"`` (the OpenAI SDK's ``base_url``).
        anthropic_base_url: ``url`` (the Anthropic SDK's ``base_url``).
        requests: a snapshot list of the `RecordedRequest` objects received so far.

    Raises ``RuntimeError`` when a URL is read before [`start`][llm_mcp.testing.scripted_model.ScriptedModel.start].
    """

    def __init__(self, script: Sequence[TurnLike] = (), *, input_tokens: int = DEFAULT_INPUT_TOKENS,
                 output_tokens: int = DEFAULT_OUTPUT_TOKENS, chunk_size: int = 4, chunk_delay: float = 0.0):
        if chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        if chunk_delay < 0:
            raise ValueError("chunk_delay must be 0 or more seconds")
        self.chunk_delay = chunk_delay
        self._script: list[Any] = list(script)
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.chunk_size = chunk_size
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._next = 0
        self._calls = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # lifecycle ---------------------------------------------------------------

    def start(self) -> ScriptedModel:
        """Listen on a free loopback port (idempotent); returns ``self``."""
        if self._server is None:
            server = _Server(("127.0.0.1", 0), _Handler)
            server.owner = self
            self._server = server
            self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02},
                                            name="ScriptedModel", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening (idempotent). Recorded requests stay readable."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.url if self._server is not None else "stopped"
        return f"<ScriptedModel {where} turns={len(self._script)} requests={len(self._requests)}>"

    # addresses ---------------------------------------------------------------

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("ScriptedModel is not started: use it as a context manager or call start()")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_base_url(self) -> str:
        return self.url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    # script and records ------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def script_length(self) -> int:
        with self._lock:
            return len(self._script)

    @property
    def remaining(self) -> int:
        """How many turns have not been answered yet."""
        with self._lock:
            return len(self._script) - self._next

    def add(self, *turns: TurnLike) -> None:
        """Append turns to the script (also after the server has started)."""
        with self._lock:
            self._script.extend(turns)

    def _record(self, path: str, headers: dict[str, str], body: dict[str, Any],
                api: str) -> tuple[RecordedRequest, Any, int | None]:
        with self._lock:
            request = RecordedRequest(len(self._requests) + 1, path, headers, body, api)
            self._requests.append(request)
            if self._next >= len(self._script):
                return request, None, None
            position = self._next
            self._next += 1
            return request, self._script[position], position

    def _call_ids(self, api: str, the_turn: Turn) -> list[str]:
        prefix = "call_" if api == "openai" else "toolu_"
        ids = []
        with self._lock:
            for call in the_turn.tool_calls:
                self._calls += 1
                ids.append(call.id or f"{prefix}{self._calls}")
        return ids


# --------------------------------------------------------------------------- pytest fixture


def _scripted_model_fixture() -> Iterator[Callable[..., ScriptedModel]]:
    """Factory fixture: ``scripted_model(script, **options)`` returns a started [`ScriptedModel`][llm_mcp.testing.scripted_model.ScriptedModel].

        def test_chat(scripted_model):
            model = scripted_model([reply("hi")])
            provider = OpenAIProvider(base_url=model.openai_base_url, api_key="test")

    Every model it made is stopped at the end of the test.
    """
    made: list[ScriptedModel] = []

    def make(script: Sequence[TurnLike] = (), **options: Any) -> ScriptedModel:
        model = ScriptedModel(script, **options).start()
        made.append(model)
        return model

    try:
        yield make
    finally:
        for model in made:
            model.stop()


try:  # a pytest fixture when pytest is installed; a plain generator function otherwise
    import pytest as _pytest
except ImportError:  # pragma: no cover - pytest is present wherever tests run
    scripted_model = _scripted_model_fixture
else:
    scripted_model = _pytest.fixture(name="scripted_model")(_scripted_model_fixture)
