from django.apps import AppConfig


class LlmMcpConfig(AppConfig):
    name = "llm_mcp"
    verbose_name = "LLM MCP"
    default_auto_field = "django.db.models.BigAutoField"
