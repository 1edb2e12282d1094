"""Model providers: OpenAI Chat Completions, Anthropic Messages, and the interface for others.

    provider = get_provider("openai", api_key="sk-...")
    register_provider("ollama", lambda **o: OpenAIProvider(base_url="http://localhost:11434/v1", api_key="ollama", **o))
    provider = get_provider("ollama")

The SDKs are imported when a provider is made, not when this package is imported.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .base import ModelRequest, Provider, ToolSpec

if TYPE_CHECKING:
    from .anthropic import AnthropicProvider
    from .openai import OpenAIProvider

__all__ = ["AnthropicProvider", "ModelRequest", "OpenAIProvider", "Provider", "ToolSpec", "get_provider",
           "provider_names", "register_provider"]

ProviderFactory = Callable[..., Provider]


def _openai(**options: Any) -> Provider:
    from .openai import OpenAIProvider

    return OpenAIProvider(**options)


def _anthropic(**options: Any) -> Provider:
    from .anthropic import AnthropicProvider

    return AnthropicProvider(**options)


_lock = threading.Lock()
_factories: dict[str, ProviderFactory] = {"openai": _openai, "anthropic": _anthropic}


def register_provider(name: str, factory: ProviderFactory) -> None:
    """Make ``get_provider(name, **options)`` call ``factory(**options)``.

        register_provider("vllm", lambda **o: OpenAIProvider(base_url="http://gpu:8000/v1", api_key="x", **o))
        register_provider("echo", EchoProvider)           # a Provider subclass is a factory too
        get_provider("vllm")

    A name registered again replaces the earlier factory (also ``"openai"`` and
    ``"anthropic"``). Raises ``ValueError`` for an empty name, ``TypeError`` when
    ``factory`` is not callable.
    """
    if not isinstance(name, str) or not name:
        raise ValueError("a provider name must be a non-empty string")
    if not callable(factory):
        raise TypeError(f"the factory of provider {name!r} must be callable, not {type(factory).__name__}")
    with _lock:
        _factories[name] = factory


def provider_names() -> list[str]:
    """The registered provider names, sorted (``["anthropic", "openai", ...]``)."""
    with _lock:
        return sorted(_factories)


def get_provider(spec: Provider | str, **options: Any) -> Provider:
    """A provider from a `Provider` instance (returned as is) or a registered name.

        get_provider("anthropic", max_tokens=8192)
        get_provider("openai", base_url="http://localhost:11434/v1", api_key="ollama")
        get_provider(my_provider)                         # returned unchanged

    Raises ``ValueError`` for an unknown name (listing the known ones) and for options
    given with an instance, ``TypeError`` for anything else than a name or a
    `Provider`, ``TypeError`` when a factory returns something else than a
    `Provider`, and ``ImportError`` when the provider's SDK is not installed.
    """
    if isinstance(spec, Provider):
        if options:
            raise ValueError(f"options ({', '.join(sorted(options))}) only apply to a provider name, "
                             f"not to a Provider instance")
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"a provider is a Provider instance or a registered name, not {type(spec).__name__}")
    with _lock:
        factory = _factories.get(spec)
        known = sorted(_factories)
    if factory is None:
        raise ValueError(f"unknown provider {spec!r}; known providers: {', '.join(known)} "
                         f"(add one with llm_mcp.chat.providers.register_provider)")
    provider = factory(**options)
    if not isinstance(provider, Provider):
        raise TypeError(f"the factory of provider {spec!r} returned {type(provider).__name__}, not a Provider")
    return provider


def __getattr__(name: str) -> Any:  # the provider classes, imported on first use (their SDKs stay lazy)
    if name == "OpenAIProvider":
        from .openai import OpenAIProvider

        return OpenAIProvider
    if name == "AnthropicProvider":
        from .anthropic import AnthropicProvider

        return AnthropicProvider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
