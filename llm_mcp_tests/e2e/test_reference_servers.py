"""The client against the official npm reference servers: server-everything and server-filesystem
(tools, and server-everything's resources, templates, prompts and completions).

server-everything runs twice (stdio and ``streamableHttp``), server-filesystem over stdio
with ``filesystem_root`` as its allowed directory. Each server is opened once per module
(``with server:``) and closed at the end. These servers speak the handshake era.
Skipped when the npm packages or node are not installed (see ``conftest.py``).
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

import llm_mcp

HANDSHAKE_REVISIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
EVERYTHING_TOOLS = {"echo", "get-sum", "get-tiny-image", "get-structured-content", "get-annotated-message",
                    "get-resource-reference", "get-resource-links"}
FS_FILE = "llm_mcp_reference_test.txt"
FS_CONTENT = "first line: reference test\nsecond line: ünïcödé ✓\n"


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module", params=["stdio", "http"])
def everything(request: pytest.FixtureRequest):
    """server-everything, opened once per transport for the module and closed at its end."""
    if request.param == "stdio":
        server = llm_mcp.mcp(command=request.getfixturevalue("everything_stdio_command"), name="everything")
    else:
        server = llm_mcp.mcp(url=request.getfixturevalue("everything_http_url"), name="everything")
    with server:
        yield server


@pytest.fixture(scope="module")
def fs_file(filesystem_root: Path) -> Path:
    path = filesystem_root / FS_FILE
    path.write_text(FS_CONTENT, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def filesystem(filesystem_command: list[str], fs_file: Path):
    """server-filesystem over stdio, opened once for the module and closed at its end."""
    with llm_mcp.mcp(command=filesystem_command, name="filesystem") as server:
        yield server


# --------------------------------------------------------------------------- server-everything


def test_everything_connects_in_the_handshake_era(everything):
    """MCP-CONN-02, MCP-EXPL-02: the negotiated revision is a handshake one; the identity is the server's."""
    assert everything.protocol_version in HANDSHAKE_REVISIONS
    assert everything.server_info["name"] == "mcp-servers/everything"
    assert isinstance(everything.server_info.get("version"), str)
    assert "tools" in everything.capabilities


def test_everything_lists_tools(everything):
    """MCP-EXPL-01, MCP-TOOL-05, MCP-TOOL-12: tools listed once each, with their schema and hints."""
    tools = everything.tools
    names = [t.name for t in tools]
    assert len(names) == len(set(names))
    assert EVERYTHING_TOOLS <= set(names)
    echo = everything.tool("echo")
    assert echo.server_name == "echo"
    assert echo.description
    assert echo.input_schema["type"] == "object"
    assert echo.input_schema["properties"]["message"]["type"] == "string"
    assert echo.input_schema["required"] == ["message"]
    assert echo.read_only is True and echo.destructive is False
    assert everything.tool("get-structured-content").output_schema is not None


def test_everything_echo(everything):
    """MCP-EXPL-03, MCP-EXPL-05: echo answers "Echo: <message>"."""
    message = "hello from llm_mcp — ✓"
    result = everything.call("echo", message=message)
    assert result.text == f"Echo: {message}"
    assert result.is_error is False
    assert result.attachments == []
    assert result.structured is None
    assert result.to_dict()["content"] == [{"type": "text", "text": f"Echo: {message}"}]


@pytest.mark.parametrize("a, b", [(17, 25), (-3, 10), (1.5, 2.25)])
def test_everything_get_sum(everything, a, b):
    """MCP-EXPL-04, MCP-EXPL-05: get-sum's text states a + b."""
    result = everything.call("get-sum", a=a, b=b)
    assert result.is_error is False
    numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", result.text)]
    assert numbers[-1] == a + b, result.text


def test_everything_get_tiny_image(everything):
    """MCP-EXPL-07: get-tiny-image answers a PNG image attachment with the decoded bytes."""
    result = everything.call("get-tiny-image")
    assert result.is_error is False
    images = [a for a in result.attachments if a.kind == "image"]
    assert len(images) == 1
    image = images[0]
    assert image.mime_type == "image/png"
    assert isinstance(image.content, bytes)
    assert image.content.startswith(PNG_SIGNATURE)
    raw = [b for b in result.to_dict()["content"] if b["type"] == "image"][0]
    assert image.content == base64.b64decode(raw["data"])
    assert image.size == len(image.content)


def test_everything_get_structured_content(everything):
    """MCP-EXPL-06: structuredContent is a dict, equal to the JSON in the text, conforming to the outputSchema."""
    result = everything.call("get-structured-content", location="New York")
    assert result.is_error is False
    assert isinstance(result.structured, dict)
    assert result.structured == result.to_dict()["structuredContent"]
    try:
        from_text = json.loads(result.text)
    except ValueError:
        from_text = None
    if from_text is not None:
        assert from_text == result.structured
    assert result.schema_errors == []


