"""Prove the test servers do what their docstrings say, talking raw JSON-RPC (not llm_mcp)."""

from __future__ import annotations

import base64
import json
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from llm_mcp_tests.support.servers import echo_server, raw_http as raw_http_module, raw_stdio

MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "smoke", "version": "0"},
}
INIT_PARAMS = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "smoke", "version": "0"}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


# --------------------------------------------------------------------------- stdio helpers


class StdioPeer:
    def __init__(self, argv: list[str]):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.next_id = 0
        self._timer: threading.Timer | None = None

    def send(self, obj: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(obj).encode() + b"\n")
        self.proc.stdin.flush()

    def raw_line(self) -> bytes:
        assert self.proc.stdout is not None
        return self.proc.stdout.readline()

    def recv(self) -> dict[str, Any]:
        while True:
            line = self.raw_line()
            assert line, "server closed stdout"
            try:
                return json.loads(line)
            except ValueError:
                continue

    def request(self, method: str, params: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[dict]]:
        """Send a request; return (response, messages that arrived before it)."""
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        before = []
        while True:
            got = self.recv()
            if got.get("id") == self.next_id and "method" not in got:
                return got, before
            before.append(got)

    def close(self) -> int:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


@contextmanager
def stdio(argv: list[str]) -> Iterator[StdioPeer]:
    peer = StdioPeer(argv)
    try:
        yield peer
    finally:
        peer.close()
        for stream in (peer.proc.stdout, peer.proc.stderr):
            if stream:
                stream.close()


def modern_params(**params: Any) -> dict[str, Any]:
    meta = dict(ENVELOPE)
    meta.update(params.pop("_meta", {}))
    return {**params, "_meta": meta}


def handshake(peer: StdioPeer, version: str = "2025-11-25") -> dict[str, Any]:
    response, _ = peer.request("initialize", {**INIT_PARAMS, "protocolVersion": version})
    peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return response


# --------------------------------------------------------------------------- echo server over stdio


def test_echo_stdio_modern_era(echo_stdio_command: list[str]) -> None:
    with stdio(echo_stdio_command) as peer:
        discover, _ = peer.request("server/discover", modern_params())
        result = discover["result"]
        assert result["supportedVersions"] == [MODERN]
        assert result["instructions"] == echo_server.INSTRUCTIONS
        assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "echo-server", "version": "1.0.0"}

        listed, _ = peer.request("tools/list", modern_params())
        tools = {t["name"]: t for t in listed["result"]["tools"]}
        assert set(echo_server.BASE_TOOL_NAMES) == set(tools)
        assert tools["echo"]["annotations"]["readOnlyHint"] is True
        assert tools["with_meta"]["_meta"] == echo_server.WITH_META_TOOL_META
        assert tools["headered"]["inputSchema"]["properties"]["region"]["x-mcp-header"] == "Region"
        assert tools["add"]["outputSchema"] == echo_server.ADD_OUTPUT_SCHEMA
        assert "nextCursor" not in listed["result"]

        def call(name: str, **args: Any) -> dict[str, Any]:
            response, _ = peer.request("tools/call", modern_params(name=name, arguments=args))
            return response["result"]

        assert call("echo", message="hi")["content"] == [{"type": "text", "text": "hi"}]
        added = call("add", a=2, b=3)
        assert added["structuredContent"] == {"sum": 5}
        assert added["content"][0]["text"] == '{"sum": 5}'
        image = call("image")["content"][0]
        assert base64.b64decode(image["data"]) == echo_server.PNG_BYTES and image["mimeType"] == "image/png"
        mixed = call("mixed")["content"]
        assert [c["type"] for c in mixed] == ["text", "audio", "resource", "resource", "resource_link"]
        assert base64.b64decode(mixed[1]["data"]) == echo_server.WAV_BYTES
        assert mixed[2]["resource"] == {"uri": "file:///notes/plan.md", "mimeType": "text/markdown", "text": "# Plan"}
        assert "mimeType" not in mixed[3]["resource"]
        assert base64.b64decode(mixed[3]["resource"]["blob"]) == echo_server.PNG_BYTES
        assert mixed[4]["uri"] == echo_server.RESOURCE_LINK["uri"]
        failed = call("fail")
        assert failed["isError"] is True and failed["content"][0]["text"] == "quota exceeded"
        assert call("with_meta")["_meta"]["com.example/request_id"] == "abc123"
        assert call("files/read", path="a.txt")["content"][0]["text"] == "contents of a.txt"
        assert call("headered", region="eu", count=2)["content"][0]["text"] == "no http headers"
        assert call("echo")["isError"] is True  # schema validation

        response, before = peer.request(
            "tools/call", modern_params(name="progress", arguments={"steps": 3}, _meta={"progressToken": "tok"})
        )
        assert response["result"]["content"][0]["text"] == "completed 3 steps"
        assert [m["method"] for m in before] == ["notifications/message"] + ["notifications/progress"] * 3
        assert [m["params"]["progress"] for m in before[1:]] == [1, 2, 3]
        assert all(m["params"]["progressToken"] == "tok" for m in before[1:])


