"""Exploring the echo test server and the exact ``Result`` every one of its tools produces.

Every server-backed test runs over four connections (stdio both eras, stdio handshake
only, HTTP 2026-07-28 only, HTTP handshake only); each connection is one server opened
once per module. Expected values are computed here from the echo server's constants
(``llm_mcp_tests.support.servers.echo_server``), never from the client's own code.

Each test names the SPEC-CHECKLIST items (MCP-EXPL-*, MCP-TOOL-*) or cases (C09, C10, C13)
it covers in its docstring.
"""

from __future__ import annotations

import base64
import copy
import json
import logging
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pytest

import llm_mcp

from llm_mcp_tests.support.encoding import b64
from llm_mcp_tests.support.scripted import DISCOVER, answer, modern, result
from llm_mcp_tests.support.servers import echo_server as E


MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# The tools a client keeps (the two bad_header_* tools have invalid x-mcp-header names).
VALID_TOOL_NAMES = ["echo", "add", "image", "mixed", "fail", "with_meta", "headered", "sleep", "together",
                    "progress", "files/read"]
DROPPED_TOOL_NAMES = ["bad_header_space", "bad_header_dup"]
DEFINITIONS = {t["name"]: t for t in E.BASE_TOOLS + E.BAD_HEADER_TOOLS}

# name -> (title, description, output_schema, meta, ui_uri, visibility,
#          read_only, destructive, idempotent, open_world)
EXPECTED_TOOLS: dict[str, tuple[Any, ...]] = {
    "echo": ("Echo", "Return the message unchanged.", None, {}, None, None, True, False, True, False),
    "add": (None, "Add two integers.", {"type": "object", "properties": {"sum": {"type": "integer"}},
                                        "required": ["sum"]}, {}, None, None, False, True, False, True),
    "image": (None, "Return a 1x1 PNG image.", None, {}, None, None, False, True, False, True),
    "mixed": (None, "Return text, audio, embedded resources and a resource link.", None, {}, None, None,
              False, True, False, True),
    "fail": (None, "Always fails with isError.", None, {}, None, None, False, True, False, True),
    "with_meta": (None, "Return a result carrying _meta.", None,
                  {"ui": {"resourceUri": "ui://demo/app.html"}, "com.example/x": 1}, "ui://demo/app.html",
                  ["model", "app"], False, True, False, True),
    "headered": (None, "Report the Mcp-* HTTP headers this call arrived with.", None, {}, None, None,
                 False, True, False, True),
    "sleep": (None, "Sleep for the given number of seconds, then answer.", None, {}, None, None,
              False, True, False, True),
    "together": (None, "Wait until `parties` calls of the same `group` are in flight at once (at most `seconds`), "
                       "then answer the most that were.", None, {}, None, None, False, True, False, True),
    "progress": (None, "Emit progress notifications and a log message, then answer.", None, {}, None, None,
                 False, True, False, True),
    "files/read": (None, "A tool whose name is not a Python identifier.", None, {}, None, None,
                   False, True, False, True),
}


# --------------------------------------------------------------------------- connections


@dataclass
class Conn:
    label: str
    server: llm_mcp.MCP
    version: str
    http: bool

    @property
    def modern(self) -> bool:
        return self.version == MODERN


CONNECTIONS = [
    ("stdio-auto", "echo_stdio_command", "command", MODERN),
    ("stdio-handshake", "echo_stdio_handshake_command", "command", HANDSHAKE),
    ("http-modern", "echo_http_modern_url", "url", MODERN),
    ("http-handshake", "echo_http_handshake_url", "url", HANDSHAKE),
]


@pytest.fixture(scope="module", params=CONNECTIONS, ids=[c[0] for c in CONNECTIONS])
def conn(request: pytest.FixtureRequest):
    """One opened echo server per connection kind, shared by the module and closed at its end."""
    label, fixture, option, version = request.param
    target = request.getfixturevalue(fixture)
    server = llm_mcp.mcp(**{option: target}, name="echo")
    with server:
        yield Conn(label, server, version, option == "url")


