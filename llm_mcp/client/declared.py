"""Class declarations whose value may be a literal, a callable, or the name of a method.

    class Linear(llm_mcp.MCP):
        bearer_token = lambda self: self.user.linear_token    # or "token_for", a method's name
    evaluate(server, Linear.bearer_token, base=llm_mcp.MCP)   # -> the token

Shared by server settings (``llm_mcp.MCP``) and agent declarations (``llm_mcp.Agent``);
`call_with` runs the handlers, ``wrap`` functions and predicates those settings name.
"""

from __future__ import annotations

import inspect
import re
from typing import Any, Callable

__all__ = ["call_with", "evaluate", "input_names", "names_method", "snake_case"]


def input_names(inputs: Any) -> list[str]:
    """The names an ``inputs`` declaration gives: one string, or an iterable of names."""
    return [inputs] if isinstance(inputs, str) else [str(name) for name in inputs or ()]


def names_method(cls: type, value: Any, base: type) -> bool:
    """Whether ``value`` is the name of a method defined on ``cls`` or a class between it and
    ``base`` (the base's own attributes do not count)."""
    if not isinstance(value, str) or not value.isidentifier():
        return False
    for klass in cls.__mro__:
        if klass is base:
            return False
        if value in klass.__dict__ and callable(klass.__dict__[value]):
            return True
    return False


def evaluate(owner: Any, value: Any, base: type) -> Any:
    """A declaration's value now: the method a name refers to is called; a callable is called
    with ``owner`` when it takes an argument, without when it takes none; a class or any
    other value is returned as it is."""
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__get__(None, type(owner))
    if isinstance(value, str) and names_method(type(owner), value, base):
        return getattr(owner, value)()
    if callable(value) and not isinstance(value, type):
        try:
            takes_owner = bool(inspect.signature(value).parameters)
        except (TypeError, ValueError):
            takes_owner = False
        return value(owner) if takes_owner else value()
    return value


def snake_case(name: str) -> str:
    """The default name a declared class gets: ``GitHubIssues`` -> ``git_hub_issues``,
    ``HTTPFetch`` -> ``http_fetch``."""
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


def call_with(function: Callable[..., Any] | str, owner: Any, *args: Any, **kwargs: Any) -> Any:
    """Call a handler, ``wrap`` or predicate: a name is a method of ``owner``; a plain function
    gets ``owner`` first when it takes one more positional argument than ``args`` (parameters
    filled by ``kwargs`` do not count)."""
    if isinstance(function, str):
        return getattr(owner, function)(*args, **kwargs)
    try:
        count = len([p for p in inspect.signature(function).parameters.values()
                     if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name not in kwargs])
    except (TypeError, ValueError):
        count = len(args)
    return function(owner, *args, **kwargs) if count > len(args) else function(*args, **kwargs)
