"""The ``startmcp`` management command (MCP-DESC-15): it writes ``<app>/mcp/<name>.py`` with an
``llm_mcp.MCP`` subclass, and the module it writes imports and, for a stdio server, starts.

Each test generates into a throw-away app package in ``tmp_path``, put on ``sys.path`` and added
to ``INSTALLED_APPS`` with pytest-django's ``settings`` fixture (the end-to-end test uses a
temporary settings module instead, since it runs ``manage.py`` in a subprocess).
"""

from __future__ import annotations

import importlib
import os
import shlex
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from django.core.management import CommandError, call_command

import llm_mcp

from llm_mcp_tests.support.processes import ECHO_SERVER

REPO_ROOT = Path(__file__).resolve().parents[2]
LINEAR_URL = "https://mcp.linear.app/mcp"


@dataclass
class TempApp:
    """A Django app package created for one test."""

    label: str
    path: Path

    def module_file(self, stem: str) -> Path:
        """Where ``startmcp`` writes the module for ``stem``."""
        return self.path / "mcp" / f"{stem}.py"


def new_app(root: Path) -> TempApp:
    """Create an empty, uniquely named app package under ``root``."""
    label = f"startmcp_app_{uuid.uuid4().hex[:10]}"
    path = root / label
    path.mkdir()
    (path / "__init__.py").write_text("")
    return TempApp(label=label, path=path)


def forget_modules(prefix: str) -> None:
    """Drop ``prefix`` and its submodules from ``sys.modules``."""
    for name in [name for name in sys.modules if name == prefix or name.startswith(prefix + ".")]:
        del sys.modules[name]


