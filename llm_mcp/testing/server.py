"""``Server``: a real MCP server made of kit tools, resources and prompts, on the official ``mcp`` SDK.

    server = Server("weather", tools=[GetWeather, Double], context={"user_id": 7})
    server.serve()                      # python -m my_server [--http PORT] [--era modern|handshake|auto]
    server.build()                      # the SDK's lowlevel Server, for your own transport

The kit is the shape; the protocol work (both eras, stdio and Streamable HTTP,
cancellation, progress routing) is the ``mcp`` package's. Tool code runs in a
worker thread, so ``call()`` may block (``time.sleep``, files, sockets).
Spec: MCP 2026-07-28 "Tools", "Resources", "Prompts", "Utilities".
"""

from __future__ import annotations

import argparse
import json
import logging
import warnings
import weakref
from collections.abc import Iterable, Sequence
from typing import Any

from ._require import require_mcp
from .asking import MISSING_CLIENT_CAPABILITY, InputNotAccepted, run_asking
from .definition import complete_values
from .paging import InvalidCursor, page
from .prompts import MissingPromptArguments, Prompt
from .resources import Resource, ResourceTemplate
from .skills import Skill
from .runtime import LOG_LEVELS, CallChannel, InvalidResult, ToolCancelled
from .serve import (
    add_serve_arguments,
    exit_when_threads_linger,
    serve_from_args,
    serve_http,
    serve_stdio,
)
from .tasks import TASKS_EXTENSION, TaskStore, declared_tasks
from .tool import Tool

__all__ = ["Server"]

RESOURCE_NOT_FOUND = -32002
"""JSON-RPC error code for an unknown resource URI (MCP "Resources" > "Error Handling")."""


def _field(obj: Any, key: str, default: Any = None) -> Any:
    """Read ``key`` from a pydantic model or a dict (the SDK hands either)."""
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _capabilities(ctx: Any) -> dict[str, Any]:
    """The client capabilities behind a request, as a wire dict (both eras)."""
    capabilities = getattr(_field(ctx, "session"), "client_capabilities", None)
    if capabilities is None:
        return {}
    if isinstance(capabilities, dict):
        return capabilities
    return capabilities.model_dump(by_alias=True, exclude_none=True, mode="json")


def _responses(params: Any) -> dict[str, Any]:
    """A request's ``inputResponses`` as wire dicts (``{}`` when none)."""
    responses = _field(params, "input_responses", _field(params, "inputResponses")) or {}
    return {str(key): value if isinstance(value, dict) else value.model_dump(by_alias=True, exclude_none=True,
                                                                             mode="json")
            for key, value in responses.items()}


def _classes(kind: type, items: Iterable[Any], what: str) -> list[Any]:
    if isinstance(items, (type, str, bytes, dict)) or not isinstance(items, Iterable):
        raise TypeError(f"Server {what}= must be a list of {kind.__name__} subclasses; got {items!r}")
    found = list(items)
    for item in found:
        if not (isinstance(item, type) and issubclass(item, kind)):
            raise TypeError(f"{what} must be {kind.__name__} subclasses; got {item!r}")
    return found


def _parse_context(pairs: Sequence[str]) -> dict[str, Any]:
    context: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"--context takes KEY=VALUE; got {pair!r}")
        try:
            context[key] = json.loads(value)
        except ValueError:
            context[key] = value
    return context


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more; got {value}")
    return value


