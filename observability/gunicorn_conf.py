"""gunicorn settings for multiprocess metrics: ``gunicorn -c observability/gunicorn_conf.py``.

Empties ``PROMETHEUS_MULTIPROC_DIR`` when the arbiter starts and drops a worker's live
gauges when it exits (prometheus-client docs, "Multiprocess Mode", gunicorn section);
in each worker, gunicorn's own error answers (414, 431, 400) are JSON
(``observability.gunicorn_errors``). Import-light on purpose: the arbiter must not import Django.
"""

from __future__ import annotations

from typing import Any

from observability.gunicorn_errors import json_errors_install
from observability.multiprocess import multiproc_dir_reset, process_dead


def on_starting(server: Any) -> None:
    multiproc_dir_reset()


def child_exit(server: Any, worker: Any) -> None:
    process_dead(worker.pid)


def post_fork(server: Any, worker: Any) -> None:
    json_errors_install()