@pytest.fixture
def temp_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: Any) -> Iterator[TempApp]:
    """An installed app in ``tmp_path`` (on ``sys.path``), removed from ``sys.modules`` afterwards."""
    app = new_app(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    settings.INSTALLED_APPS = [*settings.INSTALLED_APPS, app.label]
    yield app
    forget_modules(app.label)


def startmcp(*args: str) -> str:
    """Run ``startmcp`` in-process; return what it printed."""
    out = StringIO()
    call_command("startmcp", *args, stdout=out)
    return out.getvalue()


def load(app: TempApp, stem: str) -> ModuleType:
    """Import the generated module afresh (never a cached copy)."""
    name = f"{app.label}.mcp.{stem}"
    forget_modules(name)
    importlib.invalidate_caches()
    return importlib.import_module(name)


def generated_class(app: TempApp, stem: str, class_name: str) -> type[llm_mcp.MCP]:
    """The class ``class_name`` of the generated module, checked to be an ``llm_mcp.MCP`` subclass."""
    cls = getattr(load(app, stem), class_name)
    assert isinstance(cls, type) and issubclass(cls, llm_mcp.MCP)
    return cls


# --------------------------------------------------------------------------- what gets written


def test_url_writes_an_http_server_class(temp_app: TempApp) -> None:
    """MCP-DESC-15: NAME and URL give <app>/mcp/linear.py with LinearMcp(llm_mcp.MCP) whose url is URL;
    the package's __init__.py is created; the path written is printed."""
    output = startmcp("Linear", LINEAR_URL, "--app", temp_app.label)
    target = temp_app.module_file("linear")
    assert target.is_file() and (temp_app.path / "mcp" / "__init__.py").is_file()
    assert str(target) in output
    cls = generated_class(temp_app, "linear", "LinearMcp")
    assert cls.__name__ == "LinearMcp"
    assert cls.url == LINEAR_URL and cls.command is None
    assert cls.bearer_token is None and cls.headers is None  # hints are comments only
    server = cls()
    assert server.name == "linear"
    source = target.read_text()
    assert "# bearer_token =" in source and "# headers =" in source
    assert "chat.with_mcp(LinearMcp)" in source and "LinearMcp().tools" in source


def test_command_writes_a_stdio_server_class(temp_app: TempApp) -> None:
    """MCP-DESC-15: --command instead of a URL writes a stdio server class whose command is the argv list."""
    startmcp("Files", "--command", "npx -y @modelcontextprotocol/server-filesystem .", "--app", temp_app.label)
    cls = generated_class(temp_app, "files", "FilesMcp")
    assert cls.command == ["npx", "-y", "@modelcontextprotocol/server-filesystem", "."]
    assert cls.url is None and cls.env is None
    source = temp_app.module_file("files").read_text()
    assert "# env =" in source and "command = [" in source


@pytest.mark.parametrize(
    "command_line",
    [
        """npx -y "@scope/server name" --flag='it'"'"'s "quoted"' --path=C:\\\\dir""",
        "node 'a \"b\" c' $HOME \\$literal 'über ✓' ''",
        "python -c 'print(\"\"\"x\"\"\")' " + " ".join(f"--option-{i}=value-{i}" for i in range(12)),
    ],
)
def test_command_arguments_round_trip_exactly(temp_app: TempApp, command_line: str) -> None:
    """MCP-DESC-15: --command is split like a shell splits it and each argument (quotes, backslashes,
    dollars, non-ASCII, empty, a list too long for one line) comes back unchanged from the class."""
    startmcp("Tricky", "--command", command_line, "--app", temp_app.label)
    cls = generated_class(temp_app, "tricky", "TrickyMcp")
    assert cls.command == shlex.split(command_line)


def test_url_with_quotes_and_backslashes_cannot_break_the_module(temp_app: TempApp) -> None:
    """MCP-DESC-15: the URL is written as a Python literal, so quotes or backslashes in it load back unchanged."""
    url = "https://mcp.example.com/mcp?q=\"x\"&r='y'&s=a\\b#\"\"\""
    startmcp("Quoted", url, "--app", temp_app.label)
    assert generated_class(temp_app, "quoted", "QuotedMcp").url == url


def test_plain_http_needs_allow_http_except_on_loopback(temp_app: TempApp) -> None:
    """MCP-DESC-15: plain http to a remote host is refused unless --allow-http, which writes allow_http = True;
    http to localhost is accepted as it is."""
    with pytest.raises(CommandError, match="--allow-http"):
        startmcp("Lan", "http://tools.internal/mcp", "--app", temp_app.label)
    startmcp("Lan", "http://tools.internal/mcp", "--allow-http", "--app", temp_app.label)
    assert generated_class(temp_app, "lan", "LanMcp").allow_http is True
    startmcp("Local", "http://127.0.0.1:8000/mcp", "--app", temp_app.label)
    assert generated_class(temp_app, "local", "LocalMcp").allow_http is False


# --------------------------------------------------------------------------- naming


def test_acronym_flag_gives_the_uppercase_suffix(temp_app: TempApp) -> None:
    """MCP-DESC-15: --acronym gives LinearMCP instead of LinearMcp (same file name)."""
    startmcp("Linear", LINEAR_URL, "--acronym", "--app", temp_app.label)
    cls = generated_class(temp_app, "linear", "LinearMCP")
    assert cls.__name__ == "LinearMCP" and cls.url == LINEAR_URL
    assert not hasattr(load(temp_app, "linear"), "LinearMcp")


def test_acronym_setting_gives_the_uppercase_suffix(temp_app: TempApp, settings: Any) -> None:
    """MCP-DESC-15: LLM_MCP["GENERATOR_ACRONYM"] = True gives LinearMCP by default; --no-acronym overrides it."""
    settings.LLM_MCP = {"GENERATOR_ACRONYM": True}
    startmcp("Linear", LINEAR_URL, "--app", temp_app.label)
    assert generated_class(temp_app, "linear", "LinearMCP").url == LINEAR_URL
    startmcp("Linear", LINEAR_URL, "--app", temp_app.label, "--no-acronym", "--force")
    assert generated_class(temp_app, "linear", "LinearMcp").url == LINEAR_URL


@pytest.mark.parametrize(
    ("name", "class_name", "stem"),
    [
        ("linear", "LinearMcp", "linear"),
        ("github issues", "GithubIssuesMcp", "github_issues"),
        ("GitHub Issues", "GitHubIssuesMcp", "git_hub_issues"),
        ("linear-app", "LinearAppMcp", "linear_app"),
        ("LinearMcp", "LinearMcp", "linear"),
        ("linear mcp", "LinearMcp", "linear"),
        ("Web3 tools", "Web3ToolsMcp", "web3_tools"),
    ],
)
def test_names_become_camel_case_classes_in_snake_case_files(
    temp_app: TempApp, name: str, class_name: str, stem: str
) -> None:
    """MCP-DESC-15: NAME's words are capitalised and joined with the Mcp suffix (never doubled);
    the file is the snake_case of the class without the suffix."""
    startmcp(name, LINEAR_URL, "--app", temp_app.label)
    assert generated_class(temp_app, stem, class_name).__name__ == class_name


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("9lives", "must start with an ASCII letter"),
        ("café", "ASCII letters"),
        ("linear/../x", "ASCII letters"),
        ("", "must start with an ASCII letter"),
        ("class", "cannot import"),
    ],
)
def test_names_that_cannot_make_a_module_are_refused(temp_app: TempApp, name: str, message: str) -> None:
    """MCP-DESC-15: a NAME that gives no valid class or importable module name is a CommandError; nothing is written."""
    with pytest.raises(CommandError, match=message):
        startmcp(name, LINEAR_URL, "--app", temp_app.label)
    assert not (temp_app.path / "mcp").exists()


