"""Django admin for chats (with their messages and tool calls), tool calls and credentials.

The chat admin is registered for the app's own chat model only: a project that swaps it
(``LLM_MCP_CHAT_MODEL``) registers its model itself, and can reuse `ChatAdmin` and
`MessageInline`.

Credentials are listed by owner, server, scopes and expiry: their encrypted ``secret`` and the
tokens in the decrypted ``data`` are never displayed nor editable here, and credentials are not
added from the admin (the client writes them during authorization); the *revoke* action (or
deleting one) revokes it for this site, *refresh now* refreshes its access token at once,
*refresh at next use* marks it expired so the client refreshes it at its next use.

Tool calls can be approved and declined from their list (actions), through the same
``ToolCall.approve()``/``decline()`` the chat pages use.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from django.apps import apps
from django.contrib import admin, messages
from django.db.models import Count, OuterRef, Subquery
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from . import conf
from .models import Credential, ToolCall

__all__ = ["ChatAdmin", "CredentialAdmin", "MessageInline", "ToolCallAdmin", "ToolCallInline"]

DEFAULT_CHAT_MODEL = "llm_mcp.Chat"

log = logging.getLogger("llm_mcp.admin")


def _has_user(model: Any) -> bool:
    return any(field.name == "user" for field in model._meta.get_fields())


def _excerpt(text: str, size: int = 80) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= size else text[: size - 1] + "…"


class _ViewOnly:
    """For an admin page or inline whose rows are only looked at: no add, no change."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class MessageInline(_ViewOnly, admin.TabularInline):
    """The messages of a chat, in order, read-only; each assistant message links its tool calls."""

    model = apps.get_model(conf.message_model_name(), require_ready=False)
    extra = 0
    can_delete = False
    show_change_link = False
    ordering = ["id"]
    fields = ["role", "content", "tool_calls_list", "is_error", "model", "input_tokens", "output_tokens",
              "created_at"]
    readonly_fields = fields

    @admin.display(description="tool calls")
    def tool_calls_list(self, message: Any) -> str:
        calls = list(message.tool_calls.all())
        if not calls:
            return "-"
        return format_html_join(
            ", ", '<a href="{}">{}</a> ({}){}',
            ((reverse("admin:llm_mcp_toolcall_change", args=[call.pk]), call.name, call.approval or "no approval",
              _task_line(call)) for call in calls))

    def get_queryset(self, request: HttpRequest) -> Any:
        return super().get_queryset(request).prefetch_related("tool_calls")


def _task_text(call: ToolCall) -> str:
    """``working: step 2 of 3`` for a call paused on a server task (status and status message), else ``""``."""
    if call.task is None or call.result_id is not None:
        return ""
    message = f": {_excerpt(call.task_status_message)}" if call.task_status_message else ""
    return f"{call.task_status or 'unknown'}{message}"


def _task_line(call: ToolCall) -> str:
    text = _task_text(call)
    return format_html(" - task {}", text) if text else ""


