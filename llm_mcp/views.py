"""Views that connect a signed-in user's MCP servers with OAuth: connect, callback, disconnect.

    # urls.py
    path("mcp/", include("llm_mcp.urls"))

    # settings.py
    LLM_MCP = {"OAUTH_SERVERS": {"linear": "myapp.mcp.Linear"}}

    <form method="post" action="{% url 'llm_mcp:oauth_connect' 'linear' %}">{% csrf_token %}
      <input type="hidden" name="next" value="{{ request.path }}"><button>Connect Linear</button></form>

* ``connect`` (POST, login required): builds the server for the current user (the
  class's ``oauth["owner"]`` input gets ``request.user``), asks it for the authorization
  URL with this site's callback as ``redirect_uri``, remembers the authorization's
  ``state`` in the user's session, and redirects the browser to the authorization server.
  A GET (a plain link) changes nothing: it answers a page with that POST form
  (template ``llm_mcp/oauth_connect.html``).
* ``callback`` (GET, login required): accepts only a ``state`` this session started (a
  callback from another browser, another user, or replayed is refused), finishes with
  ``server.authorize(request.GET)``, and redirects to the ``next`` given to ``connect``
  when it is a URL of this site (``OAUTH_REDIRECT_URL`` otherwise).
* ``disconnect`` (POST, login required): ``server.deauthorize()``, then the same redirect.
* ``client_metadata`` (GET): the client ID metadata document when ``CLIENT_ID`` is set.

Failures (a refusal, a callback that does not belong to its authorization, an authorization
server that cannot be reached) are shown as a page saying what happened, with status 400 or
502, never a 500; the page, the log and the messages never carry the authorization code or
any token. Spec: MCP 2026-07-28 "Authorization", RFC 6749 section 10.12 (CSRF), RFC 9207.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ImproperlyConfigured
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render, resolve_url
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from . import conf
from .client.declared import input_names
from .client.errors import MCPError

if TYPE_CHECKING:
    from .client.server import MCP

__all__ = ["SESSION_KEY", "build_server", "callback", "client_metadata", "connect", "disconnect", "server_for_owner"]

log = logging.getLogger("llm_mcp.views")

SESSION_KEY = "llm_mcp_oauth"
"""The session key holding the authorizations this session started: ``{state: {"server",
"next", "user"}}``."""

MAX_PENDING = 10
"""Authorizations a session may have started and not finished; older ones are forgotten."""

SECRET_PARAMETERS = ("code", "state", "access_token", "refresh_token", "id_token")
"""Callback parameters whose values are never echoed into a page, a log line or a message."""


def build_server(name: str, request: HttpRequest) -> MCP:
    """The server ``OAUTH_SERVERS[name]`` names, built for ``request.user``.

        server = build_server("linear", request)      # Linear(user=request.user)

    An ``llm_mcp.MCP`` subclass is built with its ``oauth["owner"]`` input set to the user;
    a function is called with the request. Raises ``Http404`` for a name the setting does not
    list, ``ImproperlyConfigured`` for a class whose owner is not an input."""
    from .client.server import MCP

    try:
        target = conf.oauth_server(name)
    except KeyError:
        raise Http404("No such MCP server to connect") from None
    if isinstance(target, type):
        return server_for_owner(name, target, request.user)
    server = target(request)
    if not isinstance(server, MCP):
        raise ImproperlyConfigured(f"settings.LLM_MCP['OAUTH_SERVERS'][{name!r}] returned "
                                   f"{type(server).__name__}, not an llm_mcp.MCP")
    return server


def server_for_owner(name: str, target: type, owner: Any) -> MCP:
    """``target`` (the class ``OAUTH_SERVERS[name]`` names) built for ``owner``: its
    ``oauth["owner"]`` input set to ``owner`` (a user). Raises ``ImproperlyConfigured`` for a
    class whose owner is not an input."""
    oauth = getattr(target, "oauth", None)
    owner_input = oauth.get("owner") if isinstance(oauth, dict) else None
    if not isinstance(owner_input, str) or owner_input not in input_names(target.inputs):
        raise ImproperlyConfigured(
            f"settings.LLM_MCP['OAUTH_SERVERS'][{name!r}]: {target.__name__} must declare oauth = "
            f"{{'owner': '<input>'}} with that input in inputs (the view passes the signed-in user), or the "
            "setting must name a function(request) returning the server")
    return target(**{owner_input: owner})


def _safe_next(request: HttpRequest, candidate: str | None) -> str:
    if candidate and url_has_allowed_host_and_scheme(candidate, allowed_hosts={request.get_host()},
                                                     require_https=request.is_secure()):
        return candidate
    return resolve_url(conf.get("OAUTH_REDIRECT_URL"))


def _scrub(text: str, request: HttpRequest) -> str:
    """``text`` without the values of the callback's secret parameters."""
    for name in SECRET_PARAMETERS:
        for value in request.GET.getlist(name):
            if value and len(value) >= 4:
                text = text.replace(value, "[hidden]")
    return text


