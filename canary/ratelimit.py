"""Per-provider request rate limit of the canary's own probes.

The canary must never cause the 429s it then ignores: each provider gets at most
``CANARY_PROVIDER_RPS`` probe requests per second, counted across every worker process
through Redis (a fixed one-second window per provider: INCR + EXPIRE), or in this process
when no broker is configured (the demo, in-process rounds).
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable
from functools import lru_cache
from typing import Protocol

from django.conf import settings

MAX_WAIT_S = 30.0


class Limiter(Protocol):
    def acquire(self, provider_slug: str, n: int = 1) -> float: ...


def _in_windows(take: Callable[[str, int], float], provider_slug: str, n: int, per_second: int) -> float:
    """``n`` slots taken at most one window's worth at a time; total s waited."""
    waited, left = 0.0, max(1, n)
    while left > 0:
        step = min(left, max(1, per_second))
        waited += take(provider_slug, step)
        left -= step
    return waited


class LocalLimiter:
    """Fixed one-second windows per provider, in this process. ``acquire(slug, n)`` blocks
    until ``n`` requests fit in the provider's windows (more than ``per_second`` take
    several windows) and returns the time waited in s."""

    def __init__(self, per_second: int, clock: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep) -> None:
        self.per_second = per_second
        self._clock = clock
        self._sleep = sleep
        self._counts: dict[tuple[str, int], int] = defaultdict(int)
        self._lock = threading.Lock()

    def acquire(self, provider_slug: str, n: int = 1) -> float:
        return _in_windows(self._take, provider_slug, n, self.per_second)

    def _take(self, provider_slug: str, n: int) -> float:
        waited = 0.0
        while True:
            now = self._clock()
            window = int(now)
            with self._lock:
                # Forget old windows so the dict stays small.
                for key in [k for k in self._counts if k[1] < window]:
                    del self._counts[key]
                if self._counts[(provider_slug, window)] + n <= self.per_second:
                    self._counts[(provider_slug, window)] += n
                    return waited
            pause = (window + 1) - now
            if waited + pause > MAX_WAIT_S:
                return waited
            self._sleep(pause)
            waited += pause


class RedisLimiter:
    """The same windows shared by every process through Redis (one INCRBY + EXPIRE round
    trip per call, whatever ``n``). A Redis outage lets the probe go (never a failed
    round)."""

    def __init__(self, url: str, per_second: int, prefix: str = "canary:rl") -> None:
        import redis

        self.per_second = per_second
        self.prefix = prefix
        self._redis = redis.Redis.from_url(url, socket_timeout=1.0)

    def acquire(self, provider_slug: str, n: int = 1) -> float:
        return _in_windows(self._take, provider_slug, n, self.per_second)

    def _take(self, provider_slug: str, n: int) -> float:
        import redis

        waited = 0.0
        while True:
            now = time.time()
            window = int(now)
            key = f"{self.prefix}:{provider_slug}:{window}"
            try:
                pipe = self._redis.pipeline(transaction=False)
                pipe.incrby(key, n)
                pipe.expire(key, 2)
                count = int(pipe.execute()[0])
            except redis.RedisError:
                return waited
            if count <= self.per_second:
                return waited
            pause = (window + 1) - now
            if waited + pause > MAX_WAIT_S:
                return waited
            time.sleep(pause)
            waited += pause


@lru_cache(maxsize=1)
def provider_limiter() -> Limiter:
    """The process's limiter: Redis-backed when ``CANARY_RATE_LIMIT_REDIS`` is true
    (Celery workers), in-process otherwise."""
    if settings.CANARY_RATE_LIMIT_REDIS:
        return RedisLimiter(settings.REDIS_URL, settings.CANARY_PROVIDER_RPS)
    return LocalLimiter(settings.CANARY_PROVIDER_RPS)
