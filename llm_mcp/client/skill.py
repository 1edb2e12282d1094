"""Skills a server serves (the ``io.modelcontextprotocol/skills`` extension, SEP-2640), read lazily
and verified.

    class Docs(llm_mcp.MCP):
        url = "https://docs.example/mcp"
        extensions = "skills"

    skill = Docs().skills[0]            # skills/list: entries only, no file is read
    skill.name, skill.description       # from the entry's frontmatter
    skill.instructions                  # reads SKILL.md now: size, sha256 digest, frontmatter checked
    skill.read("references/FORMS.md")   # reads one listed file, verified the same way
    skill.directory("references")       # the direct children of one of its directories

Specification: ``modelcontextprotocol/ext-skills``, ``specification/stable/skills.mdx`` ("Skill
Entries", "Limits", "Integrity and Verification", "Reading Directories"). Every failed check raises
`SkillVerificationError` and the content is never returned.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import logging
import posixpath
import re
import threading
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import unquote

from .declared import call_with
from .errors import ConfigurationError, MCPError, SkillVerificationError
from .extensions import SKILLS_EXTENSION, declared_extensions

if TYPE_CHECKING:
    from .server import MCP

__all__ = ["DIRECTORY_MIME_TYPE", "MAX_SKILL_BYTES", "MAX_SKILL_FILES", "SKILLS_EXTENSION", "Skill",
           "SkillDirectoryEntry", "SkillFile", "Skills", "announces_directory_read", "check_skill_allowed_tools",
           "grants_allowed_tools"]

MAX_SKILL_FILES = 512
"""Files per skill the spec's "Limits" fix (``SKILL.md`` included); larger entries are refused."""

MAX_SKILL_BYTES = 16 * 1024 * 1024
"""Total bytes per skill (the sum of the entries' ``size``; for a dynamic skill, of what was read)."""

SKILL_FILE = "SKILL.md"

DIRECTORY_MIME_TYPE = "inode/directory"
"""The ``mimeType`` of a directory resource (the spec's "Directory Resources")."""

log = logging.getLogger("llm_mcp.client")


@dataclass(frozen=True)
class SkillFile:
    """One file of a skill's entry: ``uri``, ``path`` (relative to the skill's root, e.g.
    ``"references/FORMS.md"``), ``digest`` (``"sha256:<64 hex>"``) and ``size`` (bytes)."""

    uri: str
    path: str
    digest: str
    size: int


@dataclass(frozen=True)
class SkillDirectoryEntry:
    """One direct child of a skill's directory, as [`Skill.directory`][llm_mcp.Skill.directory]
    gives it: ``uri``, ``path`` (relative to the skill's root: ``"templates/invoice.md"``), ``name``
    (its last segment), ``directory`` (``True`` for a subdirectory, ``mimeType`` ``inode/directory``)
    and ``mime_type`` (as the server sent it, ``None`` when it sent none or the answer came from the
    held entry)."""

    uri: str
    path: str
    name: str
    directory: bool
    mime_type: str | None = None


def announces_directory_read(server: MCP) -> bool:
    """Whether ``server`` declares the Skills extension with ``"directoryRead": true`` (then it
    answers ``resources/directory/read``; the spec forbids sending it to any other server)."""
    extensions = server.capabilities.get("extensions")
    settings = extensions.get(SKILLS_EXTENSION) if isinstance(extensions, dict) else None
    return isinstance(settings, dict) and settings.get("directoryRead") is True


