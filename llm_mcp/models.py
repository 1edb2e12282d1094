"""Database models: chats, their messages and tool calls, and MCP credentials.

    record = llm_mcp.models.Chat.objects.create(model="gpt-4.1-mini", provider="openai")
    record.with_mcp(Linear(user=request.user)).ask("Which issues are open?")
    record.message_records.count()   # every message, tool results included, is a row

Chats and messages are swappable, the way ``AUTH_USER_MODEL`` is: subclass
`AbstractChat` / `AbstractMessage` in your app and name your models in
``LLM_MCP_CHAT_MODEL`` / ``LLM_MCP_MESSAGE_MODEL`` before the first ``migrate``. Tool calls
and credentials belong to this app.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.db import models

from . import conf
from .client import offload
from .client.question import open_questions
from .client.result import Result
from .credentials import CredentialManager
from .db.record import ChatRecord
from .fields import SealedTextField

__all__ = ["AbstractChat", "AbstractMessage", "Chat", "Credential", "Message", "ToolCall"]

ROLES = [("system", "system"), ("user", "user"), ("assistant", "assistant"), ("tool", "tool")]
APPROVALS = [("", "not needed"), ("pending", "pending"), ("approved", "approved"), ("declined", "declined")]


class AbstractChat(ChatRecord, models.Model):
    """A persisted chat. It answers ``ask``, ``complete``, ``with_mcp``, ``mcp``, ``waiting``,
    ``pending_approvals`` and ``cancel`` like `llm_mcp.Chat` (see `ChatRecord`).

        record = Chat.objects.create(model="gpt-4.1-mini")
        record.ask("Hello").content
        Chat.objects.get(pk=record.pk).complete()     # another process carries on

    Attributes:
        model: the model id sent to the provider.
        provider: the provider's registered name (``"openai"``, ``"anthropic"``).
        params: extra provider parameters (``temperature``, ...), as JSON.
        agent_class: dotted path of the `llm_mcp.Agent` that set the chat up, if any.
        agent_inputs: that agent's inputs, as JSON (model instances are kept as references).
        cancelled: set by ``cancel()``; a running turn stops at its next check.
        created_at / updated_at: timestamps.
    """

    model = models.CharField(max_length=200)
    provider = models.CharField(max_length=100, default="openai")
    params = models.JSONField(default=dict, blank=True)
    agent_class = models.CharField(max_length=300, blank=True, default="")
    agent_inputs = models.JSONField(default=dict, blank=True)
    cancelled = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"Chat {self.pk} ({self.model})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Save the row once `check_model` accepts its ``model`` and ``provider`` (a row that
        could never answer is not left behind). Raises ``django.core.exceptions.ValidationError``
        naming the field."""
        self.check_model()
        super().save(*args, **kwargs)

    def check_model(self) -> None:
        """Raise ``ValidationError`` ({field: message}) when ``model`` is empty or too long, or
        ``provider`` is not a registered provider (``llm_mcp.chat.providers.provider_names``)."""
        from .chat.providers import provider_names

        errors = {}
        if not isinstance(self.model, str) or not self.model.strip():
            errors["model"] = "a chat needs a model id (such as 'gpt-4.1-mini'); it is empty"
        elif len(self.model) > 200:
            errors["model"] = f"the model id is {len(self.model)} characters long; at most 200"
        known = provider_names()
        if self.provider not in known:
            errors["provider"] = (f"{str(self.provider)[:100]!r} is not a registered provider; known: "
                                  f"{', '.join(known)} (add one with llm_mcp.chat.providers.register_provider)")
        if errors:
            raise ValidationError(errors)


