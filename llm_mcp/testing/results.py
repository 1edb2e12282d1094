"""Checks on what kit tools, resources and prompts answer, before anything is sent.

    check_call_result("Fetch.call()", {"content": [...], "isError": False})
    check_contents("Readme.read()", [{"uri": "file:///a", "text": "a"}])
    check_prompt_result("Greet.messages()", {"messages": [...]})
    # InvalidResult naming the owner and the field when the shape is wrong

The ``mcp`` SDK drops invalid fields when it serializes a 2026-07-28 answer and
rejects the same answer in the handshake era, so a mistake would pass silently in
one era. These checks use the SDK's own pydantic models (``mcp_types``) plus the
spec rules the models do not carry (base64, finite JSON numbers, structured
content being an object) so both eras fail the same way. Needs ``mcp`` only when
called. Spec: MCP 2026-07-28 "Tools" > "Tool Result", "Resources", "Prompts".
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from .runtime import InvalidResult

__all__ = ["check_annotations_object", "check_block", "check_call_result", "check_contents",
           "check_prompt_result"]

_BLOCK_MODELS = {"text": "TextContent", "image": "ImageContent", "audio": "AudioContent",
                 "resource": "EmbeddedResource", "resource_link": "ResourceLink"}


def _problem(exc: Any) -> str:
    """The first pydantic error as ``field.path: message``."""
    errors = exc.errors()
    first = errors[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "(value)"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first.get('msg')}{more}"


def _validate(owner: str, what: str, model_name: str, value: Any) -> None:
    import mcp_types
    from pydantic import ValidationError

    try:
        getattr(mcp_types, model_name).model_validate(value)
    except ValidationError as exc:
        raise InvalidResult(f"{owner}: {what} is invalid: {_problem(exc)}; got {_short(value)}") from None


def _short(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def run_user_code(owner: str, logger: Any, work: Any) -> Any:
    """Run a test author's ``read()``/``messages()``: a failure is logged and becomes
    [`InvalidResult`][llm_mcp.testing.InvalidResult] naming ``owner`` (answered as JSON-RPC -32603)."""
    from .asking import InputNotAccepted

    try:
        return work()
    except (InvalidResult, InputNotAccepted):
        raise
    except Exception as exc:
        logger.exception("%s failed", owner)
        raise InvalidResult(f"{owner} failed: {type(exc).__name__}: {exc}") from exc


def _not_a(kind: type, value: dict[str, Any], key: str) -> bool:
    """Whether ``value`` has ``key`` set (not ``None``) to something that is not a ``kind``."""
    return value.get(key) is not None and not isinstance(value[key], kind)


def _check_meta(owner: str, what: str, value: dict[str, Any]) -> None:
    if _not_a(dict, value, "_meta"):
        raise InvalidResult(f"{owner}: {what}['_meta'] must be a dict; got {_short(value['_meta'])}")


def _check_base64(owner: str, what: str, data: Any) -> None:
    if not isinstance(data, str):
        raise InvalidResult(f"{owner}: {what} must be a base64 str; got {type(data).__name__}")
    try:
        base64.b64decode(data.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise InvalidResult(f"{owner}: {what} is not valid base64: {_short(data, 40)}") from None


def check_annotations_object(owner: str, key: str, value: Any) -> None:
    """Content or resource ``annotations`` (``audience``, ``priority``, ``lastModified``), checked.

        check_annotations_object("Readme", "annotations", {"audience": ["user"], "priority": 0.5})
        # ValueError naming Readme.annotations for {"audience": "robot"} or a priority above 1
    """
    if value is None:
        return
    if not isinstance(value, dict):
        raise TypeError(f"{owner}.{key} must be a dict; got {type(value).__name__}")
    unknown = sorted(str(k) for k in value if k not in ("audience", "priority", "lastModified"))
    if unknown:
        raise ValueError(f"{owner}.{key}: unknown key(s) {unknown}; known: audience, priority, lastModified")
    audience = value.get("audience")
    if audience is not None and (not isinstance(audience, list) or not all(a in ("user", "assistant")
                                                                             for a in audience)):
        raise ValueError(f"{owner}.{key}['audience'] must be a list of 'user' / 'assistant'; got {audience!r}")
    priority = value.get("priority")
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, (int, float))
                                 or not 0 <= priority <= 1):
        raise ValueError(f"{owner}.{key}['priority'] must be a number from 0 to 1; got {priority!r}")
    if _not_a(str, value, "lastModified"):
        raise ValueError(f"{owner}.{key}['lastModified'] must be an ISO 8601 str; got {value['lastModified']!r}")


def check_resource_contents(owner: str, what: str, contents: Any) -> None:
    """One ``resources/read`` contents entry: ``uri`` and exactly one of ``text`` / base64 ``blob``."""
    if not isinstance(contents, dict):
        raise InvalidResult(f"{owner}: {what} must be a contents dict; got {_short(contents)}")
    if ("text" in contents) == ("blob" in contents):
        raise InvalidResult(f"{owner}: {what} needs exactly one of 'text' or 'blob'; got {_short(contents)}")
    model = "TextResourceContents" if "text" in contents else "BlobResourceContents"
    _validate(owner, what, model, contents)
    if "blob" in contents:
        _check_base64(owner, f"{what}['blob']", contents["blob"])
    _check_meta(owner, what, contents)


def check_block(owner: str, block: Any, what: str = "content block") -> dict[str, Any]:
    """One content block, checked against the SDK's model for its ``type``.

        check_block("Fetch", {"type": "text", "text": "hi", "annotations": {"audience": "robot"}})
        # InvalidResult: Fetch: content block (text) is invalid: annotations.audience: ...
    """
    if not isinstance(block, dict) or block.get("type") not in _BLOCK_MODELS:
        raise InvalidResult(f"{owner}: {what} must be a content block, a dict made by a content helper "
                            f"(type one of {', '.join(_BLOCK_MODELS)}); got {_short(block)}")
    kind = block["type"]
    _validate(owner, f"{what} ({kind})", _BLOCK_MODELS[kind], block)
    if kind in ("image", "audio"):
        _check_base64(owner, f"{what} ({kind}) data", block.get("data"))
        if not block.get("mimeType"):
            raise InvalidResult(f"{owner}: {what} ({kind}) needs a non-empty mimeType")
    if kind == "resource":
        check_resource_contents(owner, f"{what} (resource) resource", block.get("resource"))
    _check_meta(owner, what, block)
    return block


def _finite_json(owner: str, what: str, value: Any) -> None:
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        raise InvalidResult(f"{owner}: {what} holds NaN or Infinity, which JSON cannot carry") from None
    except TypeError as exc:
        raise InvalidResult(f"{owner}: {what} is not JSON data: {exc}") from None


def check_call_result(owner: str, result: Any, *, output_schema: bool = False) -> dict[str, Any]:
    """A whole ``tools/call`` result: blocks, ``structuredContent`` (an object), ``isError``, ``_meta``.

        check_call_result("Fetch.call()", {"content": [], "structuredContent": [1, 2]})
        # InvalidResult: structuredContent must be a JSON object

    ``output_schema``: the tool declares one, so a successful result must carry structured content.
    """
    if not isinstance(result, dict) or not isinstance(result.get("content"), list):
        raise InvalidResult(f"{owner} must return self.respond_with(...) or a str; got {_short(result)}")
    for index, block in enumerate(result["content"]):
        check_block(owner, block, f"content[{index}]")
    if not isinstance(result.get("isError", False), bool):
        raise InvalidResult(f"{owner}: isError must be True or False; got {_short(result['isError'])}")
    structured = result.get("structuredContent")
    if structured is not None:
        if not isinstance(structured, dict):
            raise InvalidResult(f"{owner}: structured content must be a JSON object (a dict); "
                                f"got {type(structured).__name__}")
        _finite_json(owner, "structured content", structured)
    elif output_schema and not result.get("isError"):
        raise InvalidResult(f"{owner}: the tool declares output_schema, so a successful answer must carry "
                            f"structured_content= (MCP: servers MUST return conforming structured results)")
    _check_meta(owner, "the result", result)
    _finite_json(owner, "the result", result)
    return result


def check_contents(owner: str, contents: Any) -> list[dict[str, Any]]:
    """A ``resources/read`` contents list, every entry checked."""
    if not isinstance(contents, list):
        raise InvalidResult(f"{owner} must give a list of contents dicts; got {_short(contents)}")
    for index, entry in enumerate(contents):
        check_resource_contents(owner, f"contents[{index}]", entry)
    return contents


def check_prompt_result(owner: str, result: dict[str, Any]) -> dict[str, Any]:
    """A ``prompts/get`` result: ``messages`` a list of ``{"role", "content"}`` with valid blocks."""
    messages = result.get("messages")
    if not isinstance(messages, list):
        raise InvalidResult(f"{owner} must return a list of messages (self.user_message(...)); "
                            f"got {_short(messages)}")
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise InvalidResult(f"{owner}: messages[{index}] must be a dict; got {_short(message)}")
        _validate(owner, f"messages[{index}]", "PromptMessage", message)
        check_block(owner, message.get("content"), f"messages[{index}] content")
    return result
