"""The example project's Celery app: ``celery -A example_project worker``.

Settings come from Django's, with the ``CELERY_`` prefix (``CELERY_BROKER_URL``). Without a
broker URL the settings make jobs run eagerly, in the process that enqueues them.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")

app = Celery("example_project")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
