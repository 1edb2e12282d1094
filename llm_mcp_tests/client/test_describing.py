"""Describing servers: URL safety, names, inputs, inline servers (no server is contacted)."""

from __future__ import annotations

import pytest

import llm_mcp
from llm_mcp.client.server import Servers
from llm_mcp.client.server.settings import settings_reference

from llm_mcp_tests.support.transports import Duck


@pytest.mark.parametrize("url", ["https://mcp.example.com/mcp", "http://localhost:8000/mcp",
                                 "http://127.0.0.1:9/mcp", "http://127.8.9.10/mcp", "http://[::1]:8000/mcp"])
def test_desc_02_https_and_loopback_http_need_no_option(url):
    """MCP-DESC-02: https anywhere, and plain http to localhost or loopback, are accepted."""
    server = llm_mcp.mcp(url=url)
    assert server.setting("url") == url


def test_desc_03_plain_http_elsewhere_names_allow_http():
    """MCP-DESC-03: plain http to another host raises ValueError naming allow_http, inline and in a class."""
    with pytest.raises(ValueError, match="allow_http"):
        llm_mcp.mcp(url="http://tools:4011/mcp")
    with pytest.raises(ValueError, match="allow_http"):
        class Tools(llm_mcp.MCP):
            url = "http://tools:4011/mcp"


def test_desc_04_allow_http_opts_in():
    """MCP-DESC-04: allow_http=True accepts plain http to a private host."""
    class Tools(llm_mcp.MCP):
        url = "http://tools:4011/mcp"
        allow_http = True

    assert Tools().name == "tools"
    assert llm_mcp.mcp(url="http://tools:4011/mcp", allow_http=True).name == "tools"


@pytest.mark.parametrize("allow_http", [False, True])
def test_desc_06_credentials_in_url_refused(allow_http):
    """MCP-DESC-06: a URL with userinfo is refused, with or without allow_http; the message hides them."""
    with pytest.raises(ValueError) as info:
        llm_mcp.mcp(url="https://user:s3cret@mcp.example.com/mcp", allow_http=allow_http)
    assert "bearer_token" in str(info.value)
    assert "s3cret" not in str(info.value)


@pytest.mark.parametrize("url", ["ftp://example.com/mcp", "file:///tmp/x", "javascript:alert(1)", "mcp.example.com"])
def test_desc_other_schemes_refused(url):
    with pytest.raises(ValueError, match="url"):
        llm_mcp.mcp(url=url)


def test_desc_08_nothing_starts_on_definition_or_construction(tmp_path):
    """MCP-DESC-08: defining and constructing a stdio server starts no process."""
    marker = tmp_path / "started"

    class Lazy(llm_mcp.MCP):
        command = ["sh", "-c", f"touch {marker}; sleep 5"]

    server = Lazy()
    assert server.client.transport.process is None
    assert not marker.exists()


def test_inline_06_default_names():
    """MCP-INLINE-06, MCP-INLINE-08: names from the URL host, the executable, or the class name."""
    assert llm_mcp.mcp(url="https://mcp.example.com/mcp").name == "mcp.example.com"
    assert llm_mcp.mcp(command=["/usr/bin/node", "server.js"]).name == "node"

    class Linear(llm_mcp.MCP):
        url = "https://mcp.linear.app/mcp"

    class GitHubTools(llm_mcp.MCP):
        command = ["github-mcp"]

    assert Linear().name == "linear"
    assert GitHubTools().name == "git_hub_tools"
    assert llm_mcp.mcp(url="https://a.example/mcp", name="mine").name == "mine"


def test_inline_05_transport_needs_a_name():
    """MCP-INLINE-05: a transport without name= raises ValueError."""
    with pytest.raises(ValueError, match="name"):
        llm_mcp.mcp(transport=lambda server: object())


def test_inline_unknown_setting_is_named():
    with pytest.raises(ValueError, match="bearer_tokn"):
        llm_mcp.mcp(url="https://a.example/mcp", bearer_tokn="x")



