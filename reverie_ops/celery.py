"""The Celery app. Tasks live in each app's ``tasks.py`` (autodiscovered)."""

import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reverie_ops.settings")

app = Celery("reverie_ops")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def _load_language_models(**_: object) -> None:
    """Build the language detector (17 lingua models, ~3 s) when a worker starts, not on
    its first probe, so the first round's probes do not queue behind it."""
    from canary import judges

    judges.warm_up()
