"""Skills offered to a chat's model by progressive disclosure (``io.modelcontextprotocol/skills``).

For the servers of ``with_mcp`` whose ``extensions`` declare ``"skills"`` (and that serve the
extension), the model gets two tools instead of any skill content:

- ``load_skill``: its description is the catalogue (each skill's id, description and server);
  calling it loads one skill (``SKILL.md`` read and verified now) and returns its instructions.
- ``read_skill_file``: reads one file the loaded skill lists, verified.

A verification failure (tampered file, wrong size, frontmatter mismatch, unlisted file) reaches the
model as a tool error; nothing unverified is returned. A skill's ``allowed-tools`` frontmatter is
not acted on: it grants nothing. ``only``/``exclude`` name skills as ``"skill:<name>"``
(`llm_mcp.client.shaping.skill_shaped`). Skill ids are ``<server name>/<skill path>`` (``docs/pdf-processing``):
keyed by server and URI, so same-named skills of two servers stay apart.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from ..client.errors import MCPError, is_refusal
from ..client.extensions import SKILLS_EXTENSION, declared_extensions
from ..client.shaping import skill_shaped
from .tools import ChatTool, _short

if TYPE_CHECKING:
    from ..client.server import MCP
    from ..client.skill import Skill
    from .messages import Message

__all__ = ["LoadSkill", "ReadSkillFile", "skill_tools"]

log = logging.getLogger("llm_mcp.chat")


def skill_id(skill: Skill) -> str:
    """``<server name>/<skill path>``: the id the model names a skill by."""
    return f"{skill.server.name}/{skill.root.split('://', 1)[-1]}"


def offered_skills(servers: Iterable[MCP]) -> dict[str, Skill]:
    """``{id: skill}`` of the servers that declare ``"skills"``; a server whose listing fails with
    an outage is left out (logged), a refusal propagates."""
    found: dict[str, Skill] = {}
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
        for skill in skills:
            if not skill.problem and skill_shaped(server, skill.name):
                found[skill_id(skill)] = skill
    return found


def _loaded(messages: list[Message]) -> set[str]:
    """Ids of the skills a ``load_skill`` call of this conversation loaded (its result not an error)."""
    calls = {call.id: call.arguments.get("skill") for m in messages if m.role == "assistant"
             for call in m.tool_calls if call.name == LoadSkill.name}
    return {calls[m.tool_call_id] for m in messages
            if m.role == "tool" and m.tool_call_id in calls and not m.is_error}


class LoadSkill(ChatTool):
    """Load one skill's instructions (its verified ``SKILL.md`` body); the description lists them all."""

    name = "load_skill"

    def __init__(self, skills: dict[str, Skill]):
        super().__init__()
        self.skills = skills
        lines = [f"- {id_}: {_short(' '.join(s.description.split()))} (from MCP server {s.server.name!r})"
                 for id_, s in skills.items()]
        self.description = ("Load the instructions of a skill when the task matches its description; then "
                            "follow them. Available skills:\n" + "\n".join(lines))
        self.parameters = {"type": "object", "properties": {"skill": {"type": "string", "enum": list(skills),
                                                                       "description": "The skill's id"}},
                           "required": ["skill"]}

    def execute(self, skill: str = "") -> str:
        if skill not in self.skills:
            raise LookupError(f"there is no skill {skill!r}")
        return self.skills[skill].instructions


class ReadSkillFile(ChatTool):
    """Read one file a loaded skill lists (``path`` relative to the skill, e.g. ``references/FORMS.md``)."""

    name = "read_skill_file"
    description = ("Read a file of a skill you loaded with load_skill, by its path relative to the skill "
                   "(for example references/FORMS.md).")

    def __init__(self, skills: dict[str, Skill], loaded: set[str]):
        super().__init__()
        self.skills = skills
        self.loaded = loaded
        self.parameters = {"type": "object", "properties": {
            "skill": {"type": "string", "enum": list(skills), "description": "The skill's id"},
            "path": {"type": "string", "description": "The file's path relative to the skill"}},
            "required": ["skill", "path"]}

    def execute(self, skill: str = "", path: str = "") -> str:
        if skill not in self.skills:
            raise LookupError(f"there is no skill {skill!r}")
        if skill not in self.loaded:
            raise LookupError(f"load the skill {skill!r} with load_skill first")
        return self.skills[skill].read(path)


def skill_tools(servers: Iterable[MCP], history: Callable[[], list[Message]]) -> list[ChatTool]:
    """The two skill tools for ``servers``, or ``[]`` when none offers a skill (``history`` returns
    the conversation, read only then, to find the skills loaded so far)."""
    skills = offered_skills(servers)
    if not skills:
        return []
    return [LoadSkill(skills), ReadSkillFile(skills, _loaded(history()))]
