"""Agents as JSON: the import path another process loads an agent class from, and an
agent's inputs in envelopes a JSON column holds (saved model instances by label and pk).

    ChatRow.objects.create(agent_class=agent_path(type(agent)), agent_inputs=encode_inputs(agent))
    type(agent)(**decode_inputs(row.agent_inputs))
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from django.apps import apps
from django.db import models

if TYPE_CHECKING:
    from ..chat import Agent

__all__ = ["agent_path", "decode_inputs", "encode_inputs"]


def agent_path(agent_class: type) -> str:
    """The import path another process loads ``agent_class`` from.

    A class defined in a module run with ``python -m package.module`` is found under that
    module's real name, not ``__main__``. A class defined in a function or a plain script
    gets a path no other process can import: `ChatRecord.load_agent` says so there."""
    module = agent_class.__module__
    if module == "__main__":
        spec = getattr(sys.modules["__main__"], "__spec__", None)
        module = spec.name if spec is not None else module
    return f"{module}.{agent_class.__qualname__}"


def encode_inputs(agent: Agent) -> dict[str, Any]:
    """An agent's inputs as JSON, each in an envelope: ``{"$model": label, "pk": pk}`` for a
    saved model instance, ``{"$json": value}`` for anything else JSON can hold.

    Raises ``TypeError`` naming the input for anything else (an unsaved instance, an object,
    a model instance inside a list or dict)."""
    names = [agent.inputs] if isinstance(agent.inputs, str) else list(agent.inputs or ())
    encoded = {}
    for name in names:
        value = getattr(agent, name, None)
        if isinstance(value, models.Model):
            if value.pk is None:
                raise TypeError(f"{type(agent).__name__} input {name!r}: the {type(value).__name__} is not saved")
            encoded[name] = {"$model": value._meta.label_lower, "pk": value.pk}
            continue
        try:
            json.dumps(value)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{type(agent).__name__} input {name!r} cannot be stored with the chat: {exc} (inputs "
                            "are JSON values or saved model instances)") from None
        encoded[name] = {"$json": value}
    return encoded


def decode_inputs(data: dict[str, Any]) -> dict[str, Any]:
    """The inverse of `encode_inputs` (one query per model instance)."""
    decoded = {}
    for name, value in data.items():
        if isinstance(value, dict) and set(value) == {"$model", "pk"}:
            value = apps.get_model(value["$model"])._default_manager.get(pk=value["pk"])
        elif isinstance(value, dict) and set(value) == {"$json"}:
            value = value["$json"]
        else:
            raise ValueError(f"agent input {name!r} is not stored in an envelope ($json or $model): {value!r:.80}")
        decoded[name] = value
    return decoded