class Skill:
    """One skill of one server, from its ``skills/list`` or ``skills/get`` entry.

    Nothing is read until asked: [`instructions`][llm_mcp.Skill.instructions] reads ``SKILL.md``,
    [`read`][llm_mcp.Skill.read] one file. Each read is checked against the entry held here
    (size, then ``sha256`` digest; the frontmatter of ``SKILL.md`` field by field) and only files
    the entry lists are read.

    Attributes:
        server: the [`MCP`][llm_mcp.MCP] it comes from (a skill is keyed by server and URI:
            ``key`` is ``(server.name, uri)``).
        uri: the URI of its ``SKILL.md`` (``skill://pdf-processing/SKILL.md``).
        root: the skill's directory URI (``skill://pdf-processing``).
        name, description: from the entry's frontmatter.
        frontmatter: the entry's frontmatter, as sent.
        dynamic: ``True`` when the server lists no files (``"resources": "dynamic"``): nothing
            can be verified, reads under the skill's root are allowed up to 16 MiB in all.
        files: the listed files ([`SkillFile`][llm_mcp.client.skill.SkillFile]), ``[]`` when dynamic.
        problem: why the entry cannot be loaded (over the limits, a name that is not the URI's last
            segment, malformed files), or ``None``; loading such a skill raises `SkillVerificationError`.
        raw: the entry as sent.
    """

    def __init__(self, server: MCP, entry: dict[str, Any]):
        self.server = server
        self.raw = entry
        self.uri: str = entry["uri"]
        self.root = self.uri.removesuffix("/" + SKILL_FILE)
        self.frontmatter: dict[str, Any] = dict(entry["frontmatter"])
        self.name: str = self.frontmatter["name"]
        self.description: str = self.frontmatter["description"]
        resources = entry.get("resources")
        self.dynamic = resources == "dynamic"
        self.files: list[SkillFile] = []
        self.problem = self._check(resources)
        self._instructions: str | None = None
        self._read_bytes = 0
        self._seen_files: set[str] = set()  # files of a dynamic skill its directory reads named
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<Skill {self.name!r} {self.uri} of {self.server.name!r}>"

    @property
    def loaded(self) -> bool:
        """Whether ``SKILL.md`` was read and verified already (nothing is sent to find out)."""
        return self._instructions is not None

    @property
    def key(self) -> tuple[str, str]:
        """``(server name, uri)``: the skill's identity across servers (the spec's "Skill URIs")."""
        return (self.server.name, self.uri)

    @property
    def allowed_tools(self) -> list[str]:
        """The tool names of the entry's ``allowed-tools`` frontmatter (Agent Skills: a
        space-separated string; a YAML list is read too), ``[]`` without one. What they request is
        granted only where the server's ``skill_allowed_tools`` setting allows it for this skill
        (`grants_allowed_tools`); nothing here acts on it."""
        value = self.frontmatter.get("allowed-tools")
        if isinstance(value, str):
            return value.split()
        if isinstance(value, list):
            return [item for item in value if isinstance(item, str) and item]
        return []

    def _check(self, resources: Any) -> str | None:
        if not self.uri.endswith("/" + SKILL_FILE):
            return f"its uri {self.uri!r} does not name a {SKILL_FILE}"
        if _unsafe_characters(self.uri, allow_space=False):
            return f"its uri {self.uri!r} holds whitespace or control characters"
        segments = _segments_problem(self.root.split("://", 1)[-1])
        if segments:
            return f"its path {self.root!r} has {segments}"
        if posixpath.basename(self.root.split("://", 1)[-1]) != self.name:
            return f"its name {self.name!r} is not the last segment of its path {self.root!r}"
        if not _valid_name(self.name):
            return (f"its name {self.name!r} breaks the Agent Skills naming rules (1-64 lowercase letters or digits, "
                    "single hyphens between them)")
        if self.dynamic:
            return None
        if not isinstance(resources, list):
            return "its resources are neither a list of files nor \"dynamic\""
        if len(resources) > MAX_SKILL_FILES:
            return f"it lists {len(resources)} files, over the limit of {MAX_SKILL_FILES}"
        total = 0
        for item in resources:
            uri = item.get("uri") if isinstance(item, dict) else None
            digest, size = (item.get("digest"), item.get("size")) if isinstance(item, dict) else (None, None)
            if not isinstance(uri, str) or not uri.startswith(self.root + "/") \
                    or _segments_problem(uri[len(self.root) + 1:]) or _unsafe_characters(uri, allow_space=True):
                return f"it lists a file outside its directory: {uri!r}"
            if any(f.uri == uri for f in self.files):
                return f"it lists {uri} twice"
            if not (isinstance(digest, str) and _DIGEST.fullmatch(digest)):
                return f"the digest of {uri} is not \"sha256:\" and 64 hex digits"
            if not isinstance(size, int) or isinstance(size, bool) or size < 0:
                return f"the size of {uri} is not a byte count"
            total += size
            self.files.append(SkillFile(uri=uri, path=uri[len(self.root) + 1:], digest=digest.lower(), size=size))
        if total > MAX_SKILL_BYTES:
            return f"its files total {total} bytes, over the limit of {MAX_SKILL_BYTES}"
        if not any(f.uri == self.uri for f in self.files):
            return f"its files do not include its {SKILL_FILE}"
        return None

    # -- reading ---------------------------------------------------------------------------------

    @property
    def instructions(self) -> str:
        """The body of ``SKILL.md`` (after the frontmatter), read the first time and kept: this is
        loading the skill. Raises `SkillVerificationError` when its size, digest or frontmatter
        differ from the entry (or the entry has a ``problem``); `MCPError` when the server refuses."""
        with self._lock:
            if self._instructions is None:
                text = self._verified(self.uri).decode("utf-8", errors="replace")
                frontmatter, body = split_frontmatter(text)
                self._compare_frontmatter([frontmatter, split_frontmatter(text, core_schema=True)[0]])
                self._instructions = body
            return self._instructions

    def read(self, path: str) -> str:
        """One file of the skill, verified, as text (undecodable bytes replaced). ``path`` is relative
        to the skill's root (``"references/FORMS.md"``) or the file's full URI.

        Raises `SkillVerificationError` for a file the entry does not list (or outside a dynamic
        skill's root), a size or digest that differs, a dynamic skill past 16 MiB read; `MCPError`
        when the server refuses; ``TypeError``/``ValueError`` for a path that is not a non-empty string.
        """
        return self.read_bytes(path).decode("utf-8", errors="replace")

    def read_bytes(self, path: str) -> bytes:
        """As [`read`][llm_mcp.Skill.read], the raw bytes."""
        return self._verified(self.resolve(path))

    def resolve(self, path: str) -> str:
        """The URI of ``path`` (relative to the skill's root, or already a URI of the skill);
        ``..`` segments that leave the root (percent-encoded too: ``%2e%2e``), encoded ``.``/``..``
        segments and control characters are refused with `SkillVerificationError`."""
        if not isinstance(path, str):
            raise TypeError(f"a skill file path is a string, not {type(path).__name__}")
        if not path.strip():
            raise ValueError("a skill file path must not be empty")
        if path.startswith(self.root + "/"):
            path = path[len(self.root) + 1:]
        normal = posixpath.normpath(path.lstrip("/"))
        decoded = posixpath.normpath(unquote(path.lstrip("/")))  # as a server that decodes %2e%2e would take it
        if "://" in path or normal in (".", "") or _segments_problem(normal) or decoded == ".." \
                or decoded.startswith("../") or _unsafe_characters(normal, allow_space=True):
            raise SkillVerificationError(f"skill {self.name!r}: {path!r} is not a file of the skill",
                                         uri=path, server=self.server.name)
        return f"{self.root}/{normal}"

    def directory(self, path: str = "") -> list[SkillDirectoryEntry]:
        """The direct children of one of the skill's directories (``""`` or ``"."`` is its root,
        ``"templates"`` a subdirectory), sorted by path; subdirectories have ``directory=True``.

        A server that announces ``directoryRead`` (its ``io.modelcontextprotocol/skills`` settings)
        is asked with ``resources/directory/read`` (every page). For a skill whose entry lists its
        files, the answer is held against the entry: only listed files (and directories holding
        them) are given, a child the entry does not list is left out (the entry is stale:
        [`MCP.skill`][llm_mcp.MCP.skill] gets a fresh one), and without ``directoryRead`` the
        entry alone answers. For a dynamic skill, the server's answer is the only source: children
        outside the directory are left out, and once its directory reads have named more than 512
        files the skill is refused.

        Raises `SkillVerificationError` for a path outside the skill (``..``), a directory a listed
        skill does not have, an entry with a ``problem``, a dynamic skill past 512 files;
        `MCPError` for a dynamic skill of a server that does not announce ``directoryRead`` (nothing
        is sent) or when the server refuses (``-32602``: not a directory).
        """
        uri = self._directory_uri(path)
        self._refuse_problem()
        listed = [] if self.dynamic else self._listed_children(uri)
        if not self.dynamic and uri != self.root and not listed:
            raise SkillVerificationError(f"skill {self.name!r} of {self.server.name!r} has no directory {uri} in its "
                                         "entry; not read", uri=uri, server=self.server.name)
        served = self._read_directory(uri) if announces_directory_read(self.server) else None
        if self.dynamic:
            if served is None:
                raise MCPError(f"MCP server {self.server.name!r} does not announce directoryRead: the files of the "
                               f"dynamic skill {self.name!r} cannot be listed (resources/directory/read not sent)",
                               server=self.server.name)
            with self._lock:
                self._seen_files.update(e.uri for e in served if not e.directory)
                if len(self._seen_files) > MAX_SKILL_FILES:
                    raise SkillVerificationError(
                        f"skill {self.name!r} of {self.server.name!r}: its directories name more than "
                        f"{MAX_SKILL_FILES} files, over the limit; refused", uri=uri, server=self.server.name)
            return served
        if served is None:
            return listed
        held = {entry.uri: entry for entry in listed}
        kept = {e.uri: e for e in served if e.uri in held and held[e.uri].directory == e.directory}
        left_out = len(served) - len(kept)
        if left_out:
            log.warning("MCP server %s lists %d child(ren) of %s that skill %r's entry does not; left out (the entry "
                        "is stale: skills/get refreshes it)", self.server.name, left_out, uri, self.name)
        return [kept[e.uri] for e in listed if e.uri in kept]

    def _directory_uri(self, path: str) -> str:
        if isinstance(path, str) and (path.strip().strip("/") in ("", ".") or path.rstrip("/") == self.root):
            return self.root
        if not isinstance(path, str):
            raise TypeError(f"a skill directory path is a string, not {type(path).__name__}")
        return self.resolve(path.rstrip("/"))

    def _listed_children(self, uri: str) -> list[SkillDirectoryEntry]:
        """The direct children of ``uri`` the held entry lists: its files there, and the
        directories holding its deeper files."""
        children: dict[str, SkillDirectoryEntry] = {}
        for file in self.files:
            if not file.uri.startswith(uri + "/"):
                continue
            head, _, rest = file.uri[len(uri) + 1:].partition("/")
            child = f"{uri}/{head}"
            children.setdefault(child, SkillDirectoryEntry(uri=child, path=child[len(self.root) + 1:], name=head,
                                                           directory=bool(rest)))
        return sorted(children.values(), key=lambda e: e.path)

    def _read_directory(self, uri: str) -> list[SkillDirectoryEntry]:
        """``resources/directory/read`` of ``uri``, every page: its direct children, sorted; other
        items (outside ``uri``, deeper, malformed, named with control characters or an encoded
        ``.``/``..``) are left out and logged."""
        children: dict[str, SkillDirectoryEntry] = {}
        items = self.server.client.list("resources/directory/read", "resources", {"uri": uri})
        for item in items:
            child = item.get("uri")
            name = child[len(uri) + 1:] if isinstance(child, str) and child.startswith(uri + "/") else ""
            if not name or "/" in name or _segments_problem(name) or _unsafe_characters(name, allow_space=True):
                log.warning("MCP server %s answered resources/directory/read of %s with %r, not a direct child; "
                            "left out", self.server.name, uri, child)
                continue
            mime = item.get("mimeType") if isinstance(item.get("mimeType"), str) else None
            children[child] = SkillDirectoryEntry(uri=child, path=child[len(self.root) + 1:], name=name,
                                                  directory=mime == DIRECTORY_MIME_TYPE, mime_type=mime)
        return sorted(children.values(), key=lambda e: e.path)

    def _refuse_problem(self) -> None:
        if self.problem:
            raise SkillVerificationError(f"skill {self.name!r} of {self.server.name!r} cannot be loaded: "
                                         f"{self.problem}", uri=self.uri, server=self.server.name)

    def _verified(self, uri: str) -> bytes:
        name = self.server.name
        self._refuse_problem()
        listed = None if self.dynamic else next((f for f in self.files if f.uri == uri), None)
        if not self.dynamic and listed is None:
            raise SkillVerificationError(f"skill {self.name!r} of {name!r} does not list {uri}; not read",
                                         uri=uri, server=name)
        data = _bytes_of(self.server, uri, self.server.request_answering("resources/read", {"uri": uri}))
        if listed is None:  # dynamic: nothing to verify against, only the total bound
            self._read_bytes += len(data)
            if self._read_bytes > MAX_SKILL_BYTES:
                raise SkillVerificationError(f"skill {self.name!r} of {name!r} read past {MAX_SKILL_BYTES} bytes; "
                                             f"{uri} refused", uri=uri, server=name)
            return data
        if len(data) != listed.size:
            raise SkillVerificationError(f"skill {self.name!r} of {name!r}: {uri} is {len(data)} bytes, its entry "
                                         f"says {listed.size}; refused", uri=uri, server=name)
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        if digest != listed.digest:
            raise SkillVerificationError(f"skill {self.name!r} of {name!r}: the sha256 digest of {uri} differs "
                                         f"from its entry; refused", uri=uri, server=name)
        return data

    def _compare_frontmatter(self, readings: list[dict[str, Any] | None]) -> None:
        """Refuse unless one reading of ``SKILL.md``'s frontmatter (YAML 1.1, YAML 1.2 core) equals
        the entry's: a server renders it with the YAML library it has, and the two read ``yes``,
        timestamps, ``0755``, ``1_000`` differently."""
        expected = _as_json(self.frontmatter)
        if any(reading == expected for reading in readings):
            return
        frontmatter = readings[0]
        if frontmatter is None:
            raise SkillVerificationError(f"skill {self.name!r} of {self.server.name!r}: its {SKILL_FILE} has no "
                                         "YAML frontmatter; not loaded", uri=self.uri, server=self.server.name)
        for field in sorted(set(expected) | set(frontmatter)):
            if field not in frontmatter or field not in expected or frontmatter[field] != expected[field]:
                raise SkillVerificationError(
                    f"skill {self.name!r} of {self.server.name!r}: the {field!r} field of its {SKILL_FILE} "
                    "frontmatter differs from the listed entry; not loaded", uri=self.uri, server=self.server.name)


