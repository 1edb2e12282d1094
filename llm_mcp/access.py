"""Who may see and act on a chat: the ``LLM_MCP["CHAT_ACCESS"]`` hook, used by every chat view.

    # settings.py
    LLM_MCP = {"CHAT_ACCESS": "myapp.chats.may"}

    # myapp/chats.py
    def may(user, chat, action):            # action: "view", "send", "decide" or "cancel"
        return chat.user_id == user.pk or (action == "view" and user.groups.filter(name="support").exists())

A chat the hook refuses answers 404 (whether it exists is not told); an anonymous visitor is
sent to ``settings.LOGIN_URL`` before the hook is asked.
"""

from __future__ import annotations

from typing import Any

from . import conf

__all__ = ["ACTIONS", "allowed", "default_access"]

ACTIONS = ("view", "send", "decide", "cancel")
"""What the chat pages ask about: ``view`` (the list, the page, its events), ``send`` (a
message, resuming a turn), ``decide`` (approve/decline a call, answer a question), ``cancel``."""

PERMISSIONS = {"view": "view_chat", "send": "change_chat", "decide": "change_chat", "cancel": "change_chat"}
"""The app's permission (on the chat model) that lets staff do an action on another user's chat."""


def default_access(user: Any, chat: Any, action: str) -> bool:
    """The default hook: the chat's own user may do everything; a staff user may do what the
    chat model's permissions give them (``view_chat`` to look, ``change_chat`` to act); nobody
    else, and nobody on a chat without a user but staff."""
    if not getattr(user, "is_authenticated", False) or not getattr(user, "is_active", False):
        return False
    owner_id = getattr(chat, "user_id", None)
    if owner_id is not None and owner_id == user.pk:
        return True
    if not user.is_staff:
        return False
    meta = chat._meta
    return bool(user.has_perm(f"{meta.app_label}.{PERMISSIONS[action].replace('chat', meta.model_name)}"))


def allowed(user: Any, chat: Any, action: str) -> bool:
    """Whether ``CHAT_ACCESS`` lets ``user`` do ``action`` on ``chat`` (``ValueError`` for an
    action not in `ACTIONS`)."""
    if action not in ACTIONS:
        raise ValueError(f"unknown chat action {action!r}; one of {ACTIONS}")
    return bool(conf.chat_access()(user, chat, action))
