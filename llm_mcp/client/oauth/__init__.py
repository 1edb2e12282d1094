"""OAuth for MCP servers: discovery, registration, the user's authorization, tokens, stores.

    class Linear(llm_mcp.MCP):
        url = "https://mcp.linear.app/mcp"
        inputs = ["user"]
        oauth = {"owner": "user"}

    Linear(user=u).authorization_url(redirect_uri=callback)   # then authorize(request.GET)

No Django import: the Django app plugs its encrypted store in through
``llm_mcp.client.config.configure(credential_store=...)``. See ``docs/how-to/authorization.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .discovery import Discovery
    from .dpop import DPoPKey
    from .flow import OAuth, credential_key, owner_identity
    from .registration import ClientInfo
    from .settings import OAuthSettings
    from .store import CredentialStore, MemoryStore
    from .tokens import TokenRequestError

__all__ = ["ClientInfo", "CredentialStore", "DPoPKey", "Discovery", "MemoryStore", "OAuth", "OAuthSettings",
           "TokenRequestError", "credential_key", "owner_identity"]

# The public names are imported on first use (PEP 562): most of this package needs httpx and
# JOSE, which a process whose servers use no OAuth never has to load.
_HOMES = {"Discovery": "discovery", "DPoPKey": "dpop", "OAuth": "flow", "credential_key": "flow",
          "owner_identity": "flow", "ClientInfo": "registration", "OAuthSettings": "settings",
          "CredentialStore": "store", "MemoryStore": "store", "TokenRequestError": "tokens"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