def test_echo_stdio_handshake_only(echo_stdio_handshake_command: list[str]) -> None:
    with stdio(echo_stdio_handshake_command) as peer:
        discover, _ = peer.request("server/discover", modern_params())
        assert discover["error"]["code"] == -32601
        init = handshake(peer)["result"]
        assert init["protocolVersion"] == "2025-11-25"
        assert init["serverInfo"] == {"name": "echo-server", "version": "1.0.0"}
        assert init["instructions"] == echo_server.INSTRUCTIONS
        response, _ = peer.request("tools/call", {"name": "echo", "arguments": {"message": "old"}})
        assert response["result"] == {"content": [{"type": "text", "text": "old"}]}


def test_echo_stdio_auto_handshake_and_modern_only(
    echo_stdio_command: list[str], echo_stdio_modern_command: list[str]
) -> None:
    with stdio(echo_stdio_command) as peer:
        assert handshake(peer, "2025-06-18")["result"]["protocolVersion"] == "2025-06-18"
        response, _ = peer.request("tools/call", {"name": "with_meta", "arguments": {}})
        assert response["result"]["_meta"] == {"com.example/request_id": "abc123"}
        assert "resultType" not in response["result"]
    with stdio(echo_stdio_modern_command) as peer:
        response, _ = peer.request("initialize", INIT_PARAMS)
        assert response["error"]["code"] == -32022
        assert response["error"]["data"]["supported"] == [MODERN]


def test_echo_stdio_pagination(echo_many_tools_command: list[str]) -> None:
    with stdio(echo_many_tools_command) as peer:
        names: list[str] = []
        cursor = None
        pages = 0
        while True:
            params = modern_params(**({"cursor": cursor} if cursor else {}))
            response, _ = peer.request("tools/list", params)
            names += [t["name"] for t in response["result"]["tools"]]
            pages += 1
            cursor = response["result"].get("nextCursor")
            if not cursor:
                break
        assert pages == 3
        assert len(names) == len(echo_server.BASE_TOOL_NAMES) + 60
        assert names[-1] == "t59"
        bad, _ = peer.request("tools/list", modern_params(cursor="nope"))
        assert bad["error"]["code"] == -32602


# --------------------------------------------------------------------------- echo server over HTTP


def _sse_messages(text: str) -> list[dict[str, Any]]:
    messages = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        data = "\n".join(line[5:].lstrip(" ") for line in block.split("\n") if line.startswith("data:"))
        if data:
            try:
                messages.append(json.loads(data))
            except ValueError:
                pass
    return messages


def _body_messages(response: httpx.Response) -> list[dict[str, Any]]:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return _sse_messages(response.text)
    return [response.json()]


