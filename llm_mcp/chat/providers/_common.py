"""Helpers shared by the providers: arguments parsing, attachment kinds and names, base64, SDK clients."""

from __future__ import annotations

import base64
import functools
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ...client.protocol import origin
from ...client.result import Attachment, sniff_mime_type
from ..messages import clean_text, loads_object

RAW_ARGUMENTS = "_raw_arguments"
"""Key of the arguments dict when the model's arguments were not a JSON object."""


def parse_arguments(text: str | None) -> dict[str, Any]:
    """Parse tool-call arguments as the model sent them.

        parse_arguments('{"a": 1}')      # {"a": 1}
        parse_arguments("")              # {}
        parse_arguments('{"a": ')        # {"_raw_arguments": '{"a": '}

    A string that is not a JSON object (or holds what JSON cannot: ``NaN``, an unpaired
    surrogate; see `llm_mcp.chat.messages.loads_object`) comes back as
    ``{"_raw_arguments": text}`` so the chat can tell the model what went wrong.
    """
    if text is None or not text.strip():
        return {}
    try:
        return loads_object(text)
    except ValueError:
        return {RAW_ARGUMENTS: clean_text(text)}


def arguments_text(arguments: dict[str, Any]) -> str:
    """The arguments as a JSON string; the model's own string back when it was malformed."""
    if set(arguments) == {RAW_ARGUMENTS} and isinstance(arguments[RAW_ARGUMENTS], str):
        return arguments[RAW_ARGUMENTS]
    return json.dumps(arguments)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
"""The image types both APIs accept; other images are described in a text line."""


def real_type(attachment: Attachment) -> str | None:
    """What an attachment's bytes are, by their first bytes (`sniff_mime_type`, plus MP3 frames
    without an ID3 tag); ``None`` for text and links. The server's label is not trusted: an
    "image/png" whose bytes are text, or a GIF, is sent as what it is."""
    content = attachment.content
    if not isinstance(content, bytes):
        return None
    sniffed = sniff_mime_type(content)
    if sniffed == "application/octet-stream" and len(content) > 1 and content[0] == 0xFF and content[1] & 0xE0 == 0xE0:
        return "audio/mpeg"
    return sniffed


def image_type(attachment: Attachment) -> str | None:
    """The media type to send an image attachment as: what its bytes are, when that is one of
    `IMAGE_TYPES` (whatever the label says); ``None`` when it is not an image both APIs accept."""
    if attachment.kind not in ("image", "resource"):
        return None
    sniffed = real_type(attachment)
    return sniffed if sniffed in IMAGE_TYPES else None


def is_image(attachment: Attachment) -> bool:
    """Whether the attachment's bytes are an image of a type both APIs accept (sniffed, not labelled)."""
    return image_type(attachment) is not None


def is_pdf(attachment: Attachment) -> bool:
    """Whether the attachment is an embedded resource whose bytes are a PDF (sniffed)."""
    return attachment.kind == "resource" and real_type(attachment) == "application/pdf"


def audio_type(attachment: Attachment) -> str | None:
    """The type of an audio attachment's bytes (``audio/wav``, ``audio/mpeg``, ``audio/ogg``), or
    ``None`` when its bytes are not audio we can tell."""
    if attachment.kind != "audio":
        return None
    sniffed = real_type(attachment)
    return sniffed if sniffed and sniffed.startswith("audio/") else None


def filename(attachment: Attachment, default: str) -> str:
    if attachment.name:
        return attachment.name
    if attachment.uri:
        tail = attachment.uri.rstrip("/").rsplit("/", 1)[-1]
        if tail:
            return tail
    return default


def import_sdk(module: str, extra: str, provider: str) -> Any:
    """Import an SDK, or raise ``ImportError`` telling how to install it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{provider} needs the {module} package: pip install 'django-llm-mcp[{extra}]'") from exc


def merge_params(method: Any, kwargs: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` updated with ``params``; keys ``method`` does not take go in ``extra_body``.

        merge_params(client.messages.create, {"model": "m"}, {"temperature": 0.2})
        # {"model": "m", "extra_body": {"temperature": 0.2}} when the SDK has no temperature keyword

    So a parameter an SDK version dropped (or never had) still reaches the API as JSON.
    """
    if not params:  # nothing to place: the common case, no signature needed
        return kwargs
    accepted = _keywords(method)
    if accepted is None:
        return {**kwargs, **params}
    out = dict(kwargs)
    extra = dict(params.get("extra_body") or {}) if "extra_body" in accepted else {}
    for key, value in params.items():
        if key == "extra_body":
            continue
        if key in accepted:
            out[key] = value
        else:
            extra[key] = value
    if extra:
        out["extra_body"] = extra
    return out


