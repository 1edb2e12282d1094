"""docs/testing.md's complete example, run as written: its server module and its test module."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "testing.md"


def _example_files() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## A complete example", 1)[1].split("\n## ", 1)[0]
    found = re.findall(r"`(myapp/tests/[\w/]+\.py)`:\s*```python\n(.*?)```", section, re.DOTALL)
    return dict(found)


def test_docs_example_runs(tmp_path: Path) -> None:
    """docs/testing.md: the complete example (server and tests) passes as printed."""
    files = _example_files()
    assert sorted(files) == ["myapp/tests/test_weather.py", "myapp/tests/weather_server.py"]
    for relative, source in files.items():
        target = tmp_path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source, encoding="utf-8")
    for package in ("myapp", "myapp/tests"):
        (tmp_path / package / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["llm_mcp.testing.pytest_plugin"]\n', encoding="utf-8")
    # No PATH tricks: the example's stdio test must use sys.executable itself.
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:django", "--rootdir",
         str(tmp_path), "-c", os.devnull, "myapp/tests/test_weather.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180, check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "9 passed" in done.stdout


def test_docs_example_uses_this_interpreter_for_stdio() -> None:
    """Review doc 3: the stdio example runs sys.executable, not whatever "python" is on PATH."""
    source = _example_files()["myapp/tests/test_weather.py"]
    assert '"python"' not in source and "sys.executable" in source


@pytest.mark.parametrize("name", ["Tool", "Server", "running_server", "Resource", "ResourceTemplate", "Prompt",
                                  "InvalidResult", "resource_templates=", "CallChannel", "json_response"])
def test_docs_name_the_public_api(name: str) -> None:
    assert name in DOC.read_text(encoding="utf-8")
