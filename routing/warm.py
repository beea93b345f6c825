"""Warm a server process before it accepts work: the judges and the language detector
(``canary.judges.warm.warm_judges``), then the process's gateway (its HTTP pool, Redis
client and event writer, the routes, the ignore lists and the database pool:
``routing.services.gateway_warm``) where the process serves it.

Called by ``reverie_ops.wsgi`` as the WSGI application loads: in each gunicorn worker
before it accepts a connection, in ``runserver`` before it serves, or, with gunicorn's
``preload_app``, once in the arbiter before it forks (the workers then share the
models' pages; ``gateway`` must then wait for the worker: threads and sockets do not
survive a fork, see ``observability/gunicorn_conf.py``). The Celery worker and
``judge_text`` call ``warm_judges`` themselves.

The first reply after a start used to load the models on its own path (2.0-2.1 s to first
content under gunicorn against 0.5 s warm); ``bench/warm_start.py`` measures both.
"""

from __future__ import annotations

import gc
import logging
import os
import time

from canary.judges.warm import SAMPLES, warm_judges
from routing.commit import answer_checks, prefix_checks, reply_checks
from routing.services import gateway_warm

log = logging.getLogger(__name__)

def warm_live_checks() -> None:
    """Run the gateway's own checks (``routing.commit``: a held prefix, a streamed reply,
    a whole answer) once per sample, with and without an expected language, so their
    first use compiles nothing on a request's path."""
    for language, text in SAMPLES:
        for expected in (language, None):
            prefix_checks(text[:64], expected)
            reply_checks(text, expected)
            answer_checks(text, expected)


# What this process has warmed already (a forked worker inherits the arbiter's judges).
_done: set[str] = set()


def warm_process(*, judges: bool = True, gateway: bool = True) -> dict[str, float]:
    """Build every judge (``judges``), then the gateway (``gateway``), each once per
    process; freeze what was loaded out of the cyclic garbage collector's way (it lives
    as long as the process, and a frozen heap is not re-scanned, nor its pages dirtied
    after a fork). Returns the ms each step took; logs one INFO line ``warm: pid=...
    detector=...ms judges=...ms gateway=...ms``. Never raises: a step that fails is
    logged and the process starts cold for it."""
    took: dict[str, float] = {}
    if judges and "judges" not in _done:
        _done.add("judges")
        try:
            took.update(warm_judges())
            start = time.perf_counter()
            warm_live_checks()
            took["live_checks"] = (time.perf_counter() - start) * 1000.0
        except Exception:  # noqa: BLE001 - a server must start even if warming fails
            log.exception("warm: the judges could not be built; the first request will build them")
    if gateway and "gateway" not in _done:
        _done.add("gateway")
        start = time.perf_counter()
        try:
            gateway_warm()
        except Exception:  # noqa: BLE001 - as above
            log.exception("warm: the gateway could not be built; the first request will build it")
        took["gateway"] = (time.perf_counter() - start) * 1000.0
    if not took:
        return took
    gc.collect()
    gc.freeze()
    log.info("warm: pid=%d %s", os.getpid(), " ".join(f"{k}={v:.0f}ms" for k, v in took.items()))
    return took
