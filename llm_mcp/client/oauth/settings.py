"""The ``oauth`` setting of a server: its keys, their checks, and their evaluated values.

    class Linear(llm_mcp.MCP):
        url = "https://mcp.linear.app/mcp"
        inputs = ["user"]
        oauth = {"owner": "user", "scopes": ["read"]}

Values may be literals, callables (called with the server when they take an argument) or
the names of methods on the server class, like other settings; they are evaluated when
needed, so a rotating ``assertion`` or ``id_token`` is read again for every token request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

__all__ = ["GRANTS", "KEYS", "RESERVED_PARAMS", "OAuthSettings", "check_oauth", "check_authorization_params"]

KEYS = ("owner", "client_id", "client_secret", "private_key", "scopes", "authorization_params", "grant",
        "assertion", "identity_provider", "redirect_uri")
"""The keys the ``oauth`` dict accepts."""

GRANTS = ("authorization_code", "client_credentials")
"""The values ``grant`` accepts (``authorization_code`` by default)."""

IDENTITY_PROVIDER_KEYS = ("issuer", "client_id", "client_secret", "id_token")

RESERVED_PARAMS = frozenset({"client_id", "state", "scope", "response_type", "redirect_uri", "code_challenge",
                             "code_challenge_method", "resource"})
"""Authorization request parameters the client sets itself; ``authorization_params`` may not."""


def check_oauth(oauth: Any, where: str) -> None:
    """Refuse an ``oauth`` setting that cannot work (``ValueError`` naming the key; never a value).

    Literal values are checked; callables and method names are checked when evaluated.
    """
    if not isinstance(oauth, Mapping):
        raise ValueError(f"{where}: oauth must be a dict, not {type(oauth).__name__}")
    unknown = sorted(str(k) for k in oauth if k not in KEYS)
    if unknown:
        raise ValueError(f"{where}: oauth has unknown keys {unknown} (known: {', '.join(KEYS)})")
    grant = oauth.get("grant")
    if isinstance(grant, str) and grant not in GRANTS:
        raise ValueError(f"{where}: oauth grant must be one of {list(GRANTS)}, not {grant!r}")
    if oauth.get("client_secret") is not None and oauth.get("private_key") is not None:
        raise ValueError(f"{where}: oauth takes client_secret or private_key, not both")
    if (oauth.get("client_secret") is not None or oauth.get("private_key") is not None) \
            and oauth.get("client_id") is None:
        key = "client_secret" if oauth.get("client_secret") is not None else "private_key"
        raise ValueError(f"{where}: oauth {key} needs a client_id")
    if oauth.get("assertion") is not None and oauth.get("identity_provider") is not None:
        raise ValueError(f"{where}: oauth takes assertion or identity_provider, not both")
    if grant == "client_credentials":
        if oauth.get("client_id") is None:
            raise ValueError(f"{where}: oauth grant='client_credentials' needs a client_id")
        for key in ("assertion", "identity_provider", "authorization_params", "redirect_uri"):
            if oauth.get(key) is not None:
                raise ValueError(f"{where}: oauth {key} does not go with grant='client_credentials'")
    provider = oauth.get("identity_provider")
    if isinstance(provider, Mapping):
        unknown = sorted(str(k) for k in provider if k not in IDENTITY_PROVIDER_KEYS)
        if unknown:
            raise ValueError(f"{where}: oauth identity_provider has unknown keys {unknown} "
                             f"(known: {', '.join(IDENTITY_PROVIDER_KEYS)})")
        missing = [k for k in ("issuer", "id_token") if provider.get(k) is None]
        if missing:
            raise ValueError(f"{where}: oauth identity_provider needs {' and '.join(missing)}")
    elif provider is not None and not callable(provider) and not isinstance(provider, str):
        raise ValueError(f"{where}: oauth identity_provider must be a dict")
    scopes = oauth.get("scopes")
    if scopes is not None and not callable(scopes) and not isinstance(scopes, (str, list, tuple)):
        raise ValueError(f"{where}: oauth scopes must be a list of strings")
    params = oauth.get("authorization_params")
    if isinstance(params, Mapping):
        check_authorization_params(params, where)


def check_authorization_params(params: Any, where: str) -> dict[str, str]:
    """``authorization_params`` as a dict of strings; ``ValueError`` for a parameter the
    client sets itself (``client_id``, ``state``, ``scope``, ...) or a value that is not text."""
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise ValueError(f"{where}: oauth authorization_params must be a dict, not {type(params).__name__}")
    reserved = sorted(str(k) for k in params if str(k) in RESERVED_PARAMS)
    if reserved:
        raise ValueError(f"{where}: oauth authorization_params may not set {', '.join(reserved)}: the client sets "
                         "them itself (use scopes for the scope)")
    result = {}
    for key, value in params.items():
        if value is None:
            continue
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise ValueError(f"{where}: oauth authorization_params[{key!r}] must be a string")
        result[str(key)] = str(value)
    return result


def scope_list(value: Any, where: str) -> list[str] | None:
    """Scopes as a list of strings (a space-separated string is split); ``None`` stays ``None``."""
    if value is None:
        return None
    if isinstance(value, str):
        return value.split()
    if isinstance(value, (list, tuple, set, frozenset)) and all(isinstance(s, str) for s in value):
        return [s for s in value if s]
    raise ValueError(f"{where}: oauth scopes must be a list of strings")


@dataclass(repr=False)
class OAuthSettings:
    """The ``oauth`` setting, evaluated now.

        settings = server.oauth_settings()
        settings.grant   # "authorization_code"

    Attributes:
        owner: whose credentials these are (an input's value, or an object), or ``None``.
        client_id: a pre-registered client's id, or ``None``.
        client_secret: its secret, or ``None`` (never in ``repr``).
        private_key: a PEM string or ``cryptography`` private key signing client assertions,
            or ``None`` (never in ``repr``).
        scopes: scopes asked for explicitly (a list), or ``None`` for the server's.
        authorization_params: extra authorization request parameters (dict of strings).
        grant: ``"authorization_code"`` or ``"client_credentials"``.
        assertion: a workload's token for the JWT bearer grant, or ``None``.
        identity_provider: ``{"issuer", "client_id", "client_secret", "id_token"}`` evaluated,
            or ``None``.
        redirect_uri: the default redirect URI for `authorization_url`, or ``None``.
    """

    owner: Any = None
    client_id: str | None = None
    client_secret: str | None = None
    private_key: Any = None
    scopes: list[str] | None = None
    authorization_params: dict[str, str] = field(default_factory=dict)
    grant: str = "authorization_code"
    assertion: str | None = None
    identity_provider: dict[str, Any] | None = None
    redirect_uri: str | None = None

    @property
    def machine(self) -> bool:
        """Whether tokens come without a user: client credentials, a workload assertion, or
        enterprise-managed authorization (all fetched on a 401, no redirect)."""
        return self.grant == "client_credentials" or self.assertion is not None or self.identity_provider is not None

    def __repr__(self) -> str:
        return (f"<OAuthSettings grant={self.grant!r} client_id={self.client_id!r} scopes={self.scopes!r} "
                f"secret={'set' if self.client_secret else 'none'} private_key={'set' if self.private_key else 'none'}>")


def evaluate_settings(oauth: Mapping[str, Any], evaluate: Callable[[str, Any], Any], where: str) -> OAuthSettings:
    """Evaluate each key of an ``oauth`` dict with ``evaluate(name, value)`` (the server's)."""
    def value(key: str) -> Any:
        return evaluate(f"oauth[{key!r}]", oauth.get(key)) if oauth.get(key) is not None else None

    def text(key: str) -> str | None:
        raw = value(key)
        if raw is None:
            return None
        if not isinstance(raw, str) or not raw:
            raise ValueError(f"{where}: oauth {key} must evaluate to a non-empty string")
        return raw

    provider = value("identity_provider")
    if provider is not None:
        if not isinstance(provider, Mapping):
            raise ValueError(f"{where}: oauth identity_provider must be a dict")
        provider = {k: evaluate(f"oauth['identity_provider'][{k!r}]", v) for k, v in provider.items()}
    grant = value("grant") or "authorization_code"
    if grant not in GRANTS:
        raise ValueError(f"{where}: oauth grant must be one of {list(GRANTS)}, not {grant!r}")
    params = check_authorization_params(value("authorization_params"), where)
    return OAuthSettings(
        client_id=text("client_id"), client_secret=text("client_secret"), private_key=value("private_key"),
        scopes=scope_list(value("scopes"), where), authorization_params=params, grant=grant,
        assertion=text("assertion"), identity_provider=provider, redirect_uri=text("redirect_uri"),
    )
