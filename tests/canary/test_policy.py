"""The suspension policy, rule by rule (issue "Route quarantine").

Every test passes explicit UTC times; rounds are 30 minutes apart unless a test says
otherwise. Single-endpoint tests use ``NO_FLOOR`` so that the rule under test is the only
one in play; the capacity floor has its own tests with the default floor of 2.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from canary.policy import (
    EndpointState,
    PolicySettings,
    RoundInput,
    enforced_suspensions,
    policy_apply,
    policy_replay,
)
from tests.canary.policy_cases import (
    DAY,
    DEFAULTS,
    NO_FLOOR,
    ROUND,
    T0,
    TAG,
    at,
    by_tag,
    fleet_round,
    solo,
    solo_at,
)

# --- failure streaks ------------------------------------------------------------------


def test_two_failed_rounds_suspend_the_endpoint() -> None:
    first, second = solo(["fail", "fail"])

    assert (first.action, first.streak, first.suspended_until) == ("none", 1, None)
    assert second.action == "suspended"
    assert second.streak == 2
    assert second.suspended_until == at(1) + DAY
    assert second.state.enforced is True
    assert second.state.suspension_level == 1
    assert second.state.last_suspended_at == at(1)
    assert "2 consecutive failed rounds (frozen rounds skipped)" in second.reason
    assert "1 day" in second.reason


def test_frozen_round_between_failures_keeps_the_streak() -> None:
    decisions = solo(["fail", "frozen", "fail"])

    assert [d.action for d in decisions] == ["none", "none", "suspended"]
    assert [d.streak for d in decisions] == [1, 1, 2]
    assert decisions[2].suspended_until == at(2) + DAY


def test_inconclusive_rounds_are_skipped_like_frozen_ones() -> None:
    decisions = solo(["fail", "inconclusive", "inconclusive", "fail"])

    assert [d.action for d in decisions] == ["none", "none", "none", "suspended"]
    assert [d.streak for d in decisions] == [1, 1, 1, 2]
    assert "no evidence either way" in decisions[1].reason


def test_frozen_rounds_alone_never_suspend() -> None:
    decisions = solo(["frozen"] * 6)

    assert {d.action for d in decisions} == {"none"}
    assert {d.streak for d in decisions} == {0}
    assert "transport errors are not quality failures" in decisions[0].reason


def test_clean_round_resets_the_failure_streak() -> None:
    decisions = solo(["fail", "clean", "fail", "fail"])

    assert [d.streak for d in decisions] == [1, 0, 1, 2]
    assert [d.action for d in decisions] == ["none", "none", "none", "suspended"]
    assert decisions[3].suspended_until == at(3) + DAY


def test_three_rounds_to_suspend_when_configured() -> None:
    decisions = solo(
        ["fail", "fail", "fail"], settings=PolicySettings(fail_rounds_to_suspend=3, floor=0)
    )

    assert [d.action for d in decisions] == ["none", "none", "suspended"]


# --- observe and enforce ----------------------------------------------------------------


def test_observe_mode_records_would_suspend_and_enforced_false() -> None:
    _, second = solo(["fail", "fail"], mode="observe")

    assert second.action == "would_suspend"
    assert second.suspended_until == at(1) + DAY
    assert second.state.enforced is False
    assert second.state.suspension_level == 1
    # The shadow never reaches routing: the canary layer of the ignore list stays empty.
    assert enforced_suspensions([second.state], at(1)) == []


def test_enforced_suspension_is_in_the_canary_layer_until_it_ends() -> None:
    _, second = solo(["fail", "fail"])

    assert enforced_suspensions([second.state], at(1)) == [TAG]
    assert enforced_suspensions([second.state], at(1) + DAY - timedelta(seconds=1)) == [TAG]
    assert enforced_suspensions([second.state], at(1) + DAY) == []


def test_observe_mode_restores_a_shadow_suspension_early() -> None:
    decisions = solo(["fail", "fail", "clean", "clean"], mode="observe")

    assert [d.action for d in decisions] == ["none", "would_suspend", "none", "restored"]
    assert decisions[3].suspended_until is None


def test_observe_mode_leaves_a_real_suspension_to_run_its_course() -> None:
    # A real suspension left over from an enforce period: lifting it would change routing.
    real = EndpointState(
        TAG, suspended_until=T0 + DAY, enforced=True, suspension_level=1, last_suspended_at=T0
    )
    observed = solo(["clean", "clean", "clean"], mode="observe", initial=real)

    assert [d.action for d in observed] == ["none", "none", "none"]
    assert observed[2].suspended_until == T0 + DAY
    assert observed[2].state.enforced is True
    assert observed[2].state.clean_streak == 3
    assert "observe mode leaves the real suspension in force" in observed[1].reason

    # Back in enforce mode, the clean run already earned restores on the next clean round.
    (back,) = policy_apply(
        at(3), "enforce", {TAG: observed[2].state}, [RoundInput(TAG, "clean")], NO_FLOOR
    )
    assert back.action == "restored"
    assert back.state.suspended_until is None


def test_shadow_suspension_is_made_real_by_the_next_failed_round_in_enforce_mode() -> None:
    shadow = EndpointState(
        TAG,
        fail_streak=2,
        suspended_until=T0 + timedelta(hours=6),
        enforced=False,
        suspension_level=1,
        last_suspended_at=T0 - 18 * ROUND,
    )
    (decision,) = policy_apply(T0, "enforce", {TAG: shadow}, [RoundInput(TAG, "fail")], NO_FLOOR)

    assert decision.action == "suspended"
    assert decision.streak == 3
    assert decision.suspended_until == T0 + DAY
    assert decision.state.enforced is True
    # Same episode as the shadow: no escalation step, decay window unchanged.
    assert decision.state.suspension_level == 1
    assert decision.state.last_suspended_at == T0 - 18 * ROUND
    assert "shadow suspension made real" in decision.reason


def test_later_decision_never_shortens_a_longer_suspension() -> None:
    # A 10-day shadow (recorded under longer settings) made real by a 1-day decision.
    shadow = EndpointState(
        TAG,
        fail_streak=2,
        suspended_until=T0 + 10 * DAY,
        enforced=False,
        suspension_level=1,
        last_suspended_at=T0 - ROUND,
    )
    (decision,) = policy_apply(T0, "enforce", {TAG: shadow}, [RoundInput(TAG, "fail")], NO_FLOOR)

    assert decision.action == "suspended"
    assert decision.suspended_until == T0 + 10 * DAY
    assert decision.state.enforced is True
    assert "never shortened" in decision.reason


def test_decay_waits_for_the_suspension_in_force_to_end() -> None:
    # A 20-day shadow outlives the 14-day decay window; made real on day 15 it is still
    # the same episode, at level 1, not a decayed level 0.
    long = PolicySettings(suspension_durations=(20 * DAY,), floor=0)
    shadow = EndpointState(
        TAG,
        fail_streak=2,
        suspended_until=T0 + 5 * DAY,
        enforced=False,
        suspension_level=1,
        last_suspended_at=T0 - 15 * DAY,
    )
    (decision,) = policy_apply(T0, "enforce", {TAG: shadow}, [RoundInput(TAG, "fail")], long)

    assert decision.action == "suspended"
    assert decision.state.suspension_level == 1
    assert decision.suspended_until == T0 + 20 * DAY


# --- capacity floor ----------------------------------------------------------------------



def test_floor_blocks_the_third_suspension_and_records_floor_blocked() -> None:
    history = [
        fleet_round(at(0), a="fail", b="clean", c="clean", d="clean"),
        fleet_round(at(1), a="fail", b="clean", c="clean", d="clean"),
        fleet_round(at(2), a="frozen", b="fail", c="clean", d="clean"),
        fleet_round(at(3), a="frozen", b="fail", c="clean", d="clean"),
        fleet_round(at(4), a="frozen", b="frozen", c="fail", d="clean"),
        fleet_round(at(5), a="frozen", b="frozen", c="fail", d="clean"),
        fleet_round(at(6), a="frozen", b="frozen", c="fail", d="clean"),
    ]
    replayed = [by_tag(decisions) for _, decisions in policy_replay(history, "enforce", DEFAULTS)]

    assert replayed[1]["a/fp8"].action == "suspended"
    assert replayed[3]["b/fp8"].action == "suspended"
    blocked = replayed[5]["c/fp8"]
    assert blocked.action == "floor_blocked"
    assert blocked.streak == 2
    assert blocked.suspended_until is None
    assert blocked.state.fail_streak == 2
    assert "would leave 1 endpoint(s) in production, below the floor of 2" in blocked.reason
    # The streak is kept, so the next failed round tries again (and is blocked again).
    assert replayed[6]["c/fp8"].action == "floor_blocked"
    assert replayed[6]["c/fp8"].streak == 3


def test_floor_blocked_endpoint_is_suspended_once_capacity_returns() -> None:
    states = {
        "a/fp8": EndpointState(
            "a/fp8",
            suspended_until=at(2),
            enforced=True,
            suspension_level=1,
            last_suspended_at=at(2) - DAY,
        ),
        "b/fp8": EndpointState(
            "b/fp8",
            suspended_until=at(0) + 5 * DAY,
            enforced=True,
            suspension_level=1,
            last_suspended_at=at(0) + 4 * DAY,
        ),
        "c/fp8": EndpointState("c/fp8", fail_streak=2),
    }
    history = [
        fleet_round(at(0), a="frozen", b="frozen", c="fail", d="clean"),
        fleet_round(at(2), a="frozen", b="frozen", c="fail", d="clean"),
    ]
    replayed = [
        by_tag(decisions) for _, decisions in policy_replay(history, "enforce", DEFAULTS, states)
    ]

    assert replayed[0]["c/fp8"].action == "floor_blocked"
    assert replayed[1]["a/fp8"].action == "expired"
    assert replayed[1]["c/fp8"].action == "suspended"
    assert replayed[1]["c/fp8"].streak == 4
    assert replayed[1]["c/fp8"].suspended_until == at(2) + DAY


def test_worst_evidence_is_suspended_first_when_only_one_may_go() -> None:
    states = {tag: EndpointState(tag, fail_streak=1) for tag in ("a/fp8", "b/fp8")}
    results = [
        RoundInput("a/fp8", "fail", severity=1),
        RoundInput("b/fp8", "fail", severity=3),
        RoundInput("c/fp8", "clean"),
    ]
    decisions = by_tag(policy_apply(T0, "enforce", states, results, DEFAULTS))

    assert decisions["b/fp8"].action == "suspended"
    assert decisions["a/fp8"].action == "floor_blocked"
    assert decisions["c/fp8"].action == "none"


def test_several_crossing_at_once_go_worst_first_until_the_floor() -> None:
    states = {tag: EndpointState(tag, fail_streak=1) for tag in ("a/fp8", "b/fp8", "c/fp8")}
    results = [
        RoundInput("a/fp8", "fail", severity=1),
        RoundInput("b/fp8", "fail", severity=2),
        RoundInput("c/fp8", "fail", severity=3),
        RoundInput("d/fp8", "clean"),
    ]
    decisions = policy_apply(T0, "enforce", states, results, DEFAULTS)

    # Four in production, floor 2: two may go, the two worst; output keeps input order.
    assert [(d.tag, d.action) for d in decisions] == [
        ("a/fp8", "floor_blocked"),
        ("b/fp8", "suspended"),
        ("c/fp8", "suspended"),
        ("d/fp8", "none"),
    ]


def test_longer_failure_streak_breaks_a_severity_tie() -> None:
    # The longer streak belongs to the later tag, so tag order alone would pick the other.
    states = {
        "zeta/fp8": EndpointState("zeta/fp8", fail_streak=3),
        "alpha/fp8": EndpointState("alpha/fp8", fail_streak=1),
    }
    results = [
        RoundInput("alpha/fp8", "fail", severity=2),
        RoundInput("zeta/fp8", "fail", severity=2),
        RoundInput("mid/bf16", "clean"),
    ]
    decisions = by_tag(policy_apply(T0, "enforce", states, results, DEFAULTS))

    assert (decisions["zeta/fp8"].action, decisions["zeta/fp8"].streak) == ("suspended", 4)
    assert (decisions["alpha/fp8"].action, decisions["alpha/fp8"].streak) == ("floor_blocked", 2)


def test_tag_order_breaks_a_full_tie() -> None:
    states = {tag: EndpointState(tag, fail_streak=1) for tag in ("zeta/fp8", "alpha/fp8")}
    results = [
        RoundInput("zeta/fp8", "fail", severity=2),
        RoundInput("alpha/fp8", "fail", severity=2),
        RoundInput("mid/bf16", "clean"),
    ]
    decisions = by_tag(policy_apply(T0, "enforce", states, results, DEFAULTS))

    assert decisions["alpha/fp8"].action == "suspended"
    assert decisions["zeta/fp8"].action == "floor_blocked"


def test_excluded_and_down_endpoints_do_not_count_toward_the_floor() -> None:
    states = {"a/fp8": EndpointState("a/fp8", fail_streak=1)}
    results = [
        RoundInput("a/fp8", "fail"),
        RoundInput("b/fp8", "clean"),
        RoundInput("c/fp8", "clean", excluded=True),
        RoundInput("d/fp8", "frozen", down=True),
    ]
    decisions = by_tag(policy_apply(T0, "enforce", states, results, DEFAULTS))

    assert decisions["a/fp8"].action == "floor_blocked"


def test_suspending_an_endpoint_already_out_of_production_costs_no_capacity() -> None:
    states = {"a/fp8": EndpointState("a/fp8", fail_streak=1)}
    results = [
        RoundInput("a/fp8", "fail", excluded=True),
        RoundInput("b/fp8", "clean"),
        RoundInput("c/fp8", "clean"),
    ]
    decisions = by_tag(policy_apply(T0, "enforce", states, results, DEFAULTS))

    assert decisions["a/fp8"].action == "suspended"


def test_endpoints_not_probed_this_round_do_not_count_as_capacity() -> None:
    states = {
        "a/fp8": EndpointState("a/fp8", fail_streak=1),
        "c/fp8": EndpointState("c/fp8"),
    }
    results = [RoundInput("a/fp8", "fail"), RoundInput("b/fp8", "clean")]
    decisions = policy_apply(T0, "enforce", states, results, DEFAULTS)

    assert [(d.tag, d.action) for d in decisions] == [("a/fp8", "floor_blocked"), ("b/fp8", "none")]


def test_observe_shadow_suspensions_count_against_the_floor() -> None:
    states = {
        "a/fp8": EndpointState(
            "a/fp8",
            suspended_until=T0 + DAY,
            enforced=False,
            suspension_level=1,
            last_suspended_at=T0 - ROUND,
        ),
        "b/fp8": EndpointState("b/fp8", fail_streak=1),
    }
    results = [
        RoundInput("a/fp8", "frozen"),
        RoundInput("b/fp8", "fail"),
        RoundInput("c/fp8", "clean"),
    ]
    decisions = by_tag(policy_apply(T0, "observe", states, results, DEFAULTS))

    assert decisions["b/fp8"].action == "floor_blocked"


def test_enforce_mode_counts_a_leftover_shadow_as_serving() -> None:
    # Same fleet as above, in enforce mode: routing never saw a's shadow, a still serves.
    states = {
        "a/fp8": EndpointState(
            "a/fp8",
            suspended_until=T0 + DAY,
            enforced=False,
            suspension_level=1,
            last_suspended_at=T0 - ROUND,
        ),
        "b/fp8": EndpointState("b/fp8", fail_streak=1),
    }
    results = [
        RoundInput("a/fp8", "frozen"),
        RoundInput("b/fp8", "fail"),
        RoundInput("c/fp8", "clean"),
    ]
    decisions = by_tag(policy_apply(T0, "enforce", states, results, DEFAULTS))

    assert decisions["b/fp8"].action == "suspended"
    assert decisions["a/fp8"].state.enforced is False


def test_zero_floor_lets_every_endpoint_go() -> None:
    states = {tag: EndpointState(tag, fail_streak=1) for tag in ("a/fp8", "b/fp8")}
    results = [RoundInput("a/fp8", "fail"), RoundInput("b/fp8", "fail")]
    decisions = policy_apply(T0, "enforce", states, results, NO_FLOOR)

    assert [d.action for d in decisions] == ["suspended", "suspended"]


# --- recovery ---------------------------------------------------------------------------


def test_two_clean_rounds_restore_early() -> None:
    decisions = solo(["fail", "fail", "clean", "clean"])

    waiting, restored = decisions[2], decisions[3]
    assert waiting.action == "none"
    assert waiting.suspended_until == at(1) + DAY
    assert waiting.state.clean_streak == 1
    assert restored.action == "restored"
    assert restored.suspended_until is None
    assert restored.streak == 0
    assert restored.state.clean_streak == 0
    assert restored.state.enforced is False
    assert "2 consecutive clean rounds" in restored.reason


def test_frozen_rounds_between_clean_rounds_do_not_break_the_restore_run() -> None:
    decisions = solo(["fail", "fail", "clean", "frozen", "inconclusive", "clean"])

    assert [d.action for d in decisions] == [
        "none",
        "suspended",
        "none",
        "none",
        "none",
        "restored",
    ]
    assert decisions[4].state.clean_streak == 1


def test_failed_round_resets_the_clean_run() -> None:
    decisions = solo(["fail", "fail", "clean", "fail", "clean", "clean"])

    assert [d.action for d in decisions] == [
        "none",
        "suspended",
        "none",
        "none",
        "none",
        "restored",
    ]
    assert [d.state.clean_streak for d in decisions[2:5]] == [1, 0, 1]
    # While suspended, clean rounds still reset the failure streak and failures advance it.
    assert [d.streak for d in decisions] == [1, 2, 0, 1, 0, 0]


def test_failing_while_suspended_neither_resuspends_nor_escalates() -> None:
    decisions = solo(["fail"] * 6)

    assert [d.action for d in decisions] == ["none", "suspended", "none", "none", "none", "none"]
    assert {d.suspended_until for d in decisions[1:]} == {at(1) + DAY}
    assert {d.state.suspension_level for d in decisions[1:]} == {1}
    assert [d.streak for d in decisions] == [1, 2, 3, 4, 5, 6]


def test_restore_keeps_the_escalation_level() -> None:
    decisions = solo(["fail", "fail", "clean", "clean", "fail", "fail"])

    assert decisions[3].state.suspension_level == 1
    assert decisions[5].action == "suspended"
    assert decisions[5].state.suspension_level == 2
    assert decisions[5].suspended_until == at(5) + 3 * DAY


# --- escalation, decay, expiry ------------------------------------------------------------


def test_escalation_1_3_7_days() -> None:
    rounds: list[tuple[datetime, str]] = []
    moment = T0
    for duration in (DAY, 3 * DAY, 7 * DAY, 7 * DAY):
        # Two failed rounds suspend; the next failure comes at the moment it expires.
        rounds += [(moment, "fail"), (moment + ROUND, "fail")]
        moment = moment + ROUND + duration
    rounds.append((moment, "fail"))
    decisions = solo_at(rounds)

    suspended = [
        (moment, d)
        for (moment, _), d in zip(rounds, decisions, strict=True)
        if d.action == "suspended"
    ]
    assert [d.suspended_until - moment for moment, d in suspended if d.suspended_until] == [
        DAY,
        3 * DAY,
        7 * DAY,
        7 * DAY,
    ]
    assert [d.state.suspension_level for _, d in suspended] == [1, 2, 3, 4]
    # Each expiry returns the endpoint with a fresh streak: its failure then counts as 1.
    expired = [d for d in decisions if d.action == "expired"]
    assert [d.streak for d in expired] == [1, 1, 1, 1]


def test_history_decays_after_14_quiet_days() -> None:
    decisions = solo_at(
        [
            (T0, "fail"),
            (T0 + ROUND, "fail"),  # suspension 1 decided at T0+30m
            (T0 + 14 * DAY, "fail"),
            (T0 + 14 * DAY + ROUND, "fail"),  # exactly 14 days later
        ]
    )

    assert decisions[3].action == "suspended"
    assert decisions[3].state.suspension_level == 1
    assert decisions[3].suspended_until == T0 + 14 * DAY + ROUND + DAY


def test_history_does_not_decay_before_14_days() -> None:
    decisions = solo_at(
        [
            (T0, "fail"),
            (T0 + ROUND, "fail"),  # suspension 1 decided at T0+30m
            (T0 + 13 * DAY + ROUND, "fail"),
            (T0 + 14 * DAY, "fail"),  # 13 days 23.5 hours later
        ]
    )

    assert decisions[3].action == "suspended"
    assert decisions[3].state.suspension_level == 2
    assert decisions[3].suspended_until == T0 + 14 * DAY + 3 * DAY


def test_suspension_expires_and_returns_with_fresh_streak() -> None:
    decisions = solo_at(
        [
            (at(0), "fail"),
            (at(1), "fail"),  # suspended until at(1) + 1 day
            (at(2), "fail"),
            (at(3), "fail"),
            (at(1) + DAY, "frozen"),  # suspended_until <= now: ended
            (at(1) + DAY + ROUND, "fail"),
        ]
    )

    assert decisions[3].streak == 4
    expired = decisions[4]
    assert expired.action == "expired"
    assert expired.streak == 0
    assert expired.suspended_until is None
    assert expired.state == EndpointState(TAG, suspension_level=1, last_suspended_at=at(1))
    # A fresh streak: one failure after the return does not suspend again.
    assert (decisions[5].action, decisions[5].streak) == ("none", 1)


def test_suspension_is_still_in_force_one_minute_before_its_end() -> None:
    decisions = solo_at(
        [
            (at(0), "fail"),
            (at(1), "fail"),
            (at(1) + DAY - timedelta(minutes=1), "frozen"),
        ]
    )

    assert decisions[2].action == "none"
    assert decisions[2].suspended_until == at(1) + DAY
    assert decisions[2].streak == 2


def test_expiry_and_a_new_suspension_in_the_same_round_records_the_suspension() -> None:
    one_round = PolicySettings(fail_rounds_to_suspend=1, floor=0)
    decisions = solo_at([(T0, "fail"), (T0 + DAY, "fail")], settings=one_round)

    assert decisions[1].action == "suspended"
    assert decisions[1].suspended_until == T0 + DAY + 3 * DAY
    assert "suspension ended at 2026-03-03T09:00+00:00" in decisions[1].reason
