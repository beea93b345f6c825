"""The suspect rule (``canary.live.rule``), pure: the exact test, the detectors' minimums,
the peers' share, the streak, the share cap and the floor of demotion."""

from __future__ import annotations

import math

import pytest

from canary.live.rule import RuleSettings, Streak, Tally, demotable, exact_excess_p, suspects_find

RULE = RuleSettings()
CHECK = "prefix.leading_garbage"


def window(**per_tag: tuple[int, int]) -> dict[str, dict[str, Tally]]:
    return {tag.replace("_", "/"): {CHECK: Tally(n, f)} for tag, (n, f) in per_tag.items()}


def test_the_exact_test_matches_fishers_hypergeometric_tail():
    # 3 of 3 failed here, 0 of 3 among the peers: one table of C(6, 3) = 20 is this extreme.
    assert exact_excess_p(Tally(3, 3), Tally(3, 0)) == pytest.approx(1 / 20)
    # 2 of 3 against 1 of 3: tables with >= 2 failures here: (C(3,2)C(3,1) + C(3,3)C(3,0)) / C(6,3).
    assert exact_excess_p(Tally(3, 2), Tally(3, 1)) == pytest.approx((3 * 3 + 1) / 20)
    assert exact_excess_p(Tally(0, 0), Tally(10, 1)) == 1.0
    assert exact_excess_p(Tally(20, 0), Tally(100, 0)) == 1.0


def test_a_host_failing_every_reply_is_a_suspect_once_it_has_the_minimum_volume():
    counts = window(bad_fp8=(20, 20), a_fp8=(60, 0), b_fp8=(60, 1))
    [suspect] = suspects_find(counts, {}, RULE)
    assert (suspect.tag, suspect.check, suspect.kind) == ("bad/fp8", CHECK, "rate")
    assert suspect.p_value < RULE.alpha and "20/20" in suspect.reason
    assert suspects_find(window(bad_fp8=(19, 19), a_fp8=(60, 0), b_fp8=(60, 1)), {}, RULE) == []


def test_peers_that_fail_as_often_make_no_suspect():
    # The model (or the traffic) fails this check everywhere: not the host's fault.
    assert suspects_find(window(x_fp8=(40, 20), a_fp8=(60, 28), b_fp8=(60, 31)), {}, RULE) == []


def test_a_significant_but_tiny_excess_is_not_worth_a_round():
    counts = window(x_fp8=(20000, 200), a_fp8=(20000, 40), b_fp8=(20000, 40))  # 1 % against 0.2 %
    assert exact_excess_p(Tally(20000, 200), Tally(40000, 80)) < RULE.alpha
    assert suspects_find(counts, {}, RULE) == []


def test_the_rate_detector_needs_a_peer_with_volume():
    assert suspects_find(window(x_fp8=(40, 40), a_fp8=(19, 0)), {}, RULE) == []
    assert [s.tag for s in suspects_find(window(x_fp8=(40, 40), a_fp8=(20, 0)), {}, RULE)] == ["x/fp8"]
    assert suspects_find(window(x_fp8=(40, 40), a_fp8=(60, 0)), {}, RuleSettings(min_peers=2)) == []


def test_consecutive_commit_point_failures_make_a_suspect_unless_the_peers_fail_the_same_check():
    counts = window(x_fp8=(5, 5), a_fp8=(60, 0), b_fp8=(60, 0))
    [suspect] = suspects_find(counts, {"x/fp8": Streak(5, CHECK)}, RULE)
    assert (suspect.kind, suspect.streak) == ("consecutive", 5)
    assert suspects_find(counts, {"x/fp8": Streak(4, CHECK)}, RULE) == []
    failing = window(x_fp8=(5, 5), a_fp8=(60, 30), b_fp8=(60, 30))
    assert suspects_find(failing, {"x/fp8": Streak(9, CHECK)}, RULE) == []


def test_at_most_half_the_endpoints_are_suspects_worst_evidence_first():
    counts = window(x_fp8=(30, 30), y_fp8=(25, 20), z_fp8=(25, 25), a_fp8=(200, 0))
    found = suspects_find(counts, {}, RULE)
    assert [s.tag for s in found] == ["x/fp8", "z/fp8"]  # 2 of 4; y's evidence is the weakest
    assert found[0].p_value <= found[1].p_value


def test_demotion_never_leaves_fewer_than_the_floor_preferred():
    assert demotable(["x", "y"], ["x", "y", "a", "b"], 2) == ["x", "y"]
    assert demotable(["x", "y"], ["x", "y", "a"], 2) == ["x"]
    assert demotable(["x"], ["x", "a"], 2) == []


@pytest.mark.parametrize("field,value", [("alpha", 0), ("alpha", 1.5), ("min_volume", -1), ("max_share", 2.0)])
def test_bad_settings_are_refused_naming_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        RuleSettings(**{field: value})


def test_a_tally_with_more_failures_than_replies_is_refused():
    with pytest.raises(ValueError, match="failed <= n"):
        Tally(3, 4)


def test_the_declared_alpha_bounds_a_healthy_fleets_p_values():
    # Under equal rates the exact test is conservative: P(p <= alpha) <= alpha. Summed
    # exactly over every outcome of 40 replies against 400 at a 5 % rate.
    n, m, rate, alpha = 40, 400, 0.05, 0.01
    total = 0.0
    for k in range(n + 1):
        pk = math.comb(n, k) * rate**k * (1 - rate) ** (n - k)
        for j in range(m + 1):
            pj = math.comb(m, j) * rate**j * (1 - rate) ** (m - j)
            if pk * pj < 1e-12:
                continue
            if exact_excess_p(Tally(n, k), Tally(m, j)) <= alpha:
                total += pk * pj
    assert total <= alpha
