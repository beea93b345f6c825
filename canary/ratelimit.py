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


class _WindowLimiter:
    """Fixed one-second windows per provider: ``acquire(slug, n)`` blocks until ``n``
    requests fit (more than ``per_second`` take several windows) and returns the time
    waited in s; past ``MAX_WAIT_S`` of waiting for one window the requests go anyway.
    Subclasses say whether a window admits ``n`` more (``_admit``)."""

    def __init__(self, per_second: int, clock: Callable[[], float], sleep: Callable[[float], None]) -> None:
        self.per_second = per_second
        self._clock = clock
        self._sleep = sleep

    def acquire(self, provider_slug: str, n: int = 1) -> float:
        waited, left = 0.0, max(1, n)
        while left > 0:
            step = min(left, max(1, self.per_second))
            waited += self._wait(provider_slug, step)
            left -= step
        return waited

    def _wait(self, provider_slug: str, n: int) -> float:
        waited = 0.0
        while True:
            now = self._clock()
            window = int(now)
            if self._admit(provider_slug, n, window):
                return waited
            pause = (window + 1) - now
            if waited + pause > MAX_WAIT_S:
                return waited
            self._sleep(pause)
            waited += pause

    def _admit(self, provider_slug: str, n: int, window: int) -> bool:
        raise NotImplementedError


class LocalLimiter(_WindowLimiter):
    """The windows counted in this process (the demo, in-process rounds)."""

    def __init__(self, per_second: int, clock: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep) -> None:
        super().__init__(per_second, clock, sleep)
        self._counts: dict[tuple[str, int], int] = defaultdict(int)
        self._lock = threading.Lock()

    def _admit(self, provider_slug: str, n: int, window: int) -> bool:
        with self._lock:
            # Forget old windows so the dict stays small.
            for key in [k for k in self._counts if k[1] < window]:
                del self._counts[key]
            if self._counts[(provider_slug, window)] + n <= self.per_second:
                self._counts[(provider_slug, window)] += n
                return True
            return False


class RedisLimiter(_WindowLimiter):
    """The same windows shared by every process through Redis (one INCRBY + EXPIRE round
    trip per try, whatever ``n``). A Redis outage lets the probe go (never a failed
    round)."""

    def __init__(
        self, url: str, per_second: int, prefix: str = "canary:rl",
        clock: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        import redis

        super().__init__(per_second, clock, sleep)
        self.prefix = prefix
        self._redis = redis.Redis.from_url(url, socket_timeout=1.0)

    def _admit(self, provider_slug: str, n: int, window: int) -> bool:
        import redis

        key = f"{self.prefix}:{provider_slug}:{window}"
        try:
            pipe = self._redis.pipeline(transaction=False)
            pipe.incrby(key, n)
            pipe.expire(key, 2)
            return int(pipe.execute()[0]) <= self.per_second
        except redis.RedisError:
            return True


@lru_cache(maxsize=1)
def provider_limiter() -> Limiter:
    """The process's limiter: Redis-backed when ``CANARY_RATE_LIMIT_REDIS`` is true
    (Celery workers), in-process otherwise."""
    if settings.CANARY_RATE_LIMIT_REDIS:
        return RedisLimiter(settings.REDIS_URL, settings.CANARY_PROVIDER_RPS)
    return LocalLimiter(settings.CANARY_PROVIDER_RPS)