def modern_post(url: str, method: str, params: dict[str, Any], headers: dict[str, str] | None = None,
                request_id: int = 1) -> httpx.Response:
    h = {**ACCEPT, "MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if "name" in params:
        h["Mcp-Name"] = params["name"]
    h.update(headers or {})
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": modern_params(**params)}
    return httpx.post(url, json=body, headers=h, timeout=10)


def test_echo_http_both_eras(echo_http_url: str) -> None:
    discover = modern_post(echo_http_url, "server/discover", {})
    assert discover.status_code == 200
    assert discover.json()["result"]["supportedVersions"] == [MODERN]

    headered = modern_post(
        echo_http_url,
        "tools/call",
        {"name": "headered", "arguments": {"region": "eu-west", "count": 7}},
        {"Mcp-Param-Region": "eu-west", "Mcp-Param-Count": "7"},
    )
    result = _body_messages(headered)[-1]["result"]
    assert result["structuredContent"]["headers"] == {
        "mcp-method": "tools/call",
        "mcp-name": "headered",
        "mcp-param-region": "eu-west",
        "mcp-param-count": "7",
        "mcp-protocol-version": MODERN,
    }
    assert result["content"][0]["text"].splitlines()[0] == "mcp-method: tools/call"
    missing = modern_post(echo_http_url, "tools/call", {"name": "headered", "arguments": {"region": "x", "count": 1}})
    assert missing.status_code == 400 and missing.json()["error"]["code"] == -32020

    with httpx.Client(timeout=10) as client:
        init = client.post(echo_http_url, headers=ACCEPT,
                           json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS})
        assert init.status_code == 200
        session = init.headers["mcp-session-id"]
        h = {**ACCEPT, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        assert client.post(echo_http_url, headers=h,
                           json={"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202
        call = client.post(echo_http_url, headers=h, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                                           "params": {"name": "echo", "arguments": {"message": "x"}}})
        assert _body_messages(call)[-1]["result"]["content"][0]["text"] == "x"
        client.delete(echo_http_url, headers=h)


def test_echo_http_single_era_modes(echo_http_handshake_url: str, echo_http_modern_url: str) -> None:
    old = modern_post(echo_http_handshake_url, "server/discover", {})
    assert old.status_code == 400
    assert old.json()["error"]["code"] == -32600  # not a recognized modern error
    init = httpx.post(echo_http_handshake_url, headers=ACCEPT, timeout=10,
                      json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS})
    assert init.status_code == 200 and init.headers.get("mcp-session-id")

    new = httpx.post(echo_http_modern_url, headers=ACCEPT, timeout=10,
                     json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS})
    assert new.status_code == 400
    assert new.json()["error"]["code"] == -32022
    assert new.json()["error"]["data"] == {"supported": [MODERN], "requested": "2025-11-25"}
    assert modern_post(echo_http_modern_url, "server/discover", {}).status_code == 200


# --------------------------------------------------------------------------- raw stdio


def test_raw_stdio_eras(raw_stdio_command_factory: Any) -> None:
    with stdio(raw_stdio_command_factory("none")) as peer:
        discover, _ = peer.request("server/discover", modern_params())
        assert discover["error"] == {"code": -32601, "message": "Method not found"}
        assert handshake(peer)["result"]["protocolVersion"] == "2025-11-25"
    with stdio(raw_stdio_command_factory("none", "modern")) as peer:
        discover, _ = peer.request("server/discover", modern_params())
        assert discover["result"]["supportedVersions"] == [MODERN]
        assert discover["result"]["resultType"] == "complete"
        init, _ = peer.request("initialize", INIT_PARAMS)
        assert init["error"]["code"] == -32022


def test_raw_stdio_c01_c02_noise(raw_stdio_command_factory: Any) -> None:
    with stdio(raw_stdio_command_factory("C01")) as peer:
        assert peer.raw_line() == raw_stdio.NOISE_LINE
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS})
        assert peer.raw_line() == raw_stdio.NOISE_LINE
        assert json.loads(peer.raw_line())["id"] == 1
    with stdio(raw_stdio_command_factory("C02")) as peer:
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS})
        assert peer.raw_line() == b"\xff\xfe\n"
        assert json.loads(peer.raw_line())["id"] == 1


def test_raw_stdio_c03_crash(raw_stdio_command_factory: Any) -> None:
    with stdio(raw_stdio_command_factory("C03")) as peer:
        handshake(peer)
        peer.send({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "crash", "arguments": {}}})
        assert peer.raw_line() == b""
        assert peer.proc.wait(timeout=10) == 3


def test_raw_stdio_c05_c16_notifications(raw_stdio_command_factory: Any) -> None:
    with stdio(raw_stdio_command_factory("C05")) as peer:
        handshake(peer)
        response, before = peer.request(
            "tools/call", {"name": "echo", "arguments": {"message": "m"}, "_meta": {"progressToken": 5}}
        )
        assert response["result"]["content"][0]["text"] == "m"
        assert [m["method"] for m in before] == [
            "notifications/progress", "notifications/message", "notifications/progress"]
        assert before[0]["params"]["progressToken"] == 5
    with stdio(raw_stdio_command_factory("C16")) as peer:
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS})
        assert peer.recv()["id"] == 1
        beat = peer.recv()
        assert beat["method"] == "vendor/heartbeat" and beat["params"]["seq"] == 1
        response, before = peer.request("tools/list")
        assert [m["method"] for m in before] == ["vendor/heartbeat"]
        assert {t["name"] for t in response["result"]["tools"]} >= {"echo", "crash", "big", "ask_client"}


