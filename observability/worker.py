"""Metrics of Celery workers: task counts, plus any gateway call made from a task.

``connect_signals`` (from the app's ``ready``) hooks Celery's signals:

- ``worker_init`` (the worker's main process): empty the multiprocess directory and, when
  ``OBSERVABILITY_WORKER_METRICS_PORT`` is set, serve the worker's metrics on
  ``OBSERVABILITY_WORKER_METRICS_ADDR`` (default 127.0.0.1) and that port, to requests
  carrying a service token (``observability.worker_listener``), as ``/metrics`` does;
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
from django.db import DatabaseError, connection

from core.last_use import last_use_write
from core.tokens import service_token_verify
from observability import metrics as m
from observability.multiprocess import multiproc_dir_reset, process_dead, scrape_registry
from observability.worker_listener import TokenUnverifiable, metrics_listener_start

log = logging.getLogger(__name__)


def _on_worker_init(**_: Any) -> None:
    multiproc_dir_reset()
    port = settings.OBSERVABILITY_WORKER_METRICS_PORT
    if port:
        addr = settings.OBSERVABILITY_WORKER_METRICS_ADDR
        metrics_listener_start(addr, port, scrape_registry(), _token_verify)
        log.info("worker metrics on %s:%s (service token required)", addr, port)


def _token_verify(authorization: str | None) -> bool:
    """``service_token_verify`` from the listener's thread, the token's last use written
    (no Django request ends here to write it: ``core.last_use``), its connection handed
    back."""
    try:
        return service_token_verify(authorization)
    except DatabaseError as exc:
        raise TokenUnverifiable(f"the database is unavailable ({type(exc).__name__})") from exc
    finally:
        last_use_write()
        connection.close()


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
