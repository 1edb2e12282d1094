"""HTTP contexts: the httpx settings a group of servers connects with, for MCP and OAuth requests
alike, while chats keep the global ones (MCP-ADDR-02, MCP-ADDR-03, MCP-ADDR-04).

Real servers on 127.0.0.1: the echo server, the protected MCP server and its authorization
server (machine_servers), the scripted model through the OpenAI SDK.
"""

from __future__ import annotations

import httpx
import pytest

import llm_mcp
from llm_mcp.testing.scripted_model import reply, tool_call

from llm_mcp_tests.support.chats import make_chat
from llm_mcp_tests.support.machine_servers import ProtectedMCP
from llm_mcp_tests.support.recording_transport import RecordingTransport

SECRET = "reports-secret-77c1"


def test_addr_02_ctx_mcp_and_a_server_class_use_the_contexts_transport(echo_http_url):
    """MCP-ADDR-02: ``ctx.mcp(url=...)`` and ``Echo(user=u, context=ctx)`` send through the context."""
    recorder = RecordingTransport()
    ctx = llm_mcp.context(transport=recorder)
    inline = ctx.mcp(url=echo_http_url, name="echo")
    assert inline.call("echo", message="hi").text == "hi"

    class Echo(llm_mcp.MCP):
        url = echo_http_url
        inputs = ["user"]

    by_class = Echo(user="u1", context=ctx)
    assert by_class.call("echo", message="again").text == "again"
    posts = recorder.paths("POST")
    assert len(posts) >= 4 and set(posts) == {"/mcp"}  # discover or handshake, then each call, both servers
    plain = llm_mcp.mcp(url=echo_http_url, name="echo")  # no context: not through the recorder
    before = len(recorder.seen)
    plain.call("echo", message="x")
    assert len(recorder.seen) == before
    for server in (inline, by_class, plain):
        server.close()


def test_a_context_is_checked():
    with pytest.raises(TypeError, match="takes an httpx transport"):
        llm_mcp.context(transport="public")
    with pytest.raises(ValueError, match="transport or a proxy, not both"):
        llm_mcp.context(transport=httpx.HTTPTransport(), proxy="http://127.0.0.1:3128")
    with pytest.raises(TypeError, match=r"context=\.\.\.\) takes an llm_mcp.context\(\)"):
        llm_mcp.mcp(url="http://127.0.0.1:1/mcp", context={"transport": None})
    with pytest.raises(TypeError):
        llm_mcp.context(proxies="http://x")  # httpx's old keyword: not ours


@pytest.mark.parametrize("setting", ["verify", "cert", "limits"])
def test_transport_settings_beside_a_transport_are_refused_not_ignored(setting):
    """httpx ignores verify, cert and limits when a transport is given: a CA bundle passed beside
    PublicAddressesOnly would silently not be used. They belong to the transport."""
    from llm_mcp.client.addresses import PublicAddressesOnly

    value = {"verify": "/etc/ssl/internal-ca.pem", "cert": "/etc/ssl/client.pem", "limits": httpx.Limits()}[setting]
    with pytest.raises(ValueError, match=rf"give {setting} to the transport itself"):
        llm_mcp.context(transport=PublicAddressesOnly, **{setting: value})


@pytest.mark.parametrize(("setting", "value", "named"), [
    ("limits", 5, "limits"), ("proxy", 3128, "proxy"), ("mounts", ["http://"], "mounts"),
    ("verify", 3, "verify"), ("trust_env", "no", "trust_env"), ("cert", 7, "cert"),
])
def test_a_setting_of_the_wrong_type_is_refused_when_the_context_is_built(setting, value, named):
    """Not later, as an AttributeError from deep inside httpx on the first request."""
    with pytest.raises(TypeError, match=rf"context\({named}=\.\.\.\) takes .*, not {type(value).__name__}"):
        llm_mcp.context(**{setting: value})


def test_a_transport_factory_gives_each_client_its_own_transport(echo_http_url):
    built: list[RecordingTransport] = []

    def factory() -> RecordingTransport:
        built.append(RecordingTransport())
        return built[-1]

    ctx = llm_mcp.context(transport=factory)
    first, second = ctx.mcp(url=echo_http_url, name="a"), ctx.mcp(url=echo_http_url, name="b")
    first.call("echo", message="1")
    second.call("echo", message="2")
    assert len(built) == 2 and all(t.paths("POST") for t in built)
    first.close()
    second.call("echo", message="still open")  # closing one server's client left the other's alone
    second.close()


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_addr_03_every_mcp_and_oauth_request_goes_through_the_context(authority, store, era):
    """MCP-ADDR-03: the protected server's requests and every OAuth request (resource and
    authorization-server metadata, the token requests, the token requested again when it is about
    to expire) go through the context's transport."""
    import time

    recorder = RecordingTransport()
    ctx = llm_mcp.context(transport=recorder)
    with ProtectedMCP(authority, era=era) as protected:
        reports = ctx.mcp(url=protected.url, name="reports", oauth={
            "grant": "client_credentials", "client_id": "reports", "client_secret": SECRET})
        assert reports.call("add", a=2, b=3).text == "5"
        for key in list(store._data):  # the token is about to expire: a new one is asked for
            record = store.read(key)
            if record.get("access_token"):
                record["expires_at"] = int(time.time()) + 30
                store.write(key, record)
        assert reports.call("add", a=1, b=1).text == "2"
        reports.close()
        auth_paths = [r.path for r in authority.auth_server.requests]
        mcp_count = len(protected.requests)
    assert len(authority.token_requests()) == 2
    seen_auth = [path for _, _, path in recorder.seen if not path.startswith("/mcp")
                 and path in auth_paths]
    assert sorted(seen_auth) == sorted(auth_paths)  # every request the authorization server got
    assert any(p.startswith("/.well-known/oauth-protected-resource") for p in recorder.paths("GET"))
    assert len([p for p in recorder.paths() if p == "/mcp"]) >= mcp_count - 1  # DELETE at close may be extra


def test_addr_04_chats_keep_the_global_settings(model, echo_http_url):
    """MCP-ADDR-04: a chat offering a context's server sends its model requests through the provider's
    own client, never through the MCP context."""
    recorder = RecordingTransport()
    server = llm_mcp.context(transport=recorder).mcp(url=echo_http_url, name="echo")
    chat = make_chat(model, [tool_call("echo", {"message": "via ctx"}), reply("done")]).with_mcp(server)
    assert chat.ask("go").content == "done"
    assert len(model.requests) == 2  # the model was asked twice, through the SDK
    model_port = str(httpx.URL(model.openai_base_url).port)
    assert recorder.seen and all(not hostport.endswith(f":{model_port}") for _, hostport, _ in recorder.seen)
    assert set(recorder.paths()) == {"/mcp"}
    server.close()
