"""Generated JSON texts for comparing a JSON reader with Python's ``json``: valid documents spelt
in the many ways JSON allows (number forms, escapes, whitespace, duplicate keys, surrogates),
and the same documents damaged at random, so that some are JSON and some are not."""

from __future__ import annotations

import random
from collections.abc import Iterator

_PIECES = ["0", "-0", "1", "-1", "7e0", "1E+2", "1e-2", "-0.0", "0.5", "1e400", "-1e400", "1e-400",
           "4.9e-324", "2.2250738585072011e-308", "1.7976931348623157e308", "123456789012345678",
           "-123456789012345678", "1234567890123456789", "-9223372036854775808", "18446744073709551616",
           "123456789012.34567890123", "0.1234567890123456789", "NaN", "Infinity", "-Infinity",
           "true", "false", "null"]
_STRINGS = ['""', '"a"', '"\\u00e9"', '"é"', '"😀"', '"\\ud83d\\ude00"', '"\\ud800"', '"\\udc00\\ud800"',
            '"\\n\\t\\"\\\\\\/"', '"\\u0000"', '"1234567890123456789"', '"\u2028"', '"\\uD834\\uDD1E"']
_JUNK = ["\x00", "\x01", "\x1f", "\x7f", "\f", "\v", "\u00a0", "\ufeff", "\ud800", ",", ":", "[", "]",
         "{", "}", '"', "\\", "\\u", "\\x", "e", "E", ".", "+", "-", "0", "9", "x", "NaN", "tru", " "]
_SPACE = ["", "", "", " ", "\n", "\t", "\r\n", "  "]


def _value(rnd: random.Random, depth: int) -> str:
    kind = rnd.random()
    if depth > 4 or kind < 0.45:
        return rnd.choice(_PIECES) if rnd.random() < 0.6 else rnd.choice(_STRINGS)
    if kind < 0.7:
        items = [_space(rnd) + _value(rnd, depth + 1) + _space(rnd) for _ in range(rnd.randint(0, 4))]
        return "[" + ",".join(items) + "]"
    keys = [rnd.choice(_STRINGS) for _ in range(rnd.randint(0, 4))]  # duplicate keys come up often
    items = [_space(rnd) + key + _space(rnd) + ":" + _space(rnd) + _value(rnd, depth + 1) for key in keys]
    return "{" + ",".join(items) + _space(rnd) + "}"


def _space(rnd: random.Random) -> str:
    return rnd.choice(_SPACE)


def _damaged(rnd: random.Random, text: str) -> str:
    for _ in range(rnd.randint(1, 3)):
        at = rnd.randint(0, len(text))
        action = rnd.random()
        if action < 0.4:
            text = text[:at] + rnd.choice(_JUNK) + text[at:]
        elif action < 0.7:
            text = text[:at] + text[at + 1:]
        else:
            text = text[:at] + rnd.choice(_JUNK) + text[at + 1:]
    return text


def json_texts(seed: int, count: int) -> Iterator[str]:
    """``count`` texts from ``seed``: about half valid JSON, about half damaged; some with
    whitespace around them, some with unpaired surrogates in the text itself."""
    rnd = random.Random(seed)
    for _ in range(count):
        text = _space(rnd) + _value(rnd, 0) + _space(rnd)
        yield _damaged(rnd, text) if rnd.random() < 0.5 else text
