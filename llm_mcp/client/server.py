"""Describing a server: the :class:`MCP` base class, :func:`mcp` for inline servers, :class:`Servers`.

A server is described by class attributes, the way a Django ``ModelAdmin`` is. Values
that depend on the user or change over time may be a callable (called with the server
instance) or the name of a method defined on the subclass; they are evaluated when
they are needed: per request for ``bearer_token`` and ``headers``, per process start for
``command`` and ``env``.
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
import re
import threading
from typing import Any, Callable, Iterator
from urllib.parse import urlsplit

from .asking import QUESTION_SETTINGS, AskingServer
from .authorizing import AuthorizingServer
from .declared import evaluate, input_names, names_method, snake_case
from .errors import MCPError
from .hosts import is_loopback
from .logs import check_log_level
from .param_headers import HEADER_TOKEN, param_headers
from .progress import Progress, ProgressFilter, tool_listener
from .prompt import Prompt, check_arguments
from .resource import Resource, ResourceTemplate, expand_template
from .result import Result
from .session import Client
from .shaping import SHAPING, _call_with, check_shaping, model_tools, shape
from .tool import Tool
from .transports.base import Transport

__all__ = ["MCP", "Servers", "check_url", "mcp"]

log = logging.getLogger("llm_mcp.client")

DEFAULT_TIMEOUT = 60.0
"""Seconds a request may take when a server sets no ``timeout``."""

SETTINGS = ("url", "allow_http", "command", "directory", "env", "transport", "name", "timeout", "bearer_token",
            "headers", "inputs", "after_progress", "log_level", "oauth", *SHAPING, *QUESTION_SETTINGS)


def check_url(url: str, *, allow_http: bool = False) -> str:
    """Validate a server URL and return it.

    Raises ``ValueError`` (naming the option to use) for a scheme other than ``https`` or
    ``http``, for credentials in the URL (use ``bearer_token`` or ``headers``), and for
    plain ``http`` to a host other than ``localhost`` or a loopback address unless
    ``allow_http=True``.
    """
    if not isinstance(url, str):
        raise ValueError(f"url must be a string, not {type(url).__name__}")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"url must be an absolute http(s) URL, got scheme {parts.scheme!r}")
    if not parts.hostname:
        raise ValueError("url has no host")
    if parts.username is not None or parts.password is not None:
        raise ValueError("url must not carry credentials; send them with bearer_token or headers")
    if parts.scheme == "http" and not allow_http and not is_loopback(parts.hostname):
        raise ValueError(f"plain http to {parts.hostname!r} is not encrypted; use https, or set allow_http=True "
                         "for a private network you trust")
    return url


_FIELD_VALUE = re.compile(r"^[\t\x20-\x7e]*$")


def _header_name(name: Any, setting: str) -> str:
    if not isinstance(name, str) or not HEADER_TOKEN.match(name):
        raise ValueError(f"{setting}: {name!r} is not a valid HTTP header name")
    return name


def _header_text(value: Any, setting: str) -> str:
    text = str(value)
    if not _FIELD_VALUE.match(text):
        raise ValueError(f"{setting} has characters an HTTP header cannot carry (line breaks or non-ASCII)")
    return text


class MCP(AuthorizingServer, AskingServer):
    """An MCP server your app connects to.

        class Linear(llm_mcp.MCP):
            url = "https://mcp.linear.app/mcp"
            bearer_token = lambda self: self.user.linear_token

    Attributes (class settings; see ``docs/servers.md``):
        url: Streamable HTTP endpoint (https; http only for loopback unless ``allow_http``).
        allow_http: allow plain http to a non-loopback host (a network you trust).
        command: argv list of a stdio server (run without a shell).
        directory: working directory of the stdio process.
        env: extra environment for the stdio process (values may be callables).
        transport: a callable or method name returning a custom transport object.
        name: the server's name (default: the class name in snake_case, or the URL's host
            or the command's executable for inline servers).
        timeout: seconds a request may take (default 60).
        bearer_token: sent as ``Authorization: Bearer ...`` on every HTTP request.
        headers: extra HTTP headers; values (or the whole dict) may be callables.
        inputs: names of the keyword arguments the constructor takes (``["user"]``).
        after_progress: a callable or method name run on the server with an
            :class:`~llm_mcp.Progress` for each progress report of a tool call (see ``docs/progress.md``);
            while it is set, every tool call asks the server for progress.
        log_level: ``"debug"``, ``"info"``, ``"notice"``, ``"warning"``, ``"error"``,
            ``"critical"``, ``"alert"`` or ``"emergency"``: the server's log messages at that
            level and above are asked for and written under the logger ``llm_mcp.server.<name>``
            (``None``, the default: none).
        oauth: OAuth for this server (see ``docs/authorization.md``): a dict with ``owner`` (an
            input's name, or an object), ``client_id``, ``client_secret``, ``private_key``,
            ``scopes``, ``authorization_params``, ``grant``, ``assertion``,
            ``identity_provider``, ``redirect_uri``; values may be callables or method names.

    Shaping what chats offer the model (see ``docs/shaping.md``):
        prefix: put ``<prefix>_`` before every tool's model-facing name.
        only: offer only these tools (server-side names).
        exclude: offer every tool but these.
        tool_options: per tool: ``{"as": new name, "description": ..., "fixed_arguments":
            {...}, "wrap": method name or callable}``.
        extra_tools: your own tool classes (built with this server when ``__init__`` takes it).
        requires_approval: ``True``, a list of names, a tool property (``"destructive"``), or a
            callable (or method name) receiving the ``Tool``.
        defer: ``True`` or a list of names: found by the model through tool search.
        rescue_from: ``{exception class: handler}``; the handler's return value becomes the result.

    Questions from the server (see ``docs/questions.md``):
        before_input_request: a method name or callable run with each :class:`~llm_mcp.Question`
            before it reaches a chat; it may ``answer()`` or ``decline()`` it.
        input_requests: the kinds of question accepted: ``True`` (form and URL, the default),
            ``"form"``, ``"url"``, or ``False`` (none).
    """

    url: Any = None
    allow_http: bool = False
    command: Any = None
    directory: Any = None
    env: Any = None
    transport: Any = None
    name: Any = None
    timeout: float | None = None
    bearer_token: Any = None
    headers: Any = None
    inputs: Any = ()
    after_progress: Any = None
    log_level: str | None = None
    oauth: Any = None
    prefix: str | None = None
    only: Any = None
    exclude: Any = None
    tool_options: Any = None
    extra_tools: Any = ()
    requires_approval: Any = False
    defer: Any = False
    rescue_from: Any = None
    before_input_request: Any = None
    input_requests: Any = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        url = cls.__dict__.get("url")
        if isinstance(url, str) and not cls._names_method(url):
            check_url(url, allow_http=bool(cls.allow_http))
        check_log_level(cls.__dict__.get("log_level"), f"{cls.__name__}.log_level")
        for name in input_names(cls.inputs):
            if not name.isidentifier() or name.startswith("_") or hasattr(MCP, name):
                raise ValueError(f"{cls.__name__}.inputs: {name!r} cannot be an input name (it must be an "
                                 "identifier that is not an attribute of llm_mcp.MCP)")

    def __init__(self, **inputs: Any):
        declared = input_names(self.inputs)
        for key in inputs:
            if key not in declared:
                raise TypeError(f"{type(self).__name__} takes the inputs {declared}, not {key!r}")
        for key in declared:
            setattr(self, key, inputs.get(key))
        self._options: dict[str, Any] = getattr(self, "_options", {})
        self._client: Client | None = None
        self._tools: list[Tool] | None = None
        self._tool_index: dict[str, Tool] | None = None
        self._resources: list[Resource] | None = None
        self._resource_templates: list[ResourceTemplate] | None = None
        self._prompts: list[Prompt] | None = None
        self._lock = threading.RLock()
        self._oauth = None
        self._check_settings()
        self.name = self._default_name()

    def _check_settings(self) -> None:
        """Refuse settings that cannot work, naming the setting (``ValueError``)."""
        where = type(self).__name__ if type(self) is not _Inline else "llm_mcp.mcp()"
        given = [key for key in ("url", "command", "transport") if self._option(key) is not None]
        if len(given) != 1:
            raise ValueError(f"{where} needs exactly one of url, command or transport (got {given or 'none'})")
        url = self._option("url")
        if isinstance(url, str) and not self._names_method(url):
            check_url(url, allow_http=bool(self._option("allow_http")))
        command = self._option("command")
        if isinstance(command, (list, tuple)) and (not command or not all(isinstance(c, str) for c in command)):
            raise ValueError(f"{where}: command must be a non-empty list of strings (argv)")
        if isinstance(command, str) and not self._names_method(command) and not command.split():
            raise ValueError(f"{where}: command is empty")
        timeout = self._option("timeout")
        if timeout is not None and not callable(timeout) and (
                isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0):
            raise ValueError(f"{where}: timeout must be a positive number of seconds, not {timeout!r}")
        check_log_level(self._option("log_level"), f"{where}.log_level" if where != "llm_mcp.mcp()" else
                        "llm_mcp.mcp() log_level")
        after = self._option("after_progress")
        if after is not None and not callable(after) and not self._names_method(after):
            raise ValueError(f"{where}: after_progress must be a callable or the name of a method of the class, "
                             f"not {after!r}")
        for key in ("headers", "env"):
            value = self._option(key)
            if value is not None and not callable(value) and not self._names_method(value) \
                    and not isinstance(value, dict):
                raise ValueError(f"{where}: {key} must be a dict (or a callable returning one)")
        check_shaping(self, where)
        self._check_oauth_settings(where, inline=type(self) is _Inline)
        self._check_question_settings(where)

    # -- settings -----------------------------------------------------------------------------

    @classmethod
    def _names_method(cls, value: Any) -> bool:
        """Whether a string names a method defined on a subclass (not on MCP itself)."""
        return names_method(cls, value, MCP)

    def _option(self, key: str) -> Any:
        if key in self._options:
            return self._options[key]
        cls = type(self)
        declared = cls.__dict__.get("_declared")
        if declared is None:  # each class reads its settings once, unbound (functions stay functions)
            declared = {name: inspect.getattr_static(cls, name) for name in SETTINGS}
            cls._declared = declared
        return declared[key]

    def resolve(self, value: Any) -> Any:
        """Evaluate a setting: call a callable (with this instance when it takes an argument),
        call the method a string names, or return a literal as it is."""
        return evaluate(self, value, MCP)

    def setting(self, key: str) -> Any:
        """The current value of a setting, evaluated (see :meth:`resolve`).

        An ``AttributeError`` raised by your callable or method (say ``self.user.profile``
        for a user without one) comes out as a ``RuntimeError`` naming the setting, chained
        to the original: left as it is, Python would take it for a missing attribute.
        """
        return self._evaluate(key, self._option(key))

    def _evaluate(self, key: str, value: Any) -> Any:
        try:
            return self.resolve(value)
        except AttributeError as exc:
            raise RuntimeError(f"{type(self).__name__}: evaluating {key} raised AttributeError: {exc}") from exc

    def _default_name(self) -> str:
        name = self.setting("name") if self._option("name") is not None else None
        if name:
            return str(name)
        if type(self) is not _Inline:
            return snake_case(type(self).__name__)
        url = self._option("url")
        if isinstance(url, str):
            return urlsplit(url).hostname or "server"
        command = self._option("command")
        if isinstance(command, (list, tuple)) and command:
            return os.path.basename(str(command[0]))
        if isinstance(command, str) and command.strip():
            return os.path.basename(command.split()[0])
        raise ValueError("an inline server with a transport or a computed url/command needs a name=")

    def http_headers(self) -> dict[str, str]:
        """The headers sent with every HTTP request: ``headers`` then ``Authorization``.

        Raises ``ValueError`` naming the setting (never the value) for a header name that
        is not an HTTP token, or a value with line breaks or characters outside ASCII.
        """
        headers = self.setting("headers") or {}
        if not isinstance(headers, dict):
            raise ValueError(f"{self.name}: headers must be a dict, not {type(headers).__name__}")
        result = {}
        for key, raw in headers.items():
            value = self._evaluate(f"headers[{key!r}]", raw)
            if value is not None:
                result[_header_name(key, "headers")] = _header_text(value, f"headers[{key!r}]")
        token = self.setting("bearer_token")
        if token:
            result["Authorization"] = "Bearer " + _header_text(token, "bearer_token")
        return result

    def process_spec(self) -> tuple[list[str], dict[str, str]]:
        """``(argv, env)`` for a stdio process, evaluated now (at each process start)."""
        from .transports.stdio import child_environment

        command = self.setting("command")
        argv = command.split() if isinstance(command, str) else [str(part) for part in command or ()]
        if not argv:
            raise ValueError(f"{self.name}: command is empty")
        return argv, child_environment(self.env_values())

    def env_values(self) -> dict[str, Any]:
        """The ``env`` setting with every value evaluated now; ``None`` values left out.

        Raises ``ValueError`` when ``env`` is not a dict."""
        env = self.setting("env") or {}
        if not isinstance(env, dict):
            raise ValueError(f"{self.name}: env must be a dict, not {type(env).__name__}")
        values = {k: self._evaluate(f"env[{k!r}]", v) for k, v in env.items()}
        return {k: v for k, v in values.items() if v is not None}

    # -- the connection -----------------------------------------------------------------------

    @property
    def client(self) -> Client:
        """The protocol client for this server, built on first use (no I/O until a request)."""
        with self._lock:
            if self._client is None:
                self._client = self._build_client()
                self._wire_questions(self._client)
            return self._client

    def _endpoint(self) -> str:
        """The ``url`` setting evaluated now and checked (see :func:`check_url`)."""
        return check_url(self.setting("url"), allow_http=bool(self._option("allow_http")))

    def _timeout(self) -> float:
        """Seconds a request may take: the ``timeout`` setting, else :data:`DEFAULT_TIMEOUT`."""
        return float(self.setting("timeout") or DEFAULT_TIMEOUT)

    def _build_client(self) -> Client:
        timeout = self._timeout()
        if self._option("transport") is not None:
            transport: Transport = self.setting("transport")
            return Client(transport, name=self.name, timeout=timeout, declared=self.declared_capabilities,
                          log_level=self._option("log_level"))
        if self._option("url") is not None:
            from .transports.http import HTTPTransport
            from .transports.sse import SSETransport

            url = self._endpoint()
            auth = self.oauth_flow
            http = HTTPTransport(url, name=self.name, headers=self.http_headers, timeout=timeout, auth=auth)
            return Client(http, name=self.name, timeout=timeout, era_key=url, declared=self.declared_capabilities,
                          log_level=self._option("log_level"),
                          legacy_transport=lambda: SSETransport(url, name=self.name, headers=self.http_headers,
                                                                timeout=timeout, auth=auth))
        from .transports.stdio import StdioTransport

        directory = self.setting("directory")
        if directory and not os.path.isdir(directory):
            raise ValueError(f"{self.name}: directory {str(directory)!r} does not exist")
        stdio = StdioTransport(self.process_spec, name=self.name, directory=str(directory) if directory else None,
                               timeout=timeout)
        return Client(stdio, name=self.name, timeout=timeout, declared=self.declared_capabilities,
                      log_level=self._option("log_level"))

    def declared_capabilities(self, era: str) -> dict[str, Any]:
        """The client capabilities this server is told we have, for an era (``"modern"``:
        2026-07-28 ``_meta``; ``"handshake"``: the ``initialize`` request). Features that need
        a capability (questions, extensions) add theirs here.

        Questions: ``elicitation`` with the modes ``input_requests`` accepts (``{"form": {},
        "url": {}}`` by default), on 2026-07-28; to a handshake-era server only when the
        class has ``before_input_request``, which answers its requests in line."""
        capabilities: dict[str, Any] = {}
        capabilities.update(self.question_capabilities(era))
        extensions = self._oauth_extensions()
        if extensions:
            capabilities["extensions"] = extensions
        return capabilities

    def connect(self) -> MCP:
        """Contact the server now (it is otherwise contacted on first use); returns ``self``."""
        self.client.connect()
        return self

    def close(self) -> None:
        """Stop the stdio process or end the HTTP session; the next request reconnects."""
        with self._lock:
            if self._client is not None:
                self._client.close()
            if self._oauth is not None:
                self._oauth.close()

    def __enter__(self) -> MCP:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def protocol_version(self) -> str:
        """The revision in use, e.g. ``"2026-07-28"`` (connects)."""
        self.client.connect()
        return self.client.protocol_version or ""

    @property
    def server_info(self) -> dict[str, Any]:
        """The server's identity, ``{"name": ..., "version": ...}`` (connects)."""
        self.client.connect()
        return self.client.server_info

    @property
    def capabilities(self) -> dict[str, Any]:
        """The server's capabilities (connects)."""
        self.client.connect()
        return self.client.capabilities

    @property
    def instructions(self) -> str | None:
        """The server's instructions, or ``None`` (connects)."""
        self.client.connect()
        return self.client.instructions

    # -- tools --------------------------------------------------------------------------------

    @property
    def tools(self) -> list[Tool]:
        """Every tool the server lists (all pages), read once and kept; see :meth:`refresh_tools`."""
        with self._lock:
            if self._tools is None:
                self._tools = self._list_tools()
                self._tool_index = {t.server_name: t for t in self._tools}
            return list(self._tools)

    def refresh_tools(self) -> list[Tool]:
        """List the tools again."""
        with self._lock:
            self._tools = self._tool_index = None
        return self.tools

    def _list_tools(self) -> list[Tool]:
        tools: list[Tool] = []
        names: set[str] = set()
        for definition in self.client.list("tools/list", "tools"):
            if not isinstance(definition.get("name"), str):
                log.warning("MCP server %s listed a tool without a name; skipped", self.name)
                continue
            if definition["name"] in names:
                log.warning("MCP server %s listed the tool %r twice; kept the first", self.name, definition["name"])
                continue
            names.add(definition["name"])
            try:
                tool = Tool(self, definition)
            except ValueError as exc:
                log.warning("MCP server %s: dropped tool %r: %s", self.name, definition["name"], str(exc))
                continue
            shape(self, tool)
            tools.append(tool)
        return tools

    @property
    def model_tools(self) -> list[Any]:
        """What a chat offers the model from this server: ``only``/``exclude`` applied, tools an
        MCP App keeps from the model left out, ``extra_tools`` added (lists the tools).

        Raises :class:`~llm_mcp.ConfigurationError` naming a declared tool the server lacks.
        """
        return model_tools(self)

    def tool(self, name: str) -> Tool | None:
        """The tool with this server-side name, or ``None`` (lists the tools the first time)."""
        index = self._tool_index
        if index is None:
            self.tools
            index = self._tool_index or {}
        return index.get(name)

    def call(self, name: str, /, **arguments: Any) -> Result:
        """Call a tool by its server-side name; returns a :class:`Result`.

        The first call lists the tools (once per server object), since a tool's
        ``x-mcp-header`` annotations and ``idempotent`` hint decide how it is sent.

        Raises ``MCPError`` (``.code`` set) when the server answers with a JSON-RPC error,
        ``ConnectionError`` when it cannot be reached, ``UnauthorizedError`` or
        ``ForbiddenError`` when it refuses.
        """
        tool = self.tool(name)
        if tool is None:
            tool = Tool(self, {"name": name})
        return self.run(tool, arguments)

    def run(self, tool: Tool, arguments: dict[str, Any]) -> Result:
        """Send ``tools/call`` for ``tool`` with ``arguments`` (as the model or caller gave them).

        Questions the server asks go through ``before_input_request``; when it answers them
        all, the call is sent again with the answers. Raises :class:`~llm_mcp.InputRequiredError`
        with the questions left open (``.requests``)."""
        params = {"name": tool.server_name, "arguments": arguments}
        resume = self.resume_for("tools/call", params)  # a paused chat call going on: its original request
        if resume is not None:
            params = resume.params
            arguments = params.get("arguments") or {}
        on_progress = self.progress_listener()
        try:
            raw = self.request_answering("tools/call", params, resume=resume,
                                         headers=param_headers(tool.header_map, arguments), resend=tool.idempotent,
                                         on_progress=on_progress)
        except MCPError as exc:
            if exc.code != -32020:  # HEADER_MISMATCH: our idea of the tool is stale
                raise
            fresh = next((t for t in self.refresh_tools() if t.server_name == tool.server_name), tool)
            raw = self.request_answering("tools/call", params, resume=resume,
                                         headers=param_headers(fresh.header_map, arguments), resend=fresh.idempotent,
                                         on_progress=self.progress_listener())
            tool = fresh
        result = Result(raw, tool_name=tool.server_name)
        tool.check_output(result)
        return result

    def progress_listener(self) -> Callable[[dict[str, Any]], None] | None:
        """What receives one request's progress notifications: ``after_progress`` and the
        tool-progress listener of the chat making the call (see ``progress.listening``), each
        given :class:`~llm_mcp.Progress` objects whose value only grows. ``None`` when nobody
        listens, and then no ``progressToken`` is sent."""
        listeners: list[Callable[[Progress], Any]] = []
        after = self._option("after_progress")
        if after is not None:
            listeners.append(lambda progress: _call_with(after, self, progress))
        chat_listener = tool_listener()
        if chat_listener is not None:
            listeners.append(chat_listener)
        return ProgressFilter(listeners) if listeners else None

    # -- resources and prompts ------------------------------------------------------------------

    @property
    def resources(self) -> list[Resource]:
        """Every resource the server lists (all pages of ``resources/list``), listed once and
        kept; no content is read until a resource's ``content`` is needed. See
        :meth:`refresh_resources`."""
        with self._lock:
            if self._resources is None:
                self._resources = self._listed("resources/list", "resources", Resource, "uri")
            return list(self._resources)

    def refresh_resources(self) -> list[Resource]:
        """List the resources (and resource templates) again; their contents are read afresh."""
        with self._lock:
            self._resources = self._resource_templates = None
        return self.resources

    @property
    def resource_templates(self) -> list[ResourceTemplate]:
        """Every resource template the server lists (``resources/templates/list``), kept."""
        with self._lock:
            if self._resource_templates is None:
                self._resource_templates = self._listed("resources/templates/list", "resourceTemplates",
                                                        ResourceTemplate, "uriTemplate")
            return list(self._resource_templates)

    def resource(self, uri: str, /, **variables: Any) -> Resource:
        """Read one resource now (``resources/read``) and return it, content included.

            files.resource("file:///project/README.md").content
            files.resource("file:///{+path}", path="app/models/user.rb")   # RFC 6570, "/" kept

        With keywords, ``uri`` is a URI template filled with them first. The URI goes to
        the server whatever its scheme: the client never fetches it itself.

        Raises :class:`MCPError` when the server refuses (``.code`` ``-32602`` from a
        2026-07-28 server, ``-32002`` from an older one, for a resource it does not have),
        ``ValueError`` for template variables the template lacks or needs (or an empty URI),
        ``TypeError`` for a URI that is not a string.
        """
        if not isinstance(uri, str):
            raise TypeError(f"resource() takes a URI string, not {type(uri).__name__}")
        if not uri:
            raise ValueError("resource() needs a URI, not an empty string")
        if variables or "{" in uri:
            uri = expand_template(uri, variables)
        result = self.request_answering("resources/read", {"uri": uri})
        listed = next((r.raw for r in self._resources or () if r.uri == uri), None)
        return Resource.read_from(self, uri, result, listed)

    @property
    def prompts(self) -> list[Prompt]:
        """Every prompt the server lists (all pages of ``prompts/list``), listed once and kept."""
        with self._lock:
            if self._prompts is None:
                self._prompts = self._listed("prompts/list", "prompts", Prompt, "name")
            return list(self._prompts)

    def refresh_prompts(self) -> list[Prompt]:
        """List the prompts again."""
        with self._lock:
            self._prompts = None
        return self.prompts

    def prompt(self, name: str, /, **arguments: str) -> Prompt:
        """Fill in a prompt: sends ``prompts/get`` with ``arguments`` and returns the prompt
        with its ``messages``.

            chat.ask(github.prompt("code_review", code=diff, language="Ruby"))

        Raises ``TypeError`` for a name or an argument that is not a string (MCP prompt
        arguments are strings), ``ValueError`` for an empty name, :class:`MCPError` when the server refuses (``-32602`` for an unknown
        prompt or a missing required argument).
        """
        if not isinstance(name, str):
            raise TypeError(f"prompt() takes the prompt's name as a string, not {type(name).__name__}")
        if not name:
            raise ValueError("prompt() needs a prompt name, not an empty string")
        values = check_arguments(arguments)
        result = self.request_answering("prompts/get", {"name": name, "arguments": values})
        listed = next((p.raw for p in self._prompts or () if p.name == name), None)
        return Prompt(self, listed or {"name": name}, values=values, result=result)

    def _listed(self, method: str, key: str, kind: Any, field: str) -> list[Any]:
        """Every entry of a list, built as ``kind``; entries without ``field`` or seen twice are skipped."""
        items: list[Any] = []
        seen: set[str] = set()
        for entry in self.client.list(method, key):
            identity = entry.get(field)
            if not isinstance(identity, str) or not identity:
                log.warning("MCP server %s listed an entry of %s without a %s; skipped", self.name, key, field)
                continue
            if identity in seen:
                log.warning("MCP server %s listed %s %r twice; kept the first", self.name, key, identity)
                continue
            seen.add(identity)
            items.append(kind(self, entry))
        return items

    def __getattr__(self, attribute: str) -> Callable[..., Result]:
        # Only names the class does not have are tools: a property that raised AttributeError
        # also lands here, and must not turn into a tool lookup (and recurse).
        if attribute.startswith("_") or attribute in SETTINGS or hasattr(type(self), attribute):
            raise AttributeError(attribute)
        tool = self.tool(attribute)
        if tool is None:
            raise AttributeError(f"{type(self).__name__} {self.__dict__.get('name')!r} has no tool {attribute!r}")
        return functools.partial(self.call, attribute)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.__dict__.get('name')!r}>"


