"""The MCP Apps views: what the chat page's Apps host (``llm_mcp/static/llm_mcp/apps.js``) asks of
the server, and the sandbox proxy page the Apps run in.

    =====================  ================================  ==============================================
    URL name (llm_mcp:)    path under the include            view
    =====================  ================================  ==============================================
    app                    apps/<message>/                   `AppView` (GET: JSON {html, csp, permissions, input, result, ...})
    app_tool_call          apps/<message>/tools/call/        `AppToolCallView` (POST JSON {"name", "arguments"})
    app_resource           apps/<message>/resources/read/    `AppResourceView` (POST JSON {"uri"})
    app_sandbox            apps/sandbox/                     `SandboxView` (the proxy page; only on APPS_SANDBOX_ORIGIN)
    =====================  ================================  ==============================================

``<message>`` is the primary key of a tool-result message whose call has an App (``ui_uri``).
The views find its chat, ask ``LLM_MCP["CHAT_ACCESS"]`` (``"view"`` to read, ``"send"`` to call; a
refusal answers 404; a visitor not signed in gets a JSON 403, not a redirect), rebuild the chat's
servers as a resumed chat does (from its agent; a chat whose servers cannot be rebuilt answers 404
and the reason is logged) and talk only to the server
that produced the message. An App's ``tools/call`` reaches a tool of that server whose
``visibility`` includes ``"app"`` (the default) and that the server class's ``only``/``exclude``
keep, and nothing else: 403 otherwise, 404 for a tool that
server does not list, 400/415 for a body that is not the JSON asked for; none of these contacts
a server. POSTs use Django's CSRF protection (the ``csrftoken`` cookie sent back as
``X-CSRFToken``).

Spec: MCP Apps (``modelcontextprotocol/ext-apps``) 2026-01-26: "Resource Discovery" (visibility),
"Sandbox proxy", "Security Implications".
"""

from __future__ import annotations

import json
import logging
from typing import Any

from django.apps import apps
from django.core import signing
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.clickjacking import xframe_options_exempt

from . import conf
from .access import allowed
from .chat_views import ChatView
from .client.app_policy import allow_attribute, content_security_policy
from .client.errors import MCPError
from .client.extensions import APP_MIME_TYPE
from .client.server import MCP
from .client.shaping import kept_tools

__all__ = ["AppResourceView", "AppToolCallView", "AppView", "SandboxView", "request_origin"]

log = logging.getLogger("llm_mcp.apps")

MAX_BODY = 1_000_000
"""Bytes an App's request body may have."""


def request_origin(request: HttpRequest) -> str:
    """``scheme://host[:port]`` the request was made to (as Django sees it, ``ALLOWED_HOSTS`` checked)."""
    return f"{request.scheme}://{request.get_host()}"


