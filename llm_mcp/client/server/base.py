"""Describing a server: the [`MCP`][llm_mcp.MCP] facade, [`mcp`][llm_mcp.mcp] for inline servers.

A server is described by class attributes, the way a Django ``ModelAdmin`` is; the settings
are declared once in `llm_mcp.client.server.settings` (``TABLE``). Values that depend on
the user or change over time may be a callable (called with the server instance) or the name
of a method defined on the subclass; they are evaluated when they are needed: per request for
``bearer_token`` and ``headers`` (once per call), per process start for ``command`` and ``env``.

``MCP`` holds no logic of its own: it hands each concern to one collaborator, built in
``__init__`` with what it needs:

- ``settings`` (`ServerSettings`): declared values, evaluation;
- ``connection`` (`Connection`): headers, process, the client;
- ``catalog`` (`Catalog`): tools, resources, prompts, kept;
- ``changes`` (`Changes`): what the server says changed, and ``after_change``;
- the listener (`Listener`), reached through [`listen`][llm_mcp.MCP.listen];
- the questions (`Questions`), the calls
  (`Calls`) and authorization
  (`Authorization`), reached through ``MCP``'s methods.
"""

from __future__ import annotations

import functools
import inspect
import os
from typing import Any, Callable
from urllib.parse import urlsplit

from .. import context as call_context
from .. import offload
from ..declared import input_names, snake_case
from ..extensions import declared_extensions
from ..httpcontext import HTTPContext
from ..prompt import Prompt, check_arguments
from ..question import Question
from ..resource import Resource, ResourceTemplate, expand_template
from ..result import Result
from ..session import Client
from ..skill import Skill, Skills
from ..task import Task
from ..shaping import check_shaping, model_tools
from ..tool import Tool
from .auth import Authorization
from .calls import Calls
from .catalog import Catalog
from .changes import Changes
from .connection import Connection
from .listener import Listener, resource_uris, watched_tasks
from .questions import Questions, Resume
from .roots import Roots
from .sampling import Sampling
from .settings import (
    SETTINGS,
    ServerSettings,
    check_class,
    check_keywords,
    defaults,
    settings_reference,
)

__all__ = ["MCP", "mcp"]

COLLABORATORS = ("settings", "connection", "catalog", "changes", "http_context")
"""The public collaborators of a server object (never tools)."""