def sent(conn: Conn, body: dict[str, Any]) -> dict[str, Any]:
    """The result exactly as the echo server puts it on the wire for this connection's era.

    On 2026-07-28 every result says ``resultType: "complete"`` and carries the server's
    identity in ``_meta["io.modelcontextprotocol/serverInfo"]``; handshake-era results have neither.
    """
    body = copy.deepcopy(body)
    if conn.modern:
        meta = dict(body.get("_meta") or {})
        meta[SERVER_INFO_KEY] = {"name": "echo-server", "version": "1.0.0"}
        body["_meta"] = meta
        body["resultType"] = "complete"
    return body


def expected_meta(conn: Conn, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    return sent(conn, {"_meta": meta or {}}).get("_meta") or {}


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


# --------------------------------------------------------------------------- exploring


def test_conn_02_protocol_version(conn):
    """MCP-CONN-01, MCP-CONN-02: the negotiated revision is 2026-07-28 where the server speaks it, else 2025-11-25."""
    assert conn.server.protocol_version == conn.version


def test_server_info(conn):
    """server_info carries the server's name and version."""
    info = conn.server.server_info
    assert info["name"] == E.SERVER_NAME == "echo-server"
    assert info["version"] == E.SERVER_VERSION == "1.0.0"


def test_expl_02_instructions(conn):
    """MCP-EXPL-02: instructions are the server's, verbatim."""
    assert conn.server.instructions == E.INSTRUCTIONS
    assert conn.server.instructions == "Echo server for llm_mcp tests. Call echo to get your message back."


def test_expl_01_tools_listed_once_in_order(conn):
    """MCP-EXPL-01, MCP-TOOL-02, MCP-TOOL-03: every valid tool is listed exactly once, in the server's order, name == server_name."""
    tools = conn.server.tools
    assert [t.server_name for t in tools] == VALID_TOOL_NAMES
    assert [t.name for t in tools] == VALID_TOOL_NAMES
    assert all(isinstance(t, llm_mcp.Tool) for t in tools)
    assert all(t.server is conn.server for t in tools)
    assert conn.server.tool("nope") is None


@pytest.mark.parametrize("name", VALID_TOOL_NAMES)
def test_tool_02_05_tool_identity_and_input_schema(conn, name):
    """MCP-TOOL-02, MCP-TOOL-03, MCP-TOOL-04, MCP-TOOL-05: name, server_name, title, description, input_schema exactly as the server defines them."""
    tool = conn.server.tool(name)
    assert tool is not None
    title, description = EXPECTED_TOOLS[name][:2]
    assert tool.name == name
    assert tool.server_name == name
    assert tool.title == title
    assert tool.description == description
    assert tool.input_schema == DEFINITIONS[name]["inputSchema"]
    assert tool.annotations == DEFINITIONS[name].get("annotations", {})


def test_tool_05_input_schemas_spelled_out(conn):
    """MCP-TOOL-05: a few input schemas, written out independently of the server module."""
    assert conn.server.tool("echo").input_schema == {
        "type": "object",
        "properties": {"message": {"type": "string", "description": "Text to echo"}},
        "required": ["message"],
    }
    assert conn.server.tool("headered").input_schema == {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"},
                       "count": {"type": "integer", "x-mcp-header": "Count"}},
        "required": ["region", "count"],
    }
    assert conn.server.tool("image").input_schema == {"type": "object", "properties": {}}


@pytest.mark.parametrize("name", VALID_TOOL_NAMES)
def test_tool_output_schema(conn, name):
    """output_schema is the server's outputSchema (only ``add`` has one), else None."""
    tool = conn.server.tool(name)
    assert tool.output_schema == EXPECTED_TOOLS[name][2]
    if name == "add":
        assert tool.output_schema == E.ADD_OUTPUT_SCHEMA


@pytest.mark.parametrize("name", VALID_TOOL_NAMES)
def test_tool_06_07_08_meta_ui_uri_visibility(conn, name):
    """MCP-TOOL-06, MCP-TOOL-07, MCP-TOOL-08: meta as sent ({} when absent); ui_uri from _meta.ui.resourceUri; visibility
    None for a plain tool and ["model", "app"] for an App tool that names no visibility."""
    tool = conn.server.tool(name)
    _, _, _, meta, ui_uri, visibility = EXPECTED_TOOLS[name][:6]
    assert tool.meta == meta
    assert tool.ui_uri == ui_uri
    assert tool.visibility == visibility
    if name == "with_meta":
        assert tool.meta == E.WITH_META_TOOL_META


