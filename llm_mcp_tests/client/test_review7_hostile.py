"""Review of issue 7 (resources, prompts, progress, logs) against servers that misbehave on purpose.

Each test scripts a real 2026-07-28 server on 127.0.0.1 (``scripted``, llm_mcp_tests/support/scripted.py): a
function of the JSON-RPC request returning the raw HTTP answer, SSE events included.
"""

from __future__ import annotations

import json
import logging
import time

import pytest

import llm_mcp
from llm_mcp.client.prompt import PromptArgument
from llm_mcp_tests.support.scripted import result, server_of, sse

def token(request):
    return request["params"]["_meta"]["progressToken"]


def test_progress_with_numbers_too_large_for_a_float_is_ignored(scripted):
    """A progress value or total that no float holds (a 400-digit integer) is dropped, like NaN:
    the call's result is not lost to an OverflowError."""
    def call(request):
        t = token(request)
        return sse(request, [("notifications/progress", {"progressToken": t, "progress": 1, "total": 4}),
                             ("notifications/progress", {"progressToken": t, "progress": 10**400, "total": 4}),
                             ("notifications/progress", {"progressToken": t, "progress": 2, "total": 10**400}),
                             ("notifications/progress", {"progressToken": t, "progress": 3, "total": 4})],
                   {"content": [{"type": "text", "text": "done"}]})
    reports: list[llm_mcp.Progress] = []
    server = scripted(server_of({"tools/call": call}))
    with llm_mcp.mcp(url=server.url, after_progress=reports.append) as client:
        assert client.call("t").text == "done"
    assert [(p.value, p.total, p.fraction) for p in reports] == [(1, 4, 0.25), (2, None, None), (3, 4, 0.75)]


def test_server_log_data_cannot_forge_log_lines(scripted, caplog):
    """Line breaks and other control characters in a server's log data (and logger name) are
    written escaped, so a server cannot add a line that looks like the application's own."""
    forged = "fine\n2026-11-30 12:00:00 CRITICAL django: forged\r\x1b[2K\u2028\u0085end\tok"
    def call(request):
        return sse(request, [("notifications/message", {"level": "error", "data": forged, "logger": "db\nfake"}),
                             ("notifications/message", {"level": "error", "data": {"k": "a\nb"}})],
                   {"content": [{"type": "text", "text": "done"}]})
    server = scripted(server_of({"tools/call": call}))
    with caplog.at_level(logging.DEBUG, logger="llm_mcp.server.hostile"), \
            llm_mcp.mcp(url=server.url, log_level="debug", name="hostile") as client:
        assert client.call("t").text == "done"
    records = [r for r in caplog.records if r.name == "llm_mcp.server.hostile"]
    assert [r.getMessage() for r in records] == [
        "fine\\n2026-11-30 12:00:00 CRITICAL django: forged\\r\\x1b[2K\\u2028\\x85end\tok", '{"k": "a\\nb"}']
    assert records[0].mcp_logger == "db\\nfake"


def test_stdio_stderr_cannot_forge_log_lines(caplog):
    """What a stdio server writes to stderr is logged one line per record, control characters escaped."""
    import shlex

    from llm_mcp_tests.support.processes import raw_stdio_command
    command = ["sh", "-c", "printf 'one\\r2026 CRITICAL forged\\033[2K\\n' >&2; exec "
               + shlex.join(raw_stdio_command("none"))]
    with caplog.at_level(logging.INFO, logger="llm_mcp.server.stderr-forge"), \
            llm_mcp.mcp(command=command, name="stderr-forge") as client:
        assert client.call("echo", message="hi").text
        deadline = time.monotonic() + 10  # stderr is read by a thread of its own
        while not any("forged" in r.getMessage() for r in caplog.records) and time.monotonic() < deadline:
            time.sleep(0.05)
    messages = [r.getMessage() for r in caplog.records if r.name == "llm_mcp.server.stderr-forge"]
    assert "one\\r2026 CRITICAL forged\\x1b[2K" in messages


def test_suggestions_are_strings_and_at_most_100(scripted):
    """completion/complete answers at most 100 values (MCP "Completion": maximum 100 items per
    response): the first 100 strings of a longer answer are kept; values that are not strings are left out."""
    def complete(request):
        value = request["params"]["argument"]["value"]
        values = [f"v{i}" for i in range(500)] if value == "many" else ["ok", 5, None, {"x": 1}, "fine"]
        return result(request, {"completion": {"values": values, "hasMore": True}})
    prompts = [{"name": "p", "arguments": [{"name": "a"}]}]
    server = scripted(server_of({"prompts/list": lambda r: result(r, {"prompts": prompts}),
                                 "completion/complete": complete}))
    with llm_mcp.mcp(url=server.url) as client:
        prompt = client.prompts[0]
        assert prompt.suggest(a="many") == [f"v{i}" for i in range(100)]
        assert prompt.suggest(a="mixed") == ["ok", "fine"]


def test_a_prompt_listed_with_ill_typed_arguments_does_not_break_the_listing(scripted, caplog):
    """prompts/list entries whose ``arguments`` is not a list (a number, an object) are listed with
    no arguments, and argument entries that are not objects with a string name are left out:
    the other prompts are still there, with no stray TypeError."""
    prompts = [{"name": "number", "arguments": 5}, {"name": "object", "arguments": {"name": "a"}},
               {"name": "mixed", "arguments": [{"name": "a", "required": True}, "x", {"name": 3}, None]}]
    server = scripted(server_of({"prompts/list": lambda r: result(r, {"prompts": prompts})}))
    with llm_mcp.mcp(url=server.url) as client:
        assert [(p.name, p.arguments) for p in client.prompts] == [("number", []), ("object", []), ("mixed", ["a"])]
        assert client.prompts[2].argument_definitions == [PromptArgument("a", None, None, True)]


