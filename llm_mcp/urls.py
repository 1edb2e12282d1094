"""URLs of the app's views: ``path("mcp/", include("llm_mcp.urls"))``.

    reverse("llm_mcp:chat_list")                          # /mcp/chats/ (the user's chats)
    reverse("llm_mcp:chat_detail", args=[chat.pk])        # /mcp/chats/7/
    reverse("llm_mcp:oauth_connect", args=["linear"])     # /mcp/oauth/linear/connect/
    reverse("llm_mcp:oauth_callback")                     # /mcp/oauth/callback/ (the redirect URI)
    reverse("llm_mcp:oauth_disconnect", args=["linear"])  # /mcp/oauth/linear/disconnect/ (POST)
    reverse("llm_mcp:oauth_client_metadata")              # /mcp/oauth/client.json

One callback serves every server, so a site registers one redirect URI with each
authorization server. See `llm_mcp.views` (OAuth) and `llm_mcp.chat_views` (chats: every URL
name is listed there).
"""

from django.urls import path

from . import chat_views, views

app_name = "llm_mcp"

urlpatterns = [
    path("oauth/callback/", views.callback, name="oauth_callback"),
    path("oauth/client.json", views.client_metadata, name="oauth_client_metadata"),
    path("oauth/<str:name>/connect/", views.connect, name="oauth_connect"),
    path("oauth/<str:name>/disconnect/", views.disconnect, name="oauth_disconnect"),
    path("chats/", chat_views.ChatListView.as_view(), name="chat_list"),
    path("chats/new/", chat_views.ChatNewView.as_view(), name="chat_new"),
    path("chats/<int:pk>/", chat_views.ChatDetailView.as_view(), name="chat_detail"),
    path("chats/<int:pk>/send/", chat_views.SendView.as_view(), name="chat_send"),
    path("chats/<int:pk>/calls/<int:call>/approve/", chat_views.DecideView.as_view(decision="approve"),
         name="chat_approve"),
    path("chats/<int:pk>/calls/<int:call>/decline/", chat_views.DecideView.as_view(decision="decline"),
         name="chat_decline"),
    path("chats/<int:pk>/questions/<str:call>/<path:key>/", chat_views.AnswerView.as_view(), name="chat_answer"),
    path("chats/<int:pk>/cancel/", chat_views.CancelView.as_view(), name="chat_cancel"),
    path("chats/<int:pk>/resume/", chat_views.ResumeView.as_view(), name="chat_resume"),
    path("chats/<int:pk>/events/", chat_views.EventsView.as_view(), name="chat_events"),
    path("chats/<int:pk>/state.json", chat_views.StateView.as_view(), name="chat_state"),
]