@pytest.mark.parametrize("name", VALID_TOOL_NAMES)
def test_tool_12_15_behaviour_hints(conn, name):
    """MCP-TOOL-12, MCP-TOOL-13, MCP-TOOL-14, MCP-TOOL-15: read_only / destructive / idempotent / open_world from the server's annotations."""
    tool = conn.server.tool(name)
    read_only, destructive, idempotent, open_world = EXPECTED_TOOLS[name][6:]
    assert (tool.read_only, tool.destructive, tool.idempotent, tool.open_world) == (
        read_only, destructive, idempotent, open_world)


def _bare_server() -> llm_mcp.MCP:
    return llm_mcp.mcp(command=["definitely-not-started"], name="bare")  # never contacted


# (annotations, read_only, destructive, idempotent, open_world)
HINT_CASES = [
    (None, False, True, False, True),
    ({}, False, True, False, True),
    ("not a dict", False, True, False, True),
    ({"readOnlyHint": True}, True, False, False, True),
    ({"readOnlyHint": True, "destructiveHint": True}, True, False, False, True),
    ({"readOnlyHint": False}, False, True, False, True),
    ({"readOnlyHint": "true"}, False, True, False, True),
    ({"readOnlyHint": 1}, False, True, False, True),
    ({"readOnlyHint": None}, False, True, False, True),
    ({"destructiveHint": False}, False, False, False, True),
    ({"destructiveHint": True}, False, True, False, True),
    ({"destructiveHint": None}, False, True, False, True),
    ({"destructiveHint": "false"}, False, True, False, True),
    ({"destructiveHint": 0}, False, True, False, True),
    ({"idempotentHint": True}, False, True, True, True),
    ({"idempotentHint": False}, False, True, False, True),
    ({"idempotentHint": "true"}, False, True, False, True),
    ({"idempotentHint": 1}, False, True, False, True),
    ({"openWorldHint": False}, False, True, False, False),
    ({"openWorldHint": True}, False, True, False, True),
    ({"openWorldHint": None}, False, True, False, True),
    ({"openWorldHint": "false"}, False, True, False, True),
    ({"openWorldHint": 0}, False, True, False, True),
    ({"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
     True, False, True, False),
    ({"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": True},
     False, False, True, True),
]


@pytest.mark.parametrize("annotations, read_only, destructive, idempotent, open_world", HINT_CASES,
                         ids=[json.dumps(c[0]) for c in HINT_CASES])
def test_tool_12_15_behaviour_hint_rules_on_built_tools(annotations, read_only, destructive, idempotent, open_world):
    """MCP-TOOL-12, MCP-TOOL-13, MCP-TOOL-14, MCP-TOOL-15: the hint rules on every combination, on tools built with llm_mcp.Tool(server, definition).

    read_only only for readOnlyHint exactly true; destructive unless read-only or destructiveHint
    exactly false; idempotent only for idempotentHint exactly true; open_world unless openWorldHint
    exactly false.
    """
    definition: dict[str, Any] = {"name": "t", "inputSchema": {"type": "object"}}
    if annotations is not None:
        definition["annotations"] = annotations
    tool = llm_mcp.Tool(_bare_server(), definition)
    assert (tool.read_only, tool.destructive, tool.idempotent, tool.open_world) == (
        read_only, destructive, idempotent, open_world)


def test_tool_06_07_08_built_tool_defaults_and_ui():
    """MCP-TOOL-06, MCP-TOOL-07, MCP-TOOL-08: a bare definition and MCP Apps _meta on llm_mcp.Tool(server, definition)."""
    server = _bare_server()
    bare = llm_mcp.Tool(server, {"name": "bare"})
    assert (bare.name, bare.server_name, bare.title, bare.description) == ("bare", "bare", None, "")
    assert bare.output_schema is None
    assert bare.meta == {}
    assert bare.ui_uri is None and bare.visibility is None
    assert bare.server is server

    titled = llm_mcp.Tool(server, {"name": "x", "annotations": {"title": "From annotations"}})
    assert titled.title == "From annotations"
    both = llm_mcp.Tool(server, {"name": "x", "title": "Top", "annotations": {"title": "From annotations"}})
    assert both.title == "Top"

    app = llm_mcp.Tool(server, {"name": "app", "_meta": {"ui": {"resourceUri": "ui://a/b.html"}}})
    assert app.ui_uri == "ui://a/b.html"
    assert app.visibility == ["model", "app"]
    app_only = llm_mcp.Tool(server, {"name": "app", "_meta": {"ui": {"resourceUri": "ui://a/b.html",
                                                                     "visibility": ["app"]}}})
    assert app_only.visibility == ["app"]
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "$defs": {"x": {"type": "string"}}}
    assert llm_mcp.Tool(server, {"name": "s", "inputSchema": schema}).input_schema == schema