class ChatAdmin(admin.ModelAdmin):
    """Chats: user, title (the first user message), message count, model, provider, agent; the
    messages inline."""

    list_display = ["__str__", "owner", "title", "message_count", "model", "provider", "cancelled", "updated_at"]
    list_filter = ["provider", "cancelled"]
    search_fields = ["model", "agent_class"]

    def get_queryset(self, request: HttpRequest) -> Any:
        messages = self.model._meta.get_field("message_records").related_model._default_manager
        first = messages.filter(chat=OuterRef("pk"), role="user").order_by("id").values("content")[:1]
        queryset = super().get_queryset(request).annotate(message_total=Count("message_records", distinct=True),
                                                          first_message=Subquery(first))
        return queryset.select_related("user") if _has_user(self.model) else queryset

    @admin.display(description="user")
    def owner(self, chat: Any) -> str:
        user = getattr(chat, "user", None)
        return user.get_username() if user is not None else "-"

    @admin.display(description="title")
    def title(self, chat: Any) -> str:
        return _excerpt(getattr(chat, "first_message", "") or "") or "-"

    @admin.display(description="messages", ordering="message_total")
    def message_count(self, chat: Any) -> int:
        return getattr(chat, "message_total", 0)
    # agent_class names code a job imports, agent_inputs its arguments: never editable here
    readonly_fields = ["agent_class", "agent_inputs", "pending_tasks", "created_at", "updated_at"]

    @admin.display(description="pending tasks")
    def pending_tasks(self, chat: Any) -> str:
        """The server tasks the chat's paused calls wait on, with their status messages (from the rows)."""
        calls = ToolCall.objects.filter(message__chat_id=chat.pk, result__isnull=True, task__isnull=False)
        lines = [(call.name, _task_text(call), call.task_server) for call in calls.order_by("id")]
        if not lines:
            return "-"
        return format_html_join(mark_safe("<br>"), "{} - task {} ({})", lines)  # noqa: S308 - a constant
    inlines = [MessageInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # chats are made by code (an agent, Chat.objects.create), where their tools are

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> Any:
        """A chat goes with its tool calls, which cannot be deleted one by one."""
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        perms_needed.discard(ToolCall._meta.verbose_name)
        return deleted, counts, perms_needed, protected


class ToolCallAdmin(_ViewOnly, admin.ModelAdmin):
    """Tool calls: what was called, in which chat, whether it was approved, and the result.

    The actions approve or decline waiting calls through ``ToolCall.approve()``/``decline()``
    (a call decided elsewhere meanwhile is left as it is and reported); a chat whose last
    waiting call was decided here is resumed (``tasks.resume_chat``)."""

    list_display = ["tool_call_id", "name", "approval", "task_state", "chat", "created_at"]
    list_filter = ["approval", "task_status"]
    search_fields = ["tool_call_id", "name", "task_id"]
    list_select_related = ["message__chat"]
    actions = ["approve_calls", "decline_calls"]
    fields = ["tool_call_id", "chat", "message", "name", "arguments_json", "approval", "result_content",
              "mcp_result", "pending_questions", "request_state", "task_state", "task_id", "task_server",
              "task_poll_interval", "task_expires_at", "task_next_check", "task", "created_at"]
    readonly_fields = fields

    # Read-only: a decision goes through ToolCall.approve()/decline() and a resumed chat (the
    # example site's chat page); deleting a call would leave its conversation without it.
    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.action(description="Approve the selected waiting calls", permissions=["decide"])
    def approve_calls(self, request: HttpRequest, queryset: Any) -> None:
        self._decide(request, queryset, "approve")

    @admin.action(description="Decline the selected waiting calls", permissions=["decide"])
    def decline_calls(self, request: HttpRequest, queryset: Any) -> None:
        self._decide(request, queryset, "decline")

    def has_decide_permission(self, request: HttpRequest) -> bool:
        """Deciding a call changes its chat: the chat model's change permission."""
        meta = apps.get_model(conf.chat_model_name())._meta
        return request.user.has_perm(f"{meta.app_label}.change_{meta.model_name}")

    def _decide(self, request: HttpRequest, queryset: Any, decision: str) -> None:
        from . import tasks

        decided, skipped, chats = [], [], set()
        for call in queryset.select_related("message"):
            try:
                call.approve() if decision == "approve" else call.decline()
            except ValueError:
                skipped.append(call.name)
                continue
            decided.append(call.name)
            chats.add(call.message.chat_id)
        if decided:
            self.message_user(request, f"{'Approved' if decision == 'approve' else 'Declined'} "
                                       f"{len(decided)} call(s): {', '.join(decided)[:300]}.", messages.SUCCESS)
        if skipped:
            self.message_user(request, f"{len(skipped)} call(s) were not waiting for approval and were left as they "
                                       f"are: {', '.join(skipped)[:300]}.", messages.WARNING)
        for chat_id in sorted(chats):
            if ToolCall.objects.filter(message__chat_id=chat_id, result__isnull=True, approval="pending").exists():
                continue
            try:
                tasks.resume_chat.delay(chat_id)
            except Exception as exc:  # a broker that is down: the decision stays saved
                self.message_user(request, f"Chat {chat_id} could not be resumed: {type(exc).__name__}: "
                                           f"{str(exc)[:200]}", messages.ERROR)

    @admin.display(description="chat")
    def chat(self, call: ToolCall) -> Any:
        chat = call.message.chat
        if conf.chat_model_name() != DEFAULT_CHAT_MODEL:
            return str(chat)
        return format_html('<a href="{}">{}</a>', reverse("admin:llm_mcp_chat_change", args=[chat.pk]), chat)

    @admin.display(description="task", ordering="task_status")
    def task_state(self, call: ToolCall) -> str:
        """The server task the call waits on: its status and status message (``-`` without one)."""
        return _task_text(call) or "-"

    @admin.display(description="arguments")
    def arguments_json(self, call: ToolCall) -> str:
        return format_html("<pre>{}</pre>", json.dumps(call.arguments, indent=2, ensure_ascii=False))

    @admin.display(description="result")
    def result_content(self, call: ToolCall) -> str:
        if call.result is None:
            return "-"
        error = " (error)" if call.result.is_error else ""
        return format_html("<pre>{}</pre>{}", call.result.content, error)


class ToolCallInline(admin.TabularInline):
    """A message's tool calls (for a message admin of your own)."""

    model = ToolCall
    fk_name = "message"
    extra = 0
    can_delete = False
    fields = ["tool_call_id", "name", "arguments", "approval", "result"]
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class CredentialAdmin(_ViewOnly, admin.ModelAdmin):
    """Credentials by owner, server, scopes and expiry, to view, revoke and refresh: the client
    writes them (an admin form could only store an empty one). No token, secret or key is ever
    shown, searched or editable; the columns read the decrypted data for its ``resource``,
    ``scope`` and ``expires_at`` only.

    *Revoke* deletes the credentials (the user connects again). *Refresh now* refreshes the
    access token at once with its refresh token (`refresh_now`), for credentials of a server
    class listed in ``LLM_MCP["OAUTH_SERVERS"]``. *Refresh at next use* only marks the access
    token expired (``expires_at = 0``): no request is made now; the client refreshes it with
    the refresh token the next time the owner's server is used, from whatever process that is."""

    list_display = ["owner_display", "server", "scopes", "expiry", "updated_at"]
    list_filter = ["owner_type"]
    search_fields = ["key"]
    exclude = ["secret"]
    fields = ["owner_display", "server", "scopes", "expiry", "created_at", "updated_at"]
    readonly_fields = fields
    actions = ["revoke", "refresh_now", "refresh_at_next_use"]

    def get_queryset(self, request: HttpRequest) -> Any:
        return super().get_queryset(request).select_related("owner_type")

    @staticmethod
    def _data(credential: Credential) -> dict[str, Any]:
        try:
            return credential.data
        except ValueError:  # keys rotated without fallbacks: say so, show nothing
            return {"_undecryptable": True}

    @admin.display(description="owner")
    def owner_display(self, credential: Credential) -> str:
        if credential.owner_type_id is None:
            return "-"
        try:
            owner = credential.owner
        except Exception:
            owner = None
        if owner is None:
            return f"{credential.owner_type.name} {credential.owner_id} (deleted)"
        name = owner.get_username() if hasattr(owner, "get_username") else str(owner)
        return f"{name} ({credential.owner_type.name})"

    @admin.display(description="server")
    def server(self, credential: Credential) -> str:
        data = self._data(credential)
        if data.get("_undecryptable"):
            return "(cannot be decrypted with the current keys)"
        resource = data.get("resource")
        if isinstance(resource, str) and resource:
            return resource
        key = credential.key  # oauth:<server URL, query digested>|<owner>
        return key[len("oauth:"):].split("|", 1)[0] if key.startswith("oauth:") else "-"

    @admin.display(description="scopes")
    def scopes(self, credential: Credential) -> str:
        scope = self._data(credential).get("scope")
        return " ".join(scope.split()) if isinstance(scope, str) and scope.strip() else "-"

    @admin.display(description="expires")
    def expiry(self, credential: Credential) -> str:
        expires = self._data(credential).get("expires_at")
        if not isinstance(expires, (int, float)) or isinstance(expires, bool):
            return "-"
        moment = datetime.fromtimestamp(expires, tz=UTC)
        state = "expired" if moment <= datetime.now(UTC) else "valid"
        return f"{moment:%Y-%m-%d %H:%M:%S} UTC ({state})"

    @admin.action(description="Revoke the selected credentials (delete them)", permissions=["delete"])
    def revoke(self, request: HttpRequest, queryset: Any) -> None:
        keys = list(queryset.values_list("key", flat=True))
        for key in keys:
            Credential.objects.delete(key)
        self.message_user(request, f"Revoked {len(keys)} credential(s): their users must connect again.",
                          messages.SUCCESS)

    @staticmethod
    def server_for(credential: Credential) -> Any:
        """The server of ``LLM_MCP["OAUTH_SERVERS"]`` whose credentials ``credential`` holds:
        each listed class is built for the credential's owner and its OAuth key compared with
        the row's ``key`` (the server's URL and the owner). ``None`` when none matches; servers
        built by a function of the request cannot be built here and are not tried. The caller
        closes the server."""
        from .views import server_for_owner

        owner = credential.owner if credential.owner_type_id is not None else None
        for name in conf.get("OAUTH_SERVERS"):
            try:
                target = conf.oauth_server(name)
                if not isinstance(target, type):
                    continue
                server = server_for_owner(name, target, owner)
            except Exception as exc:  # misconfigured, or a URL that cannot be evaluated for this owner
                log.debug("OAUTH_SERVERS[%r] cannot be built for credential %s: %s", name, credential.pk,
                          type(exc).__name__)
                continue
            try:
                flow = server.oauth_flow
                if flow is not None and flow.key == credential.key:
                    return server
            except Exception as exc:
                log.debug("OAUTH_SERVERS[%r]: no credential key for credential %s: %s", name, credential.pk,
                          type(exc).__name__)
            server.close()
        return None

    @admin.action(description="Refresh the selected access tokens now", permissions=["delete"])
    def refresh_now(self, request: HttpRequest, queryset: Any) -> None:
        """Refresh each selected access token now (``OAuth.refresh(force=True)``: the token
        endpoint, client and DPoP key stored with the credential, the server class's client
        settings). A refresh token the authorization server refuses is forgotten with its access
        token (the user connects again), as the client does at a call; credentials without a
        refresh token, or of no server class in ``OAUTH_SERVERS``, are left as they are."""
        refreshed, refused, skipped, failed = 0, 0, 0, []
        for credential in queryset:
            data = self._data(credential)
            server = None if data.get("_undecryptable") or not data.get("refresh_token") else self.server_for(credential)
            if server is None:
                skipped += 1
                continue
            try:
                fresh = server.oauth_flow.refresh(data, force=True)
            except Exception as exc:  # the authorization server cannot be reached, ...
                failed.append(f"{self.owner_display(credential)}: {type(exc).__name__}")
                continue
            finally:
                server.close()
            if fresh and fresh.get("access_token"):
                refreshed += 1
            else:
                refused += 1
        parts = [f"Refreshed {refreshed} access token(s)"]
        if refused:
            parts.append(f"{refused} refused by the authorization server (forgotten: those users connect again)")
        if skipped:
            parts.append(f"{skipped} left as they are (no refresh token, or no server of LLM_MCP['OAUTH_SERVERS'] "
                         "holds them: 'refresh at next use' marks them expired instead)")
        if failed:
            parts.append(f"{len(failed)} failed ({', '.join(failed[:5])}); nothing changed for them")
        self.message_user(request, "; ".join(parts) + ".",
                          messages.WARNING if refused or failed else messages.SUCCESS)

    @admin.action(description="Refresh the selected access tokens at their next use", permissions=["delete"])
    def refresh_at_next_use(self, request: HttpRequest, queryset: Any) -> None:
        marked = 0
        for credential in queryset:
            data = self._data(credential)
            if data.get("_undecryptable") or not data.get("refresh_token"):
                continue
            with Credential.objects.synchronize(credential.key):
                current = Credential.objects.read(credential.key)
                if current:
                    current["expires_at"] = 0
                    Credential.objects.write(credential.key, current)
                    marked += 1
        skipped = queryset.count() - marked
        self.message_user(request, f"{marked} access token(s) will be refreshed at their next use"
                                   + (f"; {skipped} without a refresh token were left as they are" if skipped else "")
                                   + ".", messages.SUCCESS)


if conf.chat_model_name() == DEFAULT_CHAT_MODEL:
    admin.site.register(apps.get_model(DEFAULT_CHAT_MODEL), ChatAdmin)
admin.site.register(ToolCall, ToolCallAdmin)
admin.site.register(Credential, CredentialAdmin)
