"""Anthropic Messages.

    provider = AnthropicProvider()                                       # ANTHROPIC_API_KEY from the environment
    provider = AnthropicProvider(api_key="sk-ant-...", max_tokens=8192)
    message = provider.complete(ModelRequest("claude-sonnet-4-5", [Message("user", "Hi")]))

Shapes sent (``client.messages.create``):

* instructions: ``system``, joined by blank lines;
* user turns: a string, or content blocks when there are attachments: ``image`` (base64;
  JPEG, PNG, GIF, WebP), ``document`` (PDFs, base64), text resources as ``text`` blocks,
  anything else (audio, links, other files) as a text line naming it;
* assistant turns: ``text`` and ``tool_use`` blocks; a message whose ``raw`` is
  ``{"provider": "anthropic", "content": [...]}`` (kept when the answer had thinking or
  other blocks) is sent back with that content verbatim;
* tool results: consecutive ``tool`` messages become ONE ``user`` message of
  ``tool_result`` blocks (``is_error`` set, images and PDFs inside the block's content); a
  user message right after them joins that message, after the results;
* ``choice``: ``"auto"`` -> ``{"type": "auto"}``, ``"required"`` -> ``{"type": "any"}``,
  ``"none"`` -> ``{"type": "none"}``, a tool name -> ``{"type": "tool", "name": ...}``;
  omitted when no tools are offered;
* ``max_tokens``: the provider's ``max_tokens`` unless ``params`` sets it.
* ``params``: merged into the call; a keyword the installed SDK does not take (say
  ``temperature`` on an SDK that dropped it, or a server's own option) goes in ``extra_body``.

``input_tokens`` of the answer counts all input tokens: ``input_tokens`` plus the cache
creation and cache read tokens the API reports apart.
"""

from __future__ import annotations

import sys
import json
from collections.abc import Callable
from typing import Any

from ...client.result import Attachment
from ..messages import Message, ToolCall, attachment_text
from . import _common as common
from .base import ModelRequest, Provider, ToolSpec

__all__ = ["AnthropicProvider"]

_PLAIN_BLOCKS = ("text", "tool_use")  # answers with only these need no ``raw``