_signatures: dict[Any, frozenset[str] | None] = {}


def _keywords(method: Any) -> frozenset[str] | None:
    """The keyword names ``method`` takes; ``None`` when it takes any keyword (``**kwargs``) or
    has no signature. Kept per function (a bound method's ``__func__``): ``inspect.signature``
    of an SDK method with dozens of parameters costs about 0.1 ms, on every model request otherwise."""
    key = getattr(method, "__func__", method)
    if key in _signatures:
        return _signatures[key]
    import inspect

    try:
        parameters = inspect.signature(method).parameters
    except (TypeError, ValueError):
        accepted = None
    else:
        accepted = None if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()) \
            else frozenset(parameters)
    if len(_signatures) >= 64:  # callers pass SDK methods, a handful; never let it grow without bound
        _signatures.clear()
    _signatures[key] = accepted
    return accepted


_clients: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
_clients_lock = threading.Lock()
MAX_SHARED_CLIENTS = 32


def shared_client(kind: str, build: Callable[..., Any], **settings: Any) -> Any:
    """An SDK client for these settings, shared by every provider built with the same ones.

    Building an SDK client builds an HTTP client and loads the CA certificates (about 20 ms);
    a chat per web request would pay that each time. The SDK clients are thread-safe, so
    providers with equal settings share one (the last ``MAX_SHARED_CLIENTS`` settings are
    kept). Settings that are not plain values (an ``http_client``, say) get a client of their own.
    """
    try:
        key = (kind, *sorted(settings.items()))
        hash(key)
    except TypeError:
        return build(**settings)
    with _clients_lock:
        client = _clients.get(key)
        if client is not None:
            _clients.move_to_end(key)
            return client
    client = build(**settings)
    with _clients_lock:
        client = _clients.setdefault(key, client)
        _clients.move_to_end(key)
        while len(_clients) > MAX_SHARED_CLIENTS:
            _clients.popitem(last=False)
    return client


class LazySDKClient:
    """The SDK client of a provider, built the first time a request needs it.

        self.init_client(client, api_key, base_url, options)    # in __init__: checks only
        self.client.chat.completions.create(...)                # built here, shared (shared_client)

    So building a chat needs no API key: the SDK asks for one (or reads its environment
    variable) only when the model is first called. Subclasses set ``SDK`` to
    ``(provider label, module, client factory, base URL environment variable, default URL)``.
    """

    SDK: tuple[str, str, str, str, str]

    def init_client(self, client: Any, api_key: str | None, base_url: str | None, options: dict[str, Any]) -> None:
        """Check the settings now: ``TypeError`` when ``client`` comes with settings,
        ``ImportError`` (naming the extra to install) when the SDK is missing."""
        provider, module = self.SDK[:2]
        if client is not None and (api_key is not None or base_url is not None or options):
            raise TypeError(f"{provider}: pass either client or api_key/base_url/client options, not both")
        if client is None:
            import_sdk(module, module, provider)
        self._client_settings = (client, api_key, base_url, options)

    @functools.cached_property
    def client(self) -> Any:
        """The SDK client: the one given, or one shared by providers with the same settings."""
        given, api_key, base_url, options = self._client_settings
        if given is not None:
            return given
        _, module, factory = self.SDK[:3]
        return shared_client(module, getattr(import_sdk(module, module, self.SDK[0]), factory), api_key=api_key,
                             base_url=base_url, **options)

    @property
    def base_url(self) -> str:
        """Scheme, host and port of the API (never its path or query, which may hold secrets)."""
        given, _, base_url, _ = self._client_settings
        if given is not None or "client" in self.__dict__:
            return origin(str(getattr(self.client, "base_url", "") or ""))
        return origin(base_url or os.environ.get(self.SDK[3]) or self.SDK[4])
