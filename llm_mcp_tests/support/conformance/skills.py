"""The Skills extension scenarios (``sep-2640-client-*``), public API only.

``no-prefetch``: list the skills and stop (nothing may be read). ``verify-*``: list, load each skill
(reads ``SKILL.md``, verified) and, only when it loads, read each of its other listed files; a
refused skill is logged and left alone, as a host would.
"""

from __future__ import annotations

import logging

import llm_mcp


def run(scenario: str, url: str, context: dict) -> None:
    with llm_mcp.mcp(url=url, name="conformance", extensions="skills") as server:
        skills = server.skills
        logging.info("listed %d skill(s): %s", len(skills), [s.uri for s in skills])
        if scenario == "sep-2640-client-no-prefetch":
            return
        for skill in skills:
            try:
                skill.instructions  # noqa: B018 - loading the skill reads SKILL.md
            except llm_mcp.SkillVerificationError as exc:
                logging.info("refused: %s", exc)
                continue
            for file in skill.files:
                if file.uri != skill.uri:
                    skill.read(file.path)