def check_skill_allowed_tools(settings: Any, value: Any, where: str) -> None:
    """Refuse a ``skill_allowed_tools`` setting that cannot work (``ValueError`` naming ``where``):
    it is ``None``/``False``, a list of skill names or ``SKILL.md`` URIs, a callable, or the name
    of a method. ``True`` is refused: the spec wants the grant approved per skill."""
    if value is None or value is False or callable(value) or settings.names_method(value):
        return
    if value is True:
        raise ValueError(f"{where}: skill_allowed_tools = True would let every skill of the server pre-approve "
                         "tools; name the skills (a list) or give a callable deciding per skill")
    if not isinstance(value, (list, tuple, set, frozenset)) or not all(isinstance(n, str) and n for n in value):
        raise ValueError(f"{where}: skill_allowed_tools must be a list of skill names (or SKILL.md URIs), a "
                         f"callable or a method name, not {value!r}")


def grants_allowed_tools(server: MCP, skill: Skill) -> bool:
    """Whether ``server``'s ``skill_allowed_tools`` setting lets ``skill``'s ``allowed-tools`` take
    effect: the list names the skill (its ``name`` or its ``uri``), or the callable (method)
    given the `Skill` returns true. ``False`` by default: the spec's "No implicit permission
    grants" (an MCP-served skill's ``allowed-tools`` is ignored unless approved for that skill)."""
    setting = server.settings.option("skill_allowed_tools")
    if setting is None or setting is False or setting is True:
        return False
    if callable(setting) or (isinstance(setting, str) and server.settings.names_method(setting)):
        return bool(call_with(setting, server, skill))
    return skill.name in setting or skill.uri in setting


