"""Correct counts under several processes (gunicorn workers, Celery pool processes).

prometheus-client's multiprocess mode: every process writes its samples to files in
``PROMETHEUS_MULTIPROC_DIR`` and a scrape sums them (prometheus-client docs,
"Multiprocess Mode"). Three rules follow, each handled here or documented in README:

1. the variable is set *before* the first import of ``prometheus_client`` (set it in
   the process environment: the compose file and the gunicorn config do);
2. the directory is emptied when the service starts (``multiproc_dir_reset``, called by
   ``observability/gunicorn_conf.py`` in ``on_starting`` and by the worker's
   ``worker_init``), or counters of a previous run are added again;
3. a dead process's live gauges are dropped (``mark_process_dead``: gunicorn's
   ``child_exit`` hook, Celery's ``worker_process_shutdown`` signal). Our gauges are
   read at scrape time from Redis and PostgreSQL, so only counters and histograms live
   in those files, and the sums stay right after a restart.

Without the variable (``runserver``, tests, one process) the default registry is used.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

from prometheus_client import REGISTRY, CollectorRegistry, multiprocess
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

ENV = "PROMETHEUS_MULTIPROC_DIR"


def multiproc_dir() -> Path | None:
    """The multiprocess directory, or None when multiprocess mode is off."""
    value = os.environ.get(ENV) or os.environ.get(ENV.lower())
    return Path(value) if value else None


def multiproc_dir_reset() -> None:
    """Empty (or create) the multiprocess directory. Call once per service start, before
    any process of that service records a sample."""
    path = multiproc_dir()
    if path is None:
        return
    if path.exists():
        for child in path.iterdir():
            if child.is_dir():
                shutil.rmtree(child)
            else:
                child.unlink()
    path.mkdir(parents=True, exist_ok=True)


def multiproc_dir_ensure() -> None:
    """Create the multiprocess directory when it is missing (never empties it)."""
    path = multiproc_dir()
    if path is not None:
        path.mkdir(parents=True, exist_ok=True)


def process_dead(pid: int) -> None:
    """Drop the live-gauge files of process ``pid`` (no-op outside multiprocess mode)."""
    path = multiproc_dir()
    if path is not None:
        multiprocess.mark_process_dead(pid, str(path))


class _Default(Collector):
    """The default registry's collectors, for single-process mode."""

    def collect(self) -> Iterator[Metric]:
        yield from REGISTRY.collect()


def scrape_registry(extra: Iterable[Collector] = ()) -> CollectorRegistry:
    """A registry for one scrape: every process's samples (multiprocess mode) or this
    process's (otherwise), plus ``extra`` scrape-time collectors."""
    registry = CollectorRegistry(auto_describe=False)
    path = multiproc_dir()
    if path is not None:
        multiprocess.MultiProcessCollector(registry, path=str(path))
    else:
        registry.register(_Default())
    for collector in extra:
        registry.register(collector)
    return registry
