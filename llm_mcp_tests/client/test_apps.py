"""MCP extensions and MCP Apps on the client: the ``extensions`` setting on the wire in both eras,
App tools (``ui_uri``, ``visibility``), ``ui://`` resources and their ``meta["ui"]``, whole results.

A real kit server (``support/servers/apps.py``) over Streamable HTTP and stdio, on 2026-07-28 and on the
``initialize`` handshake; it records the client capabilities each call brought.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import llm_mcp
from llm_mcp.client.extensions import declared_extensions
from llm_mcp.client.oauth.grants import CLIENT_CREDENTIALS_EXTENSION, ENTERPRISE_EXTENSION

from llm_mcp_tests.support.apps import AppsServer, apps_server

UI = "io.modelcontextprotocol/ui"
APP_MIME = "text/html;profile=mcp-app"
FORECAST = "ui://weather/forecast"


@pytest.fixture(scope="module", params=[("modern", "http"), ("handshake", "http"), ("modern", "stdio"),
                                        ("handshake", "stdio")], ids=lambda p: "-".join(p))
def apps(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppsServer]:
    era, transport = request.param
    with apps_server(era, tmp_path_factory.mktemp("apps"), transport=transport,
                     connect="http://127.0.0.1:9") as server:
        yield server


def declared(server: llm_mcp.MCP) -> dict:
    return json.loads(server.call("capabilities").text)


def test_mcp_ext_01_settings_passed_through_on_every_request(apps):
    """MCP-EXT-01 (and MCP-EXT-02 on the handshake era): a dict of extensions reaches the server
    unchanged under the client capabilities, on every request."""
    settings = {"com.example/audit": {"level": "full", "nested": {"list": [1, "two", None]}}}
    server = apps.mcp(extensions=settings)
    try:
        first, second = declared(server), declared(server)
    finally:
        server.close()
    assert first["extensions"] == settings and second["extensions"] == settings


def test_mcp_ext_02_declared_in_initialize_for_older_servers(apps):
    """MCP-EXT-02: on a handshake-era server the extensions are the initialize capabilities (the
    server's session keeps them); on 2026-07-28 the request's ``_meta`` carries them."""
    server = apps.mcp(extensions="apps")
    try:
        seen = declared(server)
        era = server.client.protocol_version
    finally:
        server.close()
    assert seen["extensions"] == {UI: {"mimeTypes": [APP_MIME]}}
    assert (era == "2026-07-28") == (apps.era == "modern")


def test_mcp_ext_03_inline_one_name_a_list_or_a_dict(apps):
    """MCP-EXT-03: ``extensions=`` on an inline server takes one name ({} settings), names, or a dict."""
    for value, expected in (("com.example/one", {"com.example/one": {}}),
                            (["com.example/a", "apps"], {"com.example/a": {}, UI: {"mimeTypes": [APP_MIME]}}),
                            ({"com.example/b": {"x": 1}}, {"com.example/b": {"x": 1}})):
        server = apps.mcp(extensions=value)
        try:
            assert declared(server)["extensions"] == expected, value
        finally:
            server.close()


def test_mcp_ext_03_class_attribute_and_bad_values():
    """MCP-EXT-03: a class declares them the same way; bad values are refused when the server is built."""
    class Weather(llm_mcp.MCP):
        url = "http://127.0.0.1:9/mcp"
        extensions = ["apps", "com.example/audit"]

    assert Weather().declared_capabilities("handshake")["extensions"] == {
        UI: {"mimeTypes": [APP_MIME]}, "com.example/audit": {}}
    for bad, words in ((3, "a name, a list"), (["apps", 7], "non-empty string"), ({"x": "full"}, "must be a dict"),
                       ("", None)):
        if words is None:
            assert llm_mcp.mcp(url="http://127.0.0.1:9/mcp", extensions=bad).declared_capabilities("modern") == {
                "elicitation": {"form": {}, "url": {}}}
            continue
        with pytest.raises(ValueError, match=words):
            llm_mcp.mcp(url="http://127.0.0.1:9/mcp", extensions=bad)


def test_mcp_ext_04_short_name_apps():
    """MCP-EXT-04: ``"apps"`` stands for io.modelcontextprotocol/ui with the App MIME type; settings given
    for it in a dict win; each call gets a fresh dict (declaring twice shares nothing). ``"tasks"`` sits beside
    it (io.modelcontextprotocol/tasks with ``{}``, see test_tasks.py)."""
    first = declared_extensions("apps")
    assert first == {UI: {"mimeTypes": [APP_MIME]}}
    first[UI]["mimeTypes"].append("changed")
    assert declared_extensions(["apps"]) == {UI: {"mimeTypes": [APP_MIME]}}
    assert declared_extensions({"apps": {"mimeTypes": ["x"]}}) == {UI: {"mimeTypes": ["x"]}}
    assert declared_extensions(["apps", "tasks"]) == {UI: {"mimeTypes": [APP_MIME]},
                                                      "io.modelcontextprotocol/tasks": {}}


def test_mcp_ext_05_oauth_adds_its_authorization_extensions():
    """MCP-EXT-05: client credentials and identity_provider add their authorization extensions
    beside the declared ones (no request needed: the declared capabilities are what every request sends)."""
    server = llm_mcp.mcp(url="http://127.0.0.1:9/mcp", extensions="apps",
                         oauth={"grant": "client_credentials", "client_id": "reports", "client_secret": "s"})
    assert server.declared_capabilities("modern")["extensions"] == {UI: {"mimeTypes": [APP_MIME]},
                                                                     CLIENT_CREDENTIALS_EXTENSION: {}}
    enterprise = llm_mcp.mcp(url="http://127.0.0.1:9/mcp",
                             oauth={"identity_provider": {"issuer": "https://idp.example", "client_id": "c", "id_token": "t"},
                                    "client_id": "x"})
    assert ENTERPRISE_EXTENSION in enterprise.declared_capabilities("handshake")["extensions"]


def test_mcp_apps_01_ui_uri_and_visibility(apps):
    """MCP-APPS-01: ui_uri from _meta.ui.resourceUri (and the deprecated flat key); visibility as sent,
    ["model", "app"] by default; None for a tool without a UI."""
    server = apps.mcp(extensions="apps")
    try:
        got = {t.server_name: (t.ui_uri, t.visibility) for t in server.tools}
    finally:
        server.close()
    assert got["forecast"] == (FORECAST, ["model", "app"])
    assert got["refresh"] == (FORECAST, ["app"])
    assert got["model_only"] == (FORECAST, ["model"])
    assert got["legacy_forecast"] == ("ui://weather/listed", ["model", "app"])
    assert got["plain"] == (None, None)


def test_mcp_apps_02_ui_resource_with_meta_ui(apps):
    """MCP-APPS-02: the UI resource's MIME type, HTML and meta["ui"] (from the content item; from the
    listing entry when the item has none)."""
    server = apps.mcp(extensions="apps")
    try:
        resource = server.resource(server.tool("forecast").ui_uri)
        assert resource.mime_type == APP_MIME
        html = (Path(__file__).resolve().parents[1] / "support" / "servers" / "forecast_app.html").read_text()
        assert resource.content == html
        assert resource.meta["ui"]["csp"]["connectDomains"] == ["http://127.0.0.1:9"]
        assert resource.meta["ui"]["prefersBorder"] is True
        unlisted = server.resource("ui://weather/listed")  # before listing: nothing to fall back on
        assert "ui" not in unlisted.meta
        server.resources  # noqa: B018 - the listing is what the fallback reads
        listed = server.resource("ui://weather/listed")
        assert listed.meta["ui"] == {"prefersBorder": False, "domain": "listed.example"}
    finally:
        server.close()


def test_mcp_apps_07_10_whole_result_by_server_name(apps):
    """MCP-APPS-07, MCP-APPS-10: ``call(server_name)`` returns the whole Result; to_dict() is what the
    server sent (content, structuredContent, _meta, isError); ui_uri names the App."""
    server = apps.mcp(extensions="apps")
    try:
        result = server.call("refresh", city="Bergen")  # an app-only tool, called directly
        failed = server.call("failing_forecast")
        plain = server.call("plain")
    finally:
        server.close()
    reading = result.structured["reading"]
    assert result.structured == {"city": "Bergen", "reading": reading}
    sent = result.to_dict()
    assert sent["content"] == [{"type": "text", "text": json.dumps(result.structured, indent=2)}]
    assert sent["structuredContent"] == {"city": "Bergen", "reading": reading}
    assert sent is not result.to_dict() and sent == result.to_dict()  # a copy each time
    assert result.ui_uri == FORECAST and plain.ui_uri is None
    assert failed.is_error and failed.ui_uri == FORECAST
    assert failed.to_dict()["isError"] is True and failed.to_dict()["_meta"]["io.example/trace"] == "t-1"
    # 2026-07-28 servers add their serverInfo to every result's _meta: kept as sent
    assert ("io.modelcontextprotocol/serverInfo" in failed.to_dict()["_meta"]) == (apps.era == "modern")
    assert apps.received()[-3]["arguments"] == {"city": "Bergen"}


@pytest.mark.parametrize("entry", ["https://a.example\n", "https://a.example/x\n", "a.example\n",
                                   "https://a.example\r", "https://a.example\nscript-src *",
                                   "https://a.example/\x00", "https://a.example/\x7f"])
def test_csp_domain_with_a_line_break_is_dropped(entry):
    """A declared domain ending in (or holding) a line break or a control character never reaches the
    policy: it would split the sandbox's Content-Security-Policy header (Django refuses it: a 500)."""
    from llm_mcp.client.app_policy import content_security_policy, source_list

    assert source_list([entry, "https://ok.example"]) == ["https://ok.example"]
    policy = content_security_policy({"connectDomains": [entry], "resourceDomains": [entry]})
    assert policy.isprintable() and "a.example" not in policy
