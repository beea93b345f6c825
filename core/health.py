"""What the app depends on, checked: the database, Redis and the Celery broker.

``/api/v1/health`` said 200 with PostgreSQL down. ``health_report`` pings each
dependency (one ``SELECT 1``, one Redis ``PING`` per URL, with short timeouts) and says
which are down and why; the view answers 503 when any is. A process checks at most once
per ``HEALTH_CACHE_S`` (s): a load balancer polling several times a second costs one
round of pings, and the page stays about as cheap as the trivial view it was.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import redis
from django.db import connection
from redis.backoff import NoBackoff
from redis.retry import Retry

HEALTH_CACHE_S = 1.0
# Redis answers a PING in well under a millisecond on a network that works.
REDIS_TIMEOUT_S = 0.5
_REASON_MAX = 200


@dataclass(frozen=True)
class HealthReport:
    """``checks``: dependency name -> ``"ok"`` or ``"down: <reason>"`` (one line)."""

    checks: dict[str, str]

    @property
    def down(self) -> list[str]:
        """The names of the dependencies that are down, in check order."""
        return [name for name, state in self.checks.items() if state != "ok"]

    @property
    def ok(self) -> bool:
        return not self.down


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"down: {text[:_REASON_MAX]}"


def checks_run(checks: Mapping[str, Callable[[], object]]) -> HealthReport:
    """Run each check (a callable that raises when its dependency is down); never raises."""
    states: dict[str, str] = {}
    for name, check in checks.items():
        try:
            check()
            states[name] = "ok"
        except Exception as exc:  # noqa: BLE001 - any failure of a dependency is "down", said with its reason
            states[name] = _reason(exc)
    return HealthReport(states)


def database_ping() -> None:
    """``SELECT 1`` on the default database connection; raises when it cannot."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


_clients: dict[str, redis.Redis] = {}
_clients_lock = threading.Lock()


def redis_ping(url: str) -> None:
    """``PING`` the Redis server at ``url`` (timeouts ``REDIS_TIMEOUT_S``, no retries);
    raises ``redis.RedisError`` when it does not answer. One client per URL per process."""
    with _clients_lock:
        client = _clients.get(url)
        if client is None:
            client = _clients[url] = redis.Redis.from_url(
                url, socket_connect_timeout=REDIS_TIMEOUT_S, socket_timeout=REDIS_TIMEOUT_S, retry=Retry(NoBackoff(), 0))
    client.ping()


_cache: dict[tuple[str, str], tuple[float, HealthReport]] = {}
_cache_lock = threading.Lock()


def health_report(redis_url: str, broker_url: str, *, clock: Callable[[], float] = time.monotonic) -> HealthReport:
    """The database, ``redis_url`` (breakers, rate limits) and ``broker_url`` (Celery's
    broker, a Redis URL; checked on its own even when it is the same server), from this
    process's last check when it is under ``HEALTH_CACHE_S`` old."""
    key = (redis_url, broker_url)
    now = clock()
    with _cache_lock:
        cached = _cache.get(key)
    if cached is not None and now - cached[0] < HEALTH_CACHE_S:
        return cached[1]
    report = checks_run({
        "database": database_ping,
        "redis": lambda: redis_ping(redis_url),
        "broker": lambda: redis_ping(broker_url),
    })
    with _cache_lock:
        _cache[key] = (now, report)
    return report


def health_cache_clear() -> None:
    """Forget the last check (tests that take a dependency down and up)."""
    with _cache_lock:
        _cache.clear()