def split_frontmatter(text: str, *, core_schema: bool = False) -> tuple[dict[str, Any] | None, str]:
    """``(frontmatter, body)`` of a ``SKILL.md``: the YAML between the leading ``---`` lines, as
    JSON values (dates as ISO strings), and the rest; ``(None, text)`` without a frontmatter block,
    with one that is not a YAML mapping, or with YAML aliases.

    Scalars are read as YAML 1.1 (PyYAML: ``yes`` is ``True``, ``0755`` is 493, timestamps are
    datetimes); with ``core_schema=True`` as YAML 1.2's core schema (``yes`` and timestamps stay
    strings, ``0755`` is 755), as the ``yaml`` package of the reference TypeScript SDK reads them."""
    import yaml

    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None, text
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            block = "".join(lines[1:index])
            try:  # aliases refused: a few bytes of them can expand into gigabytes ("billion laughs")
                if any(isinstance(event, yaml.AliasEvent) for event in yaml.parse(block, Loader=yaml.SafeLoader)):
                    return None, text
                data = yaml.load(block, Loader=_core_loader() if core_schema else yaml.SafeLoader)
            except yaml.YAMLError:
                return None, text
            if not isinstance(data, dict):
                return None, text
            return _as_json(data), "".join(lines[index + 1:]).lstrip("\n")
    return None, text


