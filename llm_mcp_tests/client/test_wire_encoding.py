"""What goes on the wire: every message written by `protocol.encode` reads back, through the
standard library, as the message it was; values JSON cannot carry are refused before anything is
sent; what a server writes is read as Python's ``json`` reads it."""

from __future__ import annotations

import enum
import json
import math
import uuid

import pytest

import llm_mcp
from llm_mcp.client import protocol
from llm_mcp_tests.support.json_texts import json_texts

MESSAGES = [
    protocol.request("tools/call", {"name": "echo", "arguments": {"message": "hi"}}),
    {"jsonrpc": "2.0", "id": 7, "result": {"content": [], "structuredContent": None}},
    {"jsonrpc": "2.0", "method": "x", "params": {"f": 0.1, "big": 2**70, "neg": -(2**63) - 1, "e": 1e16,
                                                  "text": "é 😀 \u2028 \x00", "nested": [[[{}]]], "t": (1, 2)}},
    {"jsonrpc": "2.0", "method": "x", "params": {1: "int key", True: "bool key", None: "none key"}},
]


@pytest.mark.parametrize("message", MESSAGES)
def test_an_encoded_message_reads_back_as_the_standard_library_writes_it(message):
    """The bytes are compact UTF-8 JSON whose reading equals the reading of ``json.dumps`` of the
    same message (keys turned to text, tuples to arrays, integers of any size kept exactly)."""
    data = protocol.encode(message)
    assert b"\n" not in data and b": " not in data
    assert json.loads(data) == json.loads(json.dumps(message))


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, object(), b"bytes", "\ud800", {1.5j: 1}])
def test_a_value_json_cannot_carry_is_refused_naming_the_method(value):
    with pytest.raises(ValueError, match="^tools/call: the arguments cannot be sent as JSON"):
        protocol.encode(protocol.request("tools/call", {"name": "t", "arguments": {"v": value}}))


def test_values_the_fast_writer_would_change_are_written_by_json():
    """A ``null`` and NaN differ only in the standard library's verdict; a str subclass is
    written as its text, an int enum as its number."""

    class Colour(enum.IntEnum):
        RED = 1

    class Name(str):
        pass

    assert json.loads(protocol.encode({"a": None, "b": Name("x"), "c": Colour.RED})) == {"a": None, "b": "x", "c": 1}
    with pytest.raises(ValueError):
        protocol.encode({"a": None, "b": math.nan})


def test_uuids_and_plain_enums_are_written_as_their_text_and_value():
    """Two kinds the standard library refuses and the fast writer carries (documented in
    `protocol.encode`)."""

    class Size(enum.Enum):
        BIG = "big"

    key = uuid.UUID(int=1)
    assert json.loads(protocol.encode({"id": key, "size": Size.BIG})) == {"id": str(key), "size": "big"}


@pytest.mark.parametrize("text", ['{"a":1}', ' {"a": [1, 2.5, "x"]} ', '{"a": NaN, "b": Infinity}',
                                  '[%d]' % 2**70, '["\\ud800"]', '{"a":1,"a":2}', '1e400',
                                  '[-9223372036854775809, 18446744073709551616, 9223372036854775807]',
                                  '[0.12345678901234567890123, 1.7976931348623157e309, -0.0, 1E2]',
                                  '{"id":"1234567890123456789","n":-0}', '"caf\u00e9 \\u00e9 \\ud83d\\ude00"'])
def test_decode_reads_what_json_reads(text):
    """The fast reader (``orjson``) and ``json`` give the same value, the same types included:
    integers past 64 bits stay exact integers, floats out of range are infinity, text is text."""
    expected = json.loads(text)
    got = protocol.decode(text)
    assert repr(got) == repr(expected)  # NaN compares unequal to itself; repr compares exactly
    assert repr(protocol.decode(text.encode())) == repr(expected)


@pytest.mark.parametrize("text", ['{"a":1} x', '{"a":', "", "nul", '{"a":1}{"b":2}'])
def test_decode_refuses_what_json_refuses(text):
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        protocol.decode(text)


@pytest.mark.parametrize("text", ["[" * 1000 + "]" * 1000, '{"a":' * 1000 + "1" + "}" * 1000,
                                  '{"jsonrpc":"2.0","id":1,"result":' + "[" * 1020 + "]" * 1020 + "}"])
def test_decode_refuses_nesting_json_cannot_read(text):
    """Nesting deeper than ``json`` reads under the interpreter's recursion limit (1000 levels by
    default; ``orjson`` alone would read 1024) is refused as ``json`` refuses it, from text and
    from bytes, so no value deeper than the rest of Python can handle gets through."""
    with pytest.raises(RecursionError):
        json.loads(text)
    for data in (text, text.encode()):
        with pytest.raises(ValueError, match="nested too deeply"):
            protocol.decode(data)


def _read(reader, data):
    try:
        return "read", repr(reader(data))  # repr: NaN equals nothing, -0.0 equals 0, 1 equals 1.0
    except ValueError:
        return "refused"


ENCODINGS = ("utf-8", "utf-8", "utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-32-be")


def test_decode_reads_generated_texts_as_json_does():
    """Thousands of generated texts, valid and damaged (numbers of every spelling, escapes,
    surrogates, control characters, odd whitespace, BOMs), as text and as bytes in UTF-8, -16
    and -32: `decode` reads the same value, of the same types, or refuses, exactly as ``json``."""
    differ = []
    for index, text in enumerate(json_texts(seed=20261202, count=6000)):
        data = text.encode(ENCODINGS[index % len(ENCODINGS)], "surrogatepass")
        for given in (text, data):
            if _read(protocol.decode, given) != _read(json.loads, given):
                differ.append(given)
    assert differ == []


def test_a_nan_argument_fails_the_call_before_anything_is_sent(echo_stdio_command):
    """The call fails with ValueError naming the method; the server, which got nothing, still
    answers the next call."""
    with llm_mcp.mcp(command=echo_stdio_command, name="nan") as server:
        with pytest.raises(ValueError, match="tools/call"):
            server.call("echo", message=math.nan)
        assert server.echo(message="fine").text == "fine"
