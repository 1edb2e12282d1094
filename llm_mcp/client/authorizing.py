"""How a server authorizes with OAuth: the ``oauth`` setting and the methods an app calls.

    class Linear(llm_mcp.MCP):
        url = "https://mcp.linear.app/mcp"
        inputs = ["user"]
        oauth = {"owner": "user"}           # client_id, scopes, grant, ... (docs/authorization.md)

A mixin of :class:`llm_mcp.MCP`: it checks the setting when a server is built, evaluates it
when needed, and hands the work to the server's :class:`~llm_mcp.client.oauth.OAuth`, which
the HTTP transports use on every request. Spec: MCP 2026-07-28 "Authorization".
"""

from __future__ import annotations

import threading
from typing import Any

from .declared import input_names
from .oauth.flow import OAuth
from .oauth.grants import extensions_for
from .oauth.settings import OAuthSettings, check_oauth, evaluate_settings

__all__ = ["AuthorizingServer"]


class AuthorizingServer:
    """The OAuth half of :class:`llm_mcp.MCP` (see the module docstring).

    Attributes (set by ``MCP``): ``name``, ``inputs``, ``_lock`` and ``_oauth`` (the flow, built
    on first use); it calls ``MCP``'s ``_option``, ``_evaluate``, ``_names_method``,
    ``_endpoint``, ``_timeout`` and ``declared_capabilities``.
    """

    name: str
    inputs: Any
    _lock: threading.RLock
    _oauth: OAuth | None

    def _check_oauth_settings(self, where: str, *, inline: bool) -> None:
        """Refuse an ``oauth`` setting that cannot work, naming the problem (``ValueError``)."""
        oauth = self._option("oauth")
        if oauth is not None:
            if callable(oauth) or self._names_method(oauth):
                raise ValueError(f"{where}: oauth must be a dict (its values may be callables or method names)")
            check_oauth(oauth, where)
            if self._option("url") is None:
                raise ValueError(f"{where}: oauth needs a url (stdio and custom transports carry no HTTP authorization)")
            if self._option("bearer_token") is not None:
                raise ValueError(f"{where}: oauth and bearer_token both set the Authorization header; use one")
            owner = oauth.get("owner")
            if isinstance(owner, str) and not inline and owner not in input_names(self.inputs) \
                    and not self._names_method(owner):
                raise ValueError(f"{where}: oauth owner {owner!r} is not one of the inputs {input_names(self.inputs)} "
                                 "(nor a method name)")

    def oauth_settings(self) -> OAuthSettings:
        """The ``oauth`` setting evaluated now (each value; the owner resolved).

        Raises ``ValueError`` when the server has no ``oauth`` setting or a value is refused."""
        oauth = self._option("oauth")
        if oauth is None:
            raise ValueError(f"MCP server {self.name!r} has no oauth setting")
        settings = evaluate_settings(oauth, self._evaluate, f"MCP server {self.name!r}")
        settings.owner = self.oauth_owner()
        return settings

    def oauth_owner(self) -> Any:
        """Whose credentials these are: the value of the input ``oauth["owner"]`` names, or the
        owner object (or what its callable or method returns); ``None`` without one."""
        oauth = self._option("oauth") or {}
        if "owner" not in oauth:
            return None
        owner = oauth["owner"]
        if isinstance(owner, str) and owner in input_names(self.inputs):
            value = getattr(self, owner)
        else:
            value = self._evaluate("oauth['owner']", owner) if owner is not None else None
        if value is None:  # a user that was not passed must not get the application's credentials
            raise ValueError(f"MCP server {self.name!r}: the oauth owner ({owner!r}) is None; pass whose credentials "
                             "these are, or leave owner out for credentials of the application as a whole")
        return value

    @property
    def oauth_flow(self) -> OAuth | None:
        """The server's :class:`~llm_mcp.client.oauth.OAuth` (``None`` without ``oauth``)."""
        if self._option("oauth") is None:
            return None
        with self._lock:
            if self._oauth is None:
                url, timeout = self._endpoint(), self._timeout()
                self._oauth = OAuth(server_name=self.name, url=url, settings=self.oauth_settings,
                                    owner=self.oauth_owner, timeout=min(timeout, 30.0),
                                    capabilities=lambda: self.declared_capabilities("modern"))
            return self._oauth

    def _oauth_or_fail(self) -> OAuth:
        flow = self.oauth_flow
        if flow is None:
            raise ValueError(f"MCP server {self.name!r} has no oauth setting")
        return flow

    def authorization_url(self, redirect_uri: str | None = None, *, scopes: list[str] | str | None = None) -> str:
        """The URL to send the owner to so they authorize this app (authorization code + PKCE).

            return redirect(Linear(user=request.user).authorization_url(redirect_uri=callback_url))

        ``scopes`` asks for these scopes this time (stepping up after an
        ``InsufficientScopeError``); otherwise the ``scopes`` setting, else the server's.
        Raises ``ValueError`` (no oauth, bad redirect URI), ``MCPError`` (a discovery or
        pinning refusal), ``UnauthorizedError`` (registration refused).
        """
        return self._oauth_or_fail().authorization_url(redirect_uri=redirect_uri, scopes=scopes)

    def authorize(self, params: Any) -> None:
        """Finish the authorization in the callback: ``server.authorize(request.GET)``.

        Raises ``MCPError`` when the callback does not belong to an authorization started
        here (``state``, or an ``iss`` naming another issuer), ``UnauthorizedError`` when the
        authorization server refused.
        """
        self._oauth_or_fail().authorize(params)

    @property
    def authorized(self) -> bool:
        """Whether the owner has stored credentials for this server."""
        return self._oauth_or_fail().authorized

    def deauthorize(self) -> None:
        """Forget the owner's credentials for this server; ``authorized`` is ``False`` after."""
        self._oauth_or_fail().deauthorize()

    def _oauth_extensions(self) -> dict[str, dict[str, Any]]:
        """The authorization extensions the ``oauth`` setting uses (declared on every request):
        ``io.modelcontextprotocol/oauth-client-credentials`` for ``grant="client_credentials"``,
        ``io.modelcontextprotocol/enterprise-managed-authorization`` for ``identity_provider``."""
        oauth = self._option("oauth")
        if not oauth:
            return {}
        return extensions_for(oauth, lambda key, value: self._evaluate(f"oauth[{key!r}]", value))
