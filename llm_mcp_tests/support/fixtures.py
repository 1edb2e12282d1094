"""Fixture makers the test modules share."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any, TypeVar

import pytest

__all__ = ["entered"]

T = TypeVar("T")


def entered(factory: Callable[[], AbstractContextManager[T]], *, name: str) -> Any:
    """A function-scoped fixture called ``name`` that enters ``factory()`` for the test and
    gives what it yields; it is left when the test ends.

        http = entered(httpx.Client, name="http")
    """

    def enter() -> Iterator[T]:
        with factory() as value:
            yield value

    enter.__name__ = name
    enter.__doc__ = f"``{getattr(factory, '__qualname__', factory)}()``, entered for the test."
    return pytest.fixture(name=name)(enter)
