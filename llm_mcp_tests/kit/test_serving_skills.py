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