def _failure(request: HttpRequest, *, title: str, detail: str, status: int, next_url: str,
             server: str = "") -> HttpResponse:
    detail = _scrub(detail, request)
    one_line = "".join(char if char.isprintable() else " " for char in detail)  # no forged log lines
    log.warning("MCP authorization%s failed for user %s: %s: %s", f" of {server}" if server else "",
                getattr(request.user, "pk", None), title, one_line)
    return render(request, "llm_mcp/oauth_error.html",
                  {"title": title, "detail": detail, "next": next_url, "server": server}, status=status)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc) or 'no details'}"[:1000]


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def connect(request: HttpRequest, name: str) -> HttpResponse:
    """Send the user to authorize ``name`` (MCP-AUTH-10) on POST; ``next`` is where to come back
    to. A GET registers and stores nothing: it shows the POST form (a link or a cross-site
    request cannot start an authorization)."""
    next_url = _safe_next(request, request.POST.get("next") or request.GET.get("next"))
    server = build_server(name, request)
    if request.method != "POST":
        _close(server)
        return render(request, "llm_mcp/oauth_connect.html", {"server": name, "next": next_url,
                                                                "action": request.path})
    redirect_uri = request.build_absolute_uri(reverse("llm_mcp:oauth_callback"))
    try:
        url = server.authorization_url(redirect_uri=redirect_uri)
    except Exception as exc:
        return _failure(request, title=f"{name} cannot be connected", detail=_describe(exc),
                        status=502 if not isinstance(exc, (MCPError, ValueError)) else 400,
                        next_url=next_url, server=name)
    finally:
        _close(server)
    state = (parse_qs(urlsplit(url).query).get("state") or [""])[0]
    if not state:
        return _failure(request, title=f"{name} cannot be connected", status=502, next_url=next_url, server=name,
                        detail="the authorization URL carries no state, so its callback could not be checked")
    pending = dict(request.session.get(SESSION_KEY) or {})
    pending[state] = {"server": name, "next": next_url, "user": str(request.user.pk)}
    request.session[SESSION_KEY] = dict(list(pending.items())[-MAX_PENDING:])
    return HttpResponseRedirect(url)


@never_cache
@login_required
@require_GET
def callback(request: HttpRequest) -> HttpResponse:
    """Finish an authorization this session started (MCP-AUTH-10), then redirect to its ``next``."""
    fallback = resolve_url(conf.get("OAUTH_REDIRECT_URL"))
    state = request.GET.get("state", "")
    pending = dict(request.session.get(SESSION_KEY) or {})
    started = pending.pop(state, None) if state else None
    if started is None or started.get("user") != str(request.user.pk):
        return _failure(request, title="This authorization was not started here", status=400, next_url=fallback,
                        detail="The callback does not belong to an authorization this browser session started "
                               "(it may come from another browser or user, or have been used already). Start "
                               "the connection again.")
    request.session[SESSION_KEY] = pending  # a state is used once, whatever happens next
    name, next_url = started["server"], _safe_next(request, started.get("next"))
    server = build_server(name, request)
    try:
        server.authorize(request.GET)  # an error response too: its iss is checked, the authorization forgotten
    except MCPError as exc:
        return _failure(request, title=f"{name} was not connected", detail=_describe(exc), status=400,
                        next_url=next_url, server=name)
    except Exception as exc:  # the authorization server could not be reached, answered nonsense, ...
        return _failure(request, title=f"{name} was not connected", detail=_describe(exc), status=502,
                        next_url=next_url, server=name)
    finally:
        _close(server)
    return HttpResponseRedirect(next_url)


@never_cache
@login_required
@require_POST
def disconnect(request: HttpRequest, name: str) -> HttpResponse:
    """Forget the user's credentials for ``name`` (``deauthorize()``), then redirect to ``next``."""
    next_url = _safe_next(request, request.POST.get("next"))
    server = build_server(name, request)
    try:
        server.deauthorize()
    finally:
        _close(server)
    return HttpResponseRedirect(next_url)


@require_GET
def client_metadata(request: HttpRequest) -> HttpResponse:
    """The client ID metadata document ``CLIENT_ID`` points to (404 when it is unset).

    ``client_id`` is ``CLIENT_ID`` exactly, and ``redirect_uris`` lists this site's callback
    on ``CLIENT_ID``'s origin (MCP-REG-03). Spec: draft-ietf-oauth-client-id-metadata-document."""
    from .client.config import config

    client_id = conf.get("CLIENT_ID")
    if client_id is None:
        raise Http404("No client ID metadata document is configured")
    parts = urlsplit(client_id)
    callback_url = f"{parts.scheme}://{parts.netloc}{reverse('llm_mcp:oauth_callback')}"
    document = config.client_metadata_document([callback_url])
    document["client_id"] = client_id  # the setting, even if a test swapped the client's config
    document["client_uri"] = f"{parts.scheme}://{parts.netloc}/"
    return JsonResponse(document)


def _close(server: MCP) -> None:
    try:
        server.close()
    except Exception:  # closing is best effort; the answer is already decided
        log.debug("closing %r failed", server, exc_info=True)