def test_inline_class_only_setting_says_so():
    """``inputs`` is a setting of server classes, not of ``llm_mcp.mcp()``: the error says that
    instead of calling it unknown, and the settings reference marks it."""
    with pytest.raises(ValueError) as info:
        llm_mcp.mcp(url="https://a.example/mcp", inputs=["user"])
    assert str(info.value) == ("llm_mcp.mcp() does not take ['inputs']: only a subclass of llm_mcp.MCP "
                               "declares them")
    row = next(line for line in settings_reference().splitlines() if line.startswith("| `inputs` |"))
    assert row.endswith("(a class attribute only, not a `llm_mcp.mcp()` keyword) |")


@pytest.mark.parametrize("named", [False, True])
def test_url_that_is_not_a_string_is_refused_when_built(named):
    """A ``url`` that is neither a string nor a callable is refused when the server is built,
    naming the setting and the type, with or without a ``name=``."""
    options = {"url": 123, **({"name": "tracker"} if named else {})}
    with pytest.raises(ValueError) as info:
        llm_mcp.mcp(**options)
    assert str(info.value) == "llm_mcp.mcp(): url must be a string (or a callable returning one), not int"

    class Tracker(llm_mcp.MCP):
        url = 123

    with pytest.raises(ValueError, match=r"^Tracker: url must be a string \(or a callable returning one\), not int$"):
        Tracker()

def test_inline_07_duplicate_names_name_both():
    """MCP-INLINE-07: two servers with one name in one place raise ValueError naming both."""
    a = llm_mcp.mcp(url="https://one.example/mcp", name="docs")
    b = llm_mcp.mcp(command=["docs-server"], name="docs")
    with pytest.raises(ValueError) as info:
        Servers([a, b])
    assert repr(a) in str(info.value) and repr(b) in str(info.value)
    c = llm_mcp.mcp(command=["docs-server"], name="docs2")
    servers = Servers([a, c])
    assert servers.docs is a and servers["docs2"] is c and len(servers) == 2


def test_input_01_inputs_become_attributes():
    """MCP-INPUT-01: declared inputs are constructor keywords and attributes; others are refused."""
    class Linear(llm_mcp.MCP):
        url = "https://mcp.linear.app/mcp"
        inputs = ["user"]

    server = Linear(user="ada")
    assert server.user == "ada"
    with pytest.raises(TypeError, match="team"):
        Linear(team="x")


def test_input_02_03_dynamic_values_evaluated_per_use():
    """MCP-INPUT-02, MCP-INPUT-03: bearer_token and header values are callables or method names,
    evaluated at each use; literal strings stay literal, even when they match a base method name."""
    tokens = iter(["t1", "t2"])

    class Linear(llm_mcp.MCP):
        url = "https://mcp.linear.app/mcp"
        inputs = ["user"]
        bearer_token = lambda self: next(tokens)  # noqa: E731
        headers = {"X-Workspace": "workspace_id", "X-Mode": "close", "X-User": lambda self: self.user}

        def workspace_id(self):
            return f"ws-{self.user}"

    server = Linear(user="ada")
    first, second = server.http_headers(), server.http_headers()
    assert first == {"X-Workspace": "ws-ada", "X-Mode": "close", "X-User": "ada", "Authorization": "Bearer t1"}
    assert second["Authorization"] == "Bearer t2"


