"""Warm a server process before it accepts work: the judges and the language detector
(``canary.judges.warm.warm_judges``), the gateway's own checks, the URLconf and its view
modules, the TLS context the gateways share, one request through the middleware (given
by the caller), then the process's gateway (its HTTP pool and watchdog thread, Redis
clients and event writer, the routes, the ignore lists and the database pool:
``routing.services.wiring.gateway_warm``) and its first connection to OpenRouter
(``upstream_warm``) where the process serves it.

Called by ``reverie_ops.wsgi`` as the WSGI application loads: in each gunicorn worker
before it accepts a connection, in ``runserver`` before it serves, or, with gunicorn's
``preload_app``, once in the arbiter before it forks (the workers then share the
models' pages; ``gateway`` must then wait for the worker: threads and sockets do not
survive a fork, see ``observability/gunicorn_conf.py``). The Celery worker and
``judge_text`` call ``warm_judges`` themselves.

The first reply after a start used to load the models on its own path (2.0-2.1 s to first
content under gunicorn against 0.5 s warm), then still paid the URLconf's imports, the
middleware's lazy imports, the watchdog thread's start and the live scorecard's Redis
connection (55-90 ms over a warm reply, in process, docs/benchmarks.md), and the TCP
and TLS handshakes of its upstream connection;
``bench/warm_start.py`` measures first against warm.
"""

from __future__ import annotations

import encodings.idna  # noqa: F401 - see warm_shared
import gc
import logging
import os
import time
from collections.abc import Callable

import psycopg_pool  # noqa: F401 - see warm_shared
from django.urls import get_resolver

from canary.judges.warm import SAMPLES, warm_judges
from openrouter.watched import shared_ssl_context
from routing.gateway.commit import answer_checks, prefix_checks, reply_checks
from routing.services.wiring import gateway_warm, upstream_warm

log = logging.getLogger(__name__)

def warm_live_checks() -> None:
    """Run the gateway's own checks (``routing.gateway.commit``: a held prefix, a streamed reply,
    a whole answer) once per sample, with and without an expected language, so their
    first use compiles nothing on a request's path."""
    for language, text in SAMPLES:
        for expected in (language, None):
            prefix_checks(text[:64], expected)
            reply_checks(text, expected)
            answer_checks(text, expected)


# The paths the server answers most: each is resolved once, so the regular expressions of
# every pattern before it are compiled too.
WARM_PATHS = ("/v1/chat/completions", "/api/v1/health")


def warm_urls() -> None:
    """Import the URLconf (``settings.ROOT_URLCONF``) and with it every view module, and
    resolve ``WARM_PATHS``: the first request used to pay both on its own path (24 ms
    under gunicorn on a loaded machine, most of it compiling the view modules' source:
    the image sets ``PYTHONDONTWRITEBYTECODE``). Imports only, fork safe. Raises what
    an import raises, or ``django.urls.Resolver404`` if a path is no longer routed."""
    resolver = get_resolver()
    for path in WARM_PATHS:
        resolver.resolve(path)


def warm_shared() -> None:
    """Build what every worker's gateway would otherwise build alike, where the process
    may still fork (the arbiter under ``preload_app``): the TLS client context
    (``openrouter.watched.shared_ssl_context``, 20-40 ms of CPU per worker). The modules
    the gateway's connections load on first use (``psycopg_pool``, Django's database
    pool; ``encodings.idna``, host names) are imported with this module for the same
    reason: compiled once (the image writes no bytecode) and shared. No socket, no
    thread: fork safe."""
    shared_ssl_context()


# What this process has warmed already (a forked worker inherits the arbiter's judges).
_done: set[str] = set()


def _step(took: dict[str, float], name: str, run: Callable[[], object], failed: str) -> None:
    """Run one warm-up step, its ms into ``took[name]``; a failure is logged (``failed``
    says what the first request will then do), never raised."""
    start = time.perf_counter()
    try:
        run()
    except Exception:  # noqa: BLE001 - a server must start even if warming fails
        log.exception("warm: %s", failed)
    took[name] = (time.perf_counter() - start) * 1000.0


def warm_process(*, judges: bool = True, gateway: bool = True,
                 request: Callable[[], object] | None = None) -> dict[str, float]:
    """Warm this process, each part once: with ``judges``, the fork-safe part (every
    judge and the language detector, the gateway's own checks, the URLconf, what the
    gateways share (``warm_shared``), then ``request``: one request through the WSGI stack, ``reverie_ops.warm_request``);
    with ``gateway``, the gateway (its threads and connections: never before a fork),
    then its first upstream connection (``upstream``: bounded by
    ``ROUTING_PRECONNECT_TIMEOUT_S``, an unreachable OpenRouter logged, never fatal).
    Then freeze what was loaded out of the cyclic garbage collector's way (it lives as
    long as the process, and a frozen heap is not re-scanned, nor its pages dirtied
    after a fork). Returns the ms each step took; logs one INFO line ``warm: pid=...
    detector=...ms judges=...ms live_checks=...ms urls=...ms shared=...ms request=...ms
    gateway=...ms upstream=...ms``. Never raises: a step that fails is logged and the process starts
    cold for it."""
    took: dict[str, float] = {}
    if judges and "judges" not in _done:
        _done.add("judges")
        try:
            took.update(warm_judges())
        except Exception:  # noqa: BLE001 - a server must start even if warming fails
            log.exception("warm: the judges could not be built; the first request will build them")
        _step(took, "live_checks", warm_live_checks, "the gateway's checks could not run; the first request will compile them")
        _step(took, "urls", warm_urls, "the URLs could not be resolved; the first request will import them")
        _step(took, "shared", warm_shared, "the TLS context could not be built; each gateway will build its own")
        if request is not None:
            _step(took, "request", request, "the warm-up request failed; the first request will import the middleware's parts")
    if gateway and "gateway" not in _done:
        _done.add("gateway")
        _step(took, "gateway", gateway_warm, "the gateway could not be built; the first request will build it")
        _step(took, "upstream", upstream_warm, "no upstream connection opened; the first request will open it")
    if not took:
        return took
    gc.collect()
    gc.freeze()
    log.info("warm: pid=%d %s", os.getpid(), " ".join(f"{k}={v:.0f}ms" for k, v in took.items()))
    return took
