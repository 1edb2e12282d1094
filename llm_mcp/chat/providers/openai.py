"""OpenAI Chat Completions, and every server that speaks it (vLLM, Ollama, llama.cpp, ...).

    provider = OpenAIProvider()                                          # OPENAI_API_KEY from the environment
    provider = OpenAIProvider(base_url="http://localhost:11434/v1", api_key="ollama")
    message = provider.complete(ModelRequest("gpt-4.1-mini", [Message("user", "Hi")]))

Shapes sent (``client.chat.completions.create``):

* instructions: one ``system`` message first, the instructions joined by blank lines;
* user turns: a string, or content parts when there are attachments: ``text``,
  ``image_url`` (a base64 ``data:`` URL; JPEG, PNG, GIF, WebP), ``file`` (PDFs, ``file_data`` as a ``data:`` URL),
  ``input_audio`` (WAV and MP3); text resources become text parts; anything else a text
  line naming it (name, URI, MIME type);
* assistant turns: ``content`` and ``tool_calls`` (arguments as a JSON string);
* tool results: ``role: "tool"`` messages, text only (``"Error: "`` first when the result is
  an error, since the format has no error flag); the images, PDFs and audio of a batch of
  consecutive tool results follow in one ``user`` message of content parts right after
  the batch;
* ``choice``: ``"auto"``/``"required"``/``"none"`` as is, a tool name as
  ``{"type": "function", "function": {"name": ...}}``; omitted when no tools are offered.
* ``params``: merged into the call; a keyword the installed SDK does not take (say
  ``temperature`` on an SDK that dropped it, or a server's own option) goes in ``extra_body``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from ...client.result import Attachment
from ..messages import Message, ToolCall, attachment_text
from . import _common as common
from .base import ModelRequest, Provider, ToolSpec

__all__ = ["OpenAIProvider"]

_AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/mpeg": "mp3",
                  "audio/mp3": "mp3"}


class OpenAIProvider(common.LazySDKClient, Provider):
    """A `Provider` on the OpenAI Chat Completions API.

        provider = OpenAIProvider(api_key="sk-...")
        provider = OpenAIProvider(base_url="http://localhost:8000/v1", api_key="unused")  # vLLM
        provider = OpenAIProvider(client=openai.OpenAI(timeout=30))

    Args:
        api_key: the API key; ``None`` lets the SDK read ``OPENAI_API_KEY``. Never kept on
            the provider itself, never shown in its repr.
        base_url: the API root (with ``/v1``), for OpenAI-compatible servers.
        client: a ready ``openai.OpenAI`` client (then ``api_key``, ``base_url`` and
            ``client_options`` must not be given).
        client_options: more ``openai.OpenAI`` keywords (``timeout``, ``max_retries``,
            ``organization``, ``default_headers``, ...).

    Raises ``ImportError`` (naming ``pip install 'django-llm-mcp[openai]'``) when the SDK
    is missing, ``TypeError`` when ``client`` comes with other options.
    """

    name = "openai"
    SDK = ("OpenAIProvider", "openai", "OpenAI", "OPENAI_BASE_URL", "https://api.openai.com/v1")

    def __init__(self, api_key: str | None = None, base_url: str | None = None, client: Any = None,
                 **client_options: Any):
        self.init_client(client, api_key, base_url, client_options)  # the SDK client is built on first use

    def __repr__(self) -> str:
        return f"<OpenAIProvider base_url={self.base_url!r}>"

    def refused_request(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the SDK's ``BadRequestError`` (HTTP 400)."""
        sdk = sys.modules.get("openai")
        return sdk is not None and isinstance(exc, sdk.BadRequestError)

    def complete(self, request: ModelRequest, *, on_text: Callable[[str], None] | None = None) -> Message:
        """Call Chat Completions once; stream when ``on_text`` is given (see `Provider`)."""
        kwargs = self.build_request(request)
        if on_text is None:
            return self.parse_completion(self.client.chat.completions.create(**kwargs))
        kwargs["stream"] = True
        kwargs.setdefault("stream_options", {"include_usage": True})
        return self.parse_stream(self.client.chat.completions.create(**kwargs), on_text)

    # request -----------------------------------------------------------------

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` for ``request`` (no ``stream``)."""
        kwargs: dict[str, Any] = {"model": request.model, "messages": self.convert_messages(request)}
        if request.tools:
            kwargs["tools"] = [self.convert_tool(tool) for tool in request.tools]
            if request.choice is not None:
                kwargs["tool_choice"] = self.convert_choice(request.choice)
        return common.merge_params(self.client.chat.completions.create, kwargs, request.params)

    @staticmethod
    def convert_tool(tool: ToolSpec) -> dict[str, Any]:
        return {"type": "function",
                "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters}}

    @staticmethod
    def convert_choice(choice: str) -> Any:
        if choice in ("auto", "required", "none"):
            return choice
        return {"type": "function", "function": {"name": choice}}

    def convert_messages(self, request: ModelRequest) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if request.instructions:
            out.append({"role": "system", "content": "\n\n".join(request.instructions)})
        pending: list[dict[str, Any]] = []  # parts of the user message that follows a batch of tool results
        for message in request.messages:
            if message.role != "tool" and pending:
                out.append({"role": "user", "content": pending})
                pending = []
            if message.role == "system":
                out.append({"role": "system", "content": message.content})
            elif message.role == "user":
                out.append({"role": "user", "content": self.user_content(message)})
            elif message.role == "assistant":
                out.append(self.assistant_message(message))
            else:
                out.append(self.tool_message(message, pending))
        if pending:
            out.append({"role": "user", "content": pending})
        return out

    @staticmethod
    def attachment_part(attachment: Attachment) -> dict[str, Any] | None:
        """The content part of a binary attachment OpenAI can read, else ``None``."""
        content = attachment.content
        if common.is_image(attachment):
            assert isinstance(content, bytes)
            return {"type": "image_url",
                    "image_url": {"url": f"data:{common.image_type(attachment)};base64,{common.b64(content)}"}}
        if common.is_pdf(attachment):
            assert isinstance(content, bytes)
            return {"type": "file", "file": {"filename": common.filename(attachment, "document.pdf"),
                                             "file_data": f"data:application/pdf;base64,{common.b64(content)}"}}
        audio_format = _AUDIO_FORMATS.get(common.audio_type(attachment) or "")
        if attachment.kind == "audio" and isinstance(content, bytes) and audio_format:
            return {"type": "input_audio", "input_audio": {"data": common.b64(content), "format": audio_format}}
        return None

    def user_content(self, message: Message) -> str | list[dict[str, Any]]:
        if not message.attachments:
            return message.content
        parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}] if message.content else []
        for attachment in message.attachments:
            part = self.attachment_part(attachment)
            if part is None:
                part = {"type": "text", "text": attachment_text(attachment)}
            parts.append(part)
        return parts

    @staticmethod
    def assistant_message(message: Message) -> dict[str, Any]:
        out: dict[str, Any] = {"role": "assistant", "content": message.content or None}
        if message.tool_calls:
            out["tool_calls"] = [{"id": call.id, "type": "function",
                                  "function": {"name": call.name, "arguments": common.arguments_text(call.arguments)}}
                                 for call in message.tool_calls]
        elif out["content"] is None:
            out["content"] = ""
        return out

    def tool_message(self, message: Message, pending: list[dict[str, Any]]) -> dict[str, Any]:
        """The ``tool`` message; parts OpenAI cannot take in it are added to ``pending``."""
        lines = [message.content] if message.content else []
        shown: list[dict[str, Any]] = []
        for attachment in message.attachments:
            part = self.attachment_part(attachment)
            if part is not None:
                shown.append(part)
                what = " ".join(filter(None, (attachment.kind, attachment.name or attachment.uri)))
                lines.append(f"[{what} follows in the next user message]")
            else:
                lines.append(attachment_text(attachment))
        if shown:
            pending.append({"type": "text", "text": f"Attachments returned by tool call {message.tool_call_id}:"})
            pending.extend(shown)
        text = "\n".join(lines)
        if message.is_error:
            text = "Error: " + text
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": text}

    # answer ------------------------------------------------------------------

    @staticmethod
    def parse_completion(completion: Any) -> Message:
        """A ``ChatCompletion`` as an assistant `Message`."""
        choice = completion.choices[0] if completion.choices else None
        calls = []
        text = ""
        if choice is not None:
            text = choice.message.content or ""
            for call in choice.message.tool_calls or []:
                function = getattr(call, "function", None)
                if function is None:  # custom (non-function) tools are not offered by llm_mcp
                    continue
                calls.append(ToolCall(call.id, function.name, common.parse_arguments(function.arguments)))
        usage = completion.usage
        return Message("assistant", text, tool_calls=calls, model=completion.model,
                       input_tokens=usage.prompt_tokens if usage else None,
                       output_tokens=usage.completion_tokens if usage else None)

    @staticmethod
    def parse_stream(stream: Any, on_text: Callable[[str], None]) -> Message:
        """Read a stream of ``ChatCompletionChunk``, calling ``on_text`` for each text piece."""
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        model = None
        usage = None
        for chunk in stream:
            model = chunk.model or model
            if chunk.usage is not None:
                usage = chunk.usage
            for choice in chunk.choices or []:
                if choice.index != 0:
                    continue
                delta = choice.delta
                if delta.content:
                    text.append(delta.content)
                    on_text(delta.content)
                for piece in delta.tool_calls or []:
                    call = calls.setdefault(piece.index, {"id": None, "name": "", "arguments": []})
                    if piece.id:
                        call["id"] = piece.id
                    if piece.function is not None:
                        if piece.function.name and not call["name"]:
                            call["name"] = piece.function.name
                        if piece.function.arguments:
                            call["arguments"].append(piece.function.arguments)
        tool_calls = [ToolCall(call["id"] or f"call_{index}", call["name"],
                               common.parse_arguments("".join(call["arguments"])))
                      for index, call in sorted(calls.items())]
        return Message("assistant", "".join(text), tool_calls=tool_calls, model=model,
                       input_tokens=usage.prompt_tokens if usage else None,
                       output_tokens=usage.completion_tokens if usage else None)
