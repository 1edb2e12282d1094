"""``manage.py startmcp``: write a module that describes one MCP server as a class.

    python manage.py startmcp Linear https://mcp.linear.app/mcp
    python manage.py startmcp Files --command "npx -y @modelcontextprotocol/server-filesystem ."

The first writes ``<app>/mcp/linear.py`` holding ``class LinearMcp(llm_mcp.MCP)`` with
``url`` set; the second writes ``<app>/mcp/files.py`` holding ``FilesMcp`` with
``command`` set (an argv list, split the way a POSIX shell splits it).

Naming: NAME is split into words at spaces, hyphens, underscores and dots; each word
gets an upper-case first letter (the rest is kept) and the words are joined, then
``Mcp`` (or ``MCP`` with ``--acronym`` or ``LLM_MCP["GENERATOR_ACRONYM"] = True``) is
appended. The file is named after the class without its suffix, in snake_case, the
same rule a class-defined server uses for its default name: ``linear`` -> ``LinearMcp``
in ``linear.py``; ``github issues`` -> ``GithubIssuesMcp`` in ``github_issues.py``;
``GitHub`` -> ``GitHubMcp`` in ``git_hub.py``. A trailing word ``mcp`` in NAME is dropped
so ``LinearMcp`` does not become ``LinearMcpMcp``. See ``docs/how-to/generator.md``.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from django.apps import AppConfig, apps
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from llm_mcp import conf
from llm_mcp.client.declared import snake_case
from llm_mcp.client.server import check_url
from llm_mcp.management.targets import split_command

NAME_CHARACTERS = re.compile(r"^[A-Za-z][A-Za-z0-9 _.\-]*$")
WORD_SEPARATORS = re.compile(r"[ _.\-]+")
PACKAGE_DIR = "mcp"
LINE_WIDTH = 100
THIRD_PARTY_DIRS = {"site-packages", "dist-packages"}


def acronym_setting() -> bool:
    """``settings.LLM_MCP["GENERATOR_ACRONYM"]``: whether generated classes end in ``MCP``."""
    return bool(conf.get("GENERATOR_ACRONYM"))


@dataclass(frozen=True)
class Naming:
    """The names derived from the command's NAME argument."""

    title: str  # the words, for prose: "GitHub Issues"
    class_name: str  # "GitHubIssuesMcp"
    stem: str  # module name: "git_hub_issues"


def naming(name: str, *, acronym: bool) -> Naming:
    """Class and module names for NAME; CommandError when NAME cannot give valid ones."""
    text = name.strip()
    if not NAME_CHARACTERS.match(text):
        raise CommandError(
            f"Server name {name!r} must start with an ASCII letter and use only ASCII letters, digits, "
            "spaces, hyphens, underscores and dots (e.g. Linear or 'GitHub Issues')."
        )
    words = without_suffix([word for word in WORD_SEPARATORS.split(text) if word])
    words = [word[0].upper() + word[1:] for word in words]
    base = "".join(words)
    stem = snake_case(base)
    if keyword.iskeyword(stem) or not stem.isidentifier():
        raise CommandError(f"Server name {name!r} gives the module name {stem!r}, which Python cannot import; "
                           "choose another name.")
    class_name = base + ("MCP" if acronym else "Mcp")
    return Naming(title=" ".join(words), class_name=class_name, stem=stem)


def without_suffix(words: list[str]) -> list[str]:
    """``words`` without a trailing ``mcp`` word or ``Mcp``/``MCP`` ending (``LinearMcp`` -> ``Linear``)."""
    if len(words) > 1 and words[-1].lower() == "mcp":
        return words[:-1]
    last = words[-1]
    if len(last) > 3 and last[-3:] in ("Mcp", "MCP"):
        return [*words[:-1], last[:-3]]
    return words


def validated_url(url: str, *, allow_http: bool) -> str:
    """URL if it is an absolute http(s) URL with a host; CommandError naming the problem otherwise."""
    if any(char.isspace() or ord(char) < 32 or ord(char) == 127 for char in url):
        raise CommandError(f"URL {url!r} contains whitespace or control characters.")
    try:
        return check_url(url, allow_http=allow_http)
    except ValueError as error:
        hint = " (or pass --allow-http)" if "allow_http" in str(error) else ""
        raise CommandError(f"Invalid URL {url!r}: {error}{hint}.") from None


