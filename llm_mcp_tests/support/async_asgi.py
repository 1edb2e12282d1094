"""The ASGI application of ``llm_mcp_tests.support.async_site`` (run by uvicorn)."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "llm_mcp_tests.support.async_site")

from django.core.asgi import get_asgi_application

application = get_asgi_application()
