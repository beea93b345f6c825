"""Per-check baselines (docs/baselines.md): the binomial tail, the threshold, the
declared false-suspension rate, and the round judgement holding failures against the
peers' rate. Pure logic: no database, no network."""

from __future__ import annotations

import math

import pytest

from canary.baselines import (
    Baseline,
    BaselineSettings,
    binomial_tail,
    check_decision,
    false_suspensions_per_endpoint_year,
    threshold,
)
from canary.probes import REFUSAL
from canary.round_judgement import decision_of, peer_baseline, round_judge
from canary.verdicts import Verdict
from tests.canary.test_round_judgement import healthy, outcome, with_

SETTINGS = BaselineSettings(alpha=0.001, endpoint_window=10, min_volume=30)


def test_the_binomial_tail_matches_the_closed_forms():
    assert binomial_tail(0, 10, 0.3) == 1.0
    assert binomial_tail(11, 10, 0.3) == 0.0
    assert binomial_tail(10, 10, 0.3) == pytest.approx(0.3**10)
    assert binomial_tail(1, 10, 0.01) == pytest.approx(1 - 0.99**10)
    # P(X >= 2 | 3, 0.5) = (3 + 1) / 8
    assert binomial_tail(2, 3, 0.5) == pytest.approx(0.5)


def test_the_threshold_is_the_fewest_failures_whose_tail_is_below_alpha():
    for p0 in (0.0001, 0.01, 0.05, 0.15, 0.4):
        k = threshold(10, p0, 0.001)
        assert binomial_tail(k, 10, p0) <= 0.001
        if k > 1:
            assert binomial_tail(k - 1, 10, p0) > 0.001
    assert threshold(10, 0.15, 0.001) == 7


def test_a_failure_within_the_habit_does_not_stand_and_one_far_above_it_does():
    base = Baseline(REFUSAL, failures=45, trials=300, established=True)  # 15 %
    habit = check_decision(REFUSAL, [False] * 7 + [True, False, True], base, SETTINGS)
    assert not habit.stands and habit.p_value == pytest.approx(binomial_tail(2, 10, 0.15))
    assert "within the model's habit" in habit.reason and "15.0%" in habit.reason
    broken = check_decision(REFUSAL, [True] * 9 + [True], base, SETTINGS)
    assert broken.stands and broken.p_value == pytest.approx(0.15**10)


def test_until_the_baseline_has_volume_every_failure_counts():
    thin = Baseline(REFUSAL, failures=5, trials=20, established=False)
    decided = check_decision(REFUSAL, [False, True], thin, SETTINGS)
    assert decided.stands and decided.p_value is None and "fixed rule" in decided.reason


def test_the_declared_rate_of_the_fixed_rule_is_the_two_round_arithmetic():
    # Two consecutive failures, each round independent: about p^2 per round (a run that
    # suspends restarts the streak), at 48 rounds a day.
    # Renewal argument: a run of two failures after a reset takes (1 + p) / p^2 rounds on
    # average, so the rate is p^2 / (1 + p) per round.
    fixed = false_suspensions_per_endpoint_year(0.05, SETTINGS, 2, established=False)
    assert fixed == pytest.approx(0.05**2 / (1 + 0.05) * 365 * 48, rel=0.01)


def test_the_baseline_rule_declares_far_fewer_false_suspensions_than_the_fixed_rule():
    for p0 in (0.01, 0.05, 0.15):
        fixed = false_suspensions_per_endpoint_year(p0, SETTINGS, 2, established=False)
        ruled = false_suspensions_per_endpoint_year(p0, SETTINGS, 2)
        assert ruled < fixed / 20, (p0, ruled, fixed)
    # A check that never fails a healthy host declares none.
    assert false_suspensions_per_endpoint_year(0.0, SETTINGS, 2) == 0.0
    # Nor does one every host always fails: that is the model's habit, never a host's.
    assert false_suspensions_per_endpoint_year(1.0, SETTINGS, 2) == 0.0
    assert math.isclose(false_suspensions_per_endpoint_year(1.0, SETTINGS, 2, established=False), 365 * 48 / 2)


def test_the_peer_baseline_leaves_out_the_judged_host_and_broken_peers():
    samples = {"a/x": [True] + [False] * 9, "b/x": [False] * 10, "me/x": [True] * 10, "broken/x": [True] * 9 + [False]}
    base = peer_baseline(REFUSAL, "me/x", samples, SETTINGS)
    assert (base.failures, base.trials) == (1, 20)
    assert not base.established
    shown = peer_baseline(REFUSAL, "", samples, SETTINGS)
    assert (shown.failures, shown.trials) == (1, 20)  # on the page too, hosts failing most samples are no habit


def _refusing(tag_count: int) -> dict:
    return {f"e{i}/x": healthy() for i in range(tag_count)}


def test_the_round_judgement_softens_a_failure_within_the_peers_habit():
    by = _refusing(10)
    by["e3/x"] = with_(REFUSAL, outcome(REFUSAL, Verdict.FAIL, "refusal", "narrator refuses"))
    # Each peer refused 2 of its 10 earlier samples: a 20 % habit over 180 samples.
    history = {(tag, REFUSAL): [True, True] + [False] * 8 for tag in by}
    judged = round_judge(by, {}, history=history, baseline_settings=SETTINGS)
    ev = judged.endpoints["e3/x"]
    assert ev.final[REFUSAL].verdict == Verdict.INCONCLUSIVE and ev.outcome == "clean"
    decided = decision_of(ev.evidence, REFUSAL)
    assert decided is not None and not decided["stands"] and decided["baseline_trials"] == 99


def test_the_round_judgement_keeps_a_failure_far_above_the_peers_habit():
    by = _refusing(10)
    by["e3/x"] = with_(REFUSAL, outcome(REFUSAL, Verdict.FAIL, "refusal", "narrator refuses"))
    history = {(tag, REFUSAL): [True, True] + [False] * 8 for tag in by}
    history[("e3/x", REFUSAL)] = [True] * 9
    judged = round_judge(by, {}, history=history, baseline_settings=SETTINGS)
    ev = judged.endpoints["e3/x"]
    assert ev.final[REFUSAL].verdict == Verdict.FAIL and ev.outcome == "fail"
    assert decision_of(ev.evidence, REFUSAL)["stands"] is True


def test_without_baseline_settings_the_round_judgement_is_unchanged():
    by = _refusing(3)
    by["e1/x"] = with_(REFUSAL, outcome(REFUSAL, Verdict.FAIL, "refusal", "narrator refuses"))
    judged = round_judge(by, {})
    assert judged.endpoints["e1/x"].outcome == "fail" and "baselines" not in judged.endpoints["e1/x"].evidence


@pytest.mark.parametrize("bad", [{"alpha": 0.0}, {"alpha": 1.0}, {"endpoint_window": 0}, {"min_volume": True}])
def test_bad_settings_are_refused_naming_the_field(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        BaselineSettings(**bad)
