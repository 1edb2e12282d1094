"""Requests to metadata, registration and token endpoints, read with a size cap and a deadline.

    response = bounded.send(http, "GET", url, headers={"Accept": "application/json"})
    response.content          # at most MAX_BYTES, read within the client's read timeout in total

``httpx`` timeouts bound each network read, not a whole answer: a server dripping one byte
at a time, or streaming without end, would otherwise hold the caller (and its memory)
indefinitely. Every answer an authorization server, an identity provider or a protected
resource's metadata host gives the OAuth client is read through `send`.
"""

from __future__ import annotations

import time
from typing import Any

import httpx

__all__ = ["MAX_BYTES", "TooLarge", "send"]

MAX_BYTES = 256 * 1024
"""Bytes of an answer read at most (metadata, registrations and tokens are a few kilobytes)."""

_DROPPED = ("content-encoding", "content-length", "transfer-encoding")


class TooLarge(httpx.HTTPError):
    """An answer longer than its cap (an ``httpx.HTTPError``, so callers treat it as a failed request)."""


def send(http: httpx.Client, method: str, url: str, *, max_bytes: int = MAX_BYTES, **kwargs: Any) -> httpx.Response:
    """Send one request and read its answer: at most ``max_bytes`` (bytes) of body, all of it
    within the client's read timeout (seconds) in total, not per read.

        response = send(http, "POST", token_endpoint, data=form, headers=headers)

    Returns a read ``httpx.Response`` (status, headers, decoded content). Raises
    ``httpx.ReadTimeout`` when the body takes longer, `TooLarge` when it is longer,
    and whatever ``httpx`` raises for the request itself."""
    budget = http.timeout.read if http.timeout.read is not None else 30.0
    deadline = time.monotonic() + budget
    with http.stream(method, url, **kwargs) as response:
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > max_bytes:
                raise TooLarge(f"the answer from {response.request.url.host} is larger than {max_bytes} bytes")
            if time.monotonic() > deadline:
                raise httpx.ReadTimeout(f"the answer took longer than {budget:g} seconds", request=response.request)
            chunks.append(chunk)
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _DROPPED]
    return httpx.Response(response.status_code, headers=headers, content=b"".join(chunks), request=response.request)
