"""The Celery app. Tasks live in each app's ``tasks.py`` (autodiscovered)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reverie_ops.settings")

app = Celery("reverie_ops")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
