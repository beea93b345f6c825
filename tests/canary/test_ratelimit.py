"""The canary's per-provider rate limit: pure windows with an injected clock, and the
shared Redis windows against the real Redis of the test settings."""

from __future__ import annotations

import uuid

import pytest
from django.conf import settings

from canary.ratelimit import LocalLimiter, RedisLimiter


class FakeClock:
    """A clock that only moves when the limiter sleeps (pure-logic unit test)."""

    def __init__(self, start: float) -> None:
        self.now = start
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_local_limiter_lets_a_window_through_then_waits_for_the_next():
    clock = FakeClock(1000.25)
    limiter = LocalLimiter(3, clock=clock, sleep=clock.sleep)
    assert [limiter.acquire("deepinfra") for _ in range(3)] == [0.0, 0.0, 0.0]
    waited = limiter.acquire("deepinfra")
    assert waited == pytest.approx(0.75)
    assert clock.now == pytest.approx(1001.0)


def test_local_limiter_counts_providers_apart():
    clock = FakeClock(50.0)
    limiter = LocalLimiter(1, clock=clock, sleep=clock.sleep)
    assert limiter.acquire("a") == 0.0
    assert limiter.acquire("b") == 0.0
    assert clock.slept == []


def test_local_limiter_takes_several_slots_at_once():
    clock = FakeClock(10.5)
    limiter = LocalLimiter(4, clock=clock, sleep=clock.sleep)
    assert limiter.acquire("p", 4) == 0.0
    # The window is full: one more slot waits for the next second.
    assert limiter.acquire("p", 1) == pytest.approx(0.5)


def test_local_limiter_spreads_more_slots_than_a_window_over_several_windows():
    clock = FakeClock(7.0)
    limiter = LocalLimiter(2, clock=clock, sleep=clock.sleep)
    waited = limiter.acquire("p", 5)  # 2 now, 2 in the next second, 1 in the one after
    assert waited == pytest.approx(2.0)
    assert clock.now == pytest.approx(9.0)


def test_redis_limiter_shares_the_window_between_instances():
    prefix = f"test:rl:{uuid.uuid4().hex}"
    first = RedisLimiter(settings.REDIS_URL, 1000, prefix=prefix)
    second = RedisLimiter(settings.REDIS_URL, 1000, prefix=prefix)
    assert first.acquire("deepinfra", 4) == 0.0
    assert second.acquire("deepinfra", 3) == 0.0
    keys = first._redis.keys(f"{prefix}:deepinfra:*")
    # Both counted in one key (a window boundary may fall between the two calls).
    assert sum(int(first._redis.get(k) or 0) for k in keys) == 7
    assert all(0 < first._redis.ttl(k) <= 2 for k in keys)


def test_redis_limiter_waits_when_the_shared_window_is_full():
    prefix = f"test:rl:{uuid.uuid4().hex}"
    # The windows counted in the real Redis, on a clock that moves only when the limiter
    # sleeps: on the wall clock a loaded machine let a new window open between the two
    # calls, and the second went through without waiting.
    clock = FakeClock(1000.25)
    limiter = RedisLimiter(settings.REDIS_URL, 2, prefix=prefix, clock=clock, sleep=clock.sleep)
    assert limiter.acquire("p", 2) == 0.0
    assert limiter.acquire("p", 1) == pytest.approx(0.75)
    assert clock.slept == [pytest.approx(0.75)]


def test_redis_limiter_lets_probes_go_when_redis_is_down():
    limiter = RedisLimiter("redis://127.0.0.1:1/0", 1)
    assert limiter.acquire("p", 3) == 0.0
