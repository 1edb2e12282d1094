"""pytest fixtures for kit servers and the scripted model; enable with
``pytest_plugins = ["llm_mcp.testing.pytest_plugin"]``.

    def test_double(mcp_test_server):
        running = mcp_test_server("my_tests.my_server", transport="http", era="modern")
        assert running.mcp().call("double", number="21").text == "21 doubled is 42"

Servers started through ``mcp_test_server`` are shared by the tests of one module
(same target, transport, era and args) and stopped when the module ends.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from .fixtures import RunningServer, running_server
from .scripted_model import scripted_model

__all__ = ["mcp_test_server", "scripted_model"]


def _frozen(value: Any) -> Any:
    """A hashable stand-in for option values (dicts such as ``env``, lists)."""
    if isinstance(value, dict):
        return tuple(sorted((str(k), _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple, set)):
        return tuple(_frozen(v) for v in value)
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


@pytest.fixture(scope="module")
def mcp_test_server() -> Iterator[Callable[..., RunningServer]]:
    """``start(target, transport="http", era="auto", args=(), **options) -> RunningServer``, per module.

        running = mcp_test_server("llm_mcp_tests.support.servers.seed_tools", era="handshake")
        running.url          # http://127.0.0.1:PORT/mcp, stopped at the end of the module

    Raises what ``running_server`` raises (ValueError, TypeError, RuntimeError).
    """
    started: dict[Any, RunningServer] = {}
    with contextlib.ExitStack() as stack:

        def start(target: Any, transport: str = "http", era: str = "auto", args: tuple[str, ...] = (),
                  **options: Any) -> RunningServer:
            key = (target if isinstance(target, str) else id(target), transport, era,
                   tuple(args) if not isinstance(args, str) else args, _frozen(options))
            if key not in started:
                started[key] = stack.enter_context(running_server(target, transport=transport, era=era,
                                                                  args=args, **options))
            return started[key]

        yield start
