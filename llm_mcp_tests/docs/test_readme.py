"""The README's self-contained examples run as printed."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def _block(section: str) -> str:
    text = README.read_text()
    start = text.index(f"## {section}")
    match = re.search(r"```python\n(.*?)```", text[start:], re.S)
    assert match, f"no python block under {section!r}"
    return match.group(1)


def test_testing_section_example_runs():
    namespace: dict[str, object] = {}
    exec(compile(_block("Testing your MCP integrations"), "README.md", "exec"), namespace)  # noqa: S102
    assert namespace["forecast"] == {"celsius": 21.5}
