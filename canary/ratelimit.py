"""Per-provider request rate limit of the canary's own probes.

The canary must never cause the 429s it then ignores: a pinned probe has no fallback, so
an upstream provider's 429 comes back as the probe's verdict. OpenRouter publishes no
request cap for paid models (docs/sources/openrouter-api.md, "Limits"), and providers
publish their own per model, so the limit is ours: each provider gets a sustained
``CANARY_PROVIDER_RPS`` probe requests per second, and a slot's burst of up to
``CANARY_PROVIDER_BURST`` requests from an idle start (a round's four probes per endpoint
of every model the provider serves start together, instead of queueing behind a
one-second window that counted the burst as the rate).

The rule is the generic cell rate algorithm (GCRA: ITU-T I.371, the ATM Forum's Traffic
Management 4.0), with reservations as in Guava's ``RateLimiter``: each acquire moves the
provider's theoretical arrival time (TAT) on by ``n`` emission intervals and learns, in
the same step, how long to sleep before its requests conform; no polling, first come
first served. Counted across every worker process through Redis (one atomic script, one
round trip per acquire), or in this process when no broker is configured (the demo,
in-process rounds). Both apply ``gcra_reserve``.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import redis
from django.conf import settings

# A wait longer than this (s) is not slept out: the requests go anyway (a limiter must
# never stall a round past its budget; the reservation still counts).
MAX_WAIT_S = 30.0
# A wait shorter than this (s) is no wait: float rounding of a TAT exactly reached.
EPSILON_S = 1e-6


@dataclass(frozen=True)
class Rate:
    """A sustained rate and a burst: ``per_second`` requests per second (> 0) after the
    first ``burst`` (>= 1), which an idle provider admits at once."""

    per_second: float
    burst: int

    def __post_init__(self) -> None:
        if not (self.per_second > 0 and math.isfinite(self.per_second)):
            raise ValueError(f"per_second must be a positive number, got {self.per_second!r}")
        if self.burst < 1:
            raise ValueError(f"burst must be at least 1, got {self.burst!r}")

    @property
    def interval_s(self) -> float:
        """The emission interval: seconds per request at the sustained rate."""
        return 1.0 / self.per_second


def gcra_reserve(tat: float | None, now: float, n: int, rate: Rate) -> tuple[float, float]:
    """Reserve ``n`` (>= 1) requests at time ``now`` (s) given the provider's theoretical
    arrival time ``tat`` (s; None or in the past: idle). Returns ``(new_tat, wait_s)``:
    the TAT to store and how long the requests must wait before they conform (0 when
    they may go now). After ``burst`` requests at one instant the next waits one
    interval; ``n`` requests that exceed the burst on their own wait for the excess."""
    start_tat = max(tat if tat is not None else now, now)
    new_tat = start_tat + n * rate.interval_s
    wait = new_tat - rate.burst * rate.interval_s - now
    return new_tat, wait if wait >= EPSILON_S else 0.0


class Limiter(Protocol):
    def acquire(self, provider_slug: str, n: int = 1) -> float: ...


class _ReservingLimiter:
    """Reserves with ``_reserve`` (where the TAT lives is the subclass's) and sleeps out
    the wait, at most ``MAX_WAIT_S``; ``acquire`` returns the time slept in s."""

    def __init__(self, rate: Rate, clock: Callable[[], float], sleep: Callable[[float], None]) -> None:
        self.rate = rate
        self._clock = clock
        self._sleep = sleep

    def acquire(self, provider_slug: str, n: int = 1) -> float:
        """Block until ``n`` requests to ``provider_slug`` conform; the seconds waited."""
        wait = min(self._reserve(provider_slug, max(1, n), self._clock()), MAX_WAIT_S)
        if wait > 0:
            self._sleep(wait)
        return wait

    def _reserve(self, provider_slug: str, n: int, now: float) -> float:
        raise NotImplementedError


class LocalLimiter(_ReservingLimiter):
    """The provider TATs kept in this process (the demo, in-process rounds)."""

    def __init__(self, rate: Rate, clock: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep) -> None:
        super().__init__(rate, clock, sleep)
        self._tats: dict[str, float] = {}
        self._lock = threading.Lock()

    def _reserve(self, provider_slug: str, n: int, now: float) -> float:
        with self._lock:
            self._tats[provider_slug], wait = gcra_reserve(self._tats.get(provider_slug), now, n, self.rate)
            return wait


# ``gcra_reserve`` in Redis, atomically. KEYS[1]: the provider's TAT; ARGV: now (s), n,
# interval (s), burst, EPSILON_S. Returns the wait as a string (Redis turns a Lua number into an
# integer). The key expires once the TAT has passed: an idle provider keeps nothing.
_RESERVE_LUA = """
local now = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local interval = tonumber(ARGV[3])
local burst = tonumber(ARGV[4])
local epsilon = tonumber(ARGV[5])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local new_tat = tat + n * interval
redis.call('SET', KEYS[1], string.format('%.6f', new_tat), 'PX', math.ceil((new_tat - now) * 1000) + 1000)
local wait = new_tat - burst * interval - now
if wait < epsilon then wait = 0 end
return string.format('%.6f', wait)
"""


class RedisLimiter(_ReservingLimiter):
    """The provider TATs shared by every process through Redis (one script call per
    acquire, whatever ``n``). The clock is the caller's (workers' clocks are assumed
    synchronised to well under an interval). A Redis outage lets the probe go (never a
    failed round)."""

    def __init__(
        self, url: str, rate: Rate, prefix: str = "canary:gcra",
        clock: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(rate, clock, sleep)
        self.prefix = prefix
        self._redis = redis.Redis.from_url(url, socket_timeout=1.0)
        self._script = self._redis.register_script(_RESERVE_LUA)

    def key(self, provider_slug: str) -> str:
        """The Redis key of a provider's TAT."""
        return f"{self.prefix}:{provider_slug}"

    def _reserve(self, provider_slug: str, n: int, now: float) -> float:
        try:
            reply = self._script(keys=[self.key(provider_slug)], args=[repr(now), n, repr(self.rate.interval_s), self.rate.burst, repr(EPSILON_S)])
            return float(reply)
        except (redis.RedisError, ValueError):
            return 0.0


@lru_cache(maxsize=1)
def provider_limiter() -> Limiter:
    """The process's limiter at ``CANARY_PROVIDER_RPS`` and ``CANARY_PROVIDER_BURST``:
    Redis-backed (keys under ``CANARY_RATE_LIMIT_PREFIX``) when ``CANARY_RATE_LIMIT_REDIS``
    is true (Celery workers), in-process otherwise."""
    rate = Rate(settings.CANARY_PROVIDER_RPS, settings.CANARY_PROVIDER_BURST)
    if settings.CANARY_RATE_LIMIT_REDIS:
        return RedisLimiter(settings.REDIS_URL, rate, prefix=settings.CANARY_RATE_LIMIT_PREFIX)
    return LocalLimiter(rate)