def test_raw_stdio_c17_big(raw_stdio_command_factory: Any) -> None:
    with stdio(raw_stdio_command_factory("C17")) as peer:
        handshake(peer)
        response, before = peer.request("tools/call", {"name": "big", "arguments": {}})
        assert len(before) == raw_stdio.BIG_NOTIFICATIONS
        assert len(response["result"]["content"][0]["text"]) == raw_stdio.BIG_TEXT_SIZE


def test_raw_stdio_server_to_client_request(raw_stdio_command_factory: Any) -> None:
    with stdio(raw_stdio_command_factory("S2C")) as peer:
        handshake(peer)
        params = {"name": "ask_client", "arguments": {}}
        peer.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
        asked = peer.recv()
        assert asked["method"] == "roots/list" and asked["id"] == "srv-1"
        peer.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": [{"uri": "file:///tmp", "name": "t"}]}})
        answer = peer.recv()
        assert answer["id"] == 7
        assert answer["result"]["content"][0]["text"] == (
            'client answered: {"result": {"roots": [{"name": "t", "uri": "file:///tmp"}]}}'
        )


def test_raw_stdio_startup_line_and_discover_cases(raw_stdio_command_factory: Any) -> None:
    with stdio(raw_stdio_command_factory("none")) as peer:
        assert peer.proc.stderr is not None
        assert peer.proc.stderr.readline().decode().startswith("raw_stdio: started (case none, era handshake, pid ")
    with stdio(raw_stdio_command_factory("silent_discover")) as peer:
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": modern_params()})
        response, before = peer.request("initialize", INIT_PARAMS)  # id 1 again is fine: discover was ignored
        assert before == [] and response["result"]["protocolVersion"] == "2025-11-25"
    with stdio(raw_stdio_command_factory("exit_on_discover")) as peer:
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": modern_params()})
        assert peer.proc.wait(timeout=10) == raw_stdio.EXIT_ON_DISCOVER_STATUS
        assert peer.raw_line() == b""
    with stdio(raw_stdio_command_factory("exit_on_discover")) as peer:
        assert handshake(peer)["result"]["protocolVersion"] == "2025-11-25"
        response, _ = peer.request("tools/call", {"name": "echo", "arguments": {"message": "ok"}})
        assert response["result"]["content"][0]["text"] == "ok"


# --------------------------------------------------------------------------- raw HTTP


def _handshake_http(client: httpx.Client, url: str) -> str:
    init = client.post(url, headers=ACCEPT, json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                                  "params": INIT_PARAMS})
    assert init.status_code in (200, 201), init.text
    return init.headers["mcp-session-id"]


