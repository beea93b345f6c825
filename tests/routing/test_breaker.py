"""Circuit breakers on the real Redis (docs/sources/resilience.md, "Circuit breakers")."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from routing.breaker import BreakerConfig, BreakerStore

T0 = 1_800_000_000_000  # epoch ms; the store takes the time from its caller


def test_a_small_volume_never_trips_the_rate_rule(breakers):
    store = breakers(BreakerConfig(window=10, min_calls=10, failure_rate=0.5, consecutive=100))
    for i in range(4):
        store.record("r", T0 + i, "transient")
        store.record("r", T0 + i, "success")
    assert store.acquire("r", T0 + 10).allowed  # 4 of 8 failed, below the 10-call minimum


def test_the_failure_rate_over_the_minimum_volume_opens_it(breakers):
    store = breakers(BreakerConfig(window=10, min_calls=10, failure_rate=0.5, consecutive=100, open_s=30))
    # A class's window starts at its first failure (a healthy route stores nothing).
    for _ in range(5):
        store.record("r", T0, "transient")
        store.record("r", T0, "success")
    assert store.acquire("r", T0).allowed  # 5 of 9 failed: below the 10-call minimum
    store.record("r", T0, "transient")  # 5 of the last 10 failed: 50 %
    permit = store.acquire("r", T0 + 1)
    assert not permit.allowed and permit.state == "open" and permit.blocked_by == "transient"
    assert permit.until_ms == T0 + 30_000


def test_consecutive_failures_open_it(breakers):
    store = breakers(BreakerConfig(consecutive=3))
    store.record("r", T0, "transient")
    store.record("r", T0, "transient")
    assert store.acquire("r", T0).allowed
    store.record("r", T0, "transient")
    assert not store.acquire("r", T0).allowed


def test_breakers_are_per_failure_class(breakers):
    store = breakers(BreakerConfig(consecutive=2))
    store.record("r", T0, "transient")
    store.record("r", T0, "invalid_response")  # ignored by the transient breaker
    store.record("r", T0, "transient")
    snap = store.snapshot("r")
    assert snap["transient:state"] == "open" and snap["invalid_response:state"] == "closed"


def test_a_clients_malformed_request_never_counts(breakers):
    store = breakers(BreakerConfig(consecutive=1))
    store.record("r", T0, "neutral")
    assert store.snapshot("r") == {} and store.acquire("r", T0).allowed


def test_half_open_allows_one_trial_then_closes_after_consecutive_successes(breakers):
    store = breakers(BreakerConfig(consecutive=1, open_s=10, half_open_trials=1, close_after=2))
    store.record("r", T0, "transient")
    assert not store.acquire("r", T0 + 9_999).allowed
    trial = store.acquire("r", T0 + 10_000)
    assert trial.allowed and trial.state == "half_open" and trial.trial_classes == ("transient",)
    assert not store.acquire("r", T0 + 10_001).allowed  # the one slot is taken
    store.record("r", T0 + 10_100, "success", permit=trial)
    second = store.acquire("r", T0 + 10_200)
    assert second.allowed and second.state == "half_open"
    store.record("r", T0 + 10_300, "success", permit=second)
    assert store.snapshot("r")["transient:state"] == "closed"
    assert store.acquire("r", T0 + 10_400).state == "closed"


def test_a_failed_trial_reopens_it(breakers):
    store = breakers(BreakerConfig(consecutive=1, open_s=10))
    store.record("r", T0, "transient")
    trial = store.acquire("r", T0 + 10_000)
    store.record("r", T0 + 10_500, "transient", permit=trial)
    permit = store.acquire("r", T0 + 11_000)
    assert not permit.allowed and permit.until_ms == T0 + 20_500


def test_a_stuck_trial_frees_its_slot_after_the_lease(breakers):
    store = breakers(BreakerConfig(consecutive=1, open_s=10, trial_lease_s=5))
    store.record("r", T0, "transient")
    assert store.acquire("r", T0 + 10_000).allowed  # this trial never reports back
    assert not store.acquire("r", T0 + 14_000).allowed
    assert store.acquire("r", T0 + 15_001).allowed


def test_an_expiry_is_never_shortened(breakers):
    """Field case 2 at the store level, both orders."""
    store = breakers(BreakerConfig(consecutive=1, open_s=60))
    store.record("a", T0, "transient")  # open for 60 s
    store.record("a", T0 + 1_000, "transient", retry_after_s=1)  # later, shorter
    assert store.suppressed_until_ms("a") == T0 + 60_000
    store.record("b", T0, "transient", retry_after_s=120)
    store.record("b", T0 + 1_000, "transient", retry_after_s=1)
    assert store.suppressed_until_ms("b") == T0 + 120_000


def test_redis_down_fails_open_and_fast():
    client = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2, retry=Retry(NoBackoff(), 0))
    store = BreakerStore(client, prefix="x")
    assert store.acquire("r", T0).allowed
    started = time.monotonic()
    for _ in range(100):  # skipped while Redis is marked down: no connect per call
        assert store.acquire("r", T0).allowed
        assert store.record("r", T0, "transient") == ""
    assert time.monotonic() - started < 0.5


_OTHER_PROCESS = textwrap.dedent(
    """
    import sys
    import redis
    from routing.breaker import BreakerConfig, BreakerStore
    url, prefix, action, t0 = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    store = BreakerStore(redis.Redis.from_url(url), BreakerConfig(consecutive=3, open_s=10), prefix=prefix)
    if action == "fail":
        for _ in range(3):
            store.record("shared", t0, "transient")
        print("recorded")
    else:
        print("allowed" if store.acquire("shared", t0 + 10_000).allowed else "denied")
    """
)


def _other_process(action: str, prefix: str, url: str) -> str:
    done = subprocess.run(  # noqa: S603 - our own interpreter and code
        [sys.executable, "-c", _OTHER_PROCESS, url, prefix, action, str(T0)],
        capture_output=True, text=True, timeout=30, check=True, cwd=".",
    )
    return done.stdout.strip()


def test_breaker_state_is_shared_between_two_processes(breakers, settings):
    store = breakers(BreakerConfig(consecutive=3, open_s=10))
    assert store.acquire("shared", T0).allowed
    # Another process sees three failures of the route: this process now skips it.
    assert _other_process("fail", store.prefix, settings.REDIS_URL) == "recorded"
    denied = store.acquire("shared", T0 + 1)
    assert not denied.allowed and denied.until_ms == T0 + 10_000
    # After the open period the other process takes the one half-open trial slot; this
    # process must not send a second trial.
    assert _other_process("trial", store.prefix, settings.REDIS_URL) == "allowed"
    assert not store.acquire("shared", T0 + 10_001).allowed


def test_time_open_is_summed_per_route_with_overlapping_classes_once(breakers):
    store = breakers(BreakerConfig(consecutive=1, open_s=30))
    store.record("r", 1_000_000, "transient")
    store.record("r", 1_010_000, "invalid_response")  # open until 1_040_000: 10 s more
    fields = store.snapshot("r")
    assert int(fields["open_total_ms"]) == 40_000 and int(fields["open_covered_until"]) == 1_040_000
