"""``Resource`` and ``ResourceTemplate``: what a kit server offers to ``resources/list`` and ``resources/read``.

    class Readme(Resource):
        uri = "file:///project/README.md"; name = "readme"; mime_type = "text/markdown"
        def read(self): return "# Project"

``read()`` returns a ``str`` (text contents), ``bytes`` (a base64 blob) or a list
of contents dicts (``resource_contents(...)``). Spec: MCP 2026-07-28 "Resources".
"""

from __future__ import annotations

import re
from typing import Any, ClassVar
from urllib.parse import unquote

from .asking import Asking
from .content import resource_contents
from .definition import Definable, check_completions, check_dict, check_text
from .results import check_annotations_object, check_contents, run_user_code
from .runtime import CallChannel, CallState, InvalidResult, bind_call

__all__ = ["Resource", "ResourceTemplate"]

_RESOURCE_DEFINITIONS = ("name", "title", "description", "mime_type", "annotations", "meta", "size")


def _entry(cls: Any, key: str, value: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {key: value, "name": cls.name}
    for attr, wire in (("title", "title"), ("description", "description"), ("mime_type", "mimeType"),
                       ("annotations", "annotations"), ("size", "size")):
        if getattr(cls, attr, None) is not None:
            entry[wire] = getattr(cls, attr)
    if cls.meta:
        entry["_meta"] = dict(cls.meta)
    return entry


class _Readable(Definable, CallState, Asking):
    CALLABLE_DEFINITIONS = ("annotations", "meta")
    WORK_METHOD = "read"

    name: ClassVar[str | None] = None
    title: ClassVar[str | None] = None
    description: ClassVar[str | None] = None
    mime_type: ClassVar[str | None] = None
    annotations: ClassVar[Any] = None
    meta: ClassVar[Any] = None
    size: ClassVar[int | None] = None

    @classmethod
    def _check_common(cls) -> None:
        owner = cls.__name__
        check_text(owner, "name", cls.name)
        for key in ("title", "description", "mime_type"):
            check_text(owner, key, getattr(cls, key))
        check_annotations_object(owner, "annotations", cls.annotations)
        check_dict(owner, "meta", cls.meta)
        if cls.size is not None and (not isinstance(cls.size, int) or isinstance(cls.size, bool) or cls.size < 0):
            raise TypeError(f"{owner}.size must be a non-negative int; got {cls.size!r}")

    def __init__(self, context: dict[str, Any] | None = None, *, channel: CallChannel | None = None,
                 params: dict[str, str] | None = None) -> None:
        self.params: dict[str, str] = dict(params or {})
        bind_call(self, "resources", context, channel)

    def read(self) -> str | bytes | list[dict[str, Any]]:
        """The resource's contents; override it."""
        raise NotImplementedError(f"{type(self).__name__}.read() is not implemented")

    def _contents(self, uri: str) -> list[dict[str, Any]]:
        owner = f"{type(self).__name__}.read()"
        data = run_user_code(owner, self.server_logger, self.read)
        meta = dict(self.meta) if self.meta else None
        if isinstance(data, str):
            return [resource_contents(uri=uri, text=data, mime_type=self.mime_type, meta=meta)]
        if isinstance(data, (bytes, bytearray)):
            return [resource_contents(uri=uri, blob=bytes(data), mime_type=self.mime_type, meta=meta)]
        if isinstance(data, list):
            return check_contents(owner, data)
        raise InvalidResult(f"{owner} must return str, bytes or a list of contents dicts; got {type(data).__name__}")


class Resource(_Readable):
    """A fixed resource, at one URI.

        class Pixel(Resource):
            uri = "file:///images/pixel.png"; name = "pixel"; mime_type = "image/png"
            def read(self): return PNG_BYTES           # sent as a base64 blob

    Definitions: ``uri`` (required), ``name`` (required), ``title``,
    ``description``, ``mime_type``, ``annotations`` (``audience``, ``priority``,
    ``lastModified``), ``meta`` (sent as ``_meta`` on the listing and the contents),
    ``size``. Inside ``read()``: ``context``, ``client_logger``, ``server_logger``.

    Raises (at class creation): TypeError/ValueError for a bad definition.
    """

    DEFINITIONS = ("uri", *_RESOURCE_DEFINITIONS)
    uri: ClassVar[str | None] = None

    @classmethod
    def _check_definitions(cls) -> None:
        cls._check_common()
        check_text(cls.__name__, "uri", cls.uri)

    @classmethod
    def definition(cls) -> dict[str, Any]:
        """The ``resources/list`` entry; TypeError when ``uri`` or ``name`` is missing.

            Pixel.definition()   # {"uri": "file:///images/pixel.png", "name": "pixel", "mimeType": "image/png"}
        """
        if not cls.uri or not cls.name:
            raise TypeError(f"resource class {cls.__name__} needs uri and name")
        return _entry(cls, "uri", cls.uri)

    @classmethod
    def contents(cls, context: dict[str, Any] | None = None, channel: CallChannel | None = None) -> dict[str, Any]:
        """The first contents entry, ready for ``embedded_resource_content(resource=...)``.

            Pixel.contents()     # {"uri": "file:///images/pixel.png", "mimeType": "image/png", "blob": "..."}
        """
        return cls.read_contents(context, channel)[0]

    @classmethod
    def read_contents(cls, context: dict[str, Any] | None = None,
                      channel: CallChannel | None = None) -> list[dict[str, Any]]:
        """Every contents entry ``resources/read`` sends for this resource."""
        return cls(context, channel=channel)._contents(cls.uri or "")


_EXPRESSION = re.compile(r"\{(\+?)([A-Za-z0-9_]+)\}")


class ResourceTemplate(_Readable):
    """Resources addressed by a URI template (RFC 6570 ``{var}`` and ``{+var}``).

        class ProjectFile(ResourceTemplate):
            uri_template = "file:///project/{+path}"; name = "project-file"
            def read(self): return f"contents of {self.params['path']}"

    ``{var}`` matches one path segment (percent-decoded), ``{+var}`` matches the
    rest, slashes included. ``completions`` maps a variable to candidate values
    (a list, or a callable ``fn(value, arguments) -> list``) for ``completion/complete``.

    Raises (at class creation): TypeError/ValueError for a bad definition.
    """

    DEFINITIONS = ("uri_template", "completions", *_RESOURCE_DEFINITIONS)
    uri_template: ClassVar[str | None] = None
    completions: ClassVar[Any] = None
    _pattern: ClassVar[re.Pattern[str] | None] = None

    @classmethod
    def _check_definitions(cls) -> None:
        cls._check_common()
        owner = cls.__name__
        check_text(owner, "uri_template", cls.uri_template)
        check_completions(owner, cls.completions)
        if cls.uri_template is not None:
            cls._check_expressions()
            parts, last = [], 0
            for match in _EXPRESSION.finditer(cls.uri_template):
                parts.append(re.escape(cls.uri_template[last:match.start()]))
                parts.append(f"(?P<{match.group(2)}>.+)" if match.group(1) else f"(?P<{match.group(2)}>[^/?#]+)")
                last = match.end()
            parts.append(re.escape(cls.uri_template[last:]))
            try:
                cls._pattern = re.compile("^" + "".join(parts) + "$")
            except re.error as exc:
                raise ValueError(f"{owner}.uri_template {cls.uri_template!r} is not usable: {exc}") from None

    @classmethod
    def _check_expressions(cls) -> None:
        owner, template = cls.__name__, cls.uri_template or ""
        rest = _EXPRESSION.sub("", template)
        if "{" in rest or "}" in rest:
            bad = re.findall(r"\{[^{}]*\}?", rest) or [rest]
            raise ValueError(f"{owner}.uri_template {template!r}: the kit matches only {{var}} and {{+var}} "
                             f"expressions (one variable each); not {bad[0]!r}")
        names = [m.group(2) for m in _EXPRESSION.finditer(template)]
        if len(set(names)) != len(names):
            raise ValueError(f"{owner}.uri_template {template!r} uses a variable twice")
        unknown = sorted(set(cls.completions or {}) - set(names))
        if unknown:
            raise ValueError(f"{owner}.completions names {unknown}, which are not variables of "
                             f"{template!r} ({', '.join(names) or 'none'})")

    @classmethod
    def definition(cls) -> dict[str, Any]:
        """The ``resources/templates/list`` entry; TypeError when ``uri_template`` or ``name`` is missing.

            ProjectFile.definition()   # {"uriTemplate": "file:///project/{+path}", "name": "project-file"}
        """
        if not cls.uri_template or not cls.name:
            raise TypeError(f"resource template class {cls.__name__} needs uri_template and name")
        return _entry(cls, "uriTemplate", cls.uri_template)

    @classmethod
    def match(cls, uri: str) -> dict[str, str] | None:
        """The template's variables for ``uri``, or ``None`` when it does not match.

            ProjectFile.match("file:///project/src/app.py")   # {"path": "src/app.py"}
        """
        found = cls._pattern.match(uri) if cls._pattern is not None else None
        if found is None:
            return None
        return {key: unquote(value) for key, value in found.groupdict().items()}

    @classmethod
    def read_contents(cls, uri: str, context: dict[str, Any] | None = None,
                      channel: CallChannel | None = None) -> list[dict[str, Any]]:
        """Every contents entry for ``uri``; ValueError when the template does not match it."""
        params = cls.match(uri)
        if params is None:
            raise ValueError(f"{uri!r} does not match {cls.uri_template!r}")
        return cls(context, channel=channel, params=params)._contents(uri)
