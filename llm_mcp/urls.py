"""URLs of the app's views: ``path("mcp/", include("llm_mcp.urls"))``.

    reverse("llm_mcp:oauth_connect", args=["linear"])     # /mcp/oauth/linear/connect/
    reverse("llm_mcp:oauth_callback")                     # /mcp/oauth/callback/ (the redirect URI)
    reverse("llm_mcp:oauth_disconnect", args=["linear"])  # /mcp/oauth/linear/disconnect/ (POST)
    reverse("llm_mcp:oauth_client_metadata")              # /mcp/oauth/client.json

One callback serves every server, so a site registers one redirect URI with each
authorization server. See `llm_mcp.views`.
"""

from django.urls import path

from . import views

app_name = "llm_mcp"

urlpatterns = [
    path("oauth/callback/", views.callback, name="oauth_callback"),
    path("oauth/client.json", views.client_metadata, name="oauth_client_metadata"),
    path("oauth/<str:name>/connect/", views.connect, name="oauth_connect"),
    path("oauth/<str:name>/disconnect/", views.disconnect, name="oauth_disconnect"),
]