class Server:
    """A test MCP server: kit tools, resources, templates and prompts, plus context values.

        server = Server("seed-tools", tools=[Double], resources=[Readme], context={"user_id": 7})
        server.serve(["--http", "8123", "--era", "modern"])   # blocks; or serve_stdio()/serve_http()
        lowlevel = server.build()                             # mcp.server.lowlevel.Server

    Args:
        name, version, title, instructions: the server's identity.
        tools, resources, resource_templates, prompts: kit classes (not instances).
        skills: kit `Skill` classes; with any, the server declares ``io.modelcontextprotocol/skills``
            and answers ``skills/list``, ``skills/get`` and ``resources/read`` of their files.
        skills_directory_read: with skills, also declare ``"directoryRead": true`` and answer
            ``resources/directory/read`` of their directories (default ``True``).
        context: values every tool, resource and prompt sees as ``self.context``.
        page_size: items per page of every ``*/list`` (0: one page); cursors are opaque.

    Attributes:
        resource_not_found_code: the JSON-RPC code answered for an unknown resource URI:
            ``-32002`` (the default, what servers before 2026-07-28 send), or ``None`` to
            follow the request's revision (``-32602`` on 2026-07-28, ``-32002`` before).

    Raises:
        TypeError: an item that is not the right kit class, or a bad option.
        ValueError: two tools (prompts, resources) with the same name (URI).
        ImportError: from ``build``/``serve`` when ``mcp`` is not installed.
    """

    def __init__(self, name: str = "llm-mcp-test-server", *, version: str = "1.0.0", title: str | None = None,
                 instructions: str | None = None, tools: Iterable[type[Tool]] = (),
                 resources: Iterable[type[Resource]] = (), resource_templates: Iterable[type[ResourceTemplate]] = (),
                 prompts: Iterable[type[Prompt]] = (), context: dict[str, Any] | None = None,
                 page_size: int = 0, skills: Iterable[type[Skill]] = (), skills_directory_read: bool = True) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"name must be a non-empty str; got {name!r}")
        if not isinstance(page_size, int) or isinstance(page_size, bool) or page_size < 0:
            raise TypeError(f"page_size must be an int >= 0; got {page_size!r}")
        if context is not None and not isinstance(context, dict):
            raise TypeError(f"context must be a dict; got {type(context).__name__}")
        if not isinstance(version, str) or not version:
            raise TypeError(f"Server version must be a non-empty str such as '1.0.0'; got {version!r}")
        for label, value in (("title", title), ("instructions", instructions)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"Server {label} must be a str or None; got {value!r}")
        self.name, self.version, self.title, self.instructions = name, version, title, instructions
        self.tools = _classes(Tool, tools, "tools")
        self.resources = _classes(Resource, resources, "resources")
        self.resource_templates = _classes(ResourceTemplate, resource_templates, "resource_templates")
        self.prompts = _classes(Prompt, prompts, "prompts")
        self.skills = _classes(Skill, skills, "skills")
        self._index(self.skills, lambda k: k.uri(), "skill URI")
        self.skills_directory_read = bool(skills_directory_read)
        self.context: dict[str, Any] = dict(context or {})
        self.page_size = page_size
        self.resource_not_found_code: int | None = RESOURCE_NOT_FOUND
        self.log_level = "debug"
        """The level for handshake-era sessions that have not sent ``logging/setLevel``."""
        self._session_levels: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self._by_name = self._index(self.tools, lambda t: t.definition()["name"], "tool name")
        self._resources = self._index(self.resources, lambda r: r.definition()["uri"], "resource URI")
        self._prompts = self._index(self.prompts, lambda p: p.definition()["name"], "prompt name")
        self._index(self.resource_templates, lambda t: t.definition()["name"], "resource template name")
        self._index(self.resource_templates, lambda t: t.definition()["uriTemplate"], "uri_template")
        self._built: Any = None
        self._bus: Any = None  # the SDK's subscription bus (2026-07-28 listeners), once built
        self._listen: Any = None  # the subscriptions/listen handler, once built
        self._token: Any = None  # the event loop serving requests, for changes made from other threads
        self._clients: weakref.WeakSet[Any] = weakref.WeakSet()  # handshake-era connections
        self._subscribers: dict[str, weakref.WeakSet[Any]] = {}  # resources/subscribe: URI -> connections
        self.tasks = TaskStore()
        """The tasks this server created (tools with ``task`` set; Tasks extension)."""

    # -- changing at run time ------------------------------------------------------------------

    def add(self, *items: type) -> None:
        """Add tools, resources, resource templates or prompts (kit classes) while serving, and
        announce each list that changed to every client listening (both eras, both transports).

            class AddTool(Tool):
                def call(self):
                    self.channel.server.add(Weather)     # from a tool of this server
                    return self.respond_with(content=self.text_content(text="added"))

        Raises ``TypeError`` for an item that is not a kit class, ``ValueError`` for a name or
        URI already served."""
        kinds = set()
        before = {attribute: list(getattr(self, attribute))
                  for attribute in ("tools", "resources", "resource_templates", "prompts")}
        try:
            for item in items:
                for kind, attribute in ((Tool, "tools"), (Resource, "resources"),
                                        (ResourceTemplate, "resource_templates"), (Prompt, "prompts")):
                    if isinstance(item, type) and issubclass(item, kind):
                        getattr(self, attribute).append(item)
                        kinds.add("resources" if attribute == "resource_templates" else attribute)
                        break
                else:
                    raise TypeError(f"add() takes kit Tool, Resource, ResourceTemplate or Prompt classes; got {item!r}")
            self._reindex()
        except (TypeError, ValueError):  # refused: the server stays as it was
            for attribute, classes in before.items():
                getattr(self, attribute)[:] = classes
            self._reindex()
            raise
        for kind in sorted(kinds):
            self.announce(kind)

    def remove(self, *names: str) -> None:
        """Remove tools or prompts (by name) and resources (by URI) while serving, and announce
        each list that changed. Raises ``KeyError`` for a name nothing has."""
        kinds = set()
        for name in names:
            if name in self._by_name:
                self.tools.remove(self._by_name[name])
                kinds.add("tools")
            elif name in self._prompts:
                self.prompts.remove(self._prompts[name])
                kinds.add("prompts")
            elif name in self._resources:
                self.resources.remove(self._resources[name])
                kinds.add("resources")
            else:
                raise KeyError(f"no tool, prompt or resource {name!r} to remove")
            self._reindex()
        for kind in sorted(kinds):
            self.announce(kind)

    def announce(self, kind: str, uri: str | None = None) -> None:
        """Tell listening clients that a list changed (``"tools"``, ``"prompts"``,
        ``"resources"``) or, with ``kind="resource"`` and ``uri``, that a resource's content
        changed: on 2026-07-28 to ``subscriptions/listen`` streams, on older revisions on each
        session's own stream (a resource update only to sessions that ``resources/subscribe``d
        it). Call it from a tool (or any thread but the server's event loop); before the first
        request nothing listens, and nothing is sent."""
        if kind not in ("tools", "prompts", "resources", "resource"):
            raise ValueError(f"announce() takes 'tools', 'prompts', 'resources' or 'resource'; got {kind!r}")
        if kind == "resource" and not uri:
            raise ValueError("announce('resource') needs the uri= of the resource that changed")
        if self._token is None:
            return
        import anyio.from_thread

        anyio.from_thread.run(self._publish, kind, uri, token=self._token)

    async def _publish(self, kind: str, uri: str | None) -> None:
        from mcp.shared.subscriptions import (
            PromptsListChanged,
            ResourcesListChanged,
            ResourceUpdated,
            ToolsListChanged,
        )

        events = {"tools": ToolsListChanged, "prompts": PromptsListChanged, "resources": ResourcesListChanged}
        if self._bus is not None:
            await self._bus.publish(ResourceUpdated(uri=uri) if kind == "resource" else events[kind]())
        clients = list(self._subscribers.get(uri or "", ())) if kind == "resource" else list(self._clients)
        for connection in clients:
            try:
                if kind == "resource":
                    await connection.send_resource_updated(uri)
                else:
                    await getattr(connection, f"send_{kind.rstrip('s')}_list_changed")()
            except Exception as exc:  # a client gone away misses the news
                logging.getLogger("llm_mcp.testing").debug("could not announce %s: %s", kind, exc)

    def end_subscriptions(self) -> None:
        """End every ``subscriptions/listen`` stream gracefully (each gets its final result), as
        a server going away for maintenance would; clients subscribe again. Call it from a tool
        (or any thread but the server's event loop); before the first request it does nothing."""
        if self._token is None or self._listen is None:
            return
        import anyio.from_thread

        anyio.from_thread.run_sync(self._listen.close, token=self._token)

    def _reindex(self) -> None:
        self._by_name = self._index(self.tools, lambda t: t.definition()["name"], "tool name")
        self._resources = self._index(self.resources, lambda r: r.definition()["uri"], "resource URI")
        self._prompts = self._index(self.prompts, lambda p: p.definition()["name"], "prompt name")
        self._index(self.resource_templates, lambda t: t.definition()["name"], "resource template name")
        self._index(self.resource_templates, lambda t: t.definition()["uriTemplate"], "uri_template")

    @staticmethod
    def _index(items: list[Any], key: Any, what: str) -> dict[str, Any]:
        index: dict[str, Any] = {}
        for item in items:
            value = key(item)
            if value in index:
                raise ValueError(f"two classes share the {what} {value!r}: {index[value].__name__}, {item.__name__}")
            index[value] = item
        return index

    # -- logging levels ------------------------------------------------------------------------

    @staticmethod
    def _connection(ctx: Any) -> Any:
        # mcp 2.3 builds a ServerSession per request; the connection behind it (private
        # ``_connection``, no public accessor yet) is what lives as long as the client's session.
        session = _field(ctx, "session")
        return getattr(session, "_connection", session)

    def _remember_level(self, ctx: Any, level: str) -> None:
        try:
            self._session_levels[self._connection(ctx)] = level
        except TypeError:  # a connection object the kit cannot key on: fall back to one level for all
            self.log_level = level

    def session_log_level(self, ctx: Any) -> str:
        """The level a handshake-era session chose with ``logging/setLevel`` (``log_level`` until it does)."""
        try:
            return self._session_levels.get(self._connection(ctx), self.log_level)
        except TypeError:
            return self.log_level

    # -- listing -------------------------------------------------------------------------------

    def _page(self, items: list[dict[str, Any]], key: str, params: Any) -> dict[str, Any]:
        from mcp.shared.exceptions import MCPError

        try:
            return {"resultType": "complete", **page(items, key, _field(params, "cursor"), self.page_size)}
        except InvalidCursor:
            raise MCPError(code=-32602, message="Invalid cursor") from None

    # -- the SDK server ------------------------------------------------------------------------

    def build(self) -> Any:
        """The ``mcp`` lowlevel ``Server`` answering for this kit server (built once).

            lowlevel = Server("x", tools=[Double]).build()
            # serve it with llm_mcp.testing.serve.serve_stdio(lowlevel) or build_http_app(lowlevel)

        Raises:
            ImportError: ``mcp`` is not installed (``pip install 'django-llm-mcp[testing]'``).
        """
        if self._built is None:
            self._built = self._build()
        return self._built

    def _build(self) -> Any:
        require_mcp()
        _define_sdk_classes()
        import anyio
        import anyio.lowlevel
        import anyio.to_thread
        import mcp_types as types
        from mcp.server.caching import CacheHint
        from mcp.shared.exceptions import MCPError
        from mcp.shared.message import ServerMessageMetadata

        kit = self

        def channel_for(ctx: Any, logger_name: str, params: Any = None) -> CallChannel:
            channel = _channel_for(ctx, logger_name, params)
            channel.server = kit
            return channel

        def _channel_for(ctx: Any, logger_name: str, params: Any = None) -> CallChannel:
            meta = _field(ctx, "meta") or {}
            progress_requested = _field(meta, "progressToken", _field(meta, "progress_token")) is not None
            version = _field(ctx, "protocol_version")

            async def send_log(level: str, message: str) -> None:
                modern = _field(ctx, "protocol_version") == "2026-07-28"
                if not modern and LOG_LEVELS.index(level) < LOG_LEVELS.index(kit.session_log_level(ctx)):
                    return
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    await ctx.session.send_log_message(level, message, logger=logger_name,
                                                       related_request_id=ctx.request_id)

            async def send_progress(progress: float, total: float | None, message: str | None) -> None:
                await ctx.session.report_progress(progress, total, message)

            async def elicit(params: dict[str, Any]) -> dict[str, Any]:
                if params.get("mode") == "url":
                    answer = await ctx.session.elicit_url(params.get("message", ""), params.get("url", ""),
                                                          params.get("elicitationId") or "kit",
                                                          related_request_id=ctx.request_id)
                else:
                    answer = await ctx.session.elicit_form(params.get("message", ""), params.get("requestedSchema", {}),
                                                           related_request_id=ctx.request_id)
                return answer.model_dump(by_alias=True, exclude_none=True, mode="json")

            async def sample(params: dict[str, Any]) -> dict[str, Any]:
                request = types.CreateMessageRequest(params=types.CreateMessageRequestParams.model_validate(params))
                answer = await ctx.session.send_request(request, types.CreateMessageResult,
                                                        metadata=ServerMessageMetadata(related_request_id=ctx.request_id))
                return answer.model_dump(by_alias=True, exclude_none=True, mode="json")

            channel = CallChannel(send_log=send_log, send_progress=send_progress,
                                  progress_requested=progress_requested, token=anyio.lowlevel.current_token(),
                                  request_id=_field(ctx, "request_id"), protocol_version=version,
                                  client_capabilities=_capabilities(ctx), input_responses=_responses(params),
                                  request_state=_field(params, "request_state", _field(params, "requestState")))
            if version != "2026-07-28":
                channel.send_elicit = lambda request: channel._call(elicit, request)
                channel.send_sample = lambda request: channel._call(sample, request)
            return channel

        async def in_thread(channel: CallChannel, fn: Any, *args: Any) -> Any:
            try:
                return await anyio.to_thread.run_sync(fn, *args, abandon_on_cancel=True)
            except anyio.get_cancelled_exc_class():
                channel.cancel()  # the client cancelled: the tool's cancellable work stops
                raise

        async def list_tools(ctx: Any, params: Any) -> dict[str, Any]:
            return self._page([t.definition() for t in self.tools], "tools", params)

        def named(table: dict[str, Any], params: Any, what: str) -> tuple[Any, str]:
            name = _field(params, "name")
            if name not in table:
                raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown {what}: {name}")
            return table[name], name

        def refuse(message: str) -> MCPError:
            """The kit's -32603 for a mistake in the test server's code, logged, the same in both eras."""
            logging.getLogger("llm_mcp.testing").error("%s", message)
            return MCPError(code=types.INTERNAL_ERROR, message=message)

        async def guarded(channel: CallChannel, what: str, fn: Any, *args: Any) -> Any:
            try:
                return await in_thread(channel, fn, *args)
            except (MCPError, MissingPromptArguments):
                raise
            except InvalidResult as exc:
                raise refuse(str(exc)) from None
            except InputNotAccepted as exc:
                raise MCPError(code=MISSING_CLIENT_CAPABILITY, message=str(exc)) from None
            except ToolCancelled:
                raise refuse(f"{what} raised ToolCancelled but the client did not cancel the request "
                             f"(raise ToolError to answer a tool error)") from None
            except Exception as exc:
                logging.getLogger("llm_mcp.testing").exception("%s failed", what)
                raise refuse(f"{what} failed: {type(exc).__name__}: {exc}") from None

        def tasks_refused() -> MCPError:
            return MCPError(code=MISSING_CLIENT_CAPABILITY,
                            message=f"this needs the {TASKS_EXTENSION} extension, which the client did not declare",
                            data={"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}})

        def as_task(ctx: Any, tool: Any, channel: CallChannel, arguments: dict[str, Any]) -> dict[str, Any] | None:
            """A ``CreateTaskResult`` when the call runs as a task, ``None`` for a plain call."""
            if tool.task is None or _field(ctx, "protocol_version") != "2026-07-28":
                return None
            if not declared_tasks(channel.client_capabilities):
                if tool.task == "required":
                    raise tasks_refused()
                return None
            task_channel = CallChannel(protocol_version=channel.protocol_version,
                                       client_capabilities=channel.client_capabilities)
            task_channel.server = kit
            owner = f"{tool.__name__}.call()"
            return self.tasks.start(lambda: tool.run(arguments, self.context, task_channel), task_channel,
                                    ttl_ms=tool.task_ttl_ms, poll_interval_ms=tool.task_poll_interval_ms,
                                    owner=owner, refuse=refuse)

        def task_for(ctx: Any, params: Any) -> Any:
            """The task a ``tasks/*`` request names: -32021 undeclared, -32602 unknown or expired
            (over HTTP, ``serve.TaskNameCheck`` has checked ``Mcp-Name`` already)."""
            if not declared_tasks(_capabilities(ctx)):
                raise tasks_refused()
            task_id = _field(params, "task_id", _field(params, "taskId"))
            task = self.tasks.get(task_id)
            if task is None:
                raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown or expired task: {task_id}")
            return task

        async def get_task(ctx: Any, params: Any) -> dict[str, Any]:
            task = task_for(ctx, params)
            self.tasks.checks.append(task.id)
            return task.wire("complete")

        async def update_task(ctx: Any, params: Any) -> dict[str, Any]:
            responses = _field(params, "input_responses", _field(params, "inputResponses"))
            if not isinstance(responses, dict):
                raise MCPError(code=types.INVALID_PARAMS, message="tasks/update needs inputResponses (an object)")
            task_for(ctx, params).update(responses)
            return {"resultType": "complete"}

        async def cancel_task(ctx: Any, params: Any) -> dict[str, Any]:
            self.tasks.cancel(task_for(ctx, params))
            return {"resultType": "complete"}

        async def call_tool(ctx: Any, params: Any) -> dict[str, Any]:
            tool, name = named(self._by_name, params, "tool")
            channel = channel_for(ctx, name, params)
            arguments = dict(_field(params, "arguments") or {})
            created = as_task(ctx, tool, channel, arguments)
            if created is not None:
                return created
            result = await guarded(channel, f"{tool.__name__}.call()", tool.run, arguments, self.context, channel)
            # 2026-07-28 results say what they are; the SDK drops the key for older eras.
            return {"resultType": "complete", **result}

        async def list_resources(ctx: Any, params: Any) -> dict[str, Any]:
            return self._page([r.definition() for r in self.resources], "resources", params)

        async def list_templates(ctx: Any, params: Any) -> dict[str, Any]:
            return self._page([t.definition() for t in self.resource_templates], "resourceTemplates", params)

        async def read_resource(ctx: Any, params: Any) -> dict[str, Any]:
            uri = str(_field(params, "uri"))
            channel = channel_for(ctx, uri, params)
            resource = self._resources.get(uri)
            if resource is not None:
                owner = f"{resource.__name__}.read()"
                contents = await guarded(channel, owner, run_asking, channel, owner, resource.read_contents,
                                         self.context, channel)
                if isinstance(contents, dict):  # a question (2026-07-28)
                    return contents
                return {"resultType": "complete", "contents": contents}
            for skill in self.skills:
                skill_contents = skill.contents(uri)
                if skill_contents is not None:
                    return {"resultType": "complete", "contents": skill_contents}
            for template in self.resource_templates:
                if template.match(uri) is not None:
                    owner = f"{template.__name__}.read()"
                    contents = await guarded(channel, owner, run_asking, channel, owner, template.read_contents,
                                             uri, self.context, channel)
                    if isinstance(contents, dict):
                        return contents
                    return {"resultType": "complete", "contents": contents}
            code = kit.resource_not_found_code
            if code is None:
                code = types.INVALID_PARAMS if _field(ctx, "protocol_version") == "2026-07-28" else RESOURCE_NOT_FOUND
            raise MCPError(code=code, message=f"Resource not found: {uri}", data={"uri": uri})

        async def list_prompts(ctx: Any, params: Any) -> dict[str, Any]:
            return self._page([p.definition() for p in self.prompts], "prompts", params)

        async def get_prompt(ctx: Any, params: Any) -> dict[str, Any]:
            prompt, name = named(self._prompts, params, "prompt")
            channel = channel_for(ctx, name, params)
            owner = f"{prompt.__name__}.messages()"
            try:
                result = await guarded(channel, owner, run_asking, channel, owner, prompt.render,
                                       dict(_field(params, "arguments") or {}), self.context, channel)
            except MissingPromptArguments as exc:
                raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
            return {"resultType": "complete", **result}

        async def complete(ctx: Any, params: Any) -> dict[str, Any]:
            ref, argument = _field(params, "ref"), _field(params, "argument")
            arguments = _field(_field(params, "context"), "arguments") or {}
            name, value = str(_field(argument, "name", "")), str(_field(argument, "value", ""))
            kind = _field(ref, "type")
            if kind == "ref/prompt":
                prompt = self._prompts.get(_field(ref, "name"))
                if prompt is None:
                    raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {_field(ref, 'name')}")
                source, owner = prompt.completions, prompt.__name__
            elif kind == "ref/resource":
                found = [t for t in self.resource_templates if t.uri_template == _field(ref, "uri")]
                if not found:
                    raise MCPError(code=types.INVALID_PARAMS,
                                   message=f"Unknown resource template: {_field(ref, 'uri')}")
                source, owner = found[0].completions, found[0].__name__
            else:
                raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown completion reference type: {kind}")
            try:
                completion = complete_values(source, name, value, arguments, owner=owner)
            except InvalidResult as exc:
                logging.getLogger("llm_mcp.testing").error("%s", exc, exc_info=exc.__cause__ is not None)
                raise MCPError(code=types.INTERNAL_ERROR, message=str(exc)) from None
            return {"resultType": "complete", "completion": completion}

        async def set_level(ctx: Any, params: Any) -> dict[str, Any]:
            level = _field(params, "level")
            if level in LOG_LEVELS:
                self._remember_level(ctx, level)
            return {}

        async def subscribe(ctx: Any, params: Any) -> dict[str, Any]:
            uri = str(_field(params, "uri"))
            self._subscribers.setdefault(uri, weakref.WeakSet()).add(self._connection(ctx))
            return {}

        async def unsubscribe(ctx: Any, params: Any) -> dict[str, Any]:
            self._subscribers.get(str(_field(params, "uri")), weakref.WeakSet()).discard(self._connection(ctx))
            return {}

        from mcp.server.subscriptions import InMemorySubscriptionBus

        from .subscriptions import ListenHandler

        self._bus = InMemorySubscriptionBus()
        listen = ListenHandler(self._bus, self.tasks, lambda ctx: declared_tasks(_capabilities(ctx)), tasks_refused)
        self._listen = listen
        hint = CacheHint(ttl_ms=0, scope="public")
        handlers: dict[str, Any] = {"on_list_tools": list_tools, "on_call_tool": call_tool,
                                    "on_subscriptions_listen": listen}
        # Every list may change at run time (add/remove), so resources and prompts are served
        # even when there are none yet.
        handlers.update(on_list_resources=list_resources, on_list_resource_templates=list_templates,
                        on_read_resource=read_resource, on_subscribe_resource=subscribe,
                        on_unsubscribe_resource=unsubscribe)
        handlers.update(on_list_prompts=list_prompts, on_get_prompt=get_prompt)
        if self.prompts or any(t.completions for t in self.resource_templates):
            handlers["on_completion"] = complete
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            server = _Announcing(
                self.name, version=self.version, title=self.title, instructions=self.instructions,
                cache_hints={m: hint for m in ("tools/list", "resources/list", "resources/templates/list",
                                               "resources/read", "prompts/list")},
                **handlers,
            )
            # Advertises logging to handshake-era clients; 2026-07-28 opts in per request instead.
            server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
            # Tasks extension: tools may be added with ``task`` set at run time, so always served.
            server.add_request_handler("tasks/get", types.GetTaskRequestParams, get_task)
            server.add_request_handler("tasks/cancel", types.CancelTaskRequestParams, cancel_task)

            class UpdateTaskParams(types.RequestParams):  # type: ignore[misc,name-defined]
                task_id: str
                input_responses: dict[str, Any] | None = None

            server.add_request_handler("tasks/update", UpdateTaskParams, update_task)
            if any(tool.task is not None for tool in self.tools):  # declared in server/discover
                server.extensions[TASKS_EXTENSION] = {}
        if self.skills:
            self._serve_skills(server, types)
        server.middleware.append(_Recorder(self))
        return server

    def _serve_skills(self, server: Any, types: Any) -> None:
        """Declare the Skills extension and answer ``skills/list`` (paged) and ``skills/get``."""
        from mcp.shared.exceptions import MCPError

        from llm_mcp.client.extensions import SKILLS_EXTENSION

        class GetSkillParams(types.RequestParams):  # type: ignore[misc,name-defined]
            uri: str

        async def list_skills(ctx: Any, params: Any) -> dict[str, Any]:
            listed = [k.entry() for k in self.skills if not k.unlisted]
            return {**self._page(listed, "skills", params), "ttlMs": 0, "cacheScope": "public"}

        async def get_skill(ctx: Any, params: Any) -> dict[str, Any]:
            uri = _field(params, "uri")
            skill = next((k for k in self.skills if k.uri() == uri), None)
            if skill is None:
                raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown skill: {uri}")
            return {"resultType": "complete", "skill": skill.entry(), "ttlMs": 0, "cacheScope": "public"}

        class DirectoryParams(types.PaginatedRequestParams):  # type: ignore[misc,name-defined]
            uri: str

        async def read_directory(ctx: Any, params: Any) -> dict[str, Any]:
            uri = _field(params, "uri")
            for skill in self.skills:
                children = skill.directory(uri)
                if children is not None:
                    return self._page(children, "resources", params)
            raise MCPError(code=types.INVALID_PARAMS, message=f"{uri} is not a directory resource")

        server.extensions[SKILLS_EXTENSION] = {"directoryRead": True} if self.skills_directory_read else {}
        server.add_request_handler("skills/list", types.PaginatedRequestParams, list_skills)
        server.add_request_handler("skills/get", GetSkillParams, get_skill)
        if self.skills_directory_read:
            server.add_request_handler("resources/directory/read", DirectoryParams, read_directory)

    # -- serving -------------------------------------------------------------------------------

    def serve_stdio(self, era: str = "auto") -> None:
        """Serve on stdin/stdout until the client closes stdin (``era``: auto, modern, handshake).

        Then the process ends: a tool still blocking in its worker thread gets one second, then
        the process exits (``serve.exit_when_threads_linger``), so no orphaned server lives on.
        """
        serve_stdio(self.build(), era)
        exit_when_threads_linger()

    def serve_http(self, port: int, era: str = "auto", *, json_response: bool = False,
                   host: str = "127.0.0.1") -> None:
        """Serve Streamable HTTP on ``http://HOST:PORT/mcp`` until the process is stopped."""
        serve_http(self.build(), port, era, json_response=json_response, host=host)

    def serve(self, argv: Sequence[str] | None = None) -> None:
        """Serve as the command line says: ``[--http PORT] [--era ...] [--context KEY=VALUE ...] [--page-size N]``.

            if __name__ == "__main__":
                server.serve()            # python -m my_tests.my_server --http 8123 --era modern
            # --context values are JSON when they parse as JSON (user_id=42 -> 42), else strings
        """
        parser = add_serve_arguments(argparse.ArgumentParser(description=f"MCP test server {self.name}"))
        parser.add_argument("--context", action="append", default=[], metavar="KEY=VALUE",
                            help="a context value for the tools (repeatable)")
        parser.add_argument("--page-size", type=_non_negative, default=None, metavar="N",
                            help="paginate */list (0 = no)")
        args = parser.parse_args(argv)
        self.context.update(_parse_context(args.context))
        if args.page_size is not None:
            self.page_size = args.page_size
        serve_from_args(self.build(), args)


_Announcing: Any = None
_Recorder: Any = None


def _define_sdk_classes() -> None:
    """Define the classes that subclass the SDK's (once ``mcp`` is known to be installed)."""
    global _Announcing, _Recorder
    if _Announcing is not None:
        return
    from mcp.server.lowlevel.server import NotificationOptions
    from mcp.server.lowlevel.server import Server as LowlevelServer

    class Announcing(LowlevelServer):  # type: ignore[misc,valid-type]
        """The SDK's lowlevel server, announcing ``listChanged`` for every list to handshake-era
        clients (a kit server's lists may change: ``Server.add``/``remove``)."""

        def create_initialization_options(self, notification_options: Any = None, *args: Any, **kwargs: Any) -> Any:
            options = notification_options or NotificationOptions(prompts_changed=True, resources_changed=True,
                                                                  tools_changed=True)
            return super().create_initialization_options(options, *args, **kwargs)

    class Recorder:
        """Middleware noting the event loop and each handshake-era connection, so changes made
        from a tool's thread reach every client."""

        def __init__(self, kit: Server):
            self.kit = weakref.ref(kit)

        async def __call__(self, ctx: Any, call_next: Any) -> Any:
            import anyio.lowlevel

            kit = self.kit()
            if kit is not None:
                kit._token = anyio.lowlevel.current_token()
                if _field(ctx, "protocol_version") != "2026-07-28" and _field(ctx, "method") != "subscriptions/listen":
                    try:
                        kit._clients.add(kit._connection(ctx))
                    except TypeError:
                        pass
            return await call_next(ctx)

    _Announcing, _Recorder = Announcing, Recorder
