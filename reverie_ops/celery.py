"""The Celery app. Tasks live in each app's ``tasks.py`` (autodiscovered).

A setting that does not parse (``reverie_ops.env``) ends a worker or beat with one line on
stderr naming it, and exit status 1, as ``manage.py`` does, instead of a traceback.
"""

import os
import sys

from celery import Celery
from celery.signals import worker_init
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reverie_ops.settings")

try:
    settings.INSTALLED_APPS  # noqa: B018 - reading one setting loads them all
except ImproperlyConfigured as exc:
    sys.stderr.write(f"error: {exc}\n")
    raise SystemExit(1) from None

app = Celery("reverie_ops")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def _load_language_models(**_: object) -> None:
    """Build the language detector (17 lingua models, ~3 s) and the OpenRouter client when
    a worker starts, not on its first probe, so the first round's probes do not queue
    behind them; then freeze the startup heap out of the garbage collector's way."""
    import gc

    from canary.judges.warm import warm_judges
    from canary.services.client import openrouter_client

    # Every judge, not only the detector: the first probe's verdicts compile the rest.
    warm_judges()
    # The OpenRouter client too (an SSL context, its pools, the probes' event loop and
    # session): not on the first task.
    openrouter_client().warm()
    # Everything loaded so far (Django, Celery, the detectors) lives as long as the worker.
    # Frozen, the cyclic GC stops re-scanning it on every full collection (py-spy showed
    # the collector in a busy worker's samples: probes allocate per SSE chunk).
    gc.collect()
    gc.freeze()
