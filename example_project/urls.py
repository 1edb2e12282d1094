"""URL configuration of the llm_mcp example project: the app's pages (chats and OAuth) under
``mcp/`` through one ``include``, the site's own pages (connections, live tools), its login,
and the admin. ``/`` is the signed-in user's chat list."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView

from . import views

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="llm_mcp:chat_list"), name="home"),
    path("connections/", views.connections, name="connections"),
    path("live-tools/", views.live_tools, name="live_tools"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("mcp/", include("llm_mcp.urls")),
    path("admin/", admin.site.urls),
]
