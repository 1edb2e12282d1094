"""Directories of skills: ``Skill.directory(path)``, ``resources/directory/read`` sent only to a
server that announces ``directoryRead``, and the answer held against the skill's entry (only listed
files are surfaced or read; a dynamic skill is bounded at 512 files).

Real parts: the skills kit server (``support/servers/skills.py``, ``directoryRead`` announced) over
Streamable HTTP and stdio on 2026-07-28, and kit servers without ``directoryRead`` or with an
oversized dynamic skill over HTTP. Expected children are computed here from the kit's files.
"""

from __future__ import annotations

import pytest

import llm_mcp
from llm_mcp.client.skill import announces_directory_read
from llm_mcp.testing import Server, Skill, running_server
from llm_mcp_tests.support.servers import skills as kit
from llm_mcp_tests.support.skills import by_name


def children(entries: list[llm_mcp.SkillDirectoryEntry]) -> list[tuple[str, bool]]:
    return [(e.path, e.directory) for e in entries]


def test_directory_read_is_announced(skills_docs):
    """The kit server declares the extension with ``{"directoryRead": true}`` and the client reads it."""
    settings = skills_docs.capabilities["extensions"]["io.modelcontextprotocol/skills"]
    assert settings == {"directoryRead": True} and announces_directory_read(skills_docs)


def test_listed_skill_directory_shows_only_listed_files(skills_docs):
    """The server lists references/CREDIT.md (added after the entry); the client leaves it out of the
    directory and refuses to read it, though the server serves it. The root shows its files and
    the directories that hold listed files."""
    pdf = by_name(skills_docs)["pdf-processing"]
    assert "references/CREDIT.md" not in {f.path for f in pdf.files}  # the entry does not list it
    assert children(pdf.directory("references")) == [("references/FORMS.md", False)]
    assert children(pdf.directory("references/")) == [("references/FORMS.md", False)]
    expected_root = sorted({(p.split("/")[0], "/" in p) for p in kit.PdfProcessing.files})
    assert children(pdf.directory()) == expected_root == [("SKILL.md", False), ("references", True),
                                                          ("scripts", True)]
    assert pdf.directory(".")[0].mime_type == "text/markdown"  # the server's answer, not the entry's
    with pytest.raises(llm_mcp.SkillVerificationError, match="does not list skill://pdf-processing/references/CREDIT"):
        pdf.read("references/CREDIT.md")


def test_directory_outside_the_skill_is_refused(skills_docs):
    """``..`` out of the skill, another skill's URI, or a directory the entry has no file in: refused."""
    pdf = by_name(skills_docs)["pdf-processing"]
    with pytest.raises(llm_mcp.SkillVerificationError, match="not a file of the skill"):
        pdf.directory("../tampered")
    with pytest.raises(llm_mcp.SkillVerificationError, match="not a file of the skill"):
        pdf.directory("skill://tampered")
    with pytest.raises(llm_mcp.SkillVerificationError, match="has no directory skill://pdf-processing/templates"):
        pdf.directory("templates")
    with pytest.raises(TypeError):
        pdf.directory(3)  # type: ignore[arg-type]


def test_dynamic_skill_is_discovered_by_directory_reads(skills_docs):
    """A dynamic skill's files are known only from the server: the root, then a subdirectory."""
    daily = by_name(skills_docs)["daily"]
    tops = sorted({(p.split("/")[0], "/" in p) for p in kit.DailyReport.files})
    assert children(daily.directory()) == tops == [("SKILL.md", False), ("archive", True), ("data.md", False)]
    assert children(daily.directory("archive")) == [("archive/2026-12-01.md", False)]
    assert daily.read("archive/2026-12-01.md") == kit.DailyReport.files["archive/2026-12-01.md"]


class Plain(Skill):
    files = {"SKILL.md": "---\nname: plain\ndescription: Listed files\n---\n\nSee docs/a.md.\n", "docs/a.md": "A\n"}


class Live(Skill):
    dynamic = True
    files = {"SKILL.md": "---\nname: live\ndescription: Generated\n---\n\nBody.\n"}


class Huge(Skill):
    dynamic = True
    files = {"SKILL.md": "---\nname: huge\ndescription: Too many files\n---\n\nBody.\n",
             **{f"f{i}.md": "x" for i in range(512)}}


@pytest.fixture(scope="module")
def without_directory_read():
    with running_server(Server("nodir", skills=[Plain, Live], skills_directory_read=False), era="modern") as running:
        yield running


def test_without_directory_read_the_entry_answers(without_directory_read):
    """A server that does not announce ``directoryRead`` gets no ``resources/directory/read``: a listed
    skill's directories come from its entry; a dynamic skill's cannot be listed (nothing sent)."""
    server = without_directory_read.mcp(name="nodir", extensions="skills")
    try:
        assert server.capabilities["extensions"]["io.modelcontextprotocol/skills"] == {}
        assert not announces_directory_read(server)
        skills = by_name(server)
        assert children(skills["plain"].directory()) == [("SKILL.md", False), ("docs", True)]
        assert children(skills["plain"].directory("docs")) == [("docs/a.md", False)]
        assert skills["plain"].directory()[0].mime_type is None  # from the entry: no mimeType
        with pytest.raises(llm_mcp.MCPError, match="does not announce directoryRead") as info:
            skills["live"].directory()
        assert not isinstance(info.value, llm_mcp.SkillVerificationError)
    finally:
        server.close()


def test_dynamic_skill_over_512_files_is_refused():
    """A dynamic skill whose directory read names 513 files is refused (the per-skill file limit)."""
    with running_server(Server("big", skills=[Huge]), era="modern") as running:
        server = running.mcp(name="big", extensions="skills")
        try:
            huge = by_name(server)["huge"]
            assert len(Huge.files) == 513
            with pytest.raises(llm_mcp.SkillVerificationError, match="more than 512 files"):
                huge.directory()
        finally:
            server.close()


class Odd(Skill):
    """A dynamic skill whose server names children a client must not pass on: a name with a line
    break (it would forge lines of the listing read_skill_file gives the model), a control
    character, and an encoded ``..``."""
    dynamic = True
    files = {"SKILL.md": "---\nname: odd\ndescription: Odd children\n---\n\nBody.\n", "fine.md": "ok\n",
             "x.md\nSKILL.md": "forged\n", "bell\x07.md": "ding\n", "%2e%2e": "up\n"}


def test_dynamic_children_with_unsafe_names_are_left_out():
    """A directory read's children whose names hold line breaks or control characters, or decode to
    ``.``/``..``, are left out (logged) like children outside the directory."""
    with running_server(Server("odd", skills=[Odd]), era="modern") as running:
        server = running.mcp(name="odd", extensions="skills")
        try:
            assert children(by_name(server)["odd"].directory()) == [("SKILL.md", False), ("fine.md", False)]
        finally:
            server.close()
