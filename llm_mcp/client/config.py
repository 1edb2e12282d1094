"""Process-wide client configuration: where credentials live and how the app identifies itself.

    from llm_mcp.client.config import configure, config
    configure(credential_store=MyStore(), client_id="https://app.example/oauth/client.json", client_name="Example")
    config.credential_store   # the store every OAuth server uses

The Django app feeds its ``LLM_MCP`` settings in here when it starts (``AppConfig.ready``).
"""

from __future__ import annotations

import threading
from typing import Any
from urllib.parse import urlsplit

from .hosts import is_loopback

__all__ = ["Config", "config", "configure"]


class Config:
    """The client's settings.

        config.credential_store.read(key)

    Attributes:
        credential_store: the store of OAuth credentials (``read``/``write``/``delete``,
            optionally ``synchronize``); an in-memory ``MemoryStore`` until configured.
        client_id: the HTTPS URL of the app's client ID metadata document, or ``None``.
        client_name: the app's name, sent when registering (default ``"llm_mcp"``).
    """

    def __init__(self) -> None:
        self._store: Any = None
        self.client_id: str | None = None
        self.client_name: str = "llm_mcp"
        self._lock = threading.Lock()

    @property
    def credential_store(self) -> Any:
        """The store of OAuth credentials; setting one without ``read``/``write``/``delete`` raises ``ValueError``."""
        with self._lock:
            if self._store is None:
                from .oauth.store import MemoryStore

                self._store = MemoryStore()
            return self._store

    @credential_store.setter
    def credential_store(self, store: Any) -> None:
        from .oauth.store import missing_methods

        missing = missing_methods(store)
        if missing:
            raise ValueError(f"credential_store needs read, write and delete methods; {type(store).__name__} "
                             f"lacks {', '.join(missing)}")
        with self._lock:
            self._store = store

    def client_metadata_document(self, redirect_uris: list[str]) -> dict[str, Any]:
        """The client ID metadata document to serve at `client_id` (JSON).

            return JsonResponse(config.client_metadata_document([request.build_absolute_uri("/oauth/callback")]))

        ``client_id`` is exactly the document's URL and ``redirect_uris`` must list every
        callback the app uses (draft-ietf-oauth-client-id-metadata-document, MCP 2026-07-28
        "Client ID Metadata Documents"). Raises ``ValueError`` when no ``client_id`` is configured.
        """
        if not self.client_id:
            raise ValueError("no client_id is configured: configure(client_id=<the document's https URL>) first")
        return {"client_id": self.client_id, "client_name": self.client_name, "redirect_uris": list(redirect_uris),
                "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                "token_endpoint_auth_method": "none"}

    def __repr__(self) -> str:
        return f"<Config store={type(self._store).__name__} client_id={self.client_id!r}>"



config = Config()
"""The process's configuration (see `configure`)."""

_UNSET: Any = object()


def configure(*, credential_store: Any = _UNSET, client_id: Any = _UNSET, client_name: Any = _UNSET) -> Config:
    """Set the client's process-wide settings; returns `config`.

        configure(credential_store=MyStore())

    Args:
        credential_store: an object with ``read(key)``, ``write(key, data, owner=None)``,
            ``delete(key)`` (and ``synchronize(key)`` when processes share it); ``None``
            goes back to a fresh in-memory store.
        client_id: the HTTPS URL (with a path) of the app's client ID metadata document
            (used with authorization servers that support them), or ``None``.
        client_name: the app's name for registrations.

    Raises ``ValueError`` for a store without the methods, or a ``client_id`` that is not an
    HTTPS URL with a path (plain http is accepted for loopback hosts, for development).
    """
    if credential_store is not _UNSET:
        if credential_store is None:
            from .oauth.store import MemoryStore

            credential_store = MemoryStore()
        config.credential_store = credential_store
    if client_id is not _UNSET:
        if client_id is not None:
            parts = urlsplit(str(client_id))
            secure = parts.scheme == "https" or (parts.scheme == "http" and is_loopback(parts.hostname))
            if not secure or not parts.hostname or parts.path in ("", "/") or parts.fragment:
                raise ValueError(f"client_id must be the https URL (with a path) of a client ID metadata document, "
                                 f"not {client_id!r}")
            client_id = str(client_id)
        config.client_id = client_id
    if client_name is not _UNSET:
        config.client_name = str(client_name) if client_name else "llm_mcp"
    return config