# --------------------------------------------------------------------------- refusals


def test_existing_module_is_kept_without_force_and_replaced_with_it(temp_app: TempApp) -> None:
    """MCP-DESC-15: an existing module is not overwritten (the error says --force, the file is unchanged);
    with --force it is rewritten."""
    startmcp("Linear", LINEAR_URL, "--app", temp_app.label)
    target = temp_app.module_file("linear")
    target.write_text("# edited by hand\n")
    with pytest.raises(CommandError, match="--force"):
        startmcp("Linear", "https://other.example/mcp", "--app", temp_app.label)
    assert target.read_text() == "# edited by hand\n"
    startmcp("Linear", "https://other.example/mcp", "--app", temp_app.label, "--force")
    assert generated_class(temp_app, "linear", "LinearMcp").url == "https://other.example/mcp"


def test_existing_package_init_is_left_alone(temp_app: TempApp) -> None:
    """MCP-DESC-15: an app that already has mcp/__init__.py keeps it as it is."""
    (temp_app.path / "mcp").mkdir()
    (temp_app.path / "mcp" / "__init__.py").write_text("MARK = 1\n")
    startmcp("Linear", LINEAR_URL, "--app", temp_app.label)
    assert (temp_app.path / "mcp" / "__init__.py").read_text() == "MARK = 1\n"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://mcp.example.com/mcp", "scheme 'ftp'"),
        ("mcp.linear.app/mcp", "absolute http"),
        ("https://", "no host"),
        ("https:///mcp", "no host"),
        ("https://user:secret@mcp.example.com/mcp", "credentials"),
        ("https://mcp.example.com/a b", "whitespace"),
    ],
)
def test_bad_urls_are_refused_naming_the_problem(temp_app: TempApp, url: str, message: str) -> None:
    """MCP-DESC-15: a URL that is not http(s) with a host is a CommandError saying what is wrong."""
    with pytest.raises(CommandError, match=message):
        startmcp("Linear", url, "--app", temp_app.label)
    assert not temp_app.module_file("linear").exists()


def test_url_and_command_are_exclusive_and_one_is_required(temp_app: TempApp) -> None:
    """MCP-DESC-15: giving both URL and --command, or neither, or an empty or unbalanced --command,
    is a CommandError."""
    with pytest.raises(CommandError, match="not both"):
        startmcp("Linear", LINEAR_URL, "--command", "npx server", "--app", temp_app.label)
    with pytest.raises(CommandError, match="URL, or --command"):
        startmcp("Linear", "--app", temp_app.label)
    with pytest.raises(CommandError, match="empty"):
        startmcp("Linear", "--command", "  ", "--app", temp_app.label)
    with pytest.raises(CommandError, match="No closing quotation"):
        startmcp("Linear", "--command", "npx 'unbalanced", "--app", temp_app.label)
    assert not (temp_app.path / "mcp").exists()