class AnthropicProvider(common.LazySDKClient, Provider):
    """A `Provider` on the Anthropic Messages API.

        provider = AnthropicProvider(api_key="sk-ant-...")
        provider = AnthropicProvider(base_url="https://gateway.example/anthropic", max_tokens=2048)
        provider = AnthropicProvider(client=anthropic.Anthropic(timeout=30))

    Args:
        api_key: the API key; ``None`` lets the SDK read ``ANTHROPIC_API_KEY``. Never kept
            on the provider itself, never shown in its repr.
        base_url: the API root (without ``/v1``).
        client: a ready ``anthropic.Anthropic`` client (then ``api_key``, ``base_url`` and
            ``client_options`` must not be given).
        max_tokens: ``max_tokens`` of every call unless the request's ``params`` set it.
        client_options: more ``anthropic.Anthropic`` keywords (``timeout``, ``max_retries``,
            ``default_headers``, ...).

    Raises ``ImportError`` (naming ``pip install 'django-llm-mcp[anthropic]'``) when the SDK
    is missing, ``TypeError`` when ``client`` comes with other options.
    """

    name = "anthropic"
    SDK = ("AnthropicProvider", "anthropic", "Anthropic", "ANTHROPIC_BASE_URL", "https://api.anthropic.com")

    def __init__(self, api_key: str | None = None, base_url: str | None = None, client: Any = None,
                 max_tokens: int = 4096, **client_options: Any):
        self.init_client(client, api_key, base_url, client_options)  # the SDK client is built on first use
        self.max_tokens = max_tokens

    def __repr__(self) -> str:
        return f"<AnthropicProvider base_url={self.base_url!r} max_tokens={self.max_tokens}>"

    def refused_request(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the SDK's ``BadRequestError`` (HTTP 400)."""
        sdk = sys.modules.get("anthropic")
        return sdk is not None and isinstance(exc, sdk.BadRequestError)

    def complete(self, request: ModelRequest, *, on_text: Callable[[str], None] | None = None) -> Message:
        """Call Messages once; stream when ``on_text`` is given (see `Provider`)."""
        kwargs = self.build_request(request)
        if on_text is None:
            return self.parse_message(self.client.messages.create(**kwargs))
        kwargs["stream"] = True
        return self.parse_stream(self.client.messages.create(**kwargs), on_text)

    # request -----------------------------------------------------------------

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments of ``messages.create`` for ``request`` (no ``stream``)."""
        system = list(request.instructions) + [m.content for m in request.messages if m.role == "system"]
        kwargs: dict[str, Any] = {"model": request.model, "max_tokens": self.max_tokens,
                                  "messages": self.convert_messages(request.messages)}
        if system:
            kwargs["system"] = "\n\n".join(system)
        if request.tools:
            kwargs["tools"] = [self.convert_tool(tool) for tool in request.tools]
            if request.choice is not None:
                kwargs["tool_choice"] = self.convert_choice(request.choice)
        return common.merge_params(self.client.messages.create, kwargs, request.params)

    @staticmethod
    def convert_tool(tool: ToolSpec) -> dict[str, Any]:
        return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}

    @staticmethod
    def convert_choice(choice: str) -> dict[str, Any]:
        forms = {"auto": {"type": "auto"}, "required": {"type": "any"}, "none": {"type": "none"}}
        return dict(forms.get(choice) or {"type": "tool", "name": choice})

    def convert_messages(self, messages: list[Message]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        results: list[dict[str, Any]] | None = None  # the user message of the current tool-result batch
        for message in messages:
            if message.role == "system":
                continue  # sent in ``system``
            if message.role == "tool":
                if results is None:
                    results = []
                    out.append({"role": "user", "content": results})
                results.append(self.tool_result(message))
                continue
            if message.role == "user":
                blocks = self.user_blocks(message)
                if results is not None:  # join the tool results' message, after them
                    results.extend(blocks)
                else:
                    out.append({"role": "user", "content": message.content if not message.attachments else blocks})
            else:
                out.append({"role": "assistant", "content": self.assistant_content(message)})
            results = None
        return out

    @staticmethod
    def attachment_block(attachment: Attachment) -> dict[str, Any]:
        """The content block of an attachment: image, document, text, or a text line naming it."""
        content = attachment.content
        if common.is_image(attachment):
            assert isinstance(content, bytes)
            return {"type": "image",
                    "source": {"type": "base64", "media_type": common.image_type(attachment),
                               "data": common.b64(content)}}
        if common.is_pdf(attachment):
            assert isinstance(content, bytes)
            block: dict[str, Any] = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                                                     "data": common.b64(content)}}
            if attachment.name:
                block["title"] = attachment.name
            return block
        return {"type": "text", "text": attachment_text(attachment)}

    def user_blocks(self, message: Message) -> list[dict[str, Any]]:
        blocks = [{"type": "text", "text": message.content}] if message.content else []
        return blocks + [self.attachment_block(a) for a in message.attachments]

    @staticmethod
    def assistant_content(message: Message) -> list[dict[str, Any]] | str:
        raw = message.raw
        if isinstance(raw, dict) and raw.get("provider") == "anthropic" and isinstance(raw.get("content"), list):
            return raw["content"]
        blocks: list[dict[str, Any]] = [{"type": "text", "text": message.content}] if message.content else []
        blocks += [{"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
                   for call in message.tool_calls]
        return blocks or message.content

    def tool_result(self, message: Message) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id,
                                 "is_error": message.is_error}
        if message.attachments:
            parts = [{"type": "text", "text": message.content}] if message.content else []
            block["content"] = parts + [self.attachment_block(a) for a in message.attachments]
        elif message.content:
            block["content"] = message.content
        return block

    # answer ------------------------------------------------------------------

    @staticmethod
    def _input_tokens(usage: Any) -> int | None:
        if usage is None or getattr(usage, "input_tokens", None) is None:
            return None
        return (usage.input_tokens + (getattr(usage, "cache_creation_input_tokens", None) or 0)
                + (getattr(usage, "cache_read_input_tokens", None) or 0))

    @staticmethod
    def message_from_blocks(blocks: list[dict[str, Any]], model: str | None, input_tokens: int | None,
                            output_tokens: int | None) -> Message:
        """An assistant `Message` from content blocks given as dicts."""
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        calls = []
        for block in blocks:
            if block.get("type") == "tool_use":
                arguments = block.get("input")
                if isinstance(arguments, str):
                    arguments = common.parse_arguments(arguments)
                elif not isinstance(arguments, dict):
                    arguments = {common.RAW_ARGUMENTS: json.dumps(arguments)}
                calls.append(ToolCall(block.get("id") or "", block.get("name") or "", arguments))
        raw = None
        if any(b.get("type") not in _PLAIN_BLOCKS for b in blocks):
            raw = {"provider": "anthropic", "content": blocks}
        return Message("assistant", text, tool_calls=calls, model=model, input_tokens=input_tokens,
                       output_tokens=output_tokens, raw=raw)

    def parse_message(self, response: Any) -> Message:
        """An Anthropic ``Message`` answer as an assistant `Message`."""
        blocks = [block.to_dict() if hasattr(block, "to_dict") else dict(block) for block in response.content]
        usage = response.usage
        return self.message_from_blocks(blocks, response.model, self._input_tokens(usage),
                                        getattr(usage, "output_tokens", None))

    def parse_stream(self, stream: Any, on_text: Callable[[str], None]) -> Message:
        """Read the raw stream events, calling ``on_text`` for each text piece."""
        blocks: dict[int, dict[str, Any]] = {}
        partial_json: dict[int, list[str]] = {}
        model = None
        input_tokens = output_tokens = None
        for event in stream:
            kind = getattr(event, "type", None)
            if kind == "message_start":
                model = event.message.model
                input_tokens = self._input_tokens(event.message.usage)
                output_tokens = event.message.usage.output_tokens
            elif kind == "content_block_start":
                block = event.content_block.to_dict()
                if block.get("type") == "tool_use":
                    partial_json[event.index] = []
                blocks[event.index] = block
            elif kind == "content_block_delta":
                block = blocks.setdefault(event.index, {"type": "text", "text": ""})
                delta = event.delta
                if delta.type == "text_delta":
                    block["text"] = block.get("text", "") + delta.text
                    on_text(delta.text)
                elif delta.type == "input_json_delta":
                    partial_json.setdefault(event.index, []).append(delta.partial_json)
                elif delta.type == "thinking_delta":
                    block["thinking"] = block.get("thinking", "") + delta.thinking
                elif delta.type == "signature_delta":
                    block["signature"] = delta.signature
                elif delta.type == "citations_delta":
                    block.setdefault("citations", []).append(delta.citation.to_dict())
            elif kind == "message_delta":
                usage = event.usage
                if usage is not None:
                    output_tokens = usage.output_tokens
                    if getattr(usage, "input_tokens", None) is not None:
                        input_tokens = self._input_tokens(usage)
        for index, pieces in partial_json.items():
            blocks[index]["input"] = common.parse_arguments("".join(pieces))
        return self.message_from_blocks([blocks[i] for i in sorted(blocks)], model, input_tokens, output_tokens)
