"""The skills kit server (``support/servers/skills.py``) started for a test, and a client of it.

Fixtures (imported by the root ``conftest.py``): ``skills_running``, the server over Streamable
HTTP and over stdio (module scope, one parametrization each); ``skills_docs``, a client of it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import pytest

import llm_mcp
from llm_mcp.testing import Skill, running_server
from llm_mcp_tests.support.servers import skills as kit

ROOT = str(Path(__file__).resolve().parents[2])

PDF_BODY = kit.PDF_SKILL.split("\n---\n", 1)[1].lstrip("\n")
"""The body of the kit's pdf-processing SKILL.md (after its frontmatter)."""

PDF_LOADED = "Skill docs/pdf-processing, served by MCP server 'docs':\n\n" + PDF_BODY
"""What load_skill of docs/pdf-processing answers: the origin line, then the body."""

FORMS_READ = "File references/FORMS.md of skill docs/pdf-processing, served by MCP server 'docs':\n\n" + kit.FORMS
"""What read_skill_file of its references/FORMS.md answers."""
MODULE = "llm_mcp_tests.support.servers.skills"


def by_name(server: llm_mcp.MCP) -> dict[str, llm_mcp.Skill]:
    """``{name: Skill}`` of the skills ``server`` lists."""
    return {s.name: s for s in server.skills}


@contextmanager
def skills_server(transport: str) -> Iterator[Any]:
    """Start the skills server on 2026-07-28 (the extension's base revision) over ``transport``."""
    with running_server(MODULE, transport=transport, era="modern", cwd=ROOT, env={"PYTHONPATH": ROOT}) as running:
        yield running


@contextmanager
def skills_client(running: Any, **options: Any) -> Iterator[llm_mcp.MCP]:
    """A client named "docs" declaring ``"skills"`` (``options`` added), closed afterwards."""
    server = running.mcp(**{"name": "docs", "extensions": "skills", **options})
    try:
        yield server
    finally:
        server.close()



@pytest.fixture(scope="module", params=["http", "stdio"])
def skills_running(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The skills kit server on 2026-07-28 over Streamable HTTP and over stdio."""
    with skills_server(request.param) as server:
        yield server


@pytest.fixture
def skills_docs(skills_running: Any) -> Iterator[llm_mcp.MCP]:
    """A client of ``skills_running`` named "docs", declaring ``extensions = "skills"``."""
    with skills_client(skills_running) as server:
        yield server


def entry_skill(uri: str, frontmatter: dict[str, Any], files: dict[str, bytes] | None = None,
                resources: Any = None) -> type[Skill]:
    """A kit skill whose ``skills/list`` entry is exactly ``uri``, ``frontmatter`` and ``resources``
    (by default one item per file of ``files``, digests and sizes computed here), serving ``files``
    (``{uri: bytes}``; by default ``uri`` -> a SKILL.md of ``frontmatter``) on ``resources/read``:
    for entries a well-behaved server would never send."""
    import hashlib
    import json as _json

    skill_md = ("---\n" + "".join(f"{k}: {_json.dumps(v)}\n" for k, v in frontmatter.items()) + "---\n\nBody.\n")
    served = files if files is not None else {uri: skill_md.encode()}
    listed = resources if resources is not None else [
        {"uri": u, "digest": "sha256:" + hashlib.sha256(b).hexdigest(), "size": len(b)} for u, b in served.items()]

    class Entry(Skill):
        files: ClassVar[dict[str, str | bytes]] = {"SKILL.md": "---\nname: entry\ndescription: stands in\n---\n"}

        @classmethod
        def uri(cls) -> str:
            return uri

        @classmethod
        def entry(cls) -> dict[str, Any]:
            return {"uri": uri, "frontmatter": frontmatter, "resources": listed}

        @classmethod
        def contents(cls, asked: str) -> list[dict[str, Any]] | None:
            data = served.get(asked)
            return None if data is None else [{"uri": asked, "text": data.decode()}]

        @classmethod
        def directory(cls, asked: str) -> list[dict[str, Any]] | None:
            return None

    Entry.__name__ = f"Entry{abs(hash(uri))}"
    return Entry
