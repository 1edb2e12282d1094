"""Resources, templates, prompts and completions of the npm reference server
``@modelcontextprotocol/server-everything`` (handshake era), over stdio and Streamable HTTP.

Skipped when the npm packages or node are not installed (see ``conftest.py``).
"""

from __future__ import annotations

import pytest

import llm_mcp

DOCS = "demo://resource/static/document/"


@pytest.fixture(scope="module", params=["stdio", "http"])
def everything(request: pytest.FixtureRequest):
    """server-everything, opened once per transport for the module."""
    if request.param == "stdio":
        server = llm_mcp.mcp(command=request.getfixturevalue("everything_stdio_command"), name="everything")
    else:
        server = llm_mcp.mcp(url=request.getfixturevalue("everything_http_url"), name="everything")
    with server:
        yield server


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
