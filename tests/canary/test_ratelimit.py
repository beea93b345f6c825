"""The canary's per-provider rate limit: the GCRA rule on an injected clock, and the
TATs shared through the real Redis of the test settings."""

from __future__ import annotations

import uuid

import pytest
from django.conf import settings

from canary.ratelimit import LocalLimiter, Rate, RedisLimiter, gcra_reserve


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


def test_an_idle_provider_admits_its_burst_at_once_then_one_request_per_interval():
    rate = Rate(per_second=20, burst=40)
    tat, waits = None, []
    for _ in range(42):
        tat, wait = gcra_reserve(tat, 100.0, 1, rate)
        waits.append(wait)
    assert waits[:40] == [0.0] * 40
    assert waits[40:] == [pytest.approx(0.05), pytest.approx(0.10)]
    assert tat == pytest.approx(100.0 + 42 * 0.05)


def test_the_burst_refills_at_the_sustained_rate():
    rate = Rate(per_second=10, burst=5)
    tat, _ = gcra_reserve(None, 0.0, 5, rate)  # the burst spent
    assert gcra_reserve(tat, 0.0, 1, rate)[1] == pytest.approx(0.1)
    # 0.3 s later three places are back: three go now, a fourth waits one interval.
    assert gcra_reserve(tat, 0.3, 3, rate)[1] == 0.0
    assert gcra_reserve(tat, 0.3, 4, rate)[1] == pytest.approx(0.1)
    # Long idle: a TAT in the past counts as now (no credit beyond the burst).
    assert gcra_reserve(tat, 1000.0, 5, rate) == (pytest.approx(1000.5), 0.0)
    assert gcra_reserve(tat, 1000.0, 6, rate)[1] == pytest.approx(0.1)


def test_more_requests_than_the_burst_wait_for_the_excess_only():
    rate = Rate(per_second=2, burst=2)
    assert gcra_reserve(None, 7.0, 5, rate) == (pytest.approx(9.5), pytest.approx(1.5))


@pytest.mark.parametrize(("per_second", "burst", "message"), [
    (0, 1, "per_second must be a positive number"),
    (float("inf"), 1, "per_second must be a positive number"),
    (1, 0, "burst must be at least 1"),
])
def test_a_rate_refuses_what_admits_nothing(per_second, burst, message):
    with pytest.raises(ValueError, match=message):
        Rate(per_second, burst)


def test_local_limiter_sleeps_out_the_wait_and_returns_it():
    clock = FakeClock(1000.25)
    limiter = LocalLimiter(Rate(4, 3), clock=clock, sleep=clock.sleep)
    assert [limiter.acquire("deepinfra") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.acquire("deepinfra") == pytest.approx(0.25)
    assert clock.now == pytest.approx(1000.5)
    # Requests arriving together are served in order, each one interval after the last.
    assert limiter.acquire("deepinfra", 2) == pytest.approx(0.5)


def test_local_limiter_counts_providers_apart():
    clock = FakeClock(50.0)
    limiter = LocalLimiter(Rate(1, 1), clock=clock, sleep=clock.sleep)
    assert limiter.acquire("a") == 0.0
    assert limiter.acquire("b") == 0.0
    assert clock.slept == []


def test_a_wait_past_the_cap_is_not_slept_out(monkeypatch):
    monkeypatch.setattr("canary.ratelimit.MAX_WAIT_S", 2.0)
    clock = FakeClock(0.0)
    limiter = LocalLimiter(Rate(1, 1), clock=clock, sleep=clock.sleep)
    assert limiter.acquire("p", 10) == 2.0
    assert clock.slept == [2.0]


def test_redis_limiter_shares_the_tat_between_instances():
    prefix = f"test:gcra:{uuid.uuid4().hex}"
    clock = FakeClock(5000.0)
    first = RedisLimiter(settings.REDIS_URL, Rate(10, 7), prefix=prefix, clock=clock, sleep=clock.sleep)
    second = RedisLimiter(settings.REDIS_URL, Rate(10, 7), prefix=prefix, clock=clock, sleep=clock.sleep)
    assert first.acquire("deepinfra", 4) == 0.0
    assert second.acquire("deepinfra", 3) == 0.0
    # The burst is spent between them: the next request of either waits one interval.
    assert first.acquire("deepinfra") == pytest.approx(0.1)
    assert float(first._redis.get(first.key("deepinfra"))) == pytest.approx(5000.8)
    # The key lives until its TAT has passed (plus a second), no longer.
    assert 0 < first._redis.pttl(first.key("deepinfra")) <= 2000


def test_redis_and_local_limiters_decide_alike():
    prefix = f"test:gcra:{uuid.uuid4().hex}"
    script = [(0.0, 3), (0.0, 2), (0.05, 1), (0.4, 4), (2.0, 1), (2.0, 6)]
    waits = {}
    for name in ("local", "redis"):
        clock = FakeClock(0.0)
        rate = Rate(8, 4)
        limiter = (LocalLimiter(rate, clock=clock, sleep=lambda s: None) if name == "local" else
                   RedisLimiter(settings.REDIS_URL, rate, prefix=prefix, clock=clock, sleep=lambda s: None))
        got = []
        for at, n in script:
            clock.now = 1_764_000_000.0 + at
            got.append(limiter.acquire("p", n))
        waits[name] = got
    assert waits["redis"] == pytest.approx(waits["local"], abs=1e-5)
    assert waits["local"] == pytest.approx([0.0, 0.125, 0.2, 0.35, 0.0, 0.375], abs=1e-5)


def test_redis_limiter_lets_probes_go_when_redis_is_down():
    limiter = RedisLimiter("redis://127.0.0.1:1/0", Rate(1, 1))
    assert limiter.acquire("p", 3) == 0.0
