"""A server's data by URI: [`Resource`][llm_mcp.Resource] and [`ResourceTemplate`][llm_mcp.ResourceTemplate].

    readme = files.resource("file:///project/README.md")
    readme.content                        # "# My Project..." (bytes for a binary resource)
    chat.ask("Summarize this", with_=readme)

MCP 2026-07-28, "Server Features / Resources": ``resources/list`` names resources,
``resources/templates/list`` names RFC 6570 URI templates, ``resources/read`` returns a
resource's ``contents`` (``text``, or base64 ``blob``). Every read goes to the server: the
client never fetches a URI itself, whatever its scheme (``https`` and ``file`` included).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .completion import Completable
from .errors import MCPError
from .protocol import as_object, as_text
from .result import Attachment, decode_base64, sniff_mime_type

if TYPE_CHECKING:
    from uritemplate import URITemplate

    from .server import MCP

__all__ = ["Resource", "ResourceTemplate", "check_template", "expand_template", "template_variables"]

log = logging.getLogger("llm_mcp.client")

OPTIONAL_OPERATORS = ("?", "&")
"""RFC 6570 operators whose variables may be left out (query parts)."""

_TEXT_TYPES = ("application/json", "application/xml", "application/javascript", "application/yaml",
               "application/x-yaml", "application/toml")


_VARCHAR = r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})"
_VARSPEC = rf"{_VARCHAR}(?:\.?{_VARCHAR})*(?::[1-9][0-9]{{0,3}}|\*)?"
_EXPRESSION = re.compile(rf"\{{[+#./;?&]?{_VARSPEC}(?:,{_VARSPEC})*\}}")
_LITERALS = re.compile(r"""(?:[^\x00-\x20"'%<>\\^`{|}\x7f]|%[0-9A-Fa-f]{2})+""")
"""RFC 6570 section 2 grammar: an expression, and a run of literal characters."""

_NOT_IN_URI = re.compile(r"%(?![0-9A-Fa-f]{2})|[^A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]")
"""What an expanded URI may not hold as is: a ``%`` starting no pct-encoded triplet, and any
character outside RFC 3986's unreserved and reserved sets."""


def check_template(template: str) -> None:
    """Raise ``ValueError`` naming ``template`` and the place where it is not RFC 6570 (an
    unclosed or stray brace, a bad variable name, an operator reserved for future use).

        check_template("file:///{+path}")      # fine
        check_template("file:///{path")        # ValueError: ... is not an RFC 6570 URI template ...
    """
    position = 0
    while position < len(template):
        match = _EXPRESSION.match(template, position) or _LITERALS.match(template, position)
        if match is None:
            raise ValueError(f"{template!r} is not an RFC 6570 URI template: {template[position:position + 20]!r} "
                             f"at character {position + 1} is neither a literal nor an expression like {{name}}")
        position = match.end()


def _percent_encode(match: re.Match[str]) -> str:
    return "".join(f"%{byte:02X}" for byte in match.group().encode("utf-8"))


def template_variables(template: str) -> list[str]:
    """The variable names of an RFC 6570 template, in order.

        template_variables("file:///{+path}{?rev}")    # ["path", "rev"]

    Raises ``ValueError`` for a template that is not RFC 6570 (see `check_template`).
    """
    check_template(template)
    return _variable_names(_parse(template))


def _parse(template: str) -> URITemplate:
    from uritemplate import URITemplate  # on a server's first template, not at import

    return URITemplate(template)


def _variable_names(parsed: URITemplate) -> list[str]:
    return list(dict.fromkeys(name for variable in parsed.variables for name in variable.variable_names))


def expand_template(template: str, variables: dict[str, Any]) -> str:
    """Fill an RFC 6570 URI template (``{+path}`` keeps ``/``; ``{name}`` percent-encodes it).

        expand_template("file:///{+path}", {"path": "app/models/user.rb"})   # "file:///app/models/user.rb"

    Raises ``ValueError`` for a template that is not RFC 6570 (see `check_template`),
    and naming a variable the template lacks, or one it needs (outside a
    ``{?query}``/``{&query}`` expression) that was not given.
    """
    check_template(template)
    parsed = _parse(template)
    names = _variable_names(parsed)
    unknown = [name for name in variables if name not in names]
    if unknown:
        raise ValueError(f"the URI template {template!r} has no variable {unknown[0]!r} "
                         f"(its variables: {', '.join(names) or 'none'})")
    missing = [name for variable in parsed.variables if variable.operator not in OPTIONAL_OPERATORS
               for name in variable.variable_names if variables.get(name) is None]
    if missing:
        raise ValueError(f"the URI template {template!r} needs {', '.join(repr(m) for m in missing)}: "
                         f"give {'them' if len(missing) > 1 else 'it'} as keywords")
    expanded = str(parsed.expand({k: v for k, v in variables.items() if v is not None}))
    # uritemplate leaves a {+var}/{#var} value holding a pct-encoded triplet entirely unencoded;
    # RFC 6570 3.2.3 keeps the triplets and still encodes the rest (spaces, non-ASCII, a lone %).
    return _NOT_IN_URI.sub(_percent_encode, expanded)


def _is_text_type(mime: str | None) -> bool:
    return bool(mime) and (mime.startswith("text/") or mime in _TEXT_TYPES or mime.endswith(("+json", "+xml")))


class Resource:
    """One resource of a server: a file, a record, any data it names with a URI.

        readme = next(r for r in files.resources if r.name == "README.md")   # nothing read yet
        readme.content            # reads it now (one resources/read), then keeps it
        readme.save("README.md")

    Attributes:
        server: the [`MCP`][llm_mcp.MCP] it comes from (every read goes through it).
        uri: the resource's URI, as the server gave it.
        name: its name (the listing's; for an unlisted resource, the last part of the URI).
        title: a display name, or ``None``.
        description: what it is, or ``None``.
        size: its size in bytes as the server declared it, or ``None``.
        annotations: ``{"audience": [...], "priority": 0.8, "lastModified": ...}``, or ``{}``.
        meta: the ``_meta`` of the listing entry (from ``server.resources``) or of the
            contents item (from ``server.resource(uri)``); ``{}`` when absent.
        raw: the listing entry as sent (``{}`` for a resource read by URI).
    """

    def __init__(self, server: MCP, entry: dict[str, Any], *, contents: list[dict[str, Any]] | None = None):
        uri = entry.get("uri")
        if not isinstance(uri, str) or not uri:
            raise ValueError("a resource needs a uri string")
        self.server = server
        self.uri: str = uri
        self.raw = entry
        self.name: str = as_text(entry.get("name")) or uri.rstrip("/").rsplit("/", 1)[-1] or uri
        self.title = as_text(entry.get("title"))
        self.description = as_text(entry.get("description"))
        size = entry.get("size")
        self.size: int | None = size if isinstance(size, int) and not isinstance(size, bool) else None
        self.annotations: dict[str, Any] = as_object(entry.get("annotations"))
        self.meta: dict[str, Any] = as_object(entry.get("_meta"))
        self._mime_type = as_text(entry.get("mimeType"))
        self._contents = contents
        self._lock = threading.Lock()

    @classmethod
    def read_from(cls, server: MCP, uri: str, result: dict[str, Any],
                  listed: dict[str, Any] | None = None) -> Resource:
        """The resource a ``resources/read`` result describes (its ``meta`` is the contents item's;
        an MCP App's ``meta["ui"]`` comes from the listing entry when the item has none, as the
        MCP Apps spec, "UI Resource Format", allows)."""
        contents = _contents(server, result)
        entry = {**(listed or {}), "uri": uri}
        item = _item_for(uri, contents)
        if item is not None:
            meta = as_object(item.get("_meta"))
            listed_ui = as_object(as_object((listed or {}).get("_meta")).get("ui"))
            if "ui" not in meta and listed_ui:  # MCP Apps: the content item's ui first, the listing's as fallback
                meta = {**meta, "ui": listed_ui}
            entry["_meta"] = meta
            if not entry.get("mimeType"):
                entry["mimeType"] = item.get("mimeType")
        resource = cls(server, entry, contents=contents)
        resource.raw = dict(listed or {})
        return resource

    # -- contents -----------------------------------------------------------------------------

    @property
    def loaded(self) -> bool:
        """Whether the contents were read already (nothing is sent to find out)."""
        return self._contents is not None

    @property
    def contents(self) -> list[dict[str, Any]]:
        """Every contents item of ``resources/read``, as sent (read the first time, then kept).

        Raises [`MCPError`][llm_mcp.client.errors.MCPError] when the server refuses (``.code`` ``-32602`` or
        ``-32002`` for a resource it does not have)."""
        with self._lock:
            if self._contents is None:
                result = self.server.request_answering("resources/read", {"uri": self.uri})
                self._contents = _contents(self.server, result)
            return self._contents

    @property
    def content(self) -> str | bytes:
        """The resource's data: ``str`` for text contents, base64-decoded ``bytes`` for a blob
        (the item whose URI is the resource's, else the first; ``""`` when there is none).

        Raises [`MCPError`][llm_mcp.client.errors.MCPError] when the server refuses or sends a blob that is not base64."""
        item = _item_for(self.uri, self.contents)
        if item is None:
            return ""
        if "blob" in item:
            try:
                return decode_base64(item["blob"])
            except ValueError as exc:
                raise MCPError(f"MCP server {self.server.name!r} sent {self.uri}: {exc}", server=self.server.name) \
                    from None
        text = item.get("text", "")
        if not isinstance(text, str):
            raise MCPError(f"MCP server {self.server.name!r} sent {self.uri} with text that is not a string",
                           server=self.server.name)
        return text

    @property
    def mime_type(self) -> str | None:
        """The MIME type the server gave (the listing's, else the contents' once read), or ``None``."""
        if self._mime_type:
            return self._mime_type
        item = _item_for(self.uri, self._contents or [])
        return as_text(item.get("mimeType")) if item is not None else None

    @property
    def is_text(self) -> bool:
        """Whether the content is text (reads it)."""
        return isinstance(self.content, str)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the content to ``path``: text as UTF-8 exactly as sent, a blob as its bytes
        (a file already there is replaced; no directory is created).

        Returns the path. Raises ``OSError`` when the file cannot be written
        (``FileNotFoundError`` for a missing directory), and what [`content`][llm_mcp.Resource.content] raises."""
        content = self.content
        target = Path(path)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            with open(target, "w", encoding="utf-8", newline="") as handle:
                handle.write(content)
        return target

    def as_attachment(self) -> Attachment:
        """The resource as a chat attachment (reads it): text as text, images as images,
        audio as audio, a blob of a text type that is UTF-8 as text, other bytes as a file."""
        content = self.content
        mime = self.mime_type
        if isinstance(content, bytes):
            mime = mime or sniff_mime_type(content)
            if _is_text_type(mime):
                try:
                    content = content.decode("utf-8")
                except UnicodeDecodeError:
                    pass
        kind = "resource"
        if isinstance(content, bytes) and mime.split("/")[0] in ("image", "audio"):
            kind = mime.split("/")[0]
        return Attachment(kind, mime or "text/plain", content, uri=self.uri, name=self.name, meta=dict(self.meta),
                          raw={"type": "resource", "uri": self.uri})

    def __repr__(self) -> str:
        return f"<Resource uri={self.uri!r} name={self.name!r} mime_type={self._mime_type!r}>"


def _contents(server: MCP, result: dict[str, Any]) -> list[dict[str, Any]]:
    contents = result.get("contents")
    if not isinstance(contents, list):
        raise MCPError(f"MCP server {server.name!r} answered resources/read without a contents list",
                       server=server.name)
    return [item for item in contents if isinstance(item, dict)]


def _item_for(uri: str, contents: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((item for item in contents if item.get("uri") == uri), contents[0] if contents else None)


class ResourceTemplate(Completable):
    """A family of resources a server names with an RFC 6570 URI template.

        template = files.resource_templates[0]           # uri: "file:///{+path}"
        template.read(path="app/models/user.rb")         # same as files.resource(template.uri, path=...)
        template.suggest(path="app/mo")                  # ["app/models/"]

    Attributes:
        server: the [`MCP`][llm_mcp.MCP] it comes from.
        uri: the template, e.g. ``"file:///{+path}"`` (``uriTemplate`` on the wire).
        name: its name.
        title: a display name, or ``None``.
        description: what it describes, or ``None``.
        mime_type: the MIME type of its resources, when they all share one, else ``None``.
        annotations: the template's annotations, or ``{}``.
        meta: the ``_meta`` of its listing entry, or ``{}``.
        variables: the template's variable names, in order (``["path"]``); ``[]`` for a
            template that is not RFC 6570 (logged; [`expand`][llm_mcp.ResourceTemplate.expand] raises ``ValueError``).
        raw: the listing entry as sent.
    """

    def __init__(self, server: MCP, entry: dict[str, Any]):
        template = self._take_listing(server, entry, "uriTemplate", "resource template")
        self.uri: str = template
        self.name: str = as_text(entry.get("name")) or template
        self.mime_type = as_text(entry.get("mimeType"))
        self.annotations: dict[str, Any] = as_object(entry.get("annotations"))
        self.meta: dict[str, Any] = as_object(entry.get("_meta"))
        try:
            self.variables: list[str] = template_variables(template)
        except ValueError as exc:  # kept, so it can be seen; expanding it raises this again
            log.warning("MCP server %s listed a resource template that cannot be used: %s", server.name, exc)
            self.variables = []
        self.completion_ref = {"type": "ref/resource", "uri": template}
        self.completion_names = self.variables

    def expand(self, /, **variables: Any) -> str:
        """The URI for these variables (no request); ``ValueError`` as `expand_template` says."""
        return expand_template(self.uri, variables)

    def read(self, /, **variables: Any) -> Resource:
        """Read the resource these variables name (``server.resource(template, **variables)``)."""
        return self.server.resource(self.uri, **variables)

    def __repr__(self) -> str:
        return f"<ResourceTemplate uri={self.uri!r} name={self.name!r}>"
