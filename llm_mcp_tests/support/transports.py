"""Custom transports for tests: objects with the four methods the docs ask of a transport."""

from __future__ import annotations

from typing import Any


class Duck:
    """Four methods, no base class: a custom transport as the docs show it. Answers every
    request with an empty result."""

    def request(self, message: dict[str, Any], *, version: str | None, timeout: float | None = None,
                headers: dict[str, str] | None = None, on_message: Any = None) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": message["id"], "result": {}}

    def notify(self, message: dict[str, Any], *, version: str | None) -> None:
        pass

    def cancel(self, notification: dict[str, Any], *, version: str | None) -> None:
        pass

    def close(self) -> None:
        pass