_DIGEST = re.compile(r"sha256:[0-9a-fA-F]{64}")


def _valid_name(name: str) -> bool:
    """The Agent Skills naming rules: 1-64 characters, lowercase letters or digits, hyphens only
    between them (none leading, trailing or doubled)."""
    return (0 < len(name) <= 64 and name == name.lower() and all(c.isalnum() or c == "-" for c in name)
            and not name.startswith("-") and not name.endswith("-") and "--" not in name)


def _segments_problem(path: str) -> str | None:
    """Why a ``/``-separated path (percent-decoded first: ``%2e%2e`` is ``..``) is not a plain path
    inside its directory: ``"an empty segment"``, ``"a '.' or '..' segment"``, or ``None``."""
    segments = unquote(path).split("/")
    if any(s in (".", "..") for s in segments):
        return "a '.' or '..' segment"
    if "" in segments:
        return "an empty segment"
    return None


def _unsafe_characters(text: str, *, allow_space: bool) -> bool:
    """Whether ``text`` holds control or format characters, or whitespace (a plain space too unless
    ``allow_space``): in a skill's id or a file path they could forge lines of what the model reads."""
    return any(unicodedata.category(c).startswith("C") or (c.isspace() and not (allow_space and c == " "))
               for c in text)


@functools.cache
def _core_loader() -> type:
    """A safe YAML loader resolving plain scalars by YAML 1.2's core schema (null, true/false,
    decimal, ``0o`` octal and ``0x`` hex integers, floats; no timestamps, no ``yes``/``on``, no
    ``_`` or base-60 numbers)."""
    import yaml

    class CoreLoader(yaml.SafeLoader):
        yaml_implicit_resolvers: ClassVar[dict[Any, Any]] = {}

    def construct_int(loader: Any, node: Any) -> int:
        value = loader.construct_scalar(node)
        if value.startswith(("0o", "0x")):
            return int(value[2:], 8 if value[1] == "o" else 16)
        return int(value, 10)

    CoreLoader.add_constructor("tag:yaml.org,2002:int", construct_int)
    resolvers = [
        ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
        ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
        ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
        ("tag:yaml.org,2002:float", (r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
                                     r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"), list("-+.0123456789")),
    ]
    for tag, pattern, first in resolvers:
        CoreLoader.add_implicit_resolver(tag, re.compile(pattern), first)
    return CoreLoader


def _as_json(value: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(value, default=str))


def _bytes_of(server: MCP, uri: str, result: dict[str, Any]) -> bytes:
    """The raw bytes of the ``resources/read`` contents item for ``uri`` (text as UTF-8, blob decoded)."""
    contents = result.get("contents")
    items = [i for i in contents if isinstance(i, dict)] if isinstance(contents, list) else []
    item = next((i for i in items if i.get("uri") == uri), items[0] if len(items) == 1 else None)
    if item is None:
        raise MCPError(f"MCP server {server.name!r} answered resources/read of {uri} without its contents",
                       server=server.name)
    if isinstance(item.get("text"), str):
        return item["text"].encode("utf-8")
    if isinstance(item.get("blob"), str):
        try:
            return base64.b64decode(item["blob"], validate=True)
        except ValueError as exc:
            raise MCPError(f"MCP server {server.name!r} sent {uri} as a blob that is not base64",
                           server=server.name) from exc
    raise MCPError(f"MCP server {server.name!r} sent {uri} with neither text nor blob", server=server.name)


def _valid_entry(entry: Any) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("uri"), str) or not entry["uri"]:
        return False
    frontmatter = entry.get("frontmatter")
    return (isinstance(frontmatter, dict) and isinstance(frontmatter.get("name"), str)
            and isinstance(frontmatter.get("description"), str))


class Skills:
    """A server's skills: ``skills/list`` (all pages) read once and kept, ``skills/get`` on demand.
    Used through [`MCP.skills`][llm_mcp.MCP.skills] and [`MCP.skill`][llm_mcp.MCP.skill]."""

    def __init__(self, server: MCP):
        self.server = server
        self._listed: list[Skill] | None = None
        self._lock = threading.Lock()

    def _require(self) -> bool:
        """Whether the server declares the extension; raises `ConfigurationError` when we do not."""
        declared = declared_extensions(self.server.settings.option("extensions"))
        if SKILLS_EXTENSION not in declared:
            raise ConfigurationError(f"MCP server {self.server.name!r}: skills need the \"skills\" extension "
                                     "declared (extensions = \"skills\")")
        return SKILLS_EXTENSION in (self.server.capabilities.get("extensions") or {})

    def listed(self, refresh: bool = False) -> list[Skill]:
        with self._lock:
            if self._listed is None or refresh:
                skills: list[Skill] = []
                if self._require():
                    seen: set[str] = set()
                    for entry in self.server.client.list("skills/list", "skills"):
                        if not _valid_entry(entry) or entry["uri"] in seen:
                            log.warning("MCP server %s listed a skill entry without a uri, a name and a description, "
                                        "or twice; skipped", self.server.name)
                            continue
                        seen.add(entry["uri"])
                        skills.append(Skill(self.server, entry))
                self._listed = skills
            return list(self._listed)

    def get(self, uri: str) -> Skill:
        if not isinstance(uri, str) or not uri:
            raise ValueError("skill() needs the URI of a SKILL.md")
        if not self._require():
            raise MCPError(f"MCP server {self.server.name!r} does not declare the skills extension; "
                           "skills/get was not sent", server=self.server.name)
        result = self.server.request_answering("skills/get", {"uri": uri})
        entry = result.get("skill")
        if not _valid_entry(entry):
            raise MCPError(f"MCP server {self.server.name!r} answered skills/get of {uri} without a valid skill",
                           server=self.server.name)
        if entry["uri"] != uri:
            raise MCPError(f"MCP server {self.server.name!r} answered skills/get of {uri} with the entry of "
                           f"{entry['uri']}; refused", server=self.server.name)
        return Skill(self.server, entry)