def _call(client: httpx.Client, url: str, session: str, request_id: int = 2) -> httpx.Response:
    return client.post(url, headers={**ACCEPT, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"},
                       json={"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                             "params": {"name": "echo", "arguments": {"message": "hey"}}})


def test_raw_http_basic_and_recorder(raw_http: Any) -> None:
    url = raw_http.url("basic")
    with httpx.Client(timeout=10) as client:
        probe = modern_post(url, "server/discover", {})
        assert probe.status_code == 400
        assert probe.text == raw_http_module.MISSING_SESSION_TEXT
        assert not probe.headers["content-type"].startswith("application/json")
        session = _handshake_http(client, url)
        call = _call(client, url, session)
        assert call.json()["result"]["content"][0]["text"] == "hey"
        gone = _call(client, url, "not-a-session")
        assert gone.status_code == 404 and gone.json()["error"]["code"] == -32001
    log = raw_http.log()
    assert [e["method"] for e in log] == ["POST"] * 4
    first = dict(log[0]["headers"])
    assert first["mcp-protocol-version"] == MODERN and first["mcp-method"] == "server/discover"
    assert json.loads(log[2]["body"])["method"] == "tools/call"


def test_raw_http_modern_era(raw_http: Any) -> None:
    url = raw_http.url("basic", era="modern")
    discover = modern_post(url, "server/discover", {})
    assert discover.json()["result"]["supportedVersions"] == [MODERN]
    init = httpx.post(url, headers=ACCEPT, timeout=10,
                      json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS})
    assert init.status_code == 400 and init.json()["error"]["code"] == -32022
    call = modern_post(url, "tools/call", {"name": "echo", "arguments": {"message": "m"}})
    assert call.json()["result"]["resultType"] == "complete"
    assert modern_post(url, "nope/nope", {}).status_code == 404


def test_raw_http_c04_c05_streams(raw_http: Any) -> None:
    with httpx.Client(timeout=10) as client:
        url = raw_http.url("c04")
        init = client.post(url, headers=ACCEPT, json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                                      "params": INIT_PARAMS})
        assert init.headers["content-type"].startswith("text/event-stream")
        assert init.text.startswith("id: prime-0\ndata: \n\n: ping\n\ndata: keep-alive\n\n: ping\n\n")
        assert _sse_messages(init.text)[-1]["result"]["protocolVersion"] == "2025-11-25"

        url = raw_http.url("c05")
        session = _handshake_http(client, url)
        call = _call(client, url, session)
        messages = _sse_messages(call.text)
        assert [m.get("method") for m in messages] == [
            "notifications/progress", "notifications/message", "notifications/progress", None]
        assert messages[-1]["result"]["content"][0]["text"] == "hey"


@pytest.mark.parametrize(("case", "status", "body"), [("c06_202", 202, b""), ("c06_null", 200, b"null"),
                                                      ("c06_obj", 200, b"{}")])
def test_raw_http_c06_notification_answers(raw_http: Any, case: str, status: int, body: bytes) -> None:
    with httpx.Client(timeout=10) as client:
        url = raw_http.url(case)
        session = _handshake_http(client, url)
        note = client.post(url, headers={**ACCEPT, "Mcp-Session-Id": session},
                           json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert (note.status_code, note.content) == (status, body)


def test_raw_http_c07_c08_sessions(raw_http: Any) -> None:
    with httpx.Client(timeout=10) as client:
        url = raw_http.url("c07")
        init = client.post(url, headers=ACCEPT, json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                                      "params": INIT_PARAMS})
        assert init.status_code == 201 and init.json()["result"]["serverInfo"]["name"] == "raw-http"

        url = raw_http.url("c08")
        first = _handshake_http(client, url)
        assert _call(client, url, first).status_code == 200
        assert _call(client, url, first).status_code == 404
        second = _handshake_http(client, url)
        assert second != first
        assert _call(client, url, second).status_code == 200

        url = raw_http.url("c08_always")
        session = _handshake_http(client, url)
        assert _call(client, url, session).status_code == 404


@pytest.mark.parametrize("case", ["c22_rel", "c22_abs", "c22_split"])
def test_raw_http_c22_legacy_sse(raw_http: Any, case: str) -> None:
    url = raw_http.url(case)
    with httpx.Client(timeout=10) as client:
        assert client.post(url, headers=ACCEPT, json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                                      "params": INIT_PARAMS}).status_code == 405
        with client.stream("GET", url, headers={"Accept": "text/event-stream"}) as stream:
            lines = stream.iter_lines()
            event_lines = []
            for line in lines:
                if line == "":
                    break
                event_lines.append(line)
            assert event_lines[0] == "event: endpoint"
            data = "\n".join(line[len("data: "):] for line in event_lines[1:])
            if case == "c22_split":
                assert len(event_lines) == 3 and "\n" in data
            if case == "c22_abs":
                assert data.startswith(raw_http.base_url)
            endpoint = httpx.URL(url).join(data.replace("\n", ""))
            posted = client.post(endpoint, json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                                 "params": INIT_PARAMS})
            assert posted.status_code == 202
            event = []
            for line in lines:
                if line == "" and event:
                    break
                if line:
                    event.append(line)
            assert event[0] == "event: message"
            assert json.loads(event[1][len("data: "):])["result"]["protocolVersion"] == "2024-11-05"


