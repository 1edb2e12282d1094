"""Kit skills (``io.modelcontextprotocol/skills``): a skill's files, served by a kit `Server`.

    class PdfProcessing(Skill):
        files = {"SKILL.md": "---\\nname: pdf-processing\\ndescription: Fill PDF forms\\n---\\n\\nUse FORMS.md.\\n",
                 "references/FORMS.md": "Field names..."}

    Server("docs", skills=[PdfProcessing])     # skills/list, skills/get, resources/read of skill://...

The entry (URI, frontmatter, each file's ``sha256`` digest and size) is computed from ``files``.
Deliberately broken skills, for testing a client's verification: ``served`` replaces a file's
content on ``resources/read`` only (so its digest, or with different length its size, no longer
matches the entry); ``listed_frontmatter`` lists a frontmatter that differs from ``SKILL.md``'s.
``dynamic = True`` lists ``"resources": "dynamic"`` (no digests). ``added`` files are served (and
named by ``resources/directory/read``) but left out of the entry, as a file added after a client
listed the skill.

Served on 2026-07-28 (the extension's base revision): the ``mcp`` SDK leaves ``extensions`` out of
the capabilities of older ``initialize`` answers, so a client of a handshake-era kit server sees none.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any, ClassVar

__all__ = ["Skill"]


def _bytes(content: str | bytes) -> bytes:
    return content.encode("utf-8") if isinstance(content, str) else content


class Skill:
    """A skill a kit server serves. Subclass it and set:

    Attributes:
        files: ``{path relative to the skill's root: str (UTF-8) or bytes}``; ``"SKILL.md"`` is
            required and starts with YAML frontmatter holding ``name`` and ``description``.
        path: the skill path in the URI (``skill://<path>/SKILL.md``); defaults to the
            frontmatter's ``name`` (the spec requires the last segment to equal it).
        dynamic: list ``"resources": "dynamic"`` instead of files with digests.
        served: ``{path: content}`` served instead of ``files[path]`` while the entry still
            describes ``files[path]`` (a tampered file: bad digest, or wrong size).
        listed_frontmatter: the frontmatter the entry lists, instead of ``SKILL.md``'s own.
        unlisted: hide the skill from ``skills/list`` (``skills/get`` still answers for it).
        added: ``{path: content}`` served and shown in directory reads, but not in the entry (a
            stale entry: the spec's "Directory Reads and the Held Entry").
    """

    files: ClassVar[dict[str, str | bytes]] = {}
    path: ClassVar[str | None] = None
    dynamic: ClassVar[bool] = False
    served: ClassVar[dict[str, str | bytes]] = {}
    listed_frontmatter: ClassVar[dict[str, Any] | None] = None
    unlisted: ClassVar[bool] = False
    added: ClassVar[dict[str, str | bytes]] = {}

    @classmethod
    def frontmatter(cls) -> dict[str, Any]:
        """``SKILL.md``'s frontmatter (raises ``ValueError`` when it has none with a name and description)."""
        from llm_mcp.client.skill import split_frontmatter

        if "SKILL.md" not in cls.files:
            raise ValueError(f"{cls.__name__}.files has no SKILL.md")
        frontmatter, _ = split_frontmatter(_bytes(cls.files["SKILL.md"]).decode("utf-8"))
        if not frontmatter or not isinstance(frontmatter.get("name"), str) \
                or not isinstance(frontmatter.get("description"), str):
            raise ValueError(f"{cls.__name__}: SKILL.md needs YAML frontmatter with a name and a description")
        return frontmatter

    @classmethod
    def root(cls) -> str:
        """The skill's directory URI, ``skill://<path>``."""
        return f"skill://{cls.path or cls.frontmatter()['name']}"

    @classmethod
    def uri(cls) -> str:
        """The URI of its ``SKILL.md``."""
        return f"{cls.root()}/SKILL.md"

    @classmethod
    def entry(cls) -> dict[str, Any]:
        """The ``Skill`` entry of ``skills/list`` and ``skills/get``."""
        files: Any = "dynamic" if cls.dynamic else [
            {"uri": f"{cls.root()}/{path}", "digest": "sha256:" + hashlib.sha256(_bytes(content)).hexdigest(),
             "size": len(_bytes(content))}
            for path, content in cls.files.items()]
        frontmatter = cls.listed_frontmatter if cls.listed_frontmatter is not None else cls.frontmatter()
        return {"uri": cls.uri(), "frontmatter": frontmatter, "resources": files}

    @classmethod
    def contents(cls, uri: str) -> list[dict[str, Any]] | None:
        """The ``resources/read`` contents of one of its files, or ``None`` when ``uri`` is not one."""
        if not uri.startswith(cls.root() + "/"):
            return None
        path = uri[len(cls.root()) + 1:]
        if path not in cls.files and path not in cls.added:
            return None
        content = cls.added[path] if path in cls.added else cls.served.get(path, cls.files[path])
        mime = "text/markdown" if path.endswith(".md") else "text/plain"
        if isinstance(content, bytes):
            return [{"uri": uri, "mimeType": "application/octet-stream",
                     "blob": base64.b64encode(content).decode("ascii")}]
        return [{"uri": uri, "mimeType": mime, "text": content}]

    @classmethod
    def directory(cls, uri: str) -> list[dict[str, Any]] | None:
        """The ``resources/directory/read`` children of ``uri`` (a ``Resource`` per file, an
        ``inode/directory`` resource per subdirectory), or ``None`` when ``uri`` is not one of its
        directories."""
        root = cls.root()
        if uri != root and not uri.startswith(root + "/"):
            return None
        inner = uri[len(root):].lstrip("/")
        children: dict[str, dict[str, Any]] = {}
        for path in [*cls.files, *cls.added]:
            if inner and not path.startswith(inner + "/"):
                continue
            head, _, rest = path[len(inner) + 1 if inner else 0:].partition("/")
            child = f"{uri}/{head}"
            mime = "inode/directory" if rest else ("text/markdown" if head.endswith(".md") else "text/plain")
            children.setdefault(child, {"uri": child, "name": head, "mimeType": mime})
        if inner and not children:
            return None
        return sorted(children.values(), key=lambda c: c["uri"])
