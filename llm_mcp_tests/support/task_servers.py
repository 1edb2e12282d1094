"""Fixtures running the kit's tasking server (``support/servers/tasking.py``) on 2026-07-28,
enabled for every test in ``llm_mcp_tests/conftest.py``:

- ``tasking``: a fresh server process per test, over HTTP and over stdio (parametrized);
- ``tasking_http``: the same over HTTP only;
- ``task_kit``: the module's ``server`` object served over HTTP from this process, so a test
  can read what it saw (``tasking.server.tasks.checks``, ``.cancels``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from llm_mcp.testing import RunningServer, running_server

from .servers import tasking as tasking_module

__all__ = ["TASKING", "task_kit", "tasking", "tasking_http"]

TASKING = "llm_mcp_tests.support.servers.tasking"


@pytest.fixture(params=["http", "stdio"])
def tasking(request: pytest.FixtureRequest) -> Iterator[RunningServer]:
    """The kit's tasking server on 2026-07-28, over each transport."""
    with running_server(TASKING, transport=request.param, era="modern") as running:
        yield running


@pytest.fixture
def tasking_http() -> Iterator[RunningServer]:
    """The kit's tasking server on 2026-07-28 over HTTP."""
    with running_server(TASKING, transport="http", era="modern") as running:
        yield running


@pytest.fixture
def task_kit() -> Iterator[RunningServer]:
    """The tasking server object of this process, served over HTTP on 2026-07-28."""
    with running_server(tasking_module.server, transport="http", era="modern") as running:
        yield running
