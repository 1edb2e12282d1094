"""Fixtures of the client's OAuth tests: a fresh in-memory credential store, and a recording
authorization server (``support/recording_as.py``) with the ``Authority`` view of
``support/machine_servers.py``. A test module may define its own ``store`` (some also reset
``client_id`` or the identity provider's metadata); that one wins in its module."""

import pytest

from llm_mcp.client.config import config, configure
from llm_mcp.client.oauth import MemoryStore

from llm_mcp_tests.support.machine_servers import Authority
from llm_mcp_tests.support.recording_as import RecordingAS


@pytest.fixture
def store():
    before = config.credential_store
    fresh = MemoryStore()
    configure(credential_store=fresh)
    yield fresh
    configure(credential_store=before)


@pytest.fixture
def authority():
    with RecordingAS() as auth_server:
        yield Authority(auth_server)
