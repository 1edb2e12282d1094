"""ASGI entry point of the example site: ``uvicorn example_project.asgi:application``.

The chat pages stream replies as server-sent events under ASGI as under WSGI (``runserver``);
an ASGI server does not serve static files: run ``collectstatic`` and serve them, or use
``runserver`` while developing."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")

application = get_asgi_application()
