"""The example site for browser tests: ``manage.py runserver`` on a fresh SQLite file (``start_site``)
and a headless Chromium page (``browser_page``); fixtures, enabled in ``llm_mcp_tests/e2e/conftest.py``.

Needs ``/usr/bin/chromium`` (Debian's ``chromium`` package): skipped without it, except under ``CI``,
where that fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_mcp_tests.support.processes import REPO_ROOT, ServerProcess, free_port


CHROMIUM = "/usr/bin/chromium"


CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]


def _require_chromium() -> None:
    if not Path(CHROMIUM).exists():
        message = f"{CHROMIUM} is missing (install the Debian chromium package)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


class Site(ServerProcess):
    """``manage.py runserver`` (or uvicorn) of the example project in a subprocess, on its own
    SQLite file, once it answers ``/``."""

    def __init__(self, env: dict[str, str], folder: Path, *, server: str = "runserver"):
        self.env = env
        manage = [sys.executable, str(REPO_ROOT / "manage.py")]
        subprocess.run([*manage, "migrate", "--no-input", "-v", "0"], env=env, cwd=REPO_ROOT, check=True,
                       capture_output=True, timeout=120)
        port = free_port()
        argv = ([*manage, "runserver", f"127.0.0.1:{port}", "--noreload"] if server == "runserver" else
                [sys.executable, "-m", "uvicorn", "example_project.asgi:application", "--host", "127.0.0.1",
                 "--port", str(port), "--no-access-log"])
        super().__init__(argv, port, env=env)
        self.url = f"http://127.0.0.1:{port}"
        self.wait_ready(30)
        deadline = time.monotonic() + 30
        while True:  # listening is not enough: the first page must render
            try:
                with urllib.request.urlopen(self.url + "/", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                output = self.output()
                self.stop()
                raise RuntimeError(f"the example site did not start:\n{output[-4000:]}")
            time.sleep(0.1)


@pytest.fixture
def start_site() -> Iterator:
    """``start_site(server="runserver", **env) -> Site``: the example site on a fresh database, with
    only the given model settings in its environment (no model key, no broker otherwise), under
    ``manage.py runserver`` (WSGI) or ``server="uvicorn"`` (ASGI)."""
    started: list[Site] = []
    folder = Path(tempfile.mkdtemp(prefix="llm-mcp-site-"))

    def start(*, server: str = "runserver", **extra: str) -> Site:
        env = {k: v for k, v in os.environ.items()
               if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "LLM_MCP_EXAMPLE_MODEL",
                            "CELERY_BROKER_URL", "DJANGO_DB_ENGINE")}
        env.update(DJANGO_DB_PATH=str(folder / "site.sqlite3"), PYTHONUNBUFFERED="1", **extra)
        site = Site(env, folder, server=server)
        started.append(site)
        return site

    try:
        yield start
    finally:
        for site in started:
            site.stop()


@pytest.fixture
def browser_page() -> Iterator:
    _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.set_default_timeout(20_000)
            yield page
        finally:
            browser.close()