class MCP:
    """An MCP server your app connects to.

        class Linear(llm_mcp.MCP):
            url = "https://mcp.linear.app/mcp"
            bearer_token = lambda self: self.user.linear_token

        Linear(user=request.user).call("create_issue", title="...")
        Linear(user=request.user).create_issue(title="...")     # the same call

    The class settings (``url``, ``command``, ``bearer_token``, the shaping settings, the
    question settings, ...) are listed with their defaults in
    `llm_mcp.client.server.settings` (``settings_reference()`` renders them; see
    ``docs/how-to/servers.md``, ``docs/how-to/shaping.md``, ``docs/how-to/questions.md``).

    Tools as attributes: ``server.add(a=1, b=2)`` is ``server.call("add", a=1, b=2)``, so a
    server reads like the API it stands for. Only names the class does not have are looked up
    as tools: never a name starting with ``_``, a setting, an input, a method or property of the
    class, or a collaborator (``settings``, ``connection``, ``catalog``); a tool with such a name
    is reached with [`call`][llm_mcp.MCP.call]. An unknown name raises ``AttributeError`` (after listing the
    tools once).

    Attributes:
        settings: the server's settings, declared and evaluated
            (`ServerSettings`).
        connection: how it is reached (`Connection`).
        catalog: what it lists, kept (`Catalog`).
        changes: what it says changed (`Changes`):
            drops kept lists, runs ``after_change``.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        check_class(cls, MCP, reserved=COLLABORATORS)

    def __init__(self, *, context: HTTPContext | None = None, **inputs: Any):
        if context is not None and not isinstance(context, HTTPContext):
            raise TypeError(f"{type(self).__name__}(context=...) takes an llm_mcp.context(), not "
                            f"{type(context).__name__}")
        self.http_context = context
        declared = input_names(self.inputs)
        for key in inputs:
            if key not in declared:
                raise TypeError(f"{type(self).__name__} takes the inputs {declared}, not {key!r}")
        for key in declared:
            setattr(self, key, inputs.get(key))
        options = self.__dict__.pop("_inline_options", None)
        settings = self.settings = ServerSettings(self, options or {}, base=MCP, inline=options is not None)
        name = self._name
        self._roots = Roots(settings, name)
        self._sampling = Sampling(settings, name)
        automatic = {"roots/list": self._roots.input_response} if self._roots.declared else {}
        if self._sampling.on:
            automatic["sampling/createMessage"] = self._sampling.input_response
        self._questions = Questions(settings, name, automatic=automatic)  # input requests the client answers itself
        self._auth = Authorization(settings, name=name,
                                   address=lambda: (self.connection.endpoint(), self.connection.timeout()),
                                   capabilities=lambda: self.declared_capabilities("modern"), http_context=context)
        self._declared_kept: dict[tuple[str, bool], dict[str, Any]] = {}
        # declared values, fixed for the object's life: whether the capabilities are built anew each request
        self._declared_varies = type(self).declared_capabilities is not MCP.declared_capabilities \
            or bool(settings.option("oauth"))
        self.connection = Connection(settings, self._auth, name=name, declared=self._declared_for_requests,
                                     on_client=self._wire, headers=self.http_headers,
                                     process_spec=self.process_spec, http_context=context)
        self.catalog = Catalog(self, lambda: self.client)
        self._skills = Skills(self)
        self.changes = Changes(settings, self.catalog)
        self._listener = Listener(lambda: self.client, self.changes, name, forked=self.connection.forget)
        self._calls = Calls(settings, self.catalog, self._questions, connection=self.connection, name=name)
        settings.check([lambda s: check_shaping(self, s.where), self._auth.check])
        self.name = self._default_name()

    def _name(self) -> str:
        return str(self.__dict__.get("name"))

    def _wire(self, client: Client) -> None:
        """What a freshly built client is told: the collaborators that answer the server's
        requests (questions, roots, sampling) hook themselves in; changes are reported."""
        client.declared_fixed = not self._declared_varies  # 2026-07-28's do not depend on `hold_questions`
        self._questions.wire(client)
        self._roots.wire(client)
        self._sampling.wire(client)
        client.on_notification.append(self.changes.notified)

    def _default_name(self) -> str:
        settings = self.settings
        name = settings.value("name") if settings.option("name") is not None else None
        if name:
            return str(name)
        if not settings.inline:
            return snake_case(type(self).__name__)
        url = settings.option("url")
        if isinstance(url, str):
            return urlsplit(url).hostname or "server"
        command = settings.option("command")
        if isinstance(command, (list, tuple)) and command:
            return os.path.basename(str(command[0]))
        if isinstance(command, str) and command.strip():
            return os.path.basename(command.split()[0])
        raise ValueError("an inline server with a transport or a computed url/command needs a name=")

    # -- settings -------------------------------------------------------------------------------

    def resolve(self, value: Any) -> Any:
        """Evaluate a setting: call a callable (with this instance when it takes an argument),
        call the method a string names, or return a literal as it is."""
        return self.settings.resolve(value)

    def setting(self, key: str) -> Any:
        """The current value of a setting, evaluated (see [`resolve`][llm_mcp.MCP.resolve]).

        An ``AttributeError`` raised by your callable or method (say ``self.user.profile``
        for a user without one) comes out as a ``RuntimeError`` naming the setting, chained
        to the original: left as it is, Python would take it for a missing attribute.
        """
        return self.settings.value(key)

    def http_headers(self) -> dict[str, str]:
        """The headers sent with every HTTP request: ``headers`` then ``Authorization``, evaluated now.

        Raises ``ValueError`` naming the setting (never the value) for a header name that
        is not an HTTP token, or a value with line breaks or characters outside ASCII.
        """
        return self.connection.http_headers()

    def process_spec(self) -> tuple[list[str], dict[str, str]]:
        """``(argv, env)`` for a stdio process, evaluated now (at each process start)."""
        return self.connection.process_spec()

    def env_values(self) -> dict[str, Any]:
        """The ``env`` setting with every value evaluated now; ``None`` values left out.

        Raises ``ValueError`` when ``env`` is not a dict."""
        return self.connection.env_values()

    # -- the connection -------------------------------------------------------------------------

    @property
    def client(self) -> Client:
        """The protocol client for this server, built on first use (no I/O until a request)."""
        return self.connection.client

    def declared_capabilities(self, era: str) -> dict[str, Any]:
        """The client capabilities this server is told we have, for an era (``"modern"``:
        2026-07-28 ``_meta``; ``"handshake"``: the ``initialize`` request). Features that need
        a capability (questions, extensions) add theirs here.

        Extensions: the ``extensions`` setting (see `llm_mcp.client.extensions`) and the
        authorization extensions the ``oauth`` setting uses, under ``"extensions"``, in both eras.

        Questions: ``elicitation`` with the modes ``input_requests`` accepts (``{"form": {},
        "url": {}}`` by default), on 2026-07-28; to a handshake-era server when a chat uses it
        (`hold_questions`) or the class has ``before_input_request``. Roots: ``roots`` with
        ``listChanged`` when the ``roots`` setting is given. Sampling: ``sampling`` when the
        ``sampling`` setting turns it on."""
        capabilities: dict[str, Any] = {}
        capabilities.update(self.question_capabilities(era))
        capabilities.update(self._roots.capabilities())
        capabilities.update(self._sampling.capabilities())
        extensions = declared_extensions(self.settings.option("extensions"), f"{self.settings.where}.extensions")
        extensions.update(self._auth.extensions())
        if extensions:
            capabilities["extensions"] = extensions
        return capabilities

    def _declared_for_requests(self, era: str) -> dict[str, Any]:
        """`declared_capabilities` as every request carries it (2026-07-28 sends it in each
        request's ``_meta``): built once per era and per `hold_questions` state, since the settings
        it reads are declared values, fixed for the object's life. Built each time when the
        ``oauth`` setting is given (its extensions may evaluate callables) or a subclass overrides
        `declared_capabilities`. The dict is shared: the protocol client only reads and sends it."""
        key = (era, self._questions.held)
        kept = self._declared_kept.get(key)  # never filled when it varies
        if kept is None:
            kept = self.declared_capabilities(era)
            if not self._declared_varies:
                self._declared_kept[key] = kept
        return kept

    def connect(self) -> MCP:
        """Contact the server now (it is otherwise contacted on first use); returns ``self``."""
        self.client.connect()
        return self

    def close(self) -> None:
        """Stop listening (if `listen` was called), then stop the stdio process or end the HTTP
        session; the next request reconnects."""
        self._listener.stop()
        self.connection.close()
        self._auth.close()

    # -- listening for changes ------------------------------------------------------------------

    def listen(self, resources: Any = (), tasks: Any = ()) -> MCP:
        """Hear about changes as they happen, in a thread of its own, until [`close`][llm_mcp.MCP.close].

            handbook = Handbook().listen(resources=["handbook://policies"])

        Subscribes to every list the server announces changes to (its ``listChanged``
        capabilities) and to updates of each resource in ``resources`` (URI strings or
        [`Resource`][llm_mcp.Resource] objects); each change drops the kept list and runs
        ``after_change``. Returns once the server confirmed; calling it again replaces what is
        listened to. A server that announces no changes, with no ``resources``, gets no thread and
        no subscription (it is contacted to read what it announces). A stream that drops is subscribed again after 1 s, doubling to 60 s while
        the server stays away; once back, everything listened to counts as changed. In a forked
        child, call it again: the parent's thread is not inherited. See docs/how-to/listening.md;
        MCP 2026-07-28 "Subscriptions" (``subscriptions/listen``), older revisions' GET stream
        and ``resources/subscribe``.

        ``tasks`` (Tasks extension, draft "Task Status Notifications"): [`Task`][llm_mcp.Task]
        objects or task id strings, e.g. ``chat.pending_tasks`` (tasks of other servers in it are
        left to them). Each change of a task's status or status message calls ``after_change``
        with a fresh ``Task`` (``result`` set once completed); once subscribed, each task is
        checked with one ``tasks/get`` and reported if it changed meanwhile (a task given by id
        always is), and after a reconnect every unfinished task is checked and reported. The
        server must speak 2026-07-28 and declare the extension, and this class must declare
        ``extensions = ["tasks"]``.

        Raises:
            ConnectionError: the server cannot be reached.
            MCPError: the server will not send updates for a resource or task given (naming it);
                for tasks also a server older than 2026-07-28 or without the Tasks extension.
            ExtensionRequiredError: tasks given, and this class does not declare ``"tasks"``
                (the server's -32021).
            ServerTimeoutError: the server did not confirm within ``timeout`` seconds.
            TypeError, ValueError: a resource that is neither a URI string nor a ``Resource``, or a
                string that is not an absolute URI; a task that is neither a ``Task`` nor a
                non-empty id string (checked before the server is contacted).
        """
        uris = resource_uris(resources)
        watched = watched_tasks(tasks, self.name)
        self._listener.start(uris, watched)
        return self

    @property
    def listening(self) -> bool:
        """Whether this object listens for changes in this process (see [`listen`][llm_mcp.MCP.listen])."""
        return self._listener.running

    @property
    def listened_tasks(self) -> frozenset[str]:
        """The ids of the tasks this object still listens to in this process: those given to the
        last [`listen`][llm_mcp.MCP.listen], less those its listener dropped since. A task is
        dropped, logged and no longer reported (no more ``after_change`` for it) when the server
        no longer knows it (expired or forgotten: ``tasks/get`` answers -32602, or subscribing
        again after a reconnect does not grant it) or when its answer breaks the extension
        (``TaskProtocolError``). A task that ended stays in the set. Empty when not `listening`.

        Compare it with what you gave ``listen`` to find dropped tasks, and check each yourself
        (e.g. [`Task.refresh`][llm_mcp.Task.refresh], or ``complete()`` on the chat waiting on it),
        as ``manage.py mcp_listen --tasks`` does. Tasks extension, draft "Task Status Notifications".
        """
        return frozenset(self._listener.tasks.copy()) if self.listening else frozenset()

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

    # -- tools ----------------------------------------------------------------------------------

    @property
    def tools(self) -> list[Tool]:
        """Every tool the server lists (all pages), read once and kept; see [`refresh_tools`][llm_mcp.MCP.refresh_tools]."""
        return self.catalog.tools()

    def refresh_tools(self) -> list[Tool]:
        """List the tools again."""
        return self.catalog.refresh_tools()

    @property
    def model_tools(self) -> list[Any]:
        """What a chat offers the model from this server: ``only``/``exclude`` applied, tools an
        MCP App keeps from the model left out, ``extra_tools`` added (lists the tools).

        Raises [`ConfigurationError`][llm_mcp.client.errors.ConfigurationError] naming a declared tool the server lacks.
        """
        return model_tools(self)

    def tool(self, name: str) -> Tool | None:
        """The tool with this server-side name, or ``None`` (lists the tools the first time)."""
        return self.catalog.tool(name)

    def call(self, name: str, /, **arguments: Any) -> Result:
        """Call a tool by its server-side name; returns a [`Result`][llm_mcp.Result].

        The first call lists the tools (once per server object), since a tool's
        ``x-mcp-header`` annotations and ``idempotent`` hint decide how it is sent.

        Raises ``MCPError`` (``.code`` set) when the server answers with a JSON-RPC error,
        ``ConnectionError`` when it cannot be reached, ``UnauthorizedError`` or
        ``ForbiddenError`` when it refuses, ``ExtensionRequiredError`` when the tool needs an
        extension this class does not declare. A tool the server runs as a task (``"tasks"`` in
        ``extensions``) is waited for: checked every ``poll_interval`` seconds for at most
        ``timeout`` (``ServerTimeoutError`` after), its failure raised as ``MCPError``.
        """
        tool = self.catalog.tool(name) or Tool(self, {"name": name})
        answer = self._calls.run(tool, arguments)  # what ``self.run`` does, one Python call less per call
        return answer.outcome() if isinstance(answer, Task) else answer  # a task (extension): waited for

    async def acall(self, name: str, /, **arguments: Any) -> Result:
        """The async twin of [`call`][llm_mcp.MCP.call], for async views: the call runs in a thread
        of its own (``llm_mcp.client.offload``), so concurrent awaits run side by side.
        Cancelling the awaiting task cancels the call (the server is told) and raises
        ``asyncio.CancelledError``."""
        return await offload.cancellable(self.call, name, **arguments)

    def run(self, tool: Tool, arguments: dict[str, Any], context: Any = None) -> Result | Task:
        """Send ``tools/call`` for ``tool`` with ``arguments`` (as the model or caller gave them).

        ``context`` is the call's `CallContext` (cancel scope,
        paused request to resume, progress listener); by default the one a chat made for the
        call, else a new one (keeping an active ``CancelScope``). Questions the server asks go
        through ``before_input_request``; when it answers them all, the call is sent again
        with the answers. Raises [`InputRequiredError`][llm_mcp.client.errors.InputRequiredError] with the questions left
        open (``.requests``). Returns the [`Task`][llm_mcp.Task] at once when the server answered
        with one (Tasks extension declared)."""
        return self._calls.run(tool, arguments, context)

    def progress_listener(self) -> Callable[[dict[str, Any]], None] | None:
        """What receives one request's progress notifications: ``after_progress`` and the
        tool-progress listener of the chat making the call (see ``progress.listening``), each
        given [`Progress`][llm_mcp.Progress] objects whose value only grows. ``None`` when nobody
        listens, and then no ``progressToken`` is sent."""
        return self._calls.progress_listener(call_context.current())

    # -- questions ------------------------------------------------------------------------------

    @property
    def input_kinds(self) -> tuple[str, ...]:
        """The kinds of question accepted: ``("form", "url")``, one of them, or ``()``."""
        return self._questions.input_kinds

    def question_capabilities(self, era: str) -> dict[str, Any]:
        """``{"elicitation": {mode: {} ...}}`` for the accepted kinds (``{}`` for none; to a
        handshake-era server only with ``before_input_request``)."""
        return self._questions.capabilities(era)

    def roots_changed(self) -> bool:
        """Tell the server the ``roots`` setting's value changed (``notifications/roots/list_changed``
        on a handshake-era session; it then asks ``roots/list`` again). Returns whether it was
        sent: ``False`` without ``roots``, before the first request, and on 2026-07-28 (where the
        server asks for the roots with each request that needs them). Spec: MCP 2025-11-25
        "Client Features / Roots"."""
        return self.connection.built and self._roots.changed(self.client)

    def hold_questions(self) -> None:
        """Let chats hold this server's questions open for a person (what ``Chat.with_mcp`` runs).

        A handshake-era session opened from then on declares elicitation. Capabilities are
        fixed per session: a session opened before (a call made before the server joined the
        chat) keeps its own until it is closed (`close`; the next request opens a new one).
        During a chat's call, a question nobody's
        ``before_input_request`` answers is saved where the chat's ``pending_questions`` shows
        it, and the call waits up to ``question_timeout`` seconds for an answer given in any
        thread or process; outside a chat such questions are still declined at once.
        Spec: MCP 2025-11-25 "Client Features / Elicitation"."""
        questions = self._questions
        if questions.held:
            return
        questions.hold_in_chats()
        if self.connection.built and questions.answers_inline:
            questions.wire(self.client)

    def screen_question(self, question: Question) -> None:
        """Decline what must be declined, then run ``before_input_request`` on what is left
        (see `screen_question`)."""
        self._questions.screen_question(question)

    def resume_for(self, method: str, params: dict[str, Any]) -> Resume | None:
        """The paused request this one goes on with (set by a chat), if it is the same request."""
        return self._questions.resume_for(call_context.current(), method, params)

    def request_answering(self, method: str, params: dict[str, Any], *, resume: Resume | None = None,
                          **options: Any) -> dict[str, Any]:
        """``client.request(method, params)``, answering the server's questions round after round
        (see `request_answering`)."""
        return self._calls.request_answering(method, params, resume=resume, **options)

    # -- authorization --------------------------------------------------------------------------

    def oauth_settings(self) -> Any:
        """The ``oauth`` setting evaluated now (an ``OAuthSettings``: each value; the owner resolved).

        Raises ``ValueError`` when the server has no ``oauth`` setting or a value is refused."""
        return self._auth.oauth_settings()

    def oauth_owner(self) -> Any:
        """Whose credentials these are: the value of the input ``oauth["owner"]`` names, or the
        owner object (or what its callable or method returns); ``None`` without one."""
        return self._auth.owner()

    @property
    def oauth_flow(self) -> Any:
        """The server's `OAuth` (``None`` without ``oauth``)."""
        return self._auth.flow

    def authorization_url(self, redirect_uri: str | None = None, *, scopes: list[str] | str | None = None) -> str:
        """The URL to send the owner to so they authorize this app (authorization code + PKCE).

            return redirect(Linear(user=request.user).authorization_url(redirect_uri=callback_url))

        ``scopes`` asks for these scopes this time (stepping up after an
        ``InsufficientScopeError``); otherwise the ``scopes`` setting, else the server's.
        Raises ``ValueError`` (no oauth, bad redirect URI), ``MCPError`` (a discovery or
        pinning refusal), ``UnauthorizedError`` (registration refused).
        """
        return self._auth.required_flow().authorization_url(redirect_uri=redirect_uri, scopes=scopes)

    def authorize(self, params: Any) -> None:
        """Finish the authorization in the callback: ``server.authorize(request.GET)``.

        Raises ``MCPError`` when the callback does not belong to an authorization started
        here (``state``, or an ``iss`` naming another issuer), ``UnauthorizedError`` when the
        authorization server refused.
        """
        self._auth.required_flow().authorize(params)

    @property
    def authorized(self) -> bool:
        """Whether the owner has stored credentials for this server."""
        return self._auth.required_flow().authorized

    def deauthorize(self) -> None:
        """Forget the owner's credentials for this server; ``authorized`` is ``False`` after."""
        self._auth.required_flow().deauthorize()

    # -- resources and prompts ------------------------------------------------------------------

    @property
    def resources(self) -> list[Resource]:
        """Every resource the server lists (all pages of ``resources/list``), listed once and
        kept; no content is read until a resource's ``content`` is needed. See
        [`refresh_resources`][llm_mcp.MCP.refresh_resources]."""
        return self.catalog.resources()

    def refresh_resources(self) -> list[Resource]:
        """List the resources (and resource templates) again; their contents are read afresh."""
        return self.catalog.refresh_resources()

    @property
    def resource_templates(self) -> list[ResourceTemplate]:
        """Every resource template the server lists (``resources/templates/list``), kept."""
        return self.catalog.resource_templates()

    def resource(self, uri: str, /, **variables: Any) -> Resource:
        """Read one resource now (``resources/read``) and return it, content included.

            files.resource("file:///project/README.md").content
            files.resource("file:///{+path}", path="app/models/user.rb")   # RFC 6570, "/" kept

        With keywords, ``uri`` is a URI template filled with them first. The URI goes to
        the server whatever its scheme: the client never fetches it itself.

        Raises [`MCPError`][llm_mcp.client.errors.MCPError] when the server refuses (``.code`` ``-32602`` from a
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
        return Resource.read_from(self, uri, result, self.catalog.listed_resource(uri))

    # -- skills (io.modelcontextprotocol/skills) ---------------------------------------------------

    @property
    def skills(self) -> list[Skill]:
        """Every skill the server lists (all pages of ``skills/list``), listed once and kept; no
        skill file is read until a skill is loaded ([`Skill.instructions`][llm_mcp.Skill.instructions]).
        ``[]`` when the server does not declare the Skills extension.

        Raises [`ConfigurationError`][llm_mcp.client.errors.ConfigurationError] unless the
        ``extensions`` setting declares ``"skills"``. See ``docs/how-to/skills.md``.
        """
        return self._skills.listed()

    def refresh_skills(self) -> list[Skill]:
        """List the skills again (``skills/list``); loaded instructions are not kept."""
        return self._skills.listed(refresh=True)

    def skill(self, uri: str, /) -> Skill:
        """The entry of one skill by the URI of its ``SKILL.md`` (``skills/get``), whether or not
        the server lists it; nothing is read yet.

        Raises [`ConfigurationError`][llm_mcp.client.errors.ConfigurationError] unless ``"skills"``
        is declared, [`MCPError`][llm_mcp.client.errors.MCPError] when the server does not declare
        the extension or refuses (``.code`` ``-32602`` for a skill it does not serve), or answers
        with an invalid entry or the entry of another URI."""
        return self._skills.get(uri)

    @property
    def prompts(self) -> list[Prompt]:
        """Every prompt the server lists (all pages of ``prompts/list``), listed once and kept."""
        return self.catalog.prompts()

    def refresh_prompts(self) -> list[Prompt]:
        """List the prompts again."""
        return self.catalog.refresh_prompts()

    async def aresource(self, uri: str, /, **variables: Any) -> Resource:
        """The async twin of [`resource`][llm_mcp.MCP.resource] (see [`acall`][llm_mcp.MCP.acall])."""
        return await offload.cancellable(self.resource, uri, **variables)

    async def aprompt(self, name: str, /, **arguments: str) -> Prompt:
        """The async twin of [`prompt`][llm_mcp.MCP.prompt] (see [`acall`][llm_mcp.MCP.acall])."""
        return await offload.cancellable(self.prompt, name, **arguments)

    def prompt(self, name: str, /, **arguments: str) -> Prompt:
        """Fill in a prompt: sends ``prompts/get`` with ``arguments`` and returns the prompt
        with its ``messages``.

            chat.ask(github.prompt("code_review", code=diff, language="Ruby"))

        Raises ``TypeError`` for a name or an argument that is not a string (MCP prompt
        arguments are strings), ``ValueError`` for an empty name, [`MCPError`][llm_mcp.client.errors.MCPError] when the server refuses (``-32602`` for an unknown
        prompt or a missing required argument).
        """
        if not isinstance(name, str):
            raise TypeError(f"prompt() takes the prompt's name as a string, not {type(name).__name__}")
        if not name:
            raise ValueError("prompt() needs a prompt name, not an empty string")
        values = check_arguments(arguments)
        result = self.request_answering("prompts/get", {"name": name, "arguments": values})
        return Prompt(self, self.catalog.listed_prompt(name) or {"name": name}, values=values, result=result)

    # -- tools as attributes --------------------------------------------------------------------

    def __getattr__(self, attribute: str) -> Callable[..., Result]:
        # Only names the class does not have are tools (see the class docstring): a property
        # that raised AttributeError also lands here, and must not turn into a tool lookup (and
        # recurse), nor may a collaborator asked for before __init__ set it.
        if attribute.startswith("_") or attribute in SETTINGS or attribute in COLLABORATORS:
            raise AttributeError(attribute)
        declared = inspect.getattr_static(type(self), attribute, None)
        if isinstance(declared, property) and declared.fget is not None:
            try:  # a property failed with AttributeError: say which, and why, instead of a bare name
                declared.fget(self)
            except AttributeError as exc:
                raise AttributeError(f"{type(self).__name__}.{attribute} raised AttributeError: {exc}") from exc
        if declared is not None:
            raise AttributeError(attribute)
        tool = self.tool(attribute)
        if tool is None:
            raise AttributeError(f"{type(self).__name__} {self.__dict__.get('name')!r} has no tool {attribute!r}")
        return functools.partial(self.call, attribute)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.__dict__.get('name')!r}>"


for _setting, _default in defaults().items():  # the class attributes, from the one table of settings
    setattr(MCP, _setting, _default)
MCP.__doc__ = (MCP.__doc__ or "") + "\n    Settings:\n\n" + "".join(
    f"    {line}\n" for line in settings_reference().splitlines())


class _Inline(MCP):
    """A server built by [`mcp`][llm_mcp.mcp] from keyword arguments."""

    def __init__(self, options: dict[str, Any], context: HTTPContext | None = None):
        self._inline_options = options
        super().__init__(context=context)


def mcp(*, context: HTTPContext | None = None, **options: Any) -> MCP:
    """Build a server without writing a class: ``llm_mcp.mcp(url="https://...")``.

    Takes the class settings as keywords (every setting of
    `TABLE` but ``inputs``: ``url``, ``command``,
    ``bearer_token``, ``oauth``, ``headers``, the shaping settings, ``before_input_request``
    (a callable taking the question, or the server and the question), ...). Callables are
    called with the server. Raises ``ValueError`` for an unknown keyword, a refused URL, or a
    ``transport`` without ``name``.
    """
    check_keywords(options)
    return _Inline(options, context)