class AppMessageView(ChatView):
    """Base of the App views: the tool-result message of the URL, its call, its chat and its server."""

    def handle_no_permission(self) -> HttpResponse:
        """A JSON 403 for a visitor who is not signed in (their session ended): a redirect to the
        login page would reach the page's script as a 200 with no JSON."""
        return JsonResponse({"error": "not signed in: sign in again and reload the page"}, status=403)

    def get_chat(self) -> Any:
        """The chat of the URL's message; ``Http404`` when the message is not a tool result with an
        App or the hook refuses ``action``."""
        model = apps.get_model(conf.message_model_name())
        row = get_object_or_404(model._default_manager.select_related("chat"), pk=self.kwargs["message"], role="tool")
        if not allowed(self.request.user, row.chat, self.action):
            raise Http404("No such chat")
        call = row.parent_tool_call
        if call is None or not call.ui_uri:
            raise Http404("That message has no App")
        self.row, self.call, self.record = row, call, row.chat
        return row.chat

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        """The view, then the servers rebuilt for it closed (a stdio server's process ends)."""
        try:
            return super().dispatch(request, *args, **kwargs)
        finally:
            record = getattr(self, "record", None)
            if record is not None and "_live_chat" in record.__dict__:
                record.close()

    def get_server(self, record: Any) -> MCP:
        """The server that answered the call, rebuilt as a resumed chat builds it; ``Http404``
        (the reason logged) when it cannot be."""
        try:
            tool = record.chat.resolve_tool(self.call.name)
        except Exception as exc:  # an agent that cannot be imported, a server that cannot be listed
            log.warning("MCP App of message %s: chat %s's servers cannot be rebuilt: %s: %s",
                        self.row.pk, record.pk, type(exc).__name__, exc)
            raise Http404("The App's server is not available") from None
        server = getattr(tool, "server", None)
        self.tool = tool
        if not isinstance(server, MCP):
            log.warning("MCP App of message %s: no server of chat %s offers %r now", self.row.pk, record.pk,
                        self.call.name)
            raise Http404("The App's server is not available")
        return server

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        """The chat (access checked), then the JSON body, then `answer`."""
        record = self.get_chat()
        body = self.json_body(request)
        return body if isinstance(body, JsonResponse) else self.answer(request, record, body)

    def answer(self, request: HttpRequest, record: Any, body: dict[str, Any]) -> HttpResponse:
        """What a POST with a JSON object ``body`` answers (subclasses)."""
        raise NotImplementedError

    def json_body(self, request: HttpRequest) -> dict[str, Any] | JsonResponse:
        """The request's JSON object, or the 4xx answer saying what is wrong with it."""
        if request.content_type != "application/json":
            return JsonResponse({"error": "send a JSON body (Content-Type: application/json)"}, status=415)
        if len(request.body) > MAX_BODY:
            return JsonResponse({"error": f"the body is larger than {MAX_BODY} bytes"}, status=413)
        try:
            body = json.loads(request.body, parse_constant=_no_constant)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            return JsonResponse({"error": "the body is not valid JSON"}, status=400)
        except ValueError as exc:  # _no_constant's
            return JsonResponse({"error": str(exc)}, status=400)
        if not isinstance(body, dict):
            return JsonResponse({"error": "the body must be a JSON object"}, status=400)
        try:
            json.dumps(body, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return JsonResponse({"error": "the body holds a lone surrogate (a \\ud800-\\udfff escape), "
                                          "which cannot be sent on"}, status=400)
        return body


def _no_constant(name: str) -> Any:
    """``parse_constant`` for request bodies: NaN and Infinity, which Python's ``json`` reads, are not JSON."""
    raise ValueError(f"the body holds {name}, which is not JSON")


def _failure(exc: MCPError) -> JsonResponse:
    return JsonResponse({"error": f"{type(exc).__name__}: {str(exc)[:500]}", "code": exc.code}, status=502)


class AppView(AppMessageView):
    """GET: the App of a tool-result message, as JSON: ``html`` (the UI resource's text), ``csp``
    and ``permissions`` (its ``_meta.ui``, ``None`` when absent), ``input`` (the call's
    arguments), ``result`` (the server's whole result as sent), and for the host page
    ``policy`` (the CSP built from ``csp``), ``allow`` (the iframe ``allow`` attribute),
    ``prefers_border`` and ``tool`` (the call's name, the tool's title and its ``tools/list`` entry)."""

    http_method_names = ["get"]

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        record = self.get_chat()
        server = self.get_server(record)
        try:
            server.resources  # noqa: B018 - listed once and kept: its _meta.ui is the fallback for the item's
        except MCPError:
            pass  # a server that lists no resources: the content item's _meta is all there is
        try:
            resource = server.resource(self.call.ui_uri)
        except MCPError as exc:
            return _failure(exc)
        content = resource.content
        html = content.decode("utf-8", errors="replace") if isinstance(content, bytes) else content
        ui = resource.meta.get("ui") if isinstance(resource.meta.get("ui"), dict) else {}
        definition = getattr(self.tool, "definition", None)
        return JsonResponse({
            "html": html, "mime_type": resource.mime_type or APP_MIME_TYPE,
            "csp": ui.get("csp"), "permissions": ui.get("permissions"),
            "input": self.call.arguments, "result": self.call.mcp_result,
            "policy": content_security_policy(ui.get("csp")), "allow": allow_attribute(ui.get("permissions")),
            "sandbox_csp": sign_csp(ui.get("csp")),
            "prefers_border": ui.get("prefersBorder"),
            "tool": {"name": self.call.name, "title": getattr(self.tool, "title", None),
                     "definition": definition if isinstance(definition, dict) else None},
        })


class AppToolCallView(AppMessageView):
    """POST JSON ``{"name": <server-side tool name>, "arguments": {...}}``: an App's ``tools/call``,
    answered with the server's result as sent (``Result.to_dict()``); 403 for a tool whose
    ``visibility`` lacks ``"app"``, 404 for a tool the message's server does not list, 502 when
    the server fails."""

    action = "send"
    http_method_names = ["post"]

    def answer(self, request: HttpRequest, record: Any, body: dict[str, Any]) -> HttpResponse:
        name, arguments = body.get("name"), body.get("arguments", {})
        if not isinstance(name, str) or not name or not isinstance(arguments, dict):
            return JsonResponse({"error": 'send {"name": "<tool>", "arguments": {...}}'}, status=400)
        server = self.get_server(record)
        tool = next((t for t in server.tools if t.server_name == name), None)
        if tool is None:
            return JsonResponse({"error": f"server {server.name!r} has no tool {name!r}"}, status=404)
        if not kept_tools(server, [tool]):
            log.warning("MCP App of message %s asked for %s.%s, which the server's only/exclude leave out: "
                        "refused", self.row.pk, server.name, name)
            return JsonResponse({"error": f"tool {name!r} is left out by the server's only/exclude settings"},
                                status=403)
        visibility = tool.visibility if tool.visibility is not None else ["model", "app"]
        if "app" not in visibility:
            log.warning("MCP App of message %s asked for %s.%s, which is not visible to apps: refused",
                        self.row.pk, server.name, name)
            return JsonResponse({"error": f"tool {name!r} is not callable by apps"}, status=403)
        log.info("MCP App of message %s (user %s) calls %s.%s", self.row.pk, request.user.pk, server.name, name)
        try:
            result = server.call(name, **arguments)
        except MCPError as exc:
            return _failure(exc)
        return JsonResponse(result.to_dict())


class AppResourceView(AppMessageView):
    """POST JSON ``{"uri": ...}``: an App's ``resources/read`` on the message's server, answered with
    ``{"contents": [...]}`` as the server sent them."""

    http_method_names = ["post"]

    def answer(self, request: HttpRequest, record: Any, body: dict[str, Any]) -> HttpResponse:
        uri = body.get("uri")
        if not isinstance(uri, str) or not uri:
            return JsonResponse({"error": 'send {"uri": "<resource URI>"}'}, status=400)
        server = self.get_server(record)
        log.info("MCP App of message %s (user %s) reads %r from %s", self.row.pk, request.user.pk, uri, server.name)
        try:
            resource = server.resource(uri)
        except MCPError as exc:
            return _failure(exc)
        return JsonResponse({"contents": resource.contents})


SANDBOX_CSP_SALT = "llm_mcp.apps.sandbox-csp"


def sign_csp(csp: Any) -> str:
    """``_meta.ui.csp`` signed (``django.core.signing``, the site's ``SECRET_KEY``) for the sandbox
    page's ``?csp=``: the App runs on its proxy's origin and could load the proxy page again with a
    looser ``?csp=``; an unsigned or altered one gets the strict default instead."""
    return signing.dumps(csp, salt=SANDBOX_CSP_SALT, compress=True)


def signed_csp(token: str) -> Any:
    """The ``csp`` a `sign_csp` token carries, or ``None`` (the strict default) for anything else."""
    try:
        return signing.loads(token, salt=SANDBOX_CSP_SALT)
    except (signing.BadSignature, ValueError, RecursionError):
        return None


@method_decorator(xframe_options_exempt, name="dispatch")
class SandboxView(View):
    """GET ``?csp=<_meta.ui.csp, signed by AppView>``: the sandbox proxy page (no login: it holds nothing and
    reads nothing). Served only on ``LLM_MCP["APPS_SANDBOX_ORIGIN"]``, 404 anywhere else, so it
    never shares the chat pages' origin; its ``Content-Security-Policy`` header is the one built
    from ``csp``, which the App's document (an ``about:srcdoc`` frame) inherits."""

    http_method_names = ["get"]

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        sandbox = conf.get("APPS_SANDBOX_ORIGIN")
        if not sandbox or request_origin(request) != sandbox.rstrip("/"):
            raise Http404("The MCP Apps sandbox is not served here")
        csp = signed_csp(request.GET.get("csp") or "")
        policy = content_security_policy(csp)
        response = HttpResponse(render_to_string("llm_mcp/app_sandbox.html", {"policy": policy}))
        response["Content-Security-Policy"] = policy
        response["Referrer-Policy"] = "no-referrer"
        response["Cache-Control"] = "no-store"
        return response
