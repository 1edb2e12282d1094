"""What ``import llm_mcp.client`` loads: the protocol engine, not the libraries only some servers need.

OAuth (httpx, joserfc, cryptography), jsonschema (question forms) and the HTTP transports
(httpx, httpx-sse) are imported when a server that uses them is first used. These tests look
at ``sys.modules`` in a fresh interpreter: a set of modules, never a timing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
before = set(sys.modules)
{statement}
print(json.dumps(sorted(set(sys.modules) - before)))
"""

HEAVY = {"httpx", "httpx_sse", "httpcore", "h11", "joserfc", "cryptography", "authlib", "jsonschema",
         "referencing", "rpds", "rich", "pygments", "click", "certifi", "ssl", "openai", "anthropic", "django",
         "pydantic", "mcp", "anyio"}
"""Packages ``import llm_mcp.client`` must leave alone (top-level names)."""


def loaded_by(statement: str) -> set[str]:
    """The modules ``statement`` adds to ``sys.modules`` in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", PROBE.format(statement=statement)], cwd=str(REPO_ROOT),
                          capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def third_party(modules: set[str]) -> set[str]:
    """The top-level names among ``modules`` that are neither the standard library nor llm_mcp."""
    return {name.split(".")[0] for name in modules} - set(sys.stdlib_module_names) - {"llm_mcp"}


def test_importing_the_client_loads_no_transport_library_oauth_or_jsonschema() -> None:
    modules = loaded_by("import llm_mcp.client")
    tops = {name.split(".")[0] for name in modules}
    assert not tops & HEAVY, sorted(tops & HEAVY)
    # Of the libraries outside the standard library, only orjson (one compiled module, which writes
    # every message: protocol.encode); uritemplate waits for a resource template.
    assert third_party(modules) == {"orjson"}
    # A standard module only a rare path needs: email (an HTTP-date Retry-After; it brings socket).
    assert not {name.split(".")[0] for name in modules} & {"email", "socket", "uritemplate"}
    ours = {name for name in modules if name.startswith("llm_mcp.")}
    assert "llm_mcp.client.session" in ours and "llm_mcp.client.server.base" in ours  # it did import the client
    assert not {m for m in ours if m.startswith(("llm_mcp.client.transports.http", "llm_mcp.client.transports.sse",
                                                   "llm_mcp.client.transports.stdio"))}
    assert {m for m in ours if m.startswith("llm_mcp.client.oauth")} <= {"llm_mcp.client.oauth",
                                                                       "llm_mcp.client.oauth.settings"}
    assert "llm_mcp.client.question" in ours  # questions are there, only their jsonschema checks wait
    assert not {m for m in ours if m == "llm_mcp.chat" or m.startswith("llm_mcp.chat.")}  # chats wait too


def test_the_package_still_offers_the_chat_names_on_first_use() -> None:
    """``llm_mcp.chat`` (a callable module), ``llm_mcp.Chat``, ``Agent`` and ``ChatTool`` load the chat
    package when first read, and a star import brings them all."""
    modules = loaded_by("import llm_mcp, sys\nassert 'llm_mcp.chat' not in sys.modules\n"
                        "from llm_mcp.chat.chat import Chat\nfrom llm_mcp.chat.agent import Agent\n"
                        "from llm_mcp.chat.tools import ChatTool\n"
                        "assert (llm_mcp.Chat, llm_mcp.Agent, llm_mcp.ChatTool) == (Chat, Agent, ChatTool)\n"
                        "assert callable(llm_mcp.chat) and llm_mcp.chat is sys.modules['llm_mcp.chat']\n"
                        "namespace = {}\nexec('from llm_mcp import *', namespace)\n"
                        "assert namespace['Chat'] is Chat and namespace['chat'] is llm_mcp.chat\n"
                        "try:\n    llm_mcp.Chats\nexcept AttributeError as exc:\n    assert 'Chats' in str(exc)\n"
                        "else:\n    raise AssertionError('no AttributeError')")
    assert "llm_mcp.chat" in modules


def test_dir_of_the_package_lists_the_chat_names_without_loading_them() -> None:
    """``dir(llm_mcp)`` (tab completion, ``help``) names what ``__all__`` offers, the chat names that
    load on first use among them, as it did when they were imported eagerly; listing them loads nothing."""
    loaded_by("import llm_mcp, sys\nnames = dir(llm_mcp)\n"
              "assert set(llm_mcp.__all__) <= set(names), sorted(set(llm_mcp.__all__) - set(names))\n"
              "assert names == sorted(names) and 'client' in names and '__getattr__' in names\n"
              "assert 'llm_mcp.chat' not in sys.modules")


def test_a_call_to_a_server_without_oauth_loads_neither_jose_nor_jsonschema(echo_http_url: str) -> None:
    modules = loaded_by(f"import llm_mcp\nserver = llm_mcp.mcp(url={echo_http_url!r}, name='echo')\n"
                        "assert server.call('echo', message='hi').text == 'hi'\nserver.close()")
    tops = {name.split(".")[0] for name in modules}
    assert "httpx" in tops  # the call went over HTTP
    assert not tops & {"joserfc", "cryptography", "authlib", "jsonschema"}, sorted(tops)
    assert not {m for m in modules if m.startswith("llm_mcp.client.oauth.")} - {"llm_mcp.client.oauth.settings"}


def test_a_stdio_call_never_loads_httpx(echo_stdio_command: list[str]) -> None:
    modules = loaded_by(f"import llm_mcp\nserver = llm_mcp.mcp(command={echo_stdio_command!r}, name='echo', "
                        f"directory={str(REPO_ROOT)!r})\n"
                        "assert server.call('echo', message='hi').text == 'hi'\nserver.close()")
    assert "llm_mcp.client.transports.stdio" in modules  # the call went over stdio
    tops = {name.split(".")[0] for name in modules}
    assert not tops & {"httpx", "httpx_sse", "httpcore", "joserfc", "jsonschema"}, sorted(tops & HEAVY)


def test_the_libraries_arrive_when_a_server_needs_them() -> None:
    """The lazy imports still happen: an HTTP transport brings httpx, an OAuth flow joserfc, a dated form field
    jsonschema."""
    http = loaded_by("import llm_mcp.client.transports.http")
    assert {"httpx", "httpx_sse"} <= {name.split(".")[0] for name in http}
    oauth = loaded_by("from llm_mcp.client.oauth import OAuth")
    assert {"httpx", "joserfc"} <= {name.split(".")[0] for name in oauth}
    checked = loaded_by("from llm_mcp.client.question import _conforms\nassert not _conforms('x', 'email')")
    assert "jsonschema" in {name.split(".")[0] for name in checked}
    template = loaded_by("from llm_mcp.client.resource import expand_template\n"
                         "assert expand_template('file:///{+path}', {'path': 'a/b'}) == 'file:///a/b'")
    assert "uritemplate" in {name.split(".")[0] for name in template}
    dated = loaded_by("from llm_mcp.client.errors import retry_after_seconds\n"
                      "assert retry_after_seconds('Wed, 21 Oct 2015 07:28:00 GMT') == 0.0")
    assert "email" in {name.split(".")[0] for name in dated}


@pytest.mark.parametrize("name", ["OAuth", "OAuthSettings", "MemoryStore", "TokenRequestError", "credential_key"])
def test_the_oauth_package_still_offers_its_public_names(name: str) -> None:
    from llm_mcp.client import oauth

    assert name in oauth.__all__ and getattr(oauth, name).__name__ == name