def test_desc_10_11_12_environment_allow_list(monkeypatch):
    """MCP-DESC-10, MCP-DESC-11, MCP-DESC-12: only allow-listed variables pass, env adds and overrides."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "x.settings")
    monkeypatch.setenv("HOME", "/home/ada")
    monkeypatch.setenv("PATH", "/usr/bin")

    class Files(llm_mcp.MCP):
        command = ["files-server"]
        env = {"PATH": "/opt/bin", "TOKEN": lambda self: "fresh"}

    argv, env = Files().process_spec()
    assert argv == ["files-server"]
    assert env["HOME"] == "/home/ada" and env["PATH"] == "/opt/bin" and env["TOKEN"] == "fresh"
    assert "OPENAI_API_KEY" not in env and "DJANGO_SETTINGS_MODULE" not in env
    allowed = {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE",
               "GEM_HOME", "GEM_PATH"}
    assert set(env) <= allowed | {"TOKEN"}


def test_bad_settings_name_the_setting():
    """Settings that cannot work raise ValueError naming the setting, before any contact."""
    cases = [
        (dict(url="https://a.example/mcp", command=["x"]), "exactly one of url, command or transport"),
        (dict(command=[]), "command"),
        (dict(command=["x", 3]), "command"),
        (dict(url="https:///mcp"), "no host"),
        (dict(url="https://a.example/mcp", timeout="abc"), "timeout"),
        (dict(url="https://a.example/mcp", timeout=-1), "timeout"),
        (dict(url="https://a.example/mcp", timeout=True), "timeout"),
        (dict(url="https://a.example/mcp", headers=["a"]), "headers"),
        (dict(command=["x"], env="A=1"), "env"),
    ]
    for options, problem in cases:
        with pytest.raises(ValueError, match=problem):
            llm_mcp.mcp(**options)
    with pytest.raises(ValueError, match="directory"):
        llm_mcp.mcp(command=["x"], directory="/no/such/directory").tools
    with pytest.raises(ValueError, match="inputs"):
        class Clash(llm_mcp.MCP):
            url = "https://a.example/mcp"
            inputs = ["tools"]


@pytest.mark.parametrize(("options", "setting"), [
    (dict(bearer_token="tok\r\nX-Injected: 1"), "bearer_token"),
    (dict(bearer_token="tökén"), "bearer_token"),
    (dict(headers={"X-A": "line\nbreak"}), "headers"),
    (dict(headers={"Bad Name": "v"}), "headers"),
])
def test_header_injection_refused_without_echoing_the_value(options, setting):
    """Header values with line breaks or non-ASCII, and names that are not tokens, raise ValueError
    naming the setting and never the value."""
    server = llm_mcp.mcp(url="https://a.example/mcp", **options)
    with pytest.raises(ValueError, match=setting) as info:
        server.http_headers()
    assert "Injected" not in str(info.value) and "tökén" not in str(info.value)


def test_attribute_error_in_a_setting_is_not_swallowed():
    """An AttributeError raised while computing a setting surfaces, named, instead of looking like a
    missing attribute (which would make the server look for a tool of that name)."""
    class Tracker(llm_mcp.MCP):
        url = "https://tracker.example/mcp"
        inputs = ["user"]

        def bearer_token(self):
            return self.user.profile.token

    server = Tracker(user=object())
    with pytest.raises(RuntimeError, match="bearer_token") as info:
        server.tools
    assert isinstance(info.value.__cause__, AttributeError)



class _TransportThatBreaks(Duck):
    """A custom transport whose own code fails with AttributeError on every request."""

    def request(self, message, *, version, timeout=None, headers=None, on_message=None):
        device = None
        return device.send_and_wait(message)  # AttributeError: 'NoneType' object has no attribute ...


def test_attribute_error_inside_a_property_is_named_with_its_cause():
    """An AttributeError from inside a property (here ``tools``, through a broken custom transport)
    names the property and keeps the original error as its cause, instead of a bare
    ``AttributeError: tools`` that hides where it came from."""
    server = llm_mcp.mcp(transport=lambda server: _TransportThatBreaks(), name="laptop")
    with pytest.raises(AttributeError) as info:
        server.tools
    assert str(info.value).startswith(f"{type(server).__name__}.tools raised AttributeError: ")
    assert "'NoneType' object has no attribute 'send_and_wait'" in str(info.value)
    assert isinstance(info.value.__cause__, AttributeError)
    assert "send_and_wait" in str(info.value.__cause__)


def test_nan_arguments_refused_before_sending(echo_stdio_command):
    """Values JSON cannot carry raise ValueError and send nothing; the server stays usable."""
    with llm_mcp.mcp(command=echo_stdio_command, name="nan") as server:
        with pytest.raises(ValueError, match="JSON"):
            server.call("echo", message=float("nan"))
        assert server.echo(message="still fine").text == "still fine"
