"""The Django admin of llm_mcp: chats with their messages and tool calls, and credentials that
never show their secret (llm_mcp/admin.py), rendered by Django's test client as a superuser."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db import connection
from django.urls import reverse

from llm_mcp.admin import ChatAdmin, CredentialAdmin, ToolCallAdmin
from llm_mcp.models import Chat, Credential, Message, ToolCall

from llm_mcp_tests.support.records import Other

pytestmark = pytest.mark.django_db

TOKEN = "tok_SECRET_a8f3c1d9e2b7"
REFRESH = "refresh_SECRET_77e1f0c2"


@pytest.fixture
def superuser_client(client):
    user = get_user_model().objects.create_superuser("admin", "admin@example.com", "pw-for-tests")
    client.force_login(user)
    return client


@pytest.fixture
def chat_with_call():
    chat = Chat.objects.create(model="gpt-test", provider="openai")
    Message.objects.create(chat=chat, role="user", content="Add 2 and 40")
    assistant = Message.objects.create(chat=chat, role="assistant", content="")
    call = ToolCall.objects.create(message=assistant, tool_call_id="call_adm_1", name="add",
                                   arguments={"a": 2, "b": 40}, approval="approved",
                                   mcp_result={"structuredContent": {"sum": 42.0}})
    result = Message.objects.create(chat=chat, role="tool", content='{"sum": 42.0}')
    call.result = result
    call.save()
    Message.objects.create(chat=chat, role="assistant", content="It is 42.")
    return chat, call


def test_models_are_registered():
    """The app's chat model (not swapped here), tool calls and credentials have admins."""
    assert isinstance(admin.site._registry[Chat], ChatAdmin)
    assert isinstance(admin.site._registry[ToolCall], ToolCallAdmin)
    assert isinstance(admin.site._registry[Credential], CredentialAdmin)


def test_chat_changelist_and_change_page_show_messages_and_tool_calls(superuser_client, chat_with_call):
    """MCP-PERSIST-03: a chat's change page lists its messages inline, with the tool call (name,
    approval) that an assistant message asked for, linked to the call's own page."""
    chat, call = chat_with_call
    listing = superuser_client.get(reverse("admin:llm_mcp_chat_changelist"))
    assert listing.status_code == 200
    assert str(chat) in listing.content.decode()
    page = superuser_client.get(reverse("admin:llm_mcp_chat_change", args=[chat.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Add 2 and 40" in html and "It is 42." in html
    assert reverse("admin:llm_mcp_toolcall_change", args=[call.pk]) in html
    assert "add</a> (approved)" in html


def test_tool_call_admin_lists_filters_and_shows_the_result(superuser_client, chat_with_call):
    """MCP-APPROVAL-05, MCP-PERSIST-03: tool calls are listed with id, name, approval and chat, can be
    filtered by approval, and a call's page shows its arguments, result and ``mcp_result`` read-only."""
    chat, call = chat_with_call
    listing = superuser_client.get(reverse("admin:llm_mcp_toolcall_changelist"))
    assert listing.status_code == 200
    html = listing.content.decode()
    assert "call_adm_1" in html and "approved" in html and str(chat) in html
    filtered = superuser_client.get(reverse("admin:llm_mcp_toolcall_changelist"), {"approval__exact": "pending"})
    assert filtered.status_code == 200 and "call_adm_1" not in filtered.content.decode()
    page = superuser_client.get(reverse("admin:llm_mcp_toolcall_change", args=[call.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "structuredContent" in html and "&quot;sum&quot;: 42.0" in html
    assert 'name="approval"' not in html  # read-only: decisions go through approve()/decline()


def test_credential_pages_never_show_the_secret(superuser_client):
    """MCP-CRED-01: the admin lists credentials by key and owner; neither the decrypted data
    nor the encrypted column value appears on the list, the change page or the delete page."""
    owner = get_user_model().objects.get(username="admin")
    Credential.objects.write("demo:user:1", {"access_token": TOKEN, "refresh_token": REFRESH}, owner=owner)
    credential = Credential.objects.get(key="demo:user:1")
    decrypted = Credential.objects.filter(pk=credential.pk).values_list("secret", flat=True).first()
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT secret FROM llm_mcp_credentials WHERE id = %s", [credential.pk])
        raw_column = cursor.fetchone()[0]
    assert TOKEN not in raw_column
    pages = [reverse("admin:llm_mcp_credential_changelist"),
             reverse("admin:llm_mcp_credential_change", args=[credential.pk]),
             reverse("admin:llm_mcp_credential_delete", args=[credential.pk]),
             reverse("admin:llm_mcp_credential_history", args=[credential.pk])]
    for url in pages:
        response = superuser_client.get(url)
        assert response.status_code == 200, url
        html = response.content.decode()
        assert "demo:user:1" in html
        for secret in (TOKEN, REFRESH, raw_column, decrypted, "access_token"):
            assert secret not in html, (url, secret)
    change = superuser_client.get(pages[1]).content.decode()
    assert 'name="secret"' not in change and 'name="key"' not in change  # nothing to edit
    assert superuser_client.get(reverse("admin:llm_mcp_credential_add")).status_code == 403


def test_credential_search_does_not_search_secrets(superuser_client):
    """Searching the credential list matches keys only, so a token cannot be probed for."""
    Credential.objects.write("demo:user:2", {"access_token": TOKEN})
    listing = superuser_client.get(reverse("admin:llm_mcp_credential_changelist"), {"q": TOKEN})
    assert listing.status_code == 200 and "demo:user:2" not in listing.content.decode()
    found = superuser_client.get(reverse("admin:llm_mcp_credential_changelist"), {"q": "demo:user"})
    assert "demo:user:2" in found.content.decode()


@pytest.mark.django_db
def test_chats_are_not_added_in_the_admin_but_can_be_deleted_with_their_tool_calls(admin_client):
    """A chat made in the admin would have no agent and no tools; deleting one takes its
    messages and tool calls along, though tool calls cannot be deleted one by one."""
    from llm_mcp.models import Chat, Message, ToolCall

    assert admin_client.get("/admin/llm_mcp/chat/add/").status_code == 403
    chat = Chat.objects.create(model="m")
    message = Message.objects.create(chat=chat, role="assistant", content="")
    ToolCall.objects.create(message=message, tool_call_id="call_1", name="echo")
    page = admin_client.get(f"/admin/llm_mcp/chat/{chat.pk}/delete/")
    assert page.status_code == 200 and b"permission to delete" not in page.content
    assert admin_client.post(f"/admin/llm_mcp/chat/{chat.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not Chat.objects.exists() and not ToolCall.objects.exists()


@pytest.mark.db
@pytest.mark.django_db(transaction=True)
def test_admin_never_edits_the_agent_of_a_chat(admin_client):
    record = Other.chat()
    page = admin_client.get(f"/admin/llm_mcp/chat/{record.pk}/change/").content.decode()
    assert 'name="agent_class"' not in page and 'name="agent_inputs"' not in page
    assert "Other" in page  # shown, read-only
    assert connection.vendor in ("sqlite", "postgresql")