def test_everything_get_annotated_message(everything):
    """MCP-EXPL-05, MCP-EXPL-07: annotated text plus an image."""
    result = everything.call("get-annotated-message", messageType="success", includeImage=True)
    assert result.is_error is False
    assert result.text
    raw_content = result.to_dict()["content"]
    assert result.text == "\n".join(b["text"] for b in raw_content if b["type"] == "text")
    assert [a.kind for a in result.attachments] == ["image"]
    assert result.attachments[0].mime_type == "image/png"
    assert result.attachments[0].content.startswith(PNG_SIGNATURE)


def test_everything_get_resource_reference_text(everything):
    """MCP-EXPL-07: an embedded text resource becomes a resource attachment with its uri and str content."""
    result = everything.call("get-resource-reference", resourceType="Text", resourceId=1)
    assert result.is_error is False
    resources = [a for a in result.attachments if a.kind == "resource"]
    assert len(resources) == 1
    resource = resources[0]
    raw = [b for b in result.to_dict()["content"] if b["type"] == "resource"][0]["resource"]
    assert resource.uri == raw["uri"]
    assert resource.uri.startswith("demo://resource/")
    assert resource.uri.endswith("/1")
    assert resource.mime_type == raw["mimeType"]
    assert isinstance(resource.content, str)
    assert resource.content == raw["text"]
    assert "Resource 1" in resource.content
    assert resource.uri not in [a.uri for a in result.attachments if a is not resource]


def test_everything_get_resource_reference_blob(everything):
    """MCP-EXPL-07: an embedded blob resource becomes a resource attachment with the decoded bytes."""
    result = everything.call("get-resource-reference", resourceType="Blob", resourceId=2)
    assert result.is_error is False
    resources = [a for a in result.attachments if a.kind == "resource"]
    assert len(resources) == 1
    resource = resources[0]
    raw = [b for b in result.to_dict()["content"] if b["type"] == "resource"][0]["resource"]
    assert resource.uri == raw["uri"]
    assert resource.uri.endswith("/2")
    assert "blob" in raw
    assert isinstance(resource.content, bytes)
    assert resource.content == base64.b64decode(raw["blob"])
    if raw.get("mimeType"):
        assert resource.mime_type == raw["mimeType"]


def test_everything_get_resource_links(everything):
    """MCP-EXPL-07: resource links become resource_link attachments with uri and name, not fetched."""
    result = everything.call("get-resource-links", count=3)
    assert result.is_error is False
    links = [a for a in result.attachments if a.kind == "resource_link"]
    assert len(links) == 3
    raw_links = [b for b in result.to_dict()["content"] if b["type"] == "resource_link"]
    for link, raw in zip(links, raw_links):
        assert link.uri == raw["uri"]
        assert link.uri.startswith("demo://resource/")
        assert link.name == raw["name"]
        assert link.mime_type == raw.get("mimeType")
        assert link.content is None
    assert len({link.uri for link in links}) == 3


def test_everything_stdio_process_closed_by_with(everything_stdio_command):
    """The stdio server process is gone once the ``with`` block ends."""
    server = llm_mcp.mcp(command=everything_stdio_command, name="everything-closing")
    with server:
        assert server.call("echo", message="bye").text == "Echo: bye"
        process = server.client.transport.process
        assert process is not None and process.poll() is None
    assert process.poll() is not None


# --------------------------------------------------------------------------- server-filesystem


def test_filesystem_connects_and_lists_tools(filesystem):
    """MCP-CONN-02, MCP-EXPL-01: handshake revision; the file tools are listed."""
    assert filesystem.protocol_version in HANDSHAKE_REVISIONS
    names = [t.name for t in filesystem.tools]
    assert len(names) == len(set(names))
    assert {"read_text_file", "list_directory", "write_file"} <= set(names)
    assert filesystem.tool("read_text_file").read_only is True
    assert filesystem.tool("write_file").read_only is False


def test_filesystem_read_text_file(filesystem, fs_file):
    """MCP-EXPL-04, MCP-EXPL-05: reading a file we wrote gives back its exact content."""
    result = filesystem.call("read_text_file", path=str(fs_file))
    assert result.is_error is False
    assert result.text == FS_CONTENT
    if result.structured is not None:
        assert result.structured == {"content": FS_CONTENT}
        assert result.schema_errors == []


def test_filesystem_read_file_deprecated_alias(filesystem, fs_file):
    """MCP-EXPL-05: the older read_file tool answers the same text."""
    if filesystem.tool("read_file") is None:
        pytest.fail("server-filesystem no longer lists read_file")
    assert filesystem.read_file(path=str(fs_file)).text == FS_CONTENT