def test_module_beside_the_package_is_a_clash(temp_app: TempApp) -> None:
    """MCP-DESC-15: an app with an mcp.py module cannot also get an mcp/ package; the command says so."""
    (temp_app.path / "mcp.py").write_text("")
    with pytest.raises(CommandError, match="clash"):
        startmcp("Linear", LINEAR_URL, "--app", temp_app.label)


# --------------------------------------------------------------------------- choosing the app


def test_app_defaults_to_the_projects_only_app(
    temp_app: TempApp, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """MCP-DESC-15: without --app, the one installed app under BASE_DIR or the current directory
    (not Django's, not llm_mcp) gets the module."""
    settings.BASE_DIR = temp_app.path.parent
    monkeypatch.chdir(temp_app.path.parent)
    startmcp("Linear", LINEAR_URL)
    assert generated_class(temp_app, "linear", "LinearMcp").url == LINEAR_URL


def test_app_is_required_when_the_project_has_several(
    temp_app: TempApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """MCP-DESC-15: with two candidate apps and no --app, the CommandError lists both; --app may be the label
    or the dotted name."""
    other = new_app(tmp_path)
    settings.INSTALLED_APPS = [*settings.INSTALLED_APPS, other.label]
    settings.BASE_DIR = tmp_path
    monkeypatch.chdir(tmp_path)
    try:
        with pytest.raises(CommandError, match="--app") as info:
            startmcp("Linear", LINEAR_URL)
        assert temp_app.label in str(info.value) and other.label in str(info.value)
        assert not (temp_app.path / "mcp").exists() and not (other.path / "mcp").exists()
    finally:
        forget_modules(other.label)


def test_app_is_required_when_the_project_has_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """MCP-DESC-15: a project whose only apps are Django's and llm_mcp gets a CommandError asking for --app."""
    settings.BASE_DIR = tmp_path  # so no app of the repository's own counts
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CommandError, match="--app"):
        startmcp("Linear", LINEAR_URL)


def test_unknown_app_label_is_refused(temp_app: TempApp) -> None:
    """MCP-DESC-15: --app naming no installed app is a CommandError listing the installed ones."""
    with pytest.raises(CommandError, match="No installed app is labelled 'nope'") as info:
        startmcp("Linear", LINEAR_URL, "--app", "nope")
    assert temp_app.label in str(info.value)


@pytest.mark.parametrize("label", ["auth", "llm_mcp"])
def test_apps_outside_the_project_are_refused(label: str) -> None:
    """MCP-DESC-15: --app naming one of Django's apps or llm_mcp itself is a CommandError; nothing is written
    into an installed package."""
    with pytest.raises(CommandError, match="not part of this project"):
        startmcp("Linear", LINEAR_URL, "--app", label)


# --------------------------------------------------------------------------- end to end


def test_manage_py_writes_a_stdio_server_that_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MCP-DESC-15: `manage.py startmcp Echo --command ...` in a subprocess writes a module whose class,
    imported here, starts the echo test server over stdio and lists its tools."""
    app = new_app(tmp_path)
    settings_module = f"startmcp_settings_{uuid.uuid4().hex[:10]}"
    (tmp_path / f"{settings_module}.py").write_text(
        "from example_project.settings import *  # noqa: F403\n"
        f"INSTALLED_APPS = [*INSTALLED_APPS, {app.label!r}]  # noqa: F405\n"
    )
    command_line = shlex.join([sys.executable, ECHO_SERVER, "--era", "auto"])
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": settings_module,
                   "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO_ROOT)])}
    completed = subprocess.run(
        [sys.executable, "manage.py", "startmcp", "Echo", "--command", command_line, "--app", app.label],
        check=False, cwd=REPO_ROOT, env=environment, capture_output=True, text=True, timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    target = app.module_file("echo")
    assert str(target) in completed.stdout

    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        cls = generated_class(app, "echo", "EchoMcp")
        assert cls.command == [sys.executable, ECHO_SERVER, "--era", "auto"]
        with cls() as server:
            names = {tool.name for tool in server.tools}
        assert {"echo", "add"} <= names
    finally:
        forget_modules(app.label)
