"""A tool an MCP server offers, as the client sees it.

MCP 2026-07-28, "Server Features / Tools": a definition has ``name``, ``title``,
``description``, ``inputSchema``, ``outputSchema``, ``annotations`` (behaviour hints) and
``_meta``; MCP Apps (``io.modelcontextprotocol/ui``) put the UI resource in
``_meta.ui.resourceUri`` and who may call the tool in ``_meta.ui.visibility``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, ClassVar

from .param_headers import tool_header_map
from .protocol import as_object, as_text

if TYPE_CHECKING:
    from .result import Result
    from .server import MCP

__all__ = ["Tool"]

log = logging.getLogger("llm_mcp.client")


class Tool:
    """One tool of a server; calling it calls the server.

        tool = server.tools[0]
        tool.name, tool.read_only, tool.input_schema
        result = tool.call(query="Azure Blob Storage")

    A chat offers it as it offers a Python tool: it has every member of the chat-tool
    contract, `llm_mcp.chat.ToolLike` (`name`, `description`, `params_schema`,
    `requires_approval`, `deferred`, `server`, `server_name`, `call`).

    Attributes:
        name: the name the model calls it by (after ``prefix`` or ``tool_options`` ``as``).
        server_name: the tool's name on the server (what ``tools/call`` sends).
        server: the ``MCP`` instance it belongs to.
        title: the display title (``title``, else ``annotations.title``), or ``None``.
        description: the description the model sees (``""`` when the server gives none).
        input_schema: the JSON Schema of its arguments, exactly as sent (never dereferenced).
        output_schema: the JSON Schema of its ``structuredContent``, or ``None``.
        annotations: the behaviour hints as sent (a dict, empty when absent).
        meta: the definition's ``_meta`` with keys as sent, ``{}`` when absent.
        definition: the whole definition as the server sent it.
        params_schema: the schema the model fills in: ``input_schema`` without fixed arguments.
        fixed_arguments: arguments always sent, whatever the model says (values may be callables).
        wrap: the server's method (name or callable) that turns results into what the model sees.
    """

    rescue_from: ClassVar[dict[type, Any]] = {}
    """Handlers for failed calls of any MCP tool, after the server class's own ``rescue_from``."""

    def __init__(self, server: MCP, definition: dict[str, Any], *, name: str | None = None,
                 description: str | None = None):
        self.server = server
        self.definition = definition
        self.server_name: str = definition["name"]
        self.name = name or self.server_name
        self.annotations: dict[str, Any] = as_object(definition.get("annotations"))
        self.title: str | None = as_text(definition.get("title") or self.annotations.get("title"))
        self.description: str = description if description is not None else (
            as_text(definition.get("description")) or "")
        schema = definition.get("inputSchema")
        self.input_schema: dict[str, Any] = schema if isinstance(schema, dict) else {"type": "object"}
        output = definition.get("outputSchema")
        self.output_schema: dict[str, Any] | None = output if isinstance(output, dict) else None
        self.meta: dict[str, Any] = as_object(definition.get("_meta"))
        self.header_map = tool_header_map(self.input_schema)  # ValueError: the server drops the tool
        self.params_schema: dict[str, Any] = self.input_schema
        self.fixed_arguments: dict[str, Any] = {}
        self.wrap: Any = None
        self._validator: Any = None
        # read on every call: worked out once (a tool is built anew when the server's list changes)
        self._resend = self.idempotent
        self._ui_uri = self.ui_uri

    # Behaviour hints (MCP "ToolAnnotations"): trust them as far as you trust the server.

    @property
    def read_only(self) -> bool:
        """``True`` only when ``readOnlyHint`` is exactly ``true``."""
        return self.annotations.get("readOnlyHint") is True

    @property
    def destructive(self) -> bool:
        """``True`` unless read-only or ``destructiveHint`` is exactly ``false``."""
        return not self.read_only and self.annotations.get("destructiveHint") is not False

    @property
    def idempotent(self) -> bool:
        """``True`` only when ``idempotentHint`` is exactly ``true``."""
        return self.annotations.get("idempotentHint") is True

    @property
    def open_world(self) -> bool:
        """``True`` unless ``openWorldHint`` is exactly ``false``."""
        return self.annotations.get("openWorldHint") is not False

    @property
    def ui(self) -> dict[str, Any]:
        return as_object(self.meta.get("ui"))

    @property
    def ui_uri(self) -> str | None:
        """The ``ui://`` resource an MCP App renders beside this tool's results, or ``None``."""
        return as_text(self.ui.get("resourceUri") or self.meta.get("ui/resourceUri")) if self.meta else None

    @property
    def visibility(self) -> list[str] | None:
        """Who may call it: ``["model", "app"]`` by default for an App tool, ``None`` otherwise."""
        visibility = self.ui.get("visibility")
        if isinstance(visibility, list):
            return [str(v) for v in visibility]
        return ["model", "app"] if self.ui_uri else None

    @property
    def requires_approval(self) -> bool:
        """Whether the server class's ``requires_approval`` holds for this tool."""
        from .shaping import requires_approval

        return requires_approval(self.server, self)

    @property
    def deferred(self) -> bool:
        """Whether the server class's ``defer`` keeps it out of the model's first tool list."""
        from .shaping import deferred

        return deferred(self.server, self)

    def call(self, /, **arguments: Any) -> Any:
        """Call the tool the way a chat does; a ``tool_call`` keyword is dropped, not sent.

        Fixed arguments are added (they win), the result goes through ``wrap``, and failures
        through ``rescue_from``. Returns the [`Result`][llm_mcp.Result], the
        [`Task`][llm_mcp.Task] at once when the server answered with one (``"tasks"`` declared), what
        ``wrap`` or a handler returned, or ``{"error": text}`` when the server failed
        (unreachable, HTTP 429/5xx, a JSON-RPC error). Raises refusals
        (``UnauthorizedError``, ``ForbiddenError``, HTTP 404), ``CancelledError``,
        ``InputRequiredError``. To get the server's errors raised, use ``server.call``.
        """
        from .shaping import invoke

        arguments.pop("tool_call", None)
        return invoke(self, arguments)

    def check_output(self, result: Result) -> None:
        """Check ``result.structured`` against ``output_schema``; problems go to ``result.schema_errors``."""
        if self.output_schema is None or result.structured is None or result.is_error:
            return
        try:
            if self._validator is None:
                from jsonschema.validators import validator_for

                schema = _without_patterns(self.output_schema)
                self._validator = validator_for(schema)(schema)
            errors = [e.message for e in self._validator.iter_errors(result.structured)]
        except Exception as exc:  # noqa: BLE001 - a broken schema is the server's problem, not the call's
            errors = [f"the outputSchema could not be used: {type(exc).__name__}"]
        if errors:
            result.schema_errors.extend(errors)
            log.warning("MCP server %s: tool %s answered structured content that does not match its "
                        "outputSchema: %s", self.server.name, self.server_name, "; ".join(errors[:3]))

    def __repr__(self) -> str:
        return f"<Tool name: {self.name!r}, read_only: {self.read_only}>"


_NAMED_SCHEMAS = ("properties", "$defs", "definitions", "dependentSchemas")
"""Keywords whose value maps names (which may be "pattern") to schemas."""


def _without_patterns(schema: Any) -> Any:
    """A copy of a schema without ``pattern``/``patternProperties``: checking output is advisory, and
    a server's regular expression must not be able to stall the client (ReDoS)."""
    if isinstance(schema, list):
        return [_without_patterns(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    kept: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("pattern", "patternProperties"):
            continue
        if key in _NAMED_SCHEMAS and isinstance(value, dict):
            kept[key] = {name: _without_patterns(sub) for name, sub in value.items()}
        else:
            kept[key] = _without_patterns(value)
    return kept