def test_raw_http_redirect_and_errors(raw_http: Any) -> None:
    with httpx.Client(timeout=10, follow_redirects=False) as client:
        redirected = client.post(raw_http.url("redirect"), headers=ACCEPT, json={"jsonrpc": "2.0", "id": 1,
                                                                                 "method": "ping"})
        assert redirected.status_code == 307
        assert redirected.headers["location"] == raw_http.url("redirect_target")
        assert raw_http.log("redirect_target") == []

        def post(case: str) -> httpx.Response:
            return client.post(raw_http.url(case), headers=ACCEPT,
                               json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS})

        assert post("auth401").status_code == 401
        forbidden = post("auth403")
        assert forbidden.status_code == 403
        assert forbidden.headers["www-authenticate"] == 'Bearer error="insufficient_scope", scope="a b"'
        assert "www-authenticate" not in post("auth403_plain").headers
        limited = post("rate429")
        assert limited.status_code == 429 and limited.headers["retry-after"] == "1"
        assert post("err500").status_code == 500
        assert post("auth").status_code == 401
        ok = client.post(raw_http.url("auth"), headers={**ACCEPT, "Authorization": "Bearer test-token"},
                         json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS})
        assert ok.status_code == 200
        session = _handshake_http(client, raw_http.url("err500_call"))
        assert _call(client, raw_http.url("err500_call"), session).status_code == 500