@pytest.mark.parametrize("fixture", ["echo_many_tools_command", "echo_http_many_tools_url"])
def test_expl_01_pagination_lists_every_tool_once(request, fixture):
    """MCP-EXPL-01: tools/list pages of 25 are all followed; t00..t59 each appear exactly once."""
    target = request.getfixturevalue(fixture)
    option = "url" if fixture.endswith("_url") else "command"
    with llm_mcp.mcp(**{option: target}, name="many") as server:
        assert server.protocol_version == MODERN
        names = [t.server_name for t in server.tools]
        expected_t = [f"t{i:02d}" for i in range(60)]
        counts = Counter(names)
        assert all(counts[name] == 1 for name in expected_t), {n: counts[n] for n in expected_t if counts[n] != 1}
        assert all(count == 1 for count in counts.values())
        assert names == VALID_TOOL_NAMES + expected_t
        assert server.tool("t59").description == "Trivial tool number 59."
        result = server.call("t59")
        assert result.text == "t59"
        assert result.is_error is False


def test_expl_01_invalid_header_tools_dropped_with_warning(conn, caplog):
    """MCP-EXPL-01: tools whose x-mcp-header names are invalid are dropped, each with a WARNING
    naming it; valid ones (including ``headered``, with valid x-mcp-header names) remain."""
    caplog.set_level(logging.WARNING, logger="llm_mcp.client")
    tools = conn.server.refresh_tools()
    names = [t.server_name for t in tools]
    for dropped in DROPPED_TOOL_NAMES:
        assert dropped not in names
    assert names == VALID_TOOL_NAMES
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and r.name.startswith("llm_mcp")]
    for dropped in DROPPED_TOOL_NAMES:
        assert any(dropped in r.getMessage() for r in warnings), [r.getMessage() for r in warnings]
    assert conn.server.tool("headered").input_schema["properties"]["region"]["x-mcp-header"] == "Region"


# --------------------------------------------------------------------------- calling


def test_expl_03_tools_are_methods(conn):
    """MCP-EXPL-03: server.echo(message=...) calls the echo tool; the Result is exact."""
    result = conn.server.echo(message="héllo, wörld")
    assert isinstance(result, llm_mcp.Result)
    assert result.text == "héllo, wörld"
    assert result.structured is None
    assert result.attachments == []
    assert result.is_error is False
    assert result.meta == expected_meta(conn)
    assert result.to_dict() == sent(conn, {"content": [text_block("héllo, wörld")]})
    with pytest.raises(AttributeError):
        conn.server.no_such_tool  # noqa: B018


def test_tool_09_tool_objects_call_their_server(conn):
    """MCP-TOOL-09: Tool.call() calls the tool; a tool_call keyword is not sent."""
    result = conn.server.tool("echo").call(message="via Tool.call", tool_call=object())
    assert result.text == "via Tool.call"
    assert result.to_dict() == sent(conn, {"content": [text_block("via Tool.call")]})


def test_expl_04_call_by_any_name(conn):
    """MCP-EXPL-04: server.call("files/read", ...) reaches a tool whose name is not an identifier."""
    result = conn.server.call("files/read", path="/srv/data/report.txt")
    assert result.text == "contents of /srv/data/report.txt"
    assert result.structured is None
    assert result.attachments == []
    assert result.is_error is False
    assert result.meta == expected_meta(conn)
    assert result.to_dict() == sent(conn, {"content": [text_block("contents of /srv/data/report.txt")]})
    assert conn.server.call("echo", message="by name").text == "by name"


