"""Skills offered to a chat's model by progressive disclosure (``io.modelcontextprotocol/skills``).

For the servers of ``with_mcp`` whose ``extensions`` declare ``"skills"`` (and that serve the
extension), the model gets two tools instead of any skill content:

- ``load_skill``: its description is the catalogue (each skill's id, description and server);
  calling it loads one skill (``SKILL.md`` read and verified now) and returns its instructions,
  after a line naming the skill and the server that served it (the spec's "Origin is visible to
  the model"; ``read_skill_file`` answers the same way).
- ``read_skill_file``: reads one file the loaded skill lists, verified.

``read_skill_file`` with a path ending in ``/`` (or ``.``) lists that directory of the skill
(`llm_mcp.Skill.directory`): only files the skill's entry lists are shown.

A verification failure (tampered file, wrong size, frontmatter mismatch, unlisted file) reaches the
model as a tool error; nothing unverified is returned. Reads go only to the server the skill came
from: a skill's text naming another server's files reads nothing there. A skill's
``allowed-tools`` frontmatter grants nothing unless its server's ``skill_allowed_tools`` setting
names it (`llm_mcp.client.skill.grants_allowed_tools`): then, while the skill is loaded in the
conversation, calls of that server's tools it lists skip the ``requires_approval`` pause.
``only``/``exclude`` name skills as ``"skill:<name>"`` (`llm_mcp.client.shaping.skill_shaped`).
Skill ids are ``<server name>/<skill path>`` (``docs/pdf-processing``): keyed by server and URI,
so same-named skills of two servers stay apart.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..client.errors import MCPError, is_refusal
from ..client.extensions import SKILLS_EXTENSION, declared_extensions
from ..client.shaping import skill_shaped
from ..client.skill import grants_allowed_tools
from .text import shortened
from .tools import ChatTool

if TYPE_CHECKING:
    from ..client.server import MCP
    from ..client.skill import Skill
    from .messages import Message
    from .toolbox import ToolLike

__all__ = ["LoadSkill", "OfferedSkills", "ReadSkillFile", "loaded_skill_ids"]

log = logging.getLogger("llm_mcp.chat")


def skill_id(skill: Skill) -> str:
    """``<server name>/<skill path>``: the id the model names a skill by (``docs/pdf-processing``);
    a scheme other than ``skill`` is kept in it (``docs/github:acme/refunds``)."""
    scheme, sep, path = skill.root.partition("://")
    return f"{skill.server.name}/{path if sep and scheme == 'skill' else f'{scheme}:{path}' if sep else skill.root}"


def offered_skills(servers: Iterable[MCP]) -> dict[str, Skill]:
    """``{id: skill}`` of the servers that declare ``"skills"``; a server whose listing fails with
    an outage is left out (logged), a refusal propagates. Skills whose ids would collide (the spec's
    "Names": never silently drop one) are all offered as ``<server name>/<root URI>`` instead."""
    found: dict[str, Skill] = {}
    offered: list[Skill] = []
    for server in servers:
        if SKILLS_EXTENSION not in declared_extensions(server.settings.option("extensions")):
            continue
        try:
            skills = server.skills
        except MCPError as exc:
            if is_refusal(exc):
                raise
            log.warning("MCP server %s could not list its skills (%s); they are left out", server.name,
                        type(exc).__name__)
            continue
        offered.extend(s for s in skills if not s.problem and skill_shaped(server, s.name))
    ids = [skill_id(skill) for skill in offered]
    counts = Counter(ids)
    for id_, skill in zip(ids, offered):
        if counts[id_] > 1:
            log.warning("MCP server %s serves more than one skill with the id %s; each is offered by its URI",
                        skill.server.name, id_)
            id_ = f"{skill.server.name}/{skill.root}"
        found[id_] = skill
    return found


def loaded_skill_ids(calls: Iterable[tuple[str, Any, bool | None]]) -> list[str]:
    """Ids of the skills ``load_skill`` calls loaded, in order, each once. ``calls`` are
    ``(tool name, arguments, is_error)`` of each call, ``is_error`` ``None`` for a call without a
    result yet; a call whose result is an error loaded nothing. Used by chats (from messages) and
    by the chat page (from rows)."""
    found: list[str] = []
    for name, arguments, is_error in calls:
        skill = arguments.get("skill") if isinstance(arguments, dict) else None
        if name == LoadSkill.name and is_error is False and isinstance(skill, str) and skill not in found:
            found.append(skill)
    return found


def _loaded(messages: list[Message]) -> set[str]:
    """Ids of the skills a ``load_skill`` call of this conversation loaded (its result not an error)."""
    results = {m.tool_call_id: bool(m.is_error) for m in messages if m.role == "tool"}
    return set(loaded_skill_ids((call.name, call.arguments, results.get(call.id)) for m in messages
                                if m.role == "assistant" for call in m.tool_calls))


class LoadSkill(ChatTool):
    """Load one skill's instructions (its verified ``SKILL.md`` body); the description lists them all."""

    name = "load_skill"

    def __init__(self, skills: dict[str, Skill]):
        super().__init__()
        self.skills = skills
        lines = [f"- {id_}: {shortened(' '.join(s.description.split()))} (from MCP server {s.server.name!r})"
                 for id_, s in skills.items()]
        self.description = ("Load the instructions of a skill when the task matches its description; then "
                            "follow them. Available skills:\n" + "\n".join(lines))
        self.parameters = {"type": "object", "properties": {"skill": {"type": "string", "enum": list(skills),
                                                                       "description": "The skill's id"}},
                           "required": ["skill"]}

    def execute(self, skill: str = "") -> str:
        if skill not in self.skills:
            raise LookupError(f"there is no skill {skill!r}")
        found = self.skills[skill]
        return f"Skill {skill}, served by MCP server {found.server.name!r}:\n\n{found.instructions}"


