"""OAuth for MCP servers: discovery, registration, the user's authorization, tokens, stores.

    class Linear(llm_mcp.MCP):
        url = "https://mcp.linear.app/mcp"
        inputs = ["user"]
        oauth = {"owner": "user"}

    Linear(user=u).authorization_url(redirect_uri=callback)   # then authorize(request.GET)

No Django import: the Django app plugs its encrypted store in through
``llm_mcp.client.config.configure(credential_store=...)``. See ``docs/how-to/authorization.md``.
"""

from .discovery import Discovery
from .dpop import DPoPKey
from .flow import OAuth, credential_key, owner_identity
from .registration import ClientInfo
from .settings import OAuthSettings
from .store import CredentialStore, MemoryStore
from .tokens import TokenRequestError

__all__ = ["ClientInfo", "CredentialStore", "DPoPKey", "Discovery", "MemoryStore", "OAuth", "OAuthSettings",
           "TokenRequestError", "credential_key", "owner_identity"]