def _sse_events(text: str) -> list[dict[str, str]]:
    """Raw SSE events as {field: value} dicts (data lines joined), comments dropped."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            fields[name] = fields[name] + "\n" + value if name in fields and name == "data" else value
        if fields:
            events.append(fields)
    return events


def test_raw_http_broken_stream(raw_http: Any) -> None:
    url = raw_http.url("broken_stream2", era="modern")
    for _ in range(2):
        broken = modern_post(url, "tools/list", {})
        assert broken.status_code == 200 and broken.headers["content-type"].startswith("text/event-stream")
        messages = _sse_messages(broken.text)
        assert [m.get("method") for m in messages] == ["notifications/progress"]
    tools = {t["name"]: t for t in modern_post(url, "tools/list", {}).json()["result"]["tools"]}
    assert tools["echo"]["annotations"]["idempotentHint"] is False
    assert tools["echo_idempotent"]["annotations"] == {"idempotentHint": True, "readOnlyHint": True}
    call = {"name": "echo_idempotent", "arguments": {"message": "m"}}
    assert [m.get("method") for m in _sse_messages(modern_post(url, "tools/call", call).text)] == [
        "notifications/progress"]
    modern_post(url, "tools/call", call)
    assert modern_post(url, "tools/call", call).json()["result"]["content"][0]["text"] == "m"

    only_calls = raw_http.url("broken_stream1_call", era="modern")
    assert "result" in modern_post(only_calls, "tools/list", {}).json()
    assert _sse_messages(modern_post(only_calls, "tools/call", call).text)[-1].get("method")
    entries = raw_http.log()
    assert all(isinstance(e["time"], float) for e in entries)
    assert [e["time"] for e in entries] == sorted(e["time"] for e in entries)


def test_raw_http_resume(raw_http: Any) -> None:
    url = raw_http.url("resume")
    with httpx.Client(timeout=10) as client:
        session = _handshake_http(client, url)
        first = _call(client, url, session)
        assert _sse_events(first.text) == [{"id": "ev-1", "retry": "200", "data": ""}]
        headers = {"Accept": "text/event-stream", "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        assert client.get(url, headers={**headers, "Last-Event-ID": "ev-1", "Mcp-Session-Id": "x"}).status_code == 400
        resumed = client.get(url, headers={**headers, "Last-Event-ID": "ev-1"})
        assert resumed.status_code == 200
        events = _sse_events(resumed.text)
        assert events[0]["id"] == "ev-2" and events[0]["event"] == "message"
        assert json.loads(events[0]["data"]) == {"jsonrpc": "2.0", "id": 2,
                                                 "result": {"content": [{"type": "text", "text": "hey"}]}}
        assert client.get(url, headers={**headers, "Last-Event-ID": "ev-1"}).status_code == 404
        assert client.get(url, headers=headers).status_code == 405
        assert _sse_events(_call(client, url, session, 3).text)[0]["id"] == "ev-3"

        url = raw_http.url("resume_broken")
        session = _handshake_http(client, url)
        assert _sse_events(_call(client, url, session).text) == [{"id": "rb-1", "retry": "50", "data": ""}]
        again = client.get(url, headers={**headers, "Mcp-Session-Id": session, "Last-Event-ID": "rb-1"})
        assert _sse_events(again.text) == [{"id": "rb-2", "retry": "50", "data": ""}]


def test_raw_http_header_mismatch(raw_http: Any) -> None:
    url = raw_http.url("header_mismatch", era="modern")
    schema = modern_post(url, "tools/list", {}).json()["result"]["tools"][0]["inputSchema"]
    assert "x-mcp-header" not in schema["properties"]["message"]
    call = {"name": "echo", "arguments": {"message": "hi"}}
    first = modern_post(url, "tools/call", call)
    assert first.status_code == 400 and first.json()["error"]["code"] == -32020
    schema = modern_post(url, "tools/list", {}).json()["result"]["tools"][0]["inputSchema"]
    assert schema["properties"]["message"]["x-mcp-header"] == "Message"
    assert modern_post(url, "tools/call", call).status_code == 400
    assert modern_post(url, "tools/call", call, {"Mcp-Param-Message": "no"}).status_code == 400
    ok = modern_post(url, "tools/call", call, {"Mcp-Param-Message": "hi"})
    assert ok.json()["result"]["content"][0]["text"] == "hi"

    url = raw_http.url("header_mismatch_always", era="modern")
    for _ in range(2):
        assert modern_post(url, "tools/call", call, {"Mcp-Param-Message": "hi"}).json()["error"]["code"] == -32020


def test_raw_http_no_revision_and_unsupported_version(raw_http: Any) -> None:
    url = raw_http.url("no_revision")
    probe = modern_post(url, "server/discover", {})
    assert (probe.status_code, probe.content) == (400, b"")
    with httpx.Client(timeout=10) as client:
        init = client.post(url, headers=ACCEPT, json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                                      "params": INIT_PARAMS})
        assert init.json()["result"]["protocolVersion"] == "1999-01-01" and init.headers["mcp-session-id"]

    url = raw_http.url("unsupported_version", era="modern")
    for method in ("server/discover", "tools/list"):
        refused = modern_post(url, method, {})
        assert refused.status_code == 400
        assert refused.json()["error"]["code"] == -32022
        assert refused.json()["error"]["data"]["supported"] == ["2099-01-01"]
    init = httpx.post(url, headers=ACCEPT, timeout=10,
                      json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS})
    assert init.json()["error"]["code"] == -32022


def test_raw_http_server_request(raw_http: Any) -> None:
    url = raw_http.url("server_request")
    with httpx.Client(timeout=20) as client:
        session = _handshake_http(client, url)
        headers = {**ACCEPT, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {}}}
        with client.stream("POST", url, headers=headers, json=body) as stream:
            lines = stream.iter_lines()
            data = next(line for line in lines if line.startswith("data: "))
            asked = json.loads(data[len("data: "):])
            assert asked["method"] == "sampling/createMessage" and asked["id"] == "srv-1"
            reply = client.post(url, headers=headers, json={"jsonrpc": "2.0", "id": "srv-1",
                                                            "error": {"code": -32601, "message": "no"}})
            assert reply.status_code == 202
            data = next(line for line in lines if line.startswith("data: "))
            answer = json.loads(data[len("data: "):])
        assert answer["id"] == 2
        assert answer["result"]["content"][0]["text"] == (
            'client answered: {"error": {"code": -32601, "message": "no"}}')


# --------------------------------------------------------------------------- npm reference servers


def test_everything_stdio(everything_stdio_command: list[str]) -> None:
    with stdio(everything_stdio_command) as peer:
        init = handshake(peer)["result"]
        assert init["serverInfo"]["name"] == "mcp-servers/everything"
        response, _ = peer.request("tools/call", {"name": "echo", "arguments": {"message": "ref"}})
        assert "ref" in response["result"]["content"][0]["text"]


def test_everything_http(everything_http_url: str) -> None:
    init = httpx.post(everything_http_url, headers=ACCEPT, timeout=10,
                      json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS})
    assert init.status_code == 200 and init.headers.get("mcp-session-id")
    assert _body_messages(init)[-1]["result"]["serverInfo"]["name"] == "mcp-servers/everything"


def test_filesystem(filesystem_command: list[str], filesystem_root: Any) -> None:
    with stdio(filesystem_command) as peer:
        handshake(peer)
        response, _ = peer.request("tools/call", {"name": "read_text_file",
                                                  "arguments": {"path": str(filesystem_root / "hello.txt")}})
        assert response["result"]["content"][0]["text"] == "hello world\n"
