"""Metrics of Celery workers: task counts, plus any gateway call made from a task.

``connect_signals`` (from the app's ``ready``) hooks Celery's signals:

- ``worker_init`` (the worker's main process): empty the multiprocess directory and, when
  ``OBSERVABILITY_WORKER_METRICS_PORT`` is set, serve the worker's metrics on
  ``OBSERVABILITY_WORKER_METRICS_ADDR`` (default 0.0.0.0) and that port: a separate listen
  address, reachable only inside the deployment's network (no token);
- ``task_postrun`` (success and failure alike) and ``task_retry``: ``reverie_celery_tasks_total``;
- ``worker_process_shutdown``: drop that pool process's live gauges.

Task names are the registered task names (a known set), never task ids.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from celery.signals import task_postrun, task_retry, worker_init, worker_process_shutdown
from django.conf import settings
from prometheus_client import start_http_server

from observability import metrics as m
from observability.multiprocess import multiproc_dir_reset, process_dead, scrape_registry

log = logging.getLogger(__name__)


def _on_worker_init(**_: Any) -> None:
    multiproc_dir_reset()
    port = settings.OBSERVABILITY_WORKER_METRICS_PORT
    if port:
        addr = settings.OBSERVABILITY_WORKER_METRICS_ADDR
        start_http_server(port, addr=addr, registry=scrape_registry())
        log.info("worker metrics on %s:%s", addr, port)


def _on_postrun(task: Any = None, state: str | None = None, **_: Any) -> None:
    if task is not None and state:
        m.CELERY_TASKS.labels(task.name, state.lower()).inc()


def _on_retry(sender: Any = None, **_: Any) -> None:
    if sender is not None:
        m.CELERY_TASKS.labels(sender.name, "retry_requested").inc()


def _on_process_shutdown(pid: int | None = None, **_: Any) -> None:
    process_dead(pid or os.getpid())


def connect_signals() -> None:
    """Connect the worker signal handlers once (idempotent: dispatch uids)."""
    worker_init.connect(_on_worker_init, weak=False, dispatch_uid="observability.worker_init")
    task_postrun.connect(_on_postrun, weak=False, dispatch_uid="observability.task_postrun")
    task_retry.connect(_on_retry, weak=False, dispatch_uid="observability.task_retry")
    worker_process_shutdown.connect(_on_process_shutdown, weak=False, dispatch_uid="observability.process_shutdown")