def test_expl_05_text_of_simple_tools(conn):
    """MCP-EXPL-05: text-only results of sleep and progress are exact."""
    slept = conn.server.call("sleep", seconds=0)
    assert slept.text == "slept 0"
    assert slept.to_dict() == sent(conn, {"content": [text_block("slept 0")]})
    progressed = conn.server.call("progress", steps=2)
    assert progressed.text == "completed 2 steps"
    assert progressed.structured is None and progressed.attachments == [] and progressed.is_error is False
    assert progressed.meta == expected_meta(conn)
    assert progressed.to_dict() == sent(conn, {"content": [text_block("completed 2 steps")]})


def test_expl_06_structured_content(conn):
    """MCP-EXPL-06: add answers structuredContent {"sum": a+b}, matching its outputSchema."""
    a, b = 19, 23
    result = conn.server.add(a=a, b=b)
    assert result.structured == {"sum": 42}
    assert json.loads(result.text) == {"sum": 42}
    assert result.text == '{"sum": 42}'
    assert result.attachments == []
    assert result.is_error is False
    assert result.meta == expected_meta(conn)
    assert result.schema_errors == []
    assert result.to_dict() == sent(conn, {"content": [text_block('{"sum": 42}')], "structuredContent": {"sum": 42}})


def test_trans_07_structured_headers(conn):
    """MCP-TRANS-07, MCP-CONN-01: headered reports the Mcp-* headers: none over stdio, Mcp-Param-* on 2026-07-28 HTTP."""
    result = conn.server.headered(region="eu-west", count=3)
    assert result.is_error is False
    assert result.attachments == []
    headers = result.structured["headers"]
    if not conn.http:
        assert headers == {}
        assert result.text == "no http headers"
    elif conn.modern:
        assert headers == {
            "mcp-protocol-version": MODERN,
            "mcp-method": "tools/call",
            "mcp-name": "headered",
            "mcp-param-region": "eu-west",
            "mcp-param-count": "3",
        }
    else:
        assert headers["mcp-protocol-version"] == HANDSHAKE
    if conn.http:
        assert result.text == "\n".join(f"{k}: {headers[k]}" for k in sorted(headers))
    assert result.to_dict() == sent(conn, {"content": [text_block(result.text)],
                                           "structuredContent": {"headers": headers}})


def test_expl_07_image(conn):
    """MCP-EXPL-07: an image block becomes an image attachment holding the decoded PNG bytes."""
    result = conn.server.image()
    assert result.text == ""
    assert result.structured is None
    assert result.is_error is False
    assert len(result.attachments) == 1
    image = result.attachments[0]
    assert isinstance(image, llm_mcp.Attachment)
    assert image.kind == "image"
    assert image.mime_type == "image/png"
    assert image.content == E.PNG_BYTES
    assert image.content == base64.b64decode(E.PNG_B64)
    assert image.content.startswith(PNG_SIGNATURE) and len(image.content) == 69
    assert image.size == 69
    assert image.uri is None and image.name is None
    assert image.meta == {}
    assert result.meta == expected_meta(conn)
    assert result.to_dict() == sent(conn, {"content": [{"type": "image", "data": b64(E.PNG_BYTES),
                                                        "mimeType": "image/png"}]})


def _mixed(conn: Conn) -> llm_mcp.Result:
    return conn.server.mixed()


def test_expl_07_audio(conn):
    """MCP-EXPL-07: an audio block becomes an audio attachment holding the decoded WAV bytes."""
    result = _mixed(conn)
    audio = result.attachments[0]
    assert audio.kind == "audio"
    assert audio.mime_type == "audio/wav" == E.AUDIO_MIME
    assert audio.content == E.WAV_BYTES
    assert audio.content == base64.b64decode(E.WAV_B64)
    assert audio.content[:4] == b"RIFF" and audio.content[8:12] == b"WAVE"
    assert audio.size == len(E.WAV_BYTES) == 48
    assert audio.uri is None and audio.name is None and audio.meta == {}


