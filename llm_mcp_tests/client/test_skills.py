"""Skills (``io.modelcontextprotocol/skills``, SEP-2640) on the client: listing, lazy loading, and
verification of every read (size, sha256 digest, frontmatter, listed files only, limits).

A real kit server (``support/servers/skills.py``) over Streamable HTTP and stdio on 2026-07-28 (the
extension's base revision; the ``mcp`` SDK leaves ``extensions`` out of older ``initialize`` answers,
so a kit server declares skills on 2026-07-28 only; the conformance suite covers a handshake-era server). Expected digests and bodies are computed here from the kit's files.
"""

from __future__ import annotations

import hashlib

import pytest

import llm_mcp
from llm_mcp.client.skill import split_frontmatter
from llm_mcp_tests.support.servers import skills as kit
from llm_mcp_tests.support.skills import by_name


def test_skills_short_name_declares_the_extension():
    """``extensions = "skills"`` declares ``io.modelcontextprotocol/skills`` with ``{}`` settings."""
    from llm_mcp.client.extensions import declared_extensions

    assert declared_extensions(["apps", "skills"])["io.modelcontextprotocol/skills"] == {}


def test_listing_follows_pages_and_reads_nothing(skills_docs):
    """``server.skills`` pages through ``skills/list`` (page size 3, six listed skills) and builds each
    entry without reading a file; the unlisted skill is absent."""
    skills = by_name(skills_docs)
    assert sorted(skills) == sorted(["pdf-processing", "daily", "tampered", "wrong-size", "mismatch", "too-many"])
    pdf = skills["pdf-processing"]
    assert pdf.uri == "skill://pdf-processing/SKILL.md" and pdf.key == ("docs", pdf.uri)
    assert pdf.description == "Extract, fill, and assemble PDF documents"
    assert pdf.frontmatter == {"name": "pdf-processing", "description": pdf.description, "license": "Apache-2.0",
                               "metadata": {"version": "2.1"}}
    expected = {path: (hashlib.sha256(c if isinstance(c, bytes) else c.encode()).hexdigest(),
                       len(c if isinstance(c, bytes) else c.encode())) for path, c in kit.PdfProcessing.files.items()}
    assert {f.path: (f.digest.removeprefix("sha256:"), f.size) for f in pdf.files} == expected
    assert skills["daily"].dynamic and skills["daily"].files == []
    assert all(not s._instructions for s in skills.values())


def test_instructions_are_the_verified_body(skills_docs):
    """Loading reads SKILL.md, verifies it and returns the body after the frontmatter."""
    pdf = by_name(skills_docs)["pdf-processing"]
    assert pdf.instructions == split_frontmatter(kit.PDF_SKILL)[1]
    assert pdf.instructions.startswith("To fill a form")
    assert pdf.read("references/FORMS.md") == kit.FORMS
    assert pdf.read_bytes("scripts/logo.bin") == bytes(range(256))
    assert pdf.read("skill://pdf-processing/references/FORMS.md") == kit.FORMS


def test_tampered_file_is_refused(skills_docs):
    """A file whose bytes differ from its listed digest (same size) raises SkillVerificationError."""
    tampered = by_name(skills_docs)["tampered"]
    assert "Read notes.md" in tampered.instructions
    with pytest.raises(llm_mcp.SkillVerificationError, match="sha256 digest of skill://tampered/notes.md") as info:
        tampered.read("notes.md")
    assert info.value.uri == "skill://tampered/notes.md" and info.value.server == "docs"


def test_wrong_size_is_refused(skills_docs):
    """A SKILL.md longer than its entry's size is refused before any digest is compared."""
    with pytest.raises(llm_mcp.SkillVerificationError, match=r"is \d+ bytes, its entry says \d+"):
        by_name(skills_docs)["wrong-size"].instructions  # noqa: B018


def test_frontmatter_mismatch_is_refused(skills_docs):
    """A SKILL.md whose frontmatter differs from the entry's (digest and size match) is not loaded."""
    with pytest.raises(llm_mcp.SkillVerificationError, match="'description' field"):
        by_name(skills_docs)["mismatch"].instructions  # noqa: B018


def test_only_listed_files_are_read(skills_docs):
    """A path the entry does not list, or one climbing out of the skill, is refused without a read."""
    pdf = by_name(skills_docs)["pdf-processing"]
    with pytest.raises(llm_mcp.SkillVerificationError, match="does not list skill://pdf-processing/secret.md"):
        pdf.read("secret.md")
    with pytest.raises(llm_mcp.SkillVerificationError, match="not a file of the skill"):
        pdf.read("../tampered/notes.md")
    with pytest.raises(llm_mcp.SkillVerificationError, match="not a file of the skill"):
        pdf.read("skill://tampered/notes.md")


def test_over_the_file_limit_is_refused(skills_docs):
    """An entry listing 513 files (over 512) has a problem and cannot be loaded."""
    too_many = by_name(skills_docs)["too-many"]
    assert len(kit.TooMany.files) == 513 and "over the limit of 512" in too_many.problem
    with pytest.raises(llm_mcp.SkillVerificationError, match="over the limit of 512"):
        too_many.instructions  # noqa: B018


def test_dynamic_skill_reads_under_its_root(skills_docs):
    """A dynamic skill has nothing to verify: its files under its root are read as served."""
    daily = by_name(skills_docs)["daily"]
    assert daily.instructions == "Read data.md.\n"
    assert daily.read("data.md") == "42 orders today.\n"


def test_skill_by_uri_even_unlisted(skills_docs):
    """``skills_docs.skill(uri)`` sends skills/get: an unlisted skill is reachable; an unknown one is refused."""
    hidden = skills_docs.skill("skill://hidden/SKILL.md")
    assert hidden.name == "hidden" and hidden.instructions == "Hidden body.\n"
    with pytest.raises(llm_mcp.MCPError) as info:
        skills_docs.skill("skill://nope/SKILL.md")
    assert info.value.code == -32602


def test_skills_need_the_extension_declared(skills_running):
    """Without ``extensions = "skills"`` the client sends no skills/list and says what to set."""
    plain = skills_running.mcp(name="plain")
    try:
        with pytest.raises(llm_mcp.ConfigurationError, match='extensions = "skills"'):
            plain.skills  # noqa: B018
    finally:
        plain.close()


def test_frontmatter_with_yaml_aliases_is_refused():
    """A SKILL.md frontmatter using YAML aliases (which can expand without bound) is not parsed: the
    skill then has no frontmatter to compare and is not loaded."""
    bomb = "---\nname: x\ndescription: &a [1, 2]\nmore: [*a, *a]\n---\nBody\n"
    assert split_frontmatter(bomb) == (None, bomb)
    assert split_frontmatter("---\nname: x\ndescription: y\n---\n\nBody\n") == ({"name": "x", "description": "y"},
                                                                              "Body\n")
