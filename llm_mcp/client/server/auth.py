"""How a server authorizes with OAuth: `Authorization`, a collaborator of ``llm_mcp.MCP``.

    class Linear(llm_mcp.MCP):
        url = "https://mcp.linear.app/mcp"
        inputs = ["user"]
        oauth = {"owner": "user"}           # client_id, scopes, grant, ... (docs/how-to/authorization.md)

It checks the ``oauth`` setting when a server is built, evaluates it when needed, and hands
the work to the server's `OAuth`, which the HTTP transports use
on every request. Spec: MCP 2026-07-28 "Authorization".
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable

from ..declared import input_names
from ..oauth.settings import OAuthSettings, check_oauth, evaluate_settings

if TYPE_CHECKING:
    from ..httpcontext import HTTPContext
    from ..oauth.flow import OAuth
    from .settings import ServerSettings

__all__ = ["Authorization"]


class Authorization:
    """The ``oauth`` setting of one server and its OAuth flow, built on first use.

    Attributes:
        settings: the server's settings.
        name: returns the server's name (for errors).
        address: returns ``(url, timeout)``: the ``url`` evaluated and checked, and the seconds
            a request may take.
        capabilities: returns the client capabilities declared to the server (``"modern"``).
    """

    def __init__(self, settings: ServerSettings, *, name: Callable[[], str],
                 address: Callable[[], tuple[str, float]], capabilities: Callable[[], dict[str, Any]],
                 http_context: HTTPContext | None = None):
        self.settings, self._name, self._address, self._capabilities = settings, name, address, capabilities
        self.http_context = http_context
        self._lock = threading.Lock()
        self._flow: OAuth | None = None

    def check(self, settings: ServerSettings) -> None:
        """Refuse an ``oauth`` setting that cannot work, naming the problem (``ValueError``)."""
        where = settings.where
        oauth = settings.option("oauth")
        if oauth is not None:
            if callable(oauth) or settings.names_method(oauth):
                raise ValueError(f"{where}: oauth must be a dict (its values may be callables or method names)")
            check_oauth(oauth, where)
            if settings.option("url") is None:
                raise ValueError(f"{where}: oauth needs a url (stdio and custom transports carry no HTTP authorization)")
            if settings.option("bearer_token") is not None:
                raise ValueError(f"{where}: oauth and bearer_token both set the Authorization header; use one")
            owner = oauth.get("owner")
            inputs = input_names(settings.option("inputs"))
            if isinstance(owner, str) and not settings.inline and owner not in inputs \
                    and not settings.names_method(owner):
                raise ValueError(f"{where}: oauth owner {owner!r} is not one of the inputs {inputs} "
                                 "(nor a method name)")

    def oauth_settings(self) -> OAuthSettings:
        """The ``oauth`` setting evaluated now (each value; the owner resolved).

        Raises ``ValueError`` when the server has no ``oauth`` setting or a value is refused."""
        oauth = self.settings.option("oauth")
        if oauth is None:
            raise ValueError(f"MCP server {self._name()!r} has no oauth setting")
        settings = evaluate_settings(oauth, self.settings.evaluate, f"MCP server {self._name()!r}")
        settings.owner = self.owner()
        return settings

    def owner(self) -> Any:
        """Whose credentials these are: the value of the input ``oauth["owner"]`` names, or the
        owner object (or what its callable or method returns); ``None`` without one."""
        oauth = self.settings.option("oauth") or {}
        if "owner" not in oauth:
            return None
        owner = oauth["owner"]
        if isinstance(owner, str) and owner in input_names(self.settings.option("inputs")):
            value = getattr(self.settings.owner, owner)
        else:
            value = self.settings.evaluate("oauth['owner']", owner) if owner is not None else None
        if value is None:  # a user that was not passed must not get the application's credentials
            raise ValueError(f"MCP server {self._name()!r}: the oauth owner ({owner!r}) is None; pass whose "
                             "credentials these are, or leave owner out for credentials of the application as a whole")
        return value

    @property
    def flow(self) -> OAuth | None:
        """The server's `OAuth` (``None`` without ``oauth``)."""
        if self.settings.option("oauth") is None:
            return None
        with self._lock:
            if self._flow is None:
                from ..oauth.flow import OAuth  # httpx and JOSE: loaded by the first server that uses OAuth

                url, timeout = self._address()
                self._flow = OAuth(server_name=self._name(), url=url, settings=self.oauth_settings,
                                   owner=self.owner, timeout=min(timeout, 30.0), capabilities=self._capabilities,
                                   http_context=self.http_context)
            return self._flow

    def required_flow(self) -> OAuth:
        """`flow`; raises ``ValueError`` when the server has no ``oauth`` setting."""
        flow = self.flow
        if flow is None:
            raise ValueError(f"MCP server {self._name()!r} has no oauth setting")
        return flow

    def extensions(self) -> dict[str, dict[str, Any]]:
        """The authorization extensions the ``oauth`` setting uses (declared on every request):
        ``io.modelcontextprotocol/oauth-client-credentials`` for ``grant="client_credentials"``,
        ``io.modelcontextprotocol/enterprise-managed-authorization`` for ``identity_provider``."""
        oauth = self.settings.option("oauth")
        if not oauth:
            return {}
        from ..oauth.grants import extensions_for

        return extensions_for(oauth, lambda key, value: self.settings.evaluate(f"oauth[{key!r}]", value))

    def close(self) -> None:
        """Close the flow, if one was built."""
        with self._lock:
            flow = self._flow
        if flow is not None:
            flow.close()