def test_expl_07_embedded_resources_and_resource_link(conn):
    """MCP-EXPL-07: mixed answers text, audio, an embedded text resource, an embedded blob and a
    resource link; attachments keep the order, and the link is not fetched."""
    result = _mixed(conn)
    assert result.text == "mixed content follows" == E.MIXED_TEXT
    assert result.structured is None
    assert result.is_error is False
    assert result.meta == expected_meta(conn)
    assert [a.kind for a in result.attachments] == ["audio", "resource", "resource", "resource_link"]

    text_resource = result.attachments[1]
    assert (text_resource.kind, text_resource.uri, text_resource.mime_type, text_resource.content) == (
        "resource", "file:///notes/plan.md", "text/markdown", "# Plan")

    blob = result.attachments[2]
    assert blob.kind == "resource"
    assert blob.uri == "file:///images/pixel.png" == E.EMBEDDED_BLOB_URI
    assert blob.content == E.PNG_BYTES

    link = result.attachments[3]
    assert link.kind == "resource_link"
    assert link.uri == "file:///reports/q3.pdf"
    assert link.name == "q3-report"
    assert link.mime_type == "application/pdf"
    assert link.content is None
    assert link.size == 1234
    assert link.meta == {}

    assert result.to_dict() == sent(conn, {"content": [
        text_block("mixed content follows"),
        {"type": "audio", "data": b64(E.WAV_BYTES), "mimeType": "audio/wav"},
        {"type": "resource", "resource": {"uri": "file:///notes/plan.md", "mimeType": "text/markdown",
                                          "text": "# Plan"}},
        {"type": "resource", "resource": {"uri": "file:///images/pixel.png", "blob": b64(E.PNG_BYTES)}},
        {"type": "resource_link", "uri": "file:///reports/q3.pdf", "name": "q3-report", "title": "Q3 report",
         "mimeType": "application/pdf", "size": 1234},
    ]})


def test_case_c09_text_and_embedded_text_resource(conn):
    """Case C09, MCP-EXPL-07: text plus an embedded text resource: the text stays the text, the
    resource becomes an attachment with its uri, MIME type and str content."""
    result = _mixed(conn)
    assert result.text == E.MIXED_TEXT
    embedded = [a for a in result.attachments if a.kind == "resource" and a.uri == E.EMBEDDED_TEXT_URI]
    assert len(embedded) == 1
    attachment = embedded[0]
    assert attachment.uri == "file:///notes/plan.md"
    assert attachment.mime_type == "text/markdown"
    assert attachment.content == "# Plan"
    assert isinstance(attachment.content, str)
    assert attachment.size == len("# Plan".encode())
    assert attachment.meta == {}
    assert "# Plan" not in result.text


def test_case_c10_blob_without_mime_type(conn):
    """Case C10, MCP-EXPL-07: an embedded blob without mimeType: no exception; mime_type is sniffed
    (image/png) or application/octet-stream; content is the decoded bytes."""
    result = _mixed(conn)
    blobs = [a for a in result.attachments if a.uri == E.EMBEDDED_BLOB_URI]
    assert len(blobs) == 1
    blob = blobs[0]
    assert blob.kind == "resource"
    assert blob.mime_type in ("image/png", "application/octet-stream")
    assert isinstance(blob.content, bytes)
    assert blob.content == base64.b64decode(E.PNG_B64) == E.PNG_BYTES
    assert blob.size == 69
    assert "mimeType" not in result.to_dict()["content"][3]["resource"]


def test_expl_09_is_error(conn):
    """MCP-EXPL-09: isError true is a Result with is_error True (no exception), text kept."""
    result = conn.server.fail()
    assert result.is_error is True
    assert result.text == "quota exceeded" == E.FAIL_TEXT
    assert result.structured is None
    assert result.attachments == []
    assert result.meta == expected_meta(conn)
    assert result.to_dict() == sent(conn, {"content": [text_block("quota exceeded")], "isError": True})


def test_expl_09_invalid_arguments_are_a_tool_error(conn):
    """MCP-EXPL-09: the server's own argument check answers isError; the client passes it on."""
    result = conn.server.call("add", a="two", b=2)
    assert result.is_error is True
    assert result.text.startswith("Invalid arguments for add:")
    assert result.structured is None
    assert result.to_dict() == sent(conn, {"content": [text_block(result.text)], "isError": True})


