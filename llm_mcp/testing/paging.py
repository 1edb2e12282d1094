"""Paginated ``*/list`` answers with opaque cursors, for test servers.

    page(tools, "tools", cursor=None, page_size=25)
    # {"tools": [...first 25...], "nextCursor": "b2Zmc2V0OjI1"}
    page(tools, "tools", cursor="b2Zmc2V0OjI1", page_size=25)   # the next 25

Spec: MCP 2026-07-28 "Utilities" > "Pagination" (cursors are opaque strings;
an invalid cursor is error -32602, which the caller raises).
"""

from __future__ import annotations

import base64
from typing import Any

__all__ = ["InvalidCursor", "cursor_for", "offset_from", "page"]


class InvalidCursor(ValueError):
    """A cursor this server did not hand out (answer it with JSON-RPC -32602)."""


def cursor_for(offset: int) -> str:
    """The opaque cursor for the page starting at ``offset``.

        cursor_for(25)      # "b2Zmc2V0OjI1"
    """
    return base64.urlsafe_b64encode(f"offset:{offset}".encode()).decode("ascii")


def offset_from(cursor: Any) -> int | None:
    """The offset a cursor from `cursor_for` stands for, or ``None`` for anything else.

        offset_from(cursor_for(25))   # 25
        offset_from("junk")           # None
    """
    try:
        raw = base64.urlsafe_b64decode(str(cursor).encode("ascii")).decode()
        return int(raw.split(":", 1)[1]) if raw.startswith("offset:") else None
    except (ValueError, UnicodeError):
        return None


def page(items: list[Any], key: str, cursor: Any = None, page_size: int = 0) -> dict[str, Any]:
    """One page of ``items`` under ``key``, with ``nextCursor`` when more follow.

        page(["a", "b", "c"], "tools", page_size=2)    # {"tools": ["a", "b"], "nextCursor": "..."}
        page(["a", "b", "c"], "tools")                 # page_size 0: everything at once
        # InvalidCursor for a cursor not made by cursor_for, or one past the end
    """
    start = 0
    if cursor is not None:
        offset = offset_from(cursor)
        if offset is None or not 0 <= offset <= len(items):
            raise InvalidCursor(f"invalid cursor {cursor!r}")
        start = offset
    end = len(items) if page_size <= 0 else start + page_size
    result: dict[str, Any] = {key: items[start:end]}
    if end < len(items):
        result["nextCursor"] = cursor_for(end)
    return result
