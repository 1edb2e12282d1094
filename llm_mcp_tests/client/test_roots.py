"""Roots (MCP 2025-11-25 "Client Features / Roots"): the ``roots`` setting declared as the roots
capability and answered to ``roots/list``, against the npm ``server-filesystem`` (which limits
itself to the roots it is given, replacing its command-line directories) and ``server-everything``
(whose ``get-roots-list`` tool reports the roots it received), and a changed root list.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import llm_mcp


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``alpha/a.txt``, ``beta/b.txt`` and ``gamma/c.txt`` under one parent."""
    for name, letter in (("alpha", "a"), ("beta", "b"), ("gamma", "c")):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{letter}.txt").write_text(f"file {letter}\n")
    return tmp_path.resolve()


def filesystem(node_executable: str, node_modules_dir: Path, parent: Path, roots) -> llm_mcp.MCP:
    script = node_modules_dir / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
    return llm_mcp.mcp(command=[node_executable, str(script), str(parent)], name="filesystem", roots=roots)


def allowed(server: llm_mcp.MCP) -> set[str]:
    text = server.call("list_allowed_directories").text
    return {line.strip() for line in text.splitlines()[1:] if line.strip()}


def allowed_becomes(server: llm_mcp.MCP, expected: set[str], seconds: float = 20) -> None:
    """server-filesystem asks for the roots in the background (after initialize, after list_changed) and
    applies them when it has checked them: its list of allowed directories turns into ``expected``."""
    deadline = time.monotonic() + seconds
    while (now := allowed(server)) != expected:
        assert time.monotonic() < deadline, now
        time.sleep(0.1)


def test_filesystem_given_two_roots_lists_only_under_them(node_executable, node_modules_dir, tree):
    """server-filesystem, started on the parent directory, is given two roots: it allows only those two,
    reads a file under one of them, and refuses the sibling directory that is no root."""
    roots = [(tree / "alpha").as_uri(), {"uri": (tree / "beta").as_uri(), "name": "Beta"}]
    with filesystem(node_executable, node_modules_dir, tree, roots) as server:
        assert server.declared_capabilities("handshake") == {"roots": {"listChanged": True}}
        allowed_becomes(server, {str(tree / "alpha"), str(tree / "beta")})
        assert server.call("read_text_file", path=str(tree / "beta" / "b.txt")).text == "file b\n"
        refused = server.call("read_text_file", path=str(tree / "gamma" / "c.txt"))
        assert refused.is_error and "outside allowed directories" in refused.text
        listing = server.call("list_directory", path=str(tree / "alpha")).text
        assert "a.txt" in listing


def test_filesystem_sees_a_changed_root_list(node_executable, node_modules_dir, tree):
    """The roots come from a method, evaluated each time the server asks; roots_changed() sends
    notifications/roots/list_changed and the server asks again and keeps only the new roots."""

    class Files(llm_mcp.MCP):
        command = [node_executable, str(node_modules_dir / "@modelcontextprotocol" / "server-filesystem" / "dist" /
                                        "index.js"), str(tree)]
        roots = "project_roots"
        inputs = ["folders"]

        def project_roots(self):
            return [(tree / folder).as_uri() for folder in self.folders]

    with Files(folders=["alpha"]) as server:
        allowed_becomes(server, {str(tree / "alpha")})
        server.folders = ["gamma", "beta"]
        assert server.roots_changed() is True
        allowed_becomes(server, {str(tree / "gamma"), str(tree / "beta")})
        assert server.call("read_text_file", path=str(tree / "gamma" / "c.txt")).text == "file c\n"
        assert server.call("read_text_file", path=str(tree / "alpha" / "a.txt")).is_error


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_everything_receives_the_roots(request, transport, tree):
    """server-everything over stdio and HTTP: its get-roots-list tool (offered only to a client that
    declares roots) reports the roots it received, names included."""
    where = ({"command": request.getfixturevalue("everything_stdio_command")} if transport == "stdio"
             else {"url": request.getfixturevalue("everything_http_url")})
    roots = [{"uri": (tree / "alpha").as_uri(), "name": "Alpha"}, (tree / "beta").as_uri()]
    with llm_mcp.mcp(name="everything", roots=roots, **where) as server:
        deadline = time.monotonic() + 20
        while server.tool("get-roots-list") is None:  # registered once the session is initialized
            assert time.monotonic() < deadline, [t.name for t in server.tools]
            time.sleep(0.1)
            server.refresh_tools()
        while "Alpha" not in (text := server.call("get-roots-list").text):  # synced after initialize
            assert time.monotonic() < deadline, text
            time.sleep(0.1)
        assert (tree / "alpha").as_uri() in text and (tree / "beta").as_uri() in text


