"""Deadline arithmetic with an injected clock and full-jitter backoff
with Retry-After (point 5)."""

from __future__ import annotations

import random

import pytest

from routing.backoff import full_jitter_s, wait_before_retry_s
from routing.deadline import Allowances, Deadline


class Clock:
    def __init__(self, t: float = 100.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


ALLOW = Allowances(connect_s=0.5, generation_s=1.0, validation_s=0.2)  # required 1.7 s


def test_remaining_is_deadline_minus_now():
    clock = Clock()
    deadline = Deadline(5.0, clock)
    clock.t += 1.25
    assert deadline.remaining_s() == pytest.approx(3.75)
    assert deadline.elapsed_s() == pytest.approx(1.25)


def test_no_attempt_when_remaining_is_below_the_allowance():
    clock = Clock()
    deadline = Deadline(5.0, clock)
    clock.t += 3.31  # 1.69 s left < 1.7 s required
    assert deadline.attempt_times(ALLOW, attempt_cap_s=None, first_token_s=None) is None
    clock.t -= 0.02  # 1.71 s left
    assert deadline.attempt_times(ALLOW, attempt_cap_s=None, first_token_s=None) is not None


def test_attempt_timeout_is_cut_to_leave_room_for_validation():
    clock = Clock()
    deadline = Deadline(5.0, clock)
    clock.t += 3.0  # 2 s left
    times = deadline.attempt_times(ALLOW, attempt_cap_s=3.0, first_token_s=2.5)
    assert times is not None
    assert times.timeout_s == pytest.approx(1.8)  # 2 - 0.2 validation, below the 3 s cap
    assert times.first_token_s == pytest.approx(1.8)  # never beyond the attempt


def test_the_per_attempt_cap_applies_when_time_is_plentiful():
    deadline = Deadline(30.0, Clock())
    times = deadline.attempt_times(ALLOW, attempt_cap_s=3.0, first_token_s=2.0)
    assert times is not None and (times.timeout_s, times.first_token_s) == (3.0, 2.0)


def test_field_case_9_arithmetic_three_silent_attempts_fit_only_two():
    """Deadline 5 s, per-attempt 3 s: attempt 1 runs 3 s, attempt 2 is cut to 1.8 s,
    attempt 3 is never launched: the chain ends at 4.8 s, not 9 s."""
    clock = Clock()
    deadline = Deadline(5.0, clock)
    launched = []
    for _ in range(3):
        times = deadline.attempt_times(ALLOW, attempt_cap_s=3.0, first_token_s=None)
        if times is None:
            break
        launched.append(times.timeout_s)
        clock.t += times.timeout_s  # the attempt times out
    assert launched == [pytest.approx(3.0), pytest.approx(1.8)]
    assert deadline.elapsed_s() == pytest.approx(4.8)


def test_a_deadline_needs_a_positive_budget():
    with pytest.raises(ValueError, match="positive"):
        Deadline(0, Clock())


def test_full_jitter_stays_within_the_capped_exponential():
    rng = random.Random(1)
    for retry in range(8):
        ceiling = min(2.0, 0.1 * 2**retry)
        waits = [full_jitter_s(retry, 0.1, 2.0, rng) for _ in range(200)]
        assert all(0 <= w <= ceiling for w in waits)
        assert max(waits) > ceiling * 0.9  # the whole range is used


def test_retry_after_wins_when_it_fits():
    wait = wait_before_retry_s(0, base_s=0.1, cap_s=2, retry_after_s=1.5, remaining_s=5, required_s=1.7, rng=random.Random(1))
    assert wait == 1.5


def test_retry_after_that_does_not_fit_means_no_retry():
    assert wait_before_retry_s(0, base_s=0.1, cap_s=2, retry_after_s=4, remaining_s=5, required_s=1.7, rng=random.Random(1)) is None


def test_jitter_is_cut_so_the_retry_still_fits():
    wait = wait_before_retry_s(5, base_s=1, cap_s=10, retry_after_s=None, remaining_s=2.0, required_s=1.7, rng=random.Random(3))
    assert wait is not None and 0 <= wait <= 0.3 + 1e-9


def test_no_retry_when_the_allowance_no_longer_fits():
    assert wait_before_retry_s(0, base_s=0.1, cap_s=2, retry_after_s=None, remaining_s=1.0, required_s=1.7, rng=random.Random(1)) is None
