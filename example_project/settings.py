"""Settings for the llm_mcp example project (and the test suite).

Development settings only: do not deploy these as they are.
"""

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = os.environ.get(
    "DJANGO_SECRET_KEY",
    "django-insecure-llm-mcp-example-only-change-me",
)

DEBUG = os.environ.get("DJANGO_DEBUG", "1") == "1"

ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "llm_mcp",
]

MIDDLEWARE = [
    "llm_mcp.middleware.AppsSandboxMiddleware",  # the MCP Apps sandbox origin serves the sandbox only
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "example_project.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "example_project" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# SQLite by default. DJANGO_DB_ENGINE=postgresql runs the same settings on PostgreSQL,
# as the Makefile's second test run does (python -m llm_mcp_tests.support.services postgres -- ...).
if os.environ.get("DJANGO_DB_ENGINE") == "postgresql":
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "HOST": os.environ.get("DJANGO_DB_HOST", "127.0.0.1"),
            "PORT": os.environ.get("DJANGO_DB_PORT", "5432"),
            "NAME": os.environ.get("DJANGO_DB_NAME", "llm_mcp"),
            "USER": os.environ.get("DJANGO_DB_USER", "llm_mcp"),
            "PASSWORD": os.environ.get("DJANGO_DB_PASSWORD", ""),
        }
    }
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("DJANGO_DB_PATH", str(BASE_DIR / "db.sqlite3")),
            # IMMEDIATE: a transaction takes the write lock when it starts, so two processes
            # writing at once wait for each other (up to `timeout` seconds) instead of one of
            # them failing with "database is locked" when its read turns into a write.
            # WAL: a commit appends to one log file instead of writing and deleting a rollback
            # journal (each stored message costs about half the CPU), and readers (the chat
            # pages) do not wait for a turn's writes. Kept in the file; see docs/how-to/django.md.
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL"},
        }
    }

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Settings of the llm_mcp app. Every option has a default; PROVIDER_OPTIONS is set below.
LLM_MCP = {}

# The example site's models, read from the environment here and nowhere else. Keys stay in
# the environment (the SDKs read OPENAI_API_KEY / ANTHROPIC_API_KEY themselves); the first
# choice is the default of the site's "New chat" form. "offline" (example_project/providers.py)
# answers without a model, for the tools called from the chat page.
EXAMPLE_MODELS = []
if os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"):
    EXAMPLE_MODELS.append({"provider": "openai", "model": os.environ.get("LLM_MCP_EXAMPLE_MODEL", "gpt-4.1-mini")})
    if os.environ.get("OPENAI_BASE_URL"):  # an OpenAI-compatible server (vLLM, Ollama, ...)
        LLM_MCP["PROVIDER_OPTIONS"] = {"openai": {
            "base_url": os.environ["OPENAI_BASE_URL"],
            **({} if os.environ.get("OPENAI_API_KEY") else {"api_key": "not-needed"}),
        }}
if os.environ.get("ANTHROPIC_API_KEY"):
    EXAMPLE_MODELS.append({"provider": "anthropic",
                           "model": os.environ.get("LLM_MCP_EXAMPLE_ANTHROPIC_MODEL", "claude-sonnet-4-5")})
EXAMPLE_MODELS.append({"provider": "offline", "model": "offline"})

# A server that needs the user's authorization (OAuth): EXAMPLE_OAUTH_MCP_URL names its
# Streamable HTTP endpoint (for a try, the test servers: python -m llm_mcp_tests.support.oauth_servers).
# The Connections page then offers Connect/Disconnect for it, through llm_mcp's views.
EXAMPLE_OAUTH_MCP_URL = os.environ.get("EXAMPLE_OAUTH_MCP_URL", "")
if EXAMPLE_OAUTH_MCP_URL:
    LLM_MCP["OAUTH_SERVERS"] = {"protected": "example_project.demo.ProtectedServer"}
LLM_MCP["CLIENT_NAME"] = "llm_mcp example site"
# "listen": paused chats' server tasks are checked when a `mcp_listen --tasks` process hears
# they changed, instead of check_tasks polling (see the Procfile).
LLM_MCP["TASK_CHECKS"] = os.environ.get("LLM_MCP_TASK_CHECKS", "poll")
# MCP Apps run on a second origin: the same runserver reached as localhost (`make run` sets it).
LLM_MCP["APPS_SANDBOX_ORIGIN"] = os.environ.get("LLM_MCP_APPS_SANDBOX_ORIGIN", "http://localhost:8000")
# The chat pages (llm_mcp.urls under /mcp/) offer the demo agent on the first configured model.
LLM_MCP["CHAT_AGENTS"] = ["example_project.agents.DemoAgent"]

# The demo server shared over HTTP (the Procfile's "demo" process), listened to by the
# Procfile's "listener" (manage.py mcp_listen example_project.demo.LiveDemoServer), which keeps
# the tools it heard of in EXAMPLE_LIVE_TOOLS_FILE for the "Live tools" page.
EXAMPLE_DEMO_MCP_URL = os.environ.get("EXAMPLE_DEMO_MCP_URL", "http://127.0.0.1:8765/mcp")
EXAMPLE_LIVE_TOOLS_FILE = os.environ.get("EXAMPLE_LIVE_TOOLS_FILE", str(BASE_DIR / "live_tools.json"))

# Connecting a server is done by a signed-in user (their credentials): Django's login view.
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "llm_mcp:chat_list"
LOGOUT_REDIRECT_URL = "llm_mcp:chat_list"

# Credentials of MCP servers are encrypted with keys derived from SECRET_KEY and SALT_KEY
# (django-fernet-encrypted-fields). Set both from the environment in production.
SALT_KEY = os.environ.get("DJANGO_SALT_KEY", "llm-mcp-example-salt-change-me")

# Celery: with CELERY_BROKER_URL unset, jobs run in-process as they are enqueued (eager),
# so the example site needs nothing else; set it (redis://127.0.0.1:6379/0) to use workers.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
