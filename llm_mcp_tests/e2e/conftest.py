"""Fixtures of the end-to-end tests: the example site and a browser page (support/site.py), a database
several processes share, a Redis broker and a Celery worker (support/workers.py)."""

from llm_mcp_tests.support.site import browser_page, start_site  # noqa: F401 - fixtures, used by name
from llm_mcp_tests.support.workers import redis_url, shared_db, worker  # noqa: F401 - fixtures, used by name
