"""The admin acts: approve/decline waiting tool calls (through ToolCall.approve/decline), the chat list
with user, title and message count, credentials by owner, server, scopes and expiry with revoke and
refresh now (against the real test authorization server) or at next use, no token ever shown (marker ``db``)."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from llm_mcp import tasks
from llm_mcp.models import Credential, ToolCall

from llm_mcp_tests.support.chat_ui import chat_rows
from llm_mcp_tests.support.oauth_steps import ProtectedServer, connect_through_views, servers  # noqa: F401 (fixture)

pytestmark = [pytest.mark.db, pytest.mark.django_db]

TOKEN, REFRESH = "tok_SECRET_5c1e", "ref_SECRET_9d2a"


@pytest.fixture
def root(client):
    user = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(user)
    return user


def act(client, url, action, pks):
    return client.post(url, {"action": action, "_selected_action": [str(pk) for pk in pks]}, follow=True)


def test_tool_calls_are_approved_and_declined_from_the_admin(client, root, monkeypatch):
    """MCP-APPROVAL-05: the admin's actions save the decision on the ToolCall row through approve()/decline();
    a call decided already is left as it is; the chat is resumed once none waits."""
    resumed = []
    monkeypatch.setattr(tasks.resume_chat, "delay", lambda *args: resumed.append(args))
    record = chat_rows(root, calls=[{"tool_call_id": "a", "name": "add", "approval": "pending"},
                                    {"tool_call_id": "b", "name": "echo", "approval": "pending"},
                                    {"tool_call_id": "c", "name": "now", "approval": "declined"}])
    a, b, c = (ToolCall.objects.get(tool_call_id=x) for x in "abc")
    url = reverse("admin:llm_mcp_toolcall_changelist")
    listing = client.get(url).content.decode()
    assert f"Chat {record.pk}" in listing  # each call with its chat
    page = act(client, url, "approve_calls", [a.pk, c.pk]).content.decode()
    assert "Approved 1 call(s): add." in page and "1 call(s) were not waiting for approval" in page
    assert [ToolCall.objects.get(pk=x.pk).approval for x in (a, b, c)] == ["approved", "pending", "declined"]
    assert resumed == []  # b still waits: the chat is not resumed yet
    act(client, url, "decline_calls", [b.pk])
    assert ToolCall.objects.get(pk=b.pk).approval == "declined" and resumed == [(record.pk,)]


def test_staff_without_change_permission_gets_no_decide_actions(client):
    from django.contrib.auth.models import Permission

    staff = get_user_model().objects.create_user("staff", password="pw", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="view_toolcall"))
    client.force_login(staff)
    page = client.get(reverse("admin:llm_mcp_toolcall_changelist")).content.decode()
    assert "approve_calls" not in page and "decline_calls" not in page


def test_chat_list_shows_user_title_and_message_count(client, root):
    ada = get_user_model().objects.create_user("ada_lovelace", password="pw")
    chat_rows(ada, user_text="Plan the launch of the rocket", reply_text="Sure")
    page = client.get(reverse("admin:llm_mcp_chat_changelist")).content.decode()
    assert "ada_lovelace" in page and "Plan the launch of the rocket" in page
    assert '<td class="field-message_count">2</td>' in page


def test_credentials_show_owner_server_scopes_expiry_and_are_revoked_and_refreshed(client, root):
    ada = get_user_model().objects.create_user("ada_lovelace", password="pw")
    expires = int(time.time()) + 3600
    key = "oauth:https://mcp.example.test/mcp|user:1"
    Credential.objects.write(key, {"access_token": TOKEN, "refresh_token": REFRESH, "scope": "read  write",
                                   "expires_at": expires, "resource": "https://mcp.example.test/mcp"}, owner=ada)
    Credential.objects.write("oauth:https://other.test/mcp|user:2", {"access_token": TOKEN}, owner=ada)
    url = reverse("admin:llm_mcp_credential_changelist")
    page = client.get(url).content.decode()
    assert "ada_lovelace (user)" in page and "https://mcp.example.test/mcp" in page and "read write" in page
    assert time.strftime("%Y-%m-%d %H:%M", time.gmtime(expires)) in page and "(valid)" in page
    assert "https://other.test/mcp" in page  # no resource in the data: the server from the key
    assert TOKEN not in page and REFRESH not in page and "access_token" not in page
    both = list(Credential.objects.order_by("key").values_list("pk", flat=True))
    done = act(client, url, "refresh_at_next_use", both).content.decode()
    assert "1 access token(s) will be refreshed at their next use; 1 without a refresh token" in done
    assert Credential.objects.read(key)["expires_at"] == 0 and Credential.objects.read(key)["refresh_token"] == REFRESH
    assert Credential.objects.get(key=key).owner == ada  # the owner is kept
    assert "(expired)" in client.get(url).content.decode()
    act(client, url, "revoke", [Credential.objects.get(key=key).pk])
    assert Credential.objects.read(key) is None and Credential.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_refresh_now_gets_a_new_access_token_from_the_authorization_server(servers, client, settings):  # noqa: F811
    """The admin's *refresh now* makes the refresh-token grant at once, for the credential of the server of
    OAUTH_SERVERS it belongs to (found by owner and URL): the new token works at the MCP server, the spent
    refresh token rotated; a refresh token the authorization server refuses is forgotten and the admin
    says so; a credential no listed server holds is left as it is."""
    from django.test import Client

    settings.LLM_MCP = {**settings.LLM_MCP,
                        "OAUTH_SERVERS": {"protected": "llm_mcp_tests.support.oauth_steps.ProtectedServer"}}
    alice = get_user_model().objects.create_user("alice_oauth", password="pw")
    browser = Client(HTTP_HOST="127.0.0.1")
    browser.force_login(alice)
    assert connect_through_views(browser)["status"] == 302
    key = ProtectedServer(user=alice).oauth_flow.key
    before = Credential.objects.read(key)
    assert before["access_token"] and before["refresh_token"]
    Credential.objects.write("oauth:https://elsewhere.test/mcp|user:9", {"access_token": TOKEN,
                                                                         "refresh_token": REFRESH}, owner=alice)
    assert servers.expire_access_tokens() == 1  # the stored access token no longer works at the server
    root = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(root)
    url = reverse("admin:llm_mcp_credential_changelist")
    pks = list(Credential.objects.values_list("pk", flat=True))
    done = act(client, url, "refresh_now", pks).content.decode()
    # left as they are: the other server's credential, and the client registration the store also holds
    assert "Refreshed 1 access token(s); 2 left as they are" in done
    after = Credential.objects.read(key)
    assert after["access_token"] != before["access_token"] and after["refresh_token"] != before["refresh_token"]
    assert servers.state.check_access_token(after["access_token"], resource=servers.mcp_url) is not None
    assert [(r["grant_type"], r["status"]) for r in servers.token_requests("refresh_token")] == [("refresh_token", 200)]
    assert Credential.objects.read("oauth:https://elsewhere.test/mcp|user:9")["refresh_token"] == REFRESH
    assert after["access_token"] not in done and after["refresh_token"] not in done
    with ProtectedServer(user=alice) as server:  # the refreshed token is what the next call uses: no new grant
        assert "add" in [tool.name for tool in server.tools]
    assert len(servers.token_requests("refresh_token")) == 1
    with servers.state.lock:  # the authorization server revokes the grant
        servers.state.refresh_tokens[after["refresh_token"]].revoked = True
    refused = act(client, url, "refresh_now", [Credential.objects.get(key=key).pk]).content.decode()
    assert "Refreshed 0 access token(s); 1 refused by the authorization server" in refused
    assert not ProtectedServer(user=alice).authorized  # the tokens were forgotten: alice connects again
