"""Example Django project that shows llm_mcp in use; also the settings for the test suite."""

from .celery import app as celery_app

__all__ = ["celery_app"]
