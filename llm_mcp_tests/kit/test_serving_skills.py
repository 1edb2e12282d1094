"""Kit skills (``llm_mcp.testing.Skill``): the entry a kit server lists is computed from its files,
and a badly defined skill is refused with a clear error."""

from __future__ import annotations

import hashlib

import pytest

from llm_mcp.testing import Server, Skill


class Notes(Skill):
    path = "team/notes"
    files = {"SKILL.md": "---\nname: notes\ndescription: Take notes\n---\n\nBody.\n", "a.bin": b"\x00\xff"}


def test_entry_is_computed_from_the_files():
    """URI from the path, frontmatter from SKILL.md, sha256 digest and byte size of each file."""
    entry = Notes.entry()
    assert entry["uri"] == "skill://team/notes/SKILL.md"
    assert entry["frontmatter"] == {"name": "notes", "description": "Take notes"}
    body = Notes.files["SKILL.md"].encode()
    assert entry["resources"] == [
        {"uri": "skill://team/notes/SKILL.md", "digest": "sha256:" + hashlib.sha256(body).hexdigest(), "size": len(body)},
        {"uri": "skill://team/notes/a.bin", "digest": "sha256:" + hashlib.sha256(b"\x00\xff").hexdigest(), "size": 2},
    ]
    assert Notes.contents("skill://team/notes/a.bin")[0]["blob"] == "AP8="
    assert Notes.contents("skill://team/notes/missing") is None


def test_bad_skills_are_refused():
    """A skill without SKILL.md, or whose SKILL.md lacks name/description, raises ValueError; a
    non-Skill item raises TypeError; two skills at one URI raise ValueError."""
    class Empty(Skill):
        files = {"README.md": "x"}

    class NoDescription(Skill):
        files = {"SKILL.md": "---\nname: x\n---\nBody"}

    with pytest.raises(ValueError, match="has no SKILL.md"):
        Empty.entry()
    with pytest.raises(ValueError, match="needs YAML frontmatter with a name and a description"):
        NoDescription.entry()
    with pytest.raises(TypeError):
        Server("s", skills=[object])
    with pytest.raises(ValueError):
        Server("s", skills=[Notes, Notes])


class Templates(Skill):
    files = {"SKILL.md": "---\nname: templates\ndescription: Pick a template\n---\n\nSee templates/.\n",
             "templates/invoice.md": "Invoice", "templates/regional/eu.md": "EU"}
    added = {"templates/credit.md": "Credit"}


def test_directories_are_served_with_added_files():
    """``resources/directory/read`` children of a kit skill: files with their MIME type, subdirectories
    as ``inode/directory``; ``added`` files are served and shown but stay out of the entry;
    ``None`` for what is not one of the skill's directories."""
    root = "skill://templates"
    assert Templates.directory(root) == [
        {"uri": f"{root}/SKILL.md", "name": "SKILL.md", "mimeType": "text/markdown"},
        {"uri": f"{root}/templates", "name": "templates", "mimeType": "inode/directory"}]
    assert [c["uri"] for c in Templates.directory(f"{root}/templates")] == [
        f"{root}/templates/credit.md", f"{root}/templates/invoice.md", f"{root}/templates/regional"]
    assert Templates.directory(f"{root}/templates/regional") == [
        {"uri": f"{root}/templates/regional/eu.md", "name": "eu.md", "mimeType": "text/markdown"}]
    assert Templates.directory(f"{root}/nothing") is None and Templates.directory("skill://other") is None
    assert Templates.contents(f"{root}/templates/credit.md")[0]["text"] == "Credit"
    assert f"{root}/templates/credit.md" not in [r["uri"] for r in Templates.entry()["resources"]]


def test_directory_read_is_announced_or_not():
    """A kit server with skills declares ``{"directoryRead": true}`` and answers the method, or with
    ``skills_directory_read=False`` declares ``{}`` and does not; a file URI is refused with -32602."""
    import llm_mcp
    from llm_mcp.testing import running_server

    for announced in (True, False):
        kit = Server("dirs", skills=[Templates], skills_directory_read=announced)
        with running_server(kit, era="modern") as running:
            server = running.mcp(name="dirs", extensions="skills")
            try:
                settings = server.capabilities["extensions"]["io.modelcontextprotocol/skills"]
                assert settings == ({"directoryRead": True} if announced else {})
                with pytest.raises(llm_mcp.MCPError) as info:
                    server.client.request("resources/directory/read", {"uri": "skill://templates/SKILL.md"})
                assert info.value.code == (-32602 if announced else -32601)
            finally:
                server.close()