class ReadSkillFile(ChatTool):
    """Read one file a loaded skill lists (``path`` relative to the skill, e.g. ``references/FORMS.md``),
    or list one of its directories (a path ending in ``/``, or ``.`` for its root)."""

    name = "read_skill_file"
    description = ("Read a file of a skill you loaded with load_skill, by its path relative to the skill "
                   "(for example references/FORMS.md). A path ending in / (or .) lists that directory of the skill.")

    def __init__(self, skills: dict[str, Skill], loaded: set[str]):
        super().__init__()
        self.skills = skills
        self.loaded = loaded
        self.parameters = {"type": "object", "properties": {
            "skill": {"type": "string", "enum": list(skills), "description": "The skill's id"},
            "path": {"type": "string", "description": "The file's path relative to the skill; a directory's ends in /"}},
            "required": ["skill", "path"]}

    def execute(self, skill: str = "", path: str = "") -> str:
        if skill not in self.skills:
            raise LookupError(f"there is no skill {skill!r}")
        if skill not in self.loaded:
            raise LookupError(f"load the skill {skill!r} with load_skill first")
        found = self.skills[skill]
        served = f"of skill {skill}, served by MCP server {found.server.name!r}:\n\n"
        if isinstance(path, str) and (path.strip() in ("", ".") or path.endswith("/")):
            listing = [e.path + ("/" if e.directory else "") for e in found.directory(path)]
            return f"Directory {path.strip() or '.'} {served}" + ("\n".join(listing) or "(empty)")
        return f"File {path} {served}{found.read(path)}"


class OfferedSkills:
    """The skills one model request offers, and what the loaded ones grant.

    Args:
        servers: the chat's reachable servers; those declaring ``"skills"`` are listed.
        history: returns the conversation, read only when some skill is offered (to find the
            skills loaded so far).

    Attributes:
        skills: ``{id: Skill}`` offered (shaped by ``only``/``exclude``, entries with a problem left out).
        loaded: ids of the skills a ``load_skill`` call of the conversation loaded.
        tools: ``[LoadSkill, ReadSkillFile]``, or ``[]`` when no skill is offered.
    """

    def __init__(self, servers: Iterable[MCP], history: Callable[[], list[Message]]):
        self.skills = offered_skills(servers)
        self.loaded = _loaded(history()) if self.skills else set()
        self.tools: list[ChatTool] = [LoadSkill(self.skills), ReadSkillFile(self.skills, self.loaded)] \
            if self.skills else []

    def preapproves(self, tool: ToolLike) -> bool:
        """Whether a loaded skill pre-approves ``tool``: the skill is of the tool's own server, that
        server's ``skill_allowed_tools`` grants it, its ``allowed-tools`` names the tool (its name on
        the server), and its ``SKILL.md`` verifies against the entry (read now if this process has not
        yet: a resumed chat). A tool of no server, or of another server, is never pre-approved."""
        server = tool.server
        if server is None:
            return False
        for id_ in self.loaded:
            skill = self.skills.get(id_)
            if skill is None or skill.server is not server or tool.server_name not in skill.allowed_tools \
                    or not grants_allowed_tools(server, skill):
                continue
            try:  # what is honoured is a SKILL.md verified against the entry (again, in a resumed chat)
                skill.instructions  # noqa: B018
            except MCPError as exc:
                log.warning("skill %r of MCP server %s no longer verifies (%s); its allowed-tools grant nothing",
                            skill.name, server.name, type(exc).__name__)
                continue
            log.info("tool %s of MCP server %s runs without approval: skill %r's allowed-tools, granted by "
                     "skill_allowed_tools", tool.server_name, server.name, skill.name)
            return True
        return False
