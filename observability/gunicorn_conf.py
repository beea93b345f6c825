"""gunicorn settings: ``gunicorn -c observability/gunicorn_conf.py reverie_ops.wsgi``.

Multiprocess metrics: empties ``PROMETHEUS_MULTIPROC_DIR`` when the arbiter starts and
drops a worker's live gauges when it exits (prometheus-client docs, "Multiprocess Mode",
gunicorn section); in each worker, gunicorn's own error answers (414, 431, 400) are JSON
(``observability.gunicorn_errors``).

Warm start (``routing.warm``): every worker builds the judges and the language
detector before it accepts a connection. With ``preload_app`` (``REVERIE_PRELOAD_APP``,
on by default) the arbiter loads the application and builds the judges once, before it
forks: the workers share the models' pages instead of each holding its own copy
(``bench/warm_start.py`` measures both), and each worker builds its own gateway (threads
and sockets do not survive a fork) in ``post_worker_init``, still before it accepts.
Import-light on purpose: nothing here imports Django at module level (the settings are
read before the application is configured).
"""

from __future__ import annotations

import os
from typing import Any

from observability.gunicorn_errors import json_errors_install
from observability.multiprocess import multiproc_dir_reset, process_dead

preload_app = os.environ.get("REVERIE_PRELOAD_APP", "1") == "1"
# Tells reverie_ops.wsgi, loading in the arbiter, to build no gateway there.
os.environ["REVERIE_PRELOAD_APP"] = "1" if preload_app else "0"


def on_starting(server: Any) -> None:
    multiproc_dir_reset()


def post_worker_init(worker: Any) -> None:
    if preload_app:
        # Imported in the worker, where the preloaded application configured Django;
        # at this module's import it is not configured yet.
        from routing.warm import warm_process

        warm_process(judges=False)


def child_exit(server: Any, worker: Any) -> None:
    process_dead(worker.pid)


def post_fork(server: Any, worker: Any) -> None:
    json_errors_install()
