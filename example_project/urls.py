"""URL configuration of the llm_mcp example project: the example site, its login, llm_mcp's OAuth
views (connect, callback, disconnect) under ``mcp/``, and the admin."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from . import views

urlpatterns = [
    path("", views.chat_list, name="chat_list"),
    path("chats/new/", views.create_chat, name="create_chat"),
    path("chats/<int:pk>/", views.chat_page, name="chat"),
    path("chats/<int:pk>/ask/", views.ask, name="ask"),
    path("chats/<int:pk>/calls/<int:call_pk>/", views.decide, name="decide"),
    path("chats/<int:pk>/calls/<int:call_pk>/questions/<path:key>/", views.answer_question, name="answer_question"),
    path("chats/<int:pk>/call-tool/", views.call_tool, name="call_tool"),
    path("chats/<int:pk>/cancel/", views.cancel, name="cancel"),
    path("chats/<int:pk>/resume/", views.resume, name="resume"),
    path("connections/", views.connections, name="connections"),
    path("live-tools/", views.live_tools, name="live_tools"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("mcp/", include("llm_mcp.urls")),
    path("admin/", admin.site.urls),
]
