"""gunicorn settings for multiprocess metrics: ``gunicorn -c observability/gunicorn_conf.py``.

Empties ``PROMETHEUS_MULTIPROC_DIR`` when the arbiter starts and drops a worker's live
gauges when it exits (prometheus-client docs, "Multiprocess Mode", gunicorn section).
Import-light on purpose: the arbiter must not import Django.
"""

from __future__ import annotations

from typing import Any

from observability.multiprocess import multiproc_dir_reset, process_dead


def on_starting(server: Any) -> None:
    multiproc_dir_reset()


def child_exit(server: Any, worker: Any) -> None:
    process_dead(worker.pid)
