"""Django admin for chats (with their messages and tool calls), tool calls and credentials.

The chat admin is registered for the app's own chat model only: a project that swaps it
(``LLM_MCP_CHAT_MODEL``) registers its model itself, and can reuse `ChatAdmin` and
`MessageInline`.

Credentials are listed by key and owner: their encrypted ``secret`` and the decrypted
``data`` are never displayed nor editable here, and credentials are not added from the admin
(the client writes them during authorization); deleting one revokes it for this site.
"""

from __future__ import annotations

import json
from typing import Any

from django.apps import apps
from django.contrib import admin
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from . import conf
from .models import Credential, ToolCall

__all__ = ["ChatAdmin", "CredentialAdmin", "MessageInline", "ToolCallAdmin", "ToolCallInline"]

DEFAULT_CHAT_MODEL = "llm_mcp.Chat"


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
            ", ", '<a href="{}">{}</a> ({})',
            ((reverse("admin:llm_mcp_toolcall_change", args=[call.pk]), call.name, call.approval or "no approval")
             for call in calls))

    def get_queryset(self, request: HttpRequest) -> Any:
        return super().get_queryset(request).prefetch_related("tool_calls")


class ChatAdmin(admin.ModelAdmin):
    """Chats: model, provider, agent; the messages inline."""

    list_display = ["__str__", "model", "provider", "agent_class", "cancelled", "created_at", "updated_at"]
    list_filter = ["provider", "cancelled"]
    search_fields = ["model", "agent_class"]
    # agent_class names code a job imports, agent_inputs its arguments: never editable here
    readonly_fields = ["agent_class", "agent_inputs", "created_at", "updated_at"]
    inlines = [MessageInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # chats are made by code (an agent, Chat.objects.create), where their tools are

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> Any:
        """A chat goes with its tool calls, which cannot be deleted one by one."""
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        perms_needed.discard(ToolCall._meta.verbose_name)
        return deleted, counts, perms_needed, protected


class ToolCallAdmin(_ViewOnly, admin.ModelAdmin):
    """Tool calls: what was called, whether it was approved, and the result."""

    list_display = ["tool_call_id", "name", "approval", "chat", "created_at"]
    list_filter = ["approval"]
    search_fields = ["tool_call_id", "name"]
    list_select_related = ["message"]
    fields = ["tool_call_id", "chat", "message", "name", "arguments_json", "approval", "result_content",
              "mcp_result", "pending_questions", "request_state", "task", "created_at"]
    readonly_fields = fields

    # Read-only: a decision goes through ToolCall.approve()/decline() and a resumed chat (the
    # example site's chat page); deleting a call would leave its conversation without it.
    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="chat")
    def chat(self, call: ToolCall) -> Any:
        chat = call.message.chat
        if conf.chat_model_name() != DEFAULT_CHAT_MODEL:
            return str(chat)
        return format_html('<a href="{}">{}</a>', reverse("admin:llm_mcp_chat_change", args=[chat.pk]), chat)

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
    """Credentials by key and owner, to view and delete: the client writes them (an admin form
    could only store an empty one). The secret is never shown, searched or editable."""

    list_display = ["key", "owner_display", "created_at", "updated_at"]
    list_filter = ["owner_type"]
    search_fields = ["key"]
    exclude = ["secret"]
    fields = ["key", "owner_type", "owner_id", "owner_display", "created_at", "updated_at"]
    readonly_fields = fields

    @admin.display(description="owner")
    def owner_display(self, credential: Credential) -> str:
        if credential.owner_type_id is None:
            return "-"
        return f"{credential.owner_type.app_labeled_name} {credential.owner_id}"


if conf.chat_model_name() == DEFAULT_CHAT_MODEL:
    admin.site.register(apps.get_model(DEFAULT_CHAT_MODEL), ChatAdmin)
admin.site.register(ToolCall, ToolCallAdmin)
admin.site.register(Credential, CredentialAdmin)