class _Inline(MCP):
    """A server built by :func:`mcp` from keyword arguments."""

    def __init__(self, options: dict[str, Any]):
        self._options = options
        super().__init__()


def mcp(**options: Any) -> MCP:
    """Build a server without writing a class: ``llm_mcp.mcp(url="https://...")``.

    Takes the class settings as keywords (``url``, ``command``, ``allow_http``,
    ``transport``, ``bearer_token``, ``oauth``, ``headers``, ``env``, ``directory``, ``timeout``,
    ``name``, ``after_progress``, ``log_level``, the shaping settings ``prefix``, ``only``, ``exclude``,
    ``tool_options``, ``extra_tools``, ``requires_approval``, ``defer``, ``rescue_from``, and the question
    settings ``before_input_request`` (a callable taking the question, or the server and the
    question) and ``input_requests`` (``True``, ``"form"``, ``"url"``, ``False``)). Callables
    are called with the server. Raises ``ValueError`` for an unknown keyword, a refused URL,
    or a ``transport`` without ``name``.
    """
    unknown = sorted(k for k in options if k not in SETTINGS or k == "inputs")
    if unknown:
        raise ValueError(f"llm_mcp.mcp() got unknown settings {unknown}")
    if "transport" in options and not options.get("name"):
        raise ValueError("llm_mcp.mcp(transport=...) needs a name=, since it has no URL or command to be named after")
    return _Inline(options)


class Servers:
    """Servers by name, as a chat or a page holds them: ``servers.linear``, ``servers["files"]``.

        servers = Servers([Linear(user=u), llm_mcp.mcp(command=["npx", "server"], name="files")])
        servers["files"].tools

    Raises ``ValueError`` naming both servers when two share a name.
    """

    def __init__(self, servers: list[MCP] | tuple[MCP, ...] = ()):
        self._by_name: dict[str, MCP] = {}
        for server in servers:
            self.add(server)

    def add(self, server: MCP) -> None:
        other = self._by_name.get(server.name)
        if other is not None and other is not server:
            raise ValueError(f"two MCP servers are named {server.name!r}: {other!r} and {server!r}; "
                             "give one of them its own name=")
        self._by_name[server.name] = server

    def discard(self, name: str) -> None:
        """Remove the server of this name, if there is one."""
        self._by_name.pop(name, None)

    def __getitem__(self, name: str) -> MCP:
        return self._by_name[name]

    def __getattr__(self, name: str) -> MCP:
        try:
            return self.__dict__["_by_name"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __iter__(self) -> Iterator[MCP]:
        return iter(self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name