def test_filesystem_list_directory(filesystem, filesystem_root, fs_file):
    """MCP-EXPL-05: list_directory names our file, the fixture files and the sub-directory."""
    result = filesystem.list_directory(path=str(filesystem_root))
    assert result.is_error is False
    lines = result.text.splitlines()
    assert f"[FILE] {FS_FILE}" in lines
    assert "[FILE] hello.txt" in lines
    assert "[DIR] sub" in lines


def test_filesystem_outside_root_is_a_tool_error(filesystem):
    """MCP-EXPL-09: a path outside the allowed directory is a tool error (is_error), not an exception."""
    result = filesystem.call("read_text_file", path="/etc/hostname")
    assert result.is_error is True
    assert result.text


DOCS = "demo://resource/static/document/"


def test_everything_resources(everything) -> None:
    """MCP-RES-01, MCP-RES-02, MCP-RES-04: its documents are listed without content, then read as text."""
    resources = everything.refresh_resources()
    assert resources and all(isinstance(r, llm_mcp.Resource) for r in resources)
    listing = everything.client.list("resources/list", "resources")
    assert [(r.uri, r.name, r.mime_type) for r in resources] == [
        (e["uri"], e["name"], e.get("mimeType")) for e in listing]
    architecture = next(r for r in resources if r.uri == DOCS + "architecture.md")
    assert (architecture.name, architecture.mime_type, architecture.loaded) == ("architecture.md", "text/markdown",
                                                                                False)
    text = architecture.content
    assert isinstance(text, str) and text.startswith("# Everything Server")
    raw = everything.client.request("resources/read", {"uri": architecture.uri})["contents"][0]["text"]
    assert text == raw


def test_everything_templates_expand_and_read(everything) -> None:
    """MCP-RES-08, MCP-RES-09, MCP-RES-04: its dynamic templates, filled in; the blob one decodes to bytes."""
    templates = {t.name: t for t in everything.resource_templates}
    text_template = templates["Dynamic Text Resource"]
    assert text_template.uri == "demo://resource/dynamic/text/{resourceId}"
    assert text_template.variables == ["resourceId"]
    text = everything.resource(text_template.uri, resourceId=3)
    assert text.uri == "demo://resource/dynamic/text/3"
    assert isinstance(text.content, str) and text.content.startswith("Resource 3: This is a plaintext resource")
    blob = templates["Dynamic Blob Resource"].read(resourceId="2")
    assert isinstance(blob.content, bytes) and blob.content.startswith(b"Resource 2: This is a base64 blob")
    assert blob.as_attachment().content == blob.content.decode("utf-8")  # a text/plain blob goes as text


def test_everything_not_found_is_an_mcp_error(everything) -> None:
    """MCP-RES-11: this server answers -32602 for an unknown resource; outside chats that is an MCPError."""
    with pytest.raises(llm_mcp.MCPError) as caught:
        everything.resource("demo://resource/nothing")
    assert caught.value.code == -32602


def test_everything_prompts(everything) -> None:
    """MCP-PROMPT-01, MCP-PROMPT-02, MCP-PROMPT-03: prompts with argument names; filled in with arguments."""
    prompts = {p.name: p for p in everything.refresh_prompts()}
    assert {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"} <= set(prompts)
    assert prompts["args-prompt"].arguments == ["city", "state"]
    assert [a.required for a in prompts["args-prompt"].argument_definitions] == [True, False]
    assert prompts["simple-prompt"].arguments == []
    weather = everything.prompt("args-prompt", city="Paris", state="Texas")
    assert [(m.role, m.content) for m in weather.messages] == [("user", "What's weather in Paris, Texas?")]
    assert [(m.role, m.content) for m in prompts["simple-prompt"].messages] == [
        ("user", "This is a simple prompt without arguments.")]
    embedded = everything.prompt("resource-prompt", resourceType="Text", resourceId="4")
    first, second = embedded.messages
    assert first.content.startswith("This prompt includes the Text resource with id: 4")
    [attachment] = second.attachments
    assert (attachment.kind, attachment.uri) == ("resource", "demo://resource/dynamic/text/4")
    assert attachment.content.startswith("Resource 4: This is a plaintext resource")


def test_everything_completions(everything) -> None:
    """MCP-PROMPT-05, MCP-PROMPT-06: prompt arguments completed with context; a template variable too."""
    team = next(p for p in everything.prompts if p.name == "completable-prompt")
    assert team.suggest(department="S") == ["Sales", "Support"]
    assert team.suggest(name="", department="Sales") == ["David", "Eve", "Frank"]
    assert team.suggest(name="", department="Engineering") == ["Alice", "Bob", "Charlie"]
    text_template = next(t for t in everything.resource_templates if t.name == "Dynamic Text Resource")
    assert text_template.suggest(resourceId="3") == ["3"]
    assert text_template.suggest(resourceId="x") == []