def test_expl_08_result_meta(conn):
    """MCP-EXPL-08: the result's _meta keys come through as sent."""
    result = conn.server.with_meta()
    assert result.text == "has meta"
    assert result.meta["com.example/request_id"] == "abc123"
    assert result.meta == expected_meta(conn, {"com.example/request_id": "abc123"})
    if conn.modern:
        assert result.meta[SERVER_INFO_KEY] == {"name": "echo-server", "version": "1.0.0"}
    else:
        assert result.meta == E.WITH_META_RESULT_META
    assert result.structured is None and result.attachments == [] and result.is_error is False
    assert result.to_dict() == sent(conn, {"content": [text_block("has meta")],
                                           "_meta": {"com.example/request_id": "abc123"}})


def test_to_dict_is_a_deep_copy(conn):
    """to_dict() is what the server sent, and changing it changes nothing in the Result."""
    result = conn.server.with_meta()
    first = result.to_dict()
    first["content"][0]["text"] = "changed"
    first["_meta"]["com.example/request_id"] = "changed"
    second = result.to_dict()
    assert second["content"][0]["text"] == "has meta"
    assert second["_meta"]["com.example/request_id"] == "abc123"
    assert result.text == "has meta"
    assert result.meta["com.example/request_id"] == "abc123"


# --------------------------------------------------------------------------- C13 (the violating case is in test_stdio.py)


def test_case_c13_conforming_structured_content_has_no_schema_errors(conn, caplog):
    """Case C13: add's structuredContent matches its outputSchema: no schema errors, no warning."""
    caplog.set_level(logging.WARNING, logger="llm_mcp.client")
    result = conn.server.add(a=-4, b=4)
    assert result.structured == {"sum": 0}
    assert result.schema_errors == []
    assert not [r for r in caplog.records if "outputSchema" in r.getMessage()]


def test_result_without_content_is_reported():
    """A tools/call result must carry content; one without it is read, and the omission reported."""
    from llm_mcp.client.result import Result

    result = Result({"structuredContent": {"a": 1}})
    assert result.text == "" and result.structured == {"a": 1}
    assert result.schema_errors == ["content is missing (the protocol requires it)"]
    assert Result({"content": []}).schema_errors == []


def test_a_result_attribute_it_lacks_is_named_in_the_error_as_python_names_it():
    """Reading an attribute a Result lacks raises ``AttributeError`` worded as Python words it
    (the class and the name), and ``hasattr``/``getattr`` with a default work; the parts made on
    first read (``meta``, ``schema_errors``, ``attachments``) are attributes like any other."""
    from llm_mcp.client.result import Result

    result = Result({"content": [{"type": "text", "text": "hi"}], "_meta": {"k": 1}})
    with pytest.raises(AttributeError) as info:
        result.structured_content
    assert str(info.value) == "'Result' object has no attribute 'structured_content'"
    assert info.value.name == "structured_content" and info.value.obj is result
    assert not hasattr(result, "nope") and getattr(result, "nope", 7) == 7
    result.schema_errors.append("checked")
    assert (result.meta, result.schema_errors, result.attachments) == ({"k": 1}, ["checked"], [])


class _Block(dict):
    pass


class _Text(str):
    pass