class AbstractMessage(models.Model):
    """One message of a chat, field for field a `llm_mcp.chat.Message`.

        record.message_records.filter(role="assistant").last().content

    Attributes:
        chat: the chat it belongs to.
        role: ``system``, ``user``, ``assistant`` or ``tool``.
        content: the text (``""`` when there is none).
        attachments: attachments as JSON (``attachment_to_dict``; bytes in base64).
        is_error: on a tool message, whether the result is an error.
        model: the model that wrote an assistant message.
        input_tokens / output_tokens: the provider's token counts.
        raw: provider data to send back as it was (e.g. Anthropic thinking blocks).
        key: an idempotency key, so a background ``ask`` run twice adds its message once.
    """

    chat = models.ForeignKey(conf.chat_model_name(), on_delete=models.CASCADE, related_name="message_records")
    role = models.CharField(max_length=16, choices=ROLES)
    content = models.TextField(blank=True, default="")
    attachments = models.JSONField(default=list, blank=True)
    is_error = models.BooleanField(default=False)
    model = models.CharField(max_length=200, blank=True, default="")
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    raw = models.JSONField(null=True, blank=True)
    key = models.CharField(max_length=255, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"

    @property
    def parent_tool_call(self) -> Any:
        """On a tool-result row, the `ToolCall` row it answers (``.arguments``, ``.name``), else ``None``."""
        try:
            return self.tool_result
        except models.ObjectDoesNotExist:
            return None

    @property
    def mcp_result(self) -> Result | None:
        """As `llm_mcp.chat.Message.mcp_result`: the server's whole `llm_mcp.Result` for a tool with
        an MCP App UI (error results included), ``None`` otherwise."""
        call = self.parent_tool_call
        if call is None or not call.ui_uri or not isinstance(call.mcp_result, dict):
            return None
        return Result(call.mcp_result, tool_name=call.name, ui_uri=call.ui_uri)


class Chat(AbstractChat):
    """The default chat model (swap it with ``LLM_MCP_CHAT_MODEL``).

    Attributes:
        user: the chat's owner (``AUTH_USER_MODEL``), or ``None`` for a chat nobody owns; the
            chat pages show a chat to whoever ``LLM_MCP["CHAT_ACCESS"]`` lets in (default: this
            user, or staff with the app's permissions). ``Agent.chat(owner=user)`` or an agent
            input named ``user`` sets it.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True,
                             related_name="llm_mcp_chats")

    class Meta(AbstractChat.Meta):
        swappable = "LLM_MCP_CHAT_MODEL"
        db_table = "llm_mcp_chats"


class Message(AbstractMessage):
    """The default message model (swap it with ``LLM_MCP_MESSAGE_MODEL``)."""

    class Meta(AbstractMessage.Meta):
        swappable = "LLM_MCP_MESSAGE_MODEL"
        db_table = "llm_mcp_messages"
        constraints = [models.UniqueConstraint(fields=["chat", "key"], name="llm_mcp_message_key_unique")]


class ToolCall(models.Model):
    """A tool call an assistant message asked for, and what became of it.

        call = ToolCall.objects.get(tool_call_id="call_abc")
        call.approval, call.result.content      # ("approved", "42")

    Attributes:
        message: the assistant message that asked for the call.
        result: the tool message that answered it (``None`` until it is answered).
        tool_call_id: the provider's id for the call (unique in its message; the chat keeps
            ids unique in a conversation, see ``settle_call_ids``).
        name / arguments: the tool and the arguments the model sent (JSON).
        approval: ``""`` (not needed), ``pending``, ``approved`` or ``declined``.
        pending_questions / request_state / task: why a call is paused, and how to resume it
            (``task``: the server task it waits on, ``llm_mcp.Task.to_dict()``, ``None`` once it ended).
        task_id / task_status / task_status_message: what ``task`` says, in columns of their
            own (for the admin, the chat page and finding a call by its task id); written with
            ``task``, blank without one.
        task_poll_interval / task_expires_at / task_server: the same for its poll interval
            (seconds), expiry and server name.
        task_next_check: when the Celery job ``llm_mcp.tasks.check_tasks`` is due to check the
            task next (``None`` when none is scheduled).
        mcp_result: the server's whole result as sent (``None`` for a call that raised).
        ui_uri: the MCP App resource of the tool that answered (``None`` for a tool without a UI).
    """

    message = models.ForeignKey(conf.message_model_name(), on_delete=models.CASCADE, related_name="tool_calls")
    result = models.OneToOneField(conf.message_model_name(), on_delete=models.SET_NULL, null=True, blank=True,
                                  related_name="tool_result")
    tool_call_id = models.CharField(max_length=255)
    name = models.TextField()
    arguments = models.JSONField(default=dict, blank=True)
    approval = models.CharField(max_length=16, choices=APPROVALS, blank=True, default="")
    pending_questions = models.JSONField(default=list, blank=True)
    request_state = models.TextField(null=True, blank=True)
    task = models.JSONField(null=True, blank=True)
    task_id = models.CharField(max_length=255, blank=True, default="", db_index=True)
    task_status = models.CharField(max_length=32, blank=True, default="")
    task_status_message = models.TextField(blank=True, default="")
    task_poll_interval = models.FloatField(null=True, blank=True)
    task_expires_at = models.DateTimeField(null=True, blank=True)
    task_server = models.CharField(max_length=255, blank=True, default="")
    task_next_check = models.DateTimeField(null=True, blank=True)
    mcp_result = models.JSONField(null=True, blank=True)
    ui_uri = models.TextField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "llm_mcp_tool_calls"
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["message", "tool_call_id"], name="llm_mcp_tool_call_id_unique")]
        indexes = [models.Index(fields=["tool_call_id"], name="llm_mcp_tool_call_id_idx")]

    def __str__(self) -> str:
        return f"{self.name} ({self.tool_call_id})"

    @property
    def waiting(self) -> bool:
        """Whether the call waits for a person (approval, open questions) or a task."""
        return self.approval == "pending" or open_questions(self.pending_questions) or self.task is not None

    def approve(self) -> None:
        """Let the call run at the chat's next ``complete()`` (without loading the chat).

        Raises ``ValueError`` when the call is not (or no longer) waiting for approval."""
        self._decide("approved")

    def decline(self) -> None:
        """Refuse the call: the model is told it was declined at the next ``complete()``.

        Raises ``ValueError`` when the call is not (or no longer) waiting for approval."""
        self._decide("declined")

    async def aapprove(self) -> None:
        """The async twin of `approve` (Django's async ORM convention: ``sync_to_async``)."""
        await offload.on_orm(self.approve)

    async def adecline(self) -> None:
        """The async twin of `decline` (see `aapprove`)."""
        await offload.on_orm(self.decline)

    def _decide(self, decision: str) -> None:
        if not type(self)._default_manager.filter(pk=self.pk, approval="pending").update(approval=decision):
            self.refresh_from_db(fields=["approval"])
            raise ValueError(f"tool call {self.tool_call_id} ({self.name}) is not waiting for approval "
                             f"(approval is {self.approval or None!r})")
        self.approval = decision


class Credential(models.Model):
    """MCP credentials (OAuth tokens, client registrations) for one key, encrypted at rest.

        Credential.objects.write("linear:user:42", {"access_token": "..."}, owner=request.user)
        Credential.objects.read("linear:user:42")     # {"access_token": "..."} or None
        with Credential.objects.synchronize("linear:user:42"): ...   # one process at a time

    ``Credential.objects`` is a credential store (``read``/``write``/``delete``/``synchronize``,
    see `llm_mcp.credentials.CredentialManager`).

    The data is kept as one Fernet-encrypted JSON text (``django-fernet-encrypted-fields``,
    keyed by ``SALT_KEY`` and ``SECRET_KEY``), so its column never holds a token in clear, and
    ``dumpdata`` writes the ciphertext (`llm_mcp.fields.SealedTextField`); ``loaddata`` reads it back.

    Attributes:
        key: what the credentials are for (server, authorization server, user), unique.
        owner: the object they belong to (any model, usually the user), or ``None``.
        secret: the encrypted JSON text; use `data` instead.
    """

    key = models.CharField(max_length=255, unique=True)
    owner_type = models.ForeignKey(ContentType, on_delete=models.CASCADE, null=True, blank=True)
    owner_id = models.CharField(max_length=255, blank=True, default="")
    owner = GenericForeignKey("owner_type", "owner_id")
    secret = SealedTextField(blank=True, null=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = CredentialManager()

    class Meta:
        db_table = "llm_mcp_credentials"

    @property
    def data(self) -> dict[str, Any]:
        """The decrypted credentials (a dict; ``{}`` when empty).

        Raises ``ValueError`` when the stored text cannot be decrypted with the current keys
        (``SECRET_KEY``/``SALT_KEY`` changed without keeping the old ones as fallbacks)."""
        if not self.secret:
            return {}
        try:
            return json.loads(self.secret)
        except ValueError:  # the field hands back the ciphertext when no key decrypts it
            raise ValueError(f"the credentials for {self.key!r} cannot be decrypted with the current SECRET_KEY "
                             "and SALT_KEY; keep old keys in SECRET_KEY_FALLBACKS / a SALT_KEY list to rotate") from None

    @data.setter
    def data(self, value: dict[str, Any]) -> None:
        if not isinstance(value, dict):
            raise TypeError(f"credential data must be a dict, not {type(value).__name__}")
        self.secret = json.dumps(value)

    def __repr__(self) -> str:
        return f"<Credential key={self.key!r}>"  # never the data

    def __str__(self) -> str:
        return self.key


def owner_reference(owner: models.Model | None) -> tuple[ContentType | None, str]:
    """``(content type, primary key as text)`` for a credential's owner."""
    if owner is None:
        return None, ""
    if not isinstance(owner, models.Model):
        raise TypeError(f"a credential's owner must be a saved model instance (such as a user), not "
                        f"{type(owner).__name__}")
    if owner.pk is None:
        raise ValueError(f"the owner {type(owner).__name__} is not saved yet (it has no primary key)")
    return ContentType.objects.get_for_model(owner), str(owner.pk)