def test_without_roots_nothing_is_declared_and_directory_is_no_root(everything_stdio_command, tmp_path):
    """No roots setting: no roots capability (server-everything then offers no get-roots-list), and a stdio
    server's directory does not become a root."""
    with llm_mcp.mcp(command=everything_stdio_command, name="everything", directory=str(tmp_path)) as server:
        assert "roots" not in server.declared_capabilities("handshake")
        assert server.tool("get-roots-list") is None
        assert server.roots_changed() is False


def test_bad_roots_are_refused(tmp_path):
    """A literal that is not a list of file:// roots is refused when the server is built, naming the setting;
    a callable that returns one gives the server an error, and the call goes on."""
    for bad, problem in ((tmp_path.as_uri(), "must be a list"), (["https://example.com/"], "file:// URI"),
                         (["file://relative"], "file:// URI"), ([{"name": "x"}], "dict with a 'uri'"),
                         ([{"uri": tmp_path.as_uri(), "name": 3}], "name must be a string")):
        with pytest.raises(ValueError, match=problem):
            llm_mcp.mcp(command=["x"], roots=bad)
    server = llm_mcp.mcp(command=["x"], roots=lambda: "not a list")
    with pytest.raises(ValueError, match="roots must be a list"):
        server._roots.listing()
    assert server.declared_capabilities("modern")["roots"] == {"listChanged": True}


def test_a_root_whose_path_became_a_host_is_refused(tmp_path):
    """A relative path glued to ``file://`` ("file://" + "srv/projects") parses as host ``srv`` and path
    ``/projects``: not the directory meant, and servers such as server-filesystem reject file URIs with a
    host. It is refused naming the host; ``file:///...`` and ``file://localhost/...`` (RFC 8089) are kept."""
    relative = "file://" + "srv/projects"
    with pytest.raises(ValueError, match="'srv'"):
        llm_mcp.mcp(command=["x"], roots=[relative])
    with pytest.raises(ValueError, match="host"):
        llm_mcp.mcp(command=["x"], roots=[{"uri": "file://fileserver/share", "name": "Share"}])
    kept = [tmp_path.as_uri(), "file://localhost" + str(tmp_path)]
    assert llm_mcp.mcp(command=["x"], roots=kept)._roots.listing() == {"roots": [{"uri": uri} for uri in kept]}


@pytest.mark.parametrize("bad, code, problem", [(lambda: "not a list", -32602, "must be a list"),
                                                (lambda: ["file://" + "srv/x"], -32602, "host"),
                                                (lambda: 1 / 0, -32603, "ZeroDivisionError")])
def test_a_roots_callable_gone_wrong_is_logged(raw_stdio_command_factory, caplog, bad, code, problem):
    """A roots callable returning something that is not a list of roots, or raising: the server's roots/list
    gets an error (-32602 / -32603) and the call goes on; the developer sees a WARNING under llm_mcp.client
    naming the setting and the problem (not only the server)."""
    import json
    import logging

    with caplog.at_level(logging.WARNING, logger="llm_mcp.client"), \
            llm_mcp.mcp(command=raw_stdio_command_factory(), name="odd", roots=bad) as server:
        answered = json.loads(server.call("ask_client", method="roots/list").text.removeprefix("client answered: "))
    assert answered["error"]["code"] == code
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "roots/list" in r.getMessage()]
    assert len(warned) == 1 and "odd" in warned[0] and problem in warned[0], warned