def is_foreign(config: AppConfig) -> bool:
    """Whether an app belongs to Django, to llm_mcp, or to an installed distribution (not to the project)."""
    if config.name.startswith("django.") or config.name == "llm_mcp" or config.name.startswith("llm_mcp."):
        return True
    return bool(THIRD_PARTY_DIRS.intersection(Path(config.path).resolve().parts))


def is_project_app(config: AppConfig, roots: list[Path]) -> bool:
    """Whether an installed app is one of the project's own: not foreign and under one of ``roots``."""
    path = Path(config.path).resolve()
    return not is_foreign(config) and any(path.is_relative_to(root) for root in roots)


def project_roots() -> list[Path]:
    """Directories whose apps count as the project's: ``settings.BASE_DIR`` (if set) and the current one."""
    roots = [Path.cwd().resolve()]
    base_dir = getattr(settings, "BASE_DIR", None)
    if base_dir:
        roots.insert(0, Path(base_dir).resolve())
    return roots


def choose_app(label: str | None) -> AppConfig:
    """The app given by ``--app`` (label or dotted name), else the project's only app."""
    configs = list(apps.get_app_configs())
    roots = project_roots()
    own = [config for config in configs if is_project_app(config, roots)]
    if label:
        for config in configs:
            if label in (config.label, config.name):
                if is_foreign(config):
                    raise CommandError(f"App {label!r} is not part of this project ({config.path}); "
                                       "pass --app with one of your own apps.")
                return config
        known = ", ".join(config.label for config in configs if not is_foreign(config)) or "(none of your own)"
        raise CommandError(f"No installed app is labelled {label!r}. Apps you can use: {known}.")
    if len(own) == 1:
        return own[0]
    if not own:
        raise CommandError("Found no app of this project in INSTALLED_APPS to hold the mcp/ package; "
                           "pass --app LABEL with an installed app's label.")
    raise CommandError("This project has several apps; pass --app with one of: "
                       + ", ".join(config.label for config in own) + ".")


def literal(value: str) -> str:
    """A Python string literal for ``value`` (``repr``, in double quotes when that needs no escaping)."""
    text = repr(value)
    if text.startswith("'") and '"' not in value:
        text = '"' + text[1:-1] + '"'
    return text


def literal_list(values: list[str], indent: str) -> str:
    """A Python list literal of ``values``, on one line if it fits."""
    items = [literal(value) for value in values]
    flat = "[" + ", ".join(items) + "]"
    if len(indent) + len("command = ") + len(flat) <= LINE_WIDTH:
        return flat
    inner = "".join(f"{indent}    {item},\n" for item in items)
    return "[\n" + inner + indent + "]"


def env_var(stem: str, suffix: str) -> str:
    """An environment variable name for the hints: ``linear`` -> ``LINEAR_TOKEN``."""
    return f"{stem.upper()}_{suffix}"


def render(names: Naming, module: str, *, url: str | None, argv: list[str] | None,
           allow_http: bool = False) -> str:
    """The source of the generated module."""
    cls = names.class_name
    kind = "Streamable HTTP" if url else "stdio (a process this app starts)"
    lines = [
        f'"""The {names.title} MCP server, generated by ``manage.py startmcp``.',
        "",
        f"    from {module} import {cls}",
        "",
        f"    {cls}().tools                     # the tools it offers",
        f'    {cls}().call("tool_name", ...)    # call one',
        f"    chat.with_mcp({cls})              # let a chat's model use them",
        "",
        "Every setting a server class takes is described in the django-llm-mcp docs (servers.md).",
        '"""',
        "",
        "import llm_mcp",
        "",
        "",
        f"class {cls}(llm_mcp.MCP):",
        f'    """{names.title}, reached over {kind}."""',
        "",
        f"    name = {literal(names.stem)}  # how chats (chat.mcp.{names.stem}), logs and signals refer to it",
    ]
    if url:
        lines.append(f"    url = {literal(url)}")
        if allow_http:
            lines.append("    allow_http = True  # plain http to a host that is not loopback")
        lines += http_hints(names)
    else:
        lines.append(f"    command = {literal_list(argv or [], '    ')}")
        lines += stdio_hints(names.stem)
    return "\n".join(lines) + "\n"