@pytest.mark.parametrize("content, text, errors", [
    ([{"type": "text", "text": "one"}], "one", []),
    ([_Block(type="text", text=_Text("sub"))], "sub", []),
    ([7], "", ["content[0] is not an object; skipped"]),
    ([{"type": "text", "text": 5}], "", ["content[0] is a text block whose text is not a string; skipped"]),
    ([{"type": "text"}], "", ["content[0] is a text block whose text is not a string; skipped"]),
    ([{"type": "nonsense", "text": "x"}], "", []),
    ([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "a\nb", []),
    ([], "", []),
    ({"type": "text", "text": "a"}, "", ["content is not a list; ignored"]),
    ("a", "", ["content is not a list; ignored"]),
])
def test_a_result_of_one_block_reads_as_any_other(content, text, errors, caplog):
    """The usual answer, one text block, is read at once; every other single block, a block of
    a subclass of dict or str, several blocks and content that is not a list are read as
    before: the text, what was skipped (reported and logged), the rest of the result kept."""
    from llm_mcp.client.result import Result

    with caplog.at_level(logging.WARNING, logger="llm_mcp.client"):
        outcome = Result({"content": content, "_meta": [], "isError": 1, "structuredContent": 0}, tool_name="t")
    assert (outcome.text, outcome.schema_errors, outcome.attachments) == (text, errors, [])
    assert (outcome.meta, outcome.is_error, outcome.structured) == ({}, False, 0)
    assert len([r for r in caplog.records if r.getMessage().startswith("MCP tool t:")]) == len(errors)


def test_malformed_content_blocks_are_skipped_and_reported(scripted):
    """One bad block does not lose the result of a tool that has run."""
    blocks = [{"type": "text", "text": "kept"}, {"type": "text", "text": 5}, {"type": "image", "data": "!!!!"},
              {"type": "resource", "resource": "nope"}, 7]
    server = scripted(modern(lambda r: result(r, {"content": blocks})))
    with llm_mcp.mcp(url=server.url) as client:
        outcome = client.call("t")
    assert outcome.text == "kept" and outcome.attachments == []
    assert [e.split(" ")[0] for e in outcome.schema_errors] == ["content[1]", "content[2]", "content[3]", "content[4]"]


def test_hostile_output_schema_cannot_stall_or_break_calls(scripted):
    """An outputSchema with a catastrophic regex, an unknown type or a remote $ref costs nothing."""
    schemas = {"redos": {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}},
               "type": {"type": "object", "properties": {"s": {"type": "nonsense"}}},
               "ref": {"$ref": "http://127.0.0.1:9/never.json"}}
    tools = [{"name": name, "inputSchema": {"type": "object"}, "outputSchema": schema}
             for name, schema in schemas.items()]
    value = {"s": "a" * 40 + "!"}
    server = scripted(modern(lambda r: result(r, {"content": [], "structuredContent": value}), tools))
    started = time.monotonic()
    with llm_mcp.mcp(url=server.url) as client:
        outcomes = {name: client.call(name) for name in schemas}
    assert time.monotonic() - started < 5
    assert outcomes["redos"].schema_errors == []
    assert all(o.structured == value for o in outcomes.values())
    assert outcomes["type"].schema_errors and outcomes["ref"].schema_errors


def test_endless_paging_is_refused(scripted):
    pages = iter(range(10**9))

    def script(request):
        if request["method"] == "server/discover":
            return result(request, DISCOVER)
        return result(request, {"tools": [], "nextCursor": f"page-{next(pages)}"})
    server = scripted(script)
    with pytest.raises(llm_mcp.MCPError, match="pages"), llm_mcp.mcp(url=server.url) as client:
        client.tools


@pytest.mark.parametrize("data", [["2026-07-28"], "2026-07-28", None])
def test_ill_typed_error_data_is_an_mcp_error(scripted, data):
    """-32022 whose data is not an object: an MCPError, not an AttributeError."""
    def script(request):
        return answer({"jsonrpc": "2.0", "id": request["id"],
                       "error": {"code": -32022, "message": "no", "data": data}}, status=400)
    server = scripted(script)
    with pytest.raises(llm_mcp.MCPError), llm_mcp.mcp(url=server.url) as client:
        client.protocol_version


def test_output_check_keeps_a_property_named_pattern(scripted):
    """Skipping regex keywords must not drop a property that is merely *named* "pattern"."""
    schema = {"type": "object", "properties": {"pattern": {"type": "integer"}, "s": {"pattern": "^(a+)+$"}}}
    tools = [{"name": "t", "inputSchema": {"type": "object"}, "outputSchema": schema}]
    server = scripted(modern(lambda r: result(r, {"content": [], "structuredContent": {"pattern": "x", "s": "!"}}),
                             tools))
    with llm_mcp.mcp(url=server.url) as client:
        outcome = client.call("t")
    assert len(outcome.schema_errors) == 1 and "'x' is not of type 'integer'" in outcome.schema_errors[0]
