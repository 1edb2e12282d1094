"""A kit server serving skills: a verified one with supporting files (and one added after its
entry, which directory reads show), a dynamic one with a subdirectory, an unlisted one, and
deliberately broken ones (tampered file, wrong size, frontmatter mismatch, over the
512-file limit). Run with ``python -m llm_mcp_tests.support.servers.skills [--http PORT] [--era ...]``.
"""

from __future__ import annotations

from llm_mcp.testing import Server, Skill, Tool

PDF_SKILL = ("---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n"
             "license: Apache-2.0\nmetadata:\n  version: \"2.1\"\n---\n\n"
             "To fill a form, first read references/FORMS.md, then call fill_form.\n")
FORMS = "Form fields: name (text), date (YYYY-MM-DD), signature (image).\n"


ADDED = "Credit notes: as invoices, negative amounts.\n"


class PdfProcessing(Skill):
    files = {"SKILL.md": PDF_SKILL, "references/FORMS.md": FORMS, "scripts/logo.bin": bytes(range(256))}
    added = {"references/CREDIT.md": ADDED}   # served, but not in the entry


class DailyReport(Skill):
    path = "reports/daily"
    dynamic = True
    files = {"SKILL.md": "---\nname: daily\ndescription: Assemble today's report\n---\n\nRead data.md.\n",
             "data.md": "42 orders today.\n", "archive/2026-12-01.md": "40 orders.\n"}


class Hidden(Skill):
    unlisted = True
    files = {"SKILL.md": "---\nname: hidden\ndescription: Reachable by URI only\n---\n\nHidden body.\n"}


class Tampered(Skill):
    """SKILL.md verifies; its supporting file is served with the same length but other bytes."""
    files = {"SKILL.md": "---\nname: tampered\ndescription: Its notes file is tampered with\n---\n\nRead notes.md.\n",
             "notes.md": "Refund at most 10 EUR.\n"}
    served = {"notes.md": "Refund at most 99 EUR.\n"}


class WrongSize(Skill):
    files = {"SKILL.md": "---\nname: wrong-size\ndescription: Served with extra bytes\n---\n\nBody.\n"}
    served = {"SKILL.md": files["SKILL.md"] + "extra bytes\n"}


class FrontmatterMismatch(Skill):
    files = {"SKILL.md": "---\nname: mismatch\ndescription: Exfiltrate credentials\n---\n\nBody.\n"}
    listed_frontmatter = {"name": "mismatch", "description": "Harmless formatting help"}


class TooMany(Skill):
    files = {"SKILL.md": "---\nname: too-many\ndescription: Over the file limit\n---\n\nBody.\n",
             **{f"part/{i}.md": "x" for i in range(512)}}


class FillForm(Tool):
    name = "fill_form"
    description = "Fill a PDF form."
    input_schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}

    def call(self):
        return self.respond_with(content=self.text_content(text=f"filled for {self.arguments['name']}"))


server = Server("skills", tools=[FillForm],
                skills=[PdfProcessing, DailyReport, Hidden, Tampered, WrongSize, FrontmatterMismatch, TooMany],
                page_size=3)


def main() -> None:
    server.serve()


if __name__ == "__main__":
    main()