def http_hints(names: Naming) -> list[str]:
    """Commented-out credential settings for an HTTP server."""
    token = env_var(names.stem, "TOKEN")
    return [
        "",
        "    # Credentials, evaluated for every request (uncomment what the server needs):",
        f'    # bearer_token = lambda self: os.environ["{token}"]  # needs `import os`',
        '    # headers = {"X-Api-Key": lambda self: self.user.profile.api_key}',
        f'    # inputs = ["user"]   # then {names.class_name}(user=request.user) sets self.user',
    ]


def stdio_hints(stem: str) -> list[str]:
    """Commented-out environment settings for a stdio server."""
    key = env_var(stem, "API_KEY")
    return [
        "",
        "    # The process gets only a small allow-listed environment; pass anything else with env",
        "    # (values may be callables, evaluated each time the process starts):",
        f'    # env = {{"{key}": lambda self: os.environ["{key}"]}}  # needs `import os`',
        '    # directory = "/srv/data"   # working directory of the process',
    ]


def ensure_package(directory: Path) -> list[Path]:
    """Create the ``mcp`` package directory and its ``__init__.py`` when missing; return what was created."""
    module_file = directory.with_suffix(".py")
    if module_file.exists():
        raise CommandError(f"{module_file} exists; it would clash with the package {directory}/. "
                           "Move it into the package or pass another --app.")
    if directory.exists() and not directory.is_dir():
        raise CommandError(f"{directory} exists and is not a directory.")
    created: list[Path] = []
    if not directory.exists():
        directory.mkdir(parents=True)
        created.append(directory)
    init = directory / "__init__.py"
    if not init.exists():
        init.write_text('"""MCP servers this app connects to, one class per module (see manage.py startmcp)."""\n')
        created.append(init)
    return created


class Command(BaseCommand):
    help = (
        "Write <app>/mcp/<name>.py with an llm_mcp.MCP subclass named <Name>Mcp: a Streamable HTTP server "
        "when URL is given, a stdio server with --command. Refuses to overwrite unless --force."
    )
    requires_system_checks: ClassVar[list[str]] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", metavar="NAME", help="Name of the service, e.g. Linear or 'GitHub Issues'.")
        parser.add_argument("url", nargs="?", metavar="URL", help="Streamable HTTP endpoint of the server.")
        parser.add_argument("--command", dest="server_command", metavar="COMMAND",
                            help='Command line that starts a stdio server, e.g. "npx -y @scope/server", '
                                 "instead of URL.")
        parser.add_argument("--app", metavar="APP_LABEL",
                            help="Installed app that gets the mcp/ package (default: the project's only app).")
        parser.add_argument("--acronym", action="store_const", const=True, default=None,
                            help='Name the class <Name>MCP instead of <Name>Mcp '
                                 '(default: LLM_MCP["GENERATOR_ACRONYM"]).')
        parser.add_argument("--no-acronym", dest="acronym", action="store_const", const=False,
                            help="Name the class <Name>Mcp even when the setting asks for MCP.")
        parser.add_argument("--allow-http", action="store_true",
                            help="Accept plain http:// to a host that is not loopback; writes allow_http = True.")
        parser.add_argument("--force", action="store_true", help="Overwrite the module if it exists.")

    def handle(self, *args: Any, **options: Any) -> None:
        url, argv = self.source(options)
        acronym = acronym_setting() if options["acronym"] is None else options["acronym"]
        names = naming(options["name"], acronym=acronym)
        config = choose_app(options["app"])
        package = Path(config.path) / PACKAGE_DIR
        target = package / f"{names.stem}.py"
        if target.exists() and not options["force"]:
            raise CommandError(f"{target} already exists; pass --force to overwrite it.")
        for path in ensure_package(package):
            self.stdout.write(f"Created {path}")
        module = f"{config.name}.{PACKAGE_DIR}.{names.stem}"
        target.write_text(render(names, module, url=url, argv=argv, allow_http=options["allow_http"]))
        self.stdout.write(f"Wrote {target} ({module}.{names.class_name})")

    @staticmethod
    def source(options: dict[str, Any]) -> tuple[str | None, list[str] | None]:
        """The URL or the argv the server is reached by; exactly one must be given."""
        url, command_line = options.get("url"), options.get("server_command")
        if url is not None and command_line is not None:
            raise CommandError("Give either URL or --command, not both.")
        if url is None and command_line is None:
            raise CommandError("Give the server's URL, or --command with the command line that starts it.")
        if url is not None:
            return validated_url(url, allow_http=options["allow_http"]), None
        return None, split_command(command_line)