def test_an_invalid_listed_template_does_not_break_the_listing(scripted, caplog):
    """A listed template that is not RFC 6570 (``{path:}`` makes uritemplate fail) is kept, logged,
    and raises a ValueError naming it when used; the other templates work."""
    templates = [{"uriTemplate": "x:/{path:}", "name": "broken"}, {"uriTemplate": "x:/{+path}", "name": "fine"}]
    server = scripted(server_of({"resources/templates/list": lambda r: result(r, {"resourceTemplates": templates})}))
    with caplog.at_level(logging.WARNING, logger="llm_mcp.client"), llm_mcp.mcp(url=server.url) as client:
        broken, fine = client.resource_templates
        assert (broken.name, broken.variables, fine.variables) == ("broken", [], ["path"])
        assert fine.expand(path="a/b") == "x:/a/b"
        with pytest.raises(ValueError, match="not an RFC 6570 URI template"):
            broken.expand(path="a")
    assert any("x:/{path:}" in r.getMessage() for r in caplog.records)


def test_progress_that_is_not_a_number_goes_back_or_is_for_another_request_is_dropped(scripted):
    """Strings, booleans, NaN, values not above the last, and another request's token are not
    delivered; a total of 0 (or below) gives no fraction instead of dividing by zero."""
    def call(request):
        t = token(request)
        reports = [{"progress": "5"}, {"progress": True}, {"progress": float("nan")}, {"progress": -2, "total": 0},
                   {"progress": 4, "total": -1}, {"progress": 3}, {"progress": float("inf")},
                   {"progress": 9, "total": 10, "message": 7}, {"progress": 9, "total": 10}]
        notes = [("notifications/progress", {"progressToken": t, **r}) for r in reports]
        notes.insert(3, ("notifications/progress", {"progressToken": f"{t}-other", "progress": 50}))
        notes.append(("notifications/progress", {"progressToken": ["not", "a", "token"], "progress": 99}))
        return sse(request, notes, {"content": [{"type": "text", "text": "done"}]})
    reports: list[llm_mcp.Progress] = []
    server = scripted(server_of({"tools/call": call}))
    with llm_mcp.mcp(url=server.url, after_progress=reports.append) as client:
        assert client.call("t").text == "done"
    assert [(p.value, p.total, p.message, p.fraction) for p in reports] == [
        (-2, 0, None, None), (4, -1, None, None), (9, 10, None, 0.9)]


def test_arguments_and_variables_named_self_are_keywords_like_any_other(scripted):
    """A prompt argument or template variable named ``self`` (any name is valid MCP) can be given
    to ``fill``, ``suggest``, ``expand`` and ``read``."""
    prompts = [{"name": "p", "arguments": [{"name": "self"}, {"name": "other"}]}]
    templates = [{"uriTemplate": "x:/{self}", "name": "t"}]

    def get(request):
        text = json.dumps(request["params"]["arguments"], sort_keys=True)
        return result(request, {"messages": [{"role": "user", "content": {"type": "text", "text": text}}]})

    def complete(request):
        params = request["params"]
        return result(request, {"completion": {"values": [params["argument"]["name"] + "=" + params["argument"]["value"]]}})

    def read(request):
        return result(request, {"contents": [{"uri": request["params"]["uri"], "text": "read"}]})

    server = scripted(server_of({"prompts/list": lambda r: result(r, {"prompts": prompts}), "prompts/get": get,
                                 "completion/complete": complete, "resources/read": read,
                                 "resources/templates/list": lambda r: result(r, {"resourceTemplates": templates})}))
    with llm_mcp.mcp(url=server.url) as client:
        prompt = client.prompts[0]
        assert prompt.fill(self="me", other="you").messages[0].content == '{"other": "you", "self": "me"}'
        assert prompt.suggest(self="m", other="you") == ["self=m"]
        template = client.resource_templates[0]
        assert template.expand(self="a b") == "x:/a%20b"
        assert template.read(self="me").uri == "x:/me"
        assert template.suggest(self="m") == ["self=m"]


def test_names_a_server_sends_cannot_forge_lines_in_the_clients_warnings(scripted, caplog):
    """The client's own warnings about what a server sent (a resource listed twice, a prompt turn
    skipped, an unknown notification) quote server-sent names, so line breaks in them stay escaped."""
    uri = "x:/a\n2026-11-30 CRITICAL forged"
    resources = [{"uri": uri, "name": "a"}, {"uri": uri, "name": "b"}]
    prompts = [{"name": "p\nforged"}]

    def get(request):
        return result(request, {"messages": [{"role": "system", "content": {"type": "text", "text": "x"}},
                                             {"role": "user", "content": {"type": "text", "text": "kept"}}]})

    def call(request):
        return sse(request, [("vendor/odd\nforged", {})], {"content": [{"type": "text", "text": "done"}]})

    server = scripted(server_of({"resources/list": lambda r: result(r, {"resources": resources}),
                                 "prompts/list": lambda r: result(r, {"prompts": prompts}), "prompts/get": get,
                                 "tools/call": call}))
    with caplog.at_level(logging.DEBUG, logger="llm_mcp.client"), llm_mcp.mcp(url=server.url) as client:
        assert [r.name for r in client.resources] == ["a"]
        assert [m.content for m in client.prompts[0].messages] == ["kept"]
        assert client.call("t").text == "done"
    messages = [r.getMessage() for r in caplog.records if r.name == "llm_mcp.client"]
    assert [m for m in messages if "forged" in m] and not [m for m in messages if "\n" in m]
