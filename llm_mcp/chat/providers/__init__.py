"""Model providers: OpenAI Chat Completions, Anthropic Messages, and the interface for others."""

from .base import ModelRequest, Provider, ToolSpec

__all__ = ["ModelRequest", "Provider", "ToolSpec"]
