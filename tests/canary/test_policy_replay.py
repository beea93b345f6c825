"""The suspension policy over weeks (replay) and the validation of its inputs and
settings (issue "Route quarantine"); the rule-by-rule cases are in ``test_policy.py``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from canary.policy import (
    EndpointState,
    PolicyDecision,
    PolicySettings,
    RoundInput,
    policy_apply,
    policy_replay,
    suspension_duration,
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
)

# --- replay --------------------------------------------------------------------------------

START = datetime(2026, 3, 2, 0, 0, tzinfo=UTC)
FLEET = ("borealis/fp8", "dynamo/bf16", "kestrel/fp8", "lumen/int8")


def moment(day: int, hour: int, minute: int = 0) -> datetime:
    return START + timedelta(days=day, hours=hour, minutes=minute)


def borealis_outcome(when: datetime) -> str:
    """A scripted month: two bad spells, a transport outage, a third bad spell later."""
    if moment(0, 9) <= when < moment(3, 12):
        return "fail"
    if moment(5, 0) <= when < moment(7, 0):
        return "frozen"  # outage: suspends nothing
    if moment(10, 9) <= when < moment(12, 0):
        return "fail"
    if moment(12, 0) <= when < moment(17, 12):
        return "frozen"  # no evidence: no early restore either
    if moment(31, 9) <= when < moment(32, 0):
        return "fail"
    return "clean"


def five_weeks() -> list[tuple[datetime, list[RoundInput]]]:
    history = []
    for index in range(35 * 48):
        when = START + index * ROUND
        history.append(
            (
                when,
                [
                    RoundInput("borealis/fp8", borealis_outcome(when), severity=2),
                    RoundInput("dynamo/bf16", "clean"),
                    RoundInput("kestrel/fp8", "frozen" if index % 7 == 3 else "clean"),
                    RoundInput("lumen/int8", "inconclusive" if index % 5 == 0 else "clean"),
                ],
            )
        )
    return history


def timeline(
    replayed: list[tuple[datetime, list[PolicyDecision]]],
) -> list[tuple[datetime, str, str, datetime | None]]:
    return [
        (when, d.tag, d.action, d.suspended_until)
        for when, decisions in replayed
        for d in decisions
        if d.action != "none"
    ]


EXPECTED_MONTH = [
    (moment(0, 9, 30), "borealis/fp8", "suspended", moment(1, 9, 30)),
    (moment(1, 9, 30), "borealis/fp8", "expired", None),
    (moment(1, 10), "borealis/fp8", "suspended", moment(4, 10)),  # 3 days
    (moment(3, 12, 30), "borealis/fp8", "restored", None),
    (moment(10, 9, 30), "borealis/fp8", "suspended", moment(17, 9, 30)),  # 7 days
    (moment(17, 9, 30), "borealis/fp8", "expired", None),
    (moment(31, 9, 30), "borealis/fp8", "suspended", moment(32, 9, 30)),  # decayed: 1 day
    (moment(32, 0, 30), "borealis/fp8", "restored", None),
]


def test_replay_over_weeks() -> None:
    replayed = policy_replay(five_weeks(), "enforce", DEFAULTS)

    assert len(replayed) == 35 * 48
    assert all(len(decisions) == len(FLEET) for _, decisions in replayed)
    assert timeline(replayed) == EXPECTED_MONTH
    final = by_tag(replayed[-1][1])["borealis/fp8"].state
    assert final == EndpointState(
        "borealis/fp8", suspension_level=1, last_suspended_at=moment(31, 9, 30)
    )


def test_observe_replay_mirrors_enforce_over_weeks() -> None:
    history = five_weeks()
    observed = policy_replay(history, "observe", DEFAULTS)
    enforced = policy_replay(history, "enforce", DEFAULTS)

    mirrored = [
        (when, tag, "suspended" if action == "would_suspend" else action, until)
        for when, tag, action, until in timeline(observed)
    ]
    assert mirrored == EXPECTED_MONTH
    assert {d.action for _, ds in observed for d in ds} == {
        "none",
        "would_suspend",
        "expired",
        "restored",
    }
    for (_, seen), (_, real) in zip(observed, enforced, strict=True):
        for shadow, decision in zip(seen, real, strict=True):
            assert shadow.state.suspended_until == decision.state.suspended_until
            assert shadow.streak == decision.streak


def test_replay_starts_from_initial_states_and_carries_unprobed_endpoints() -> None:
    initial = {
        "a/fp8": EndpointState(
            "a/fp8",
            suspended_until=T0 + ROUND,
            enforced=True,
            suspension_level=1,
            last_suspended_at=T0 - DAY,
        )
    }
    history = [
        fleet_round(T0, b="clean"),
        fleet_round(T0 + 2 * ROUND, b="clean"),
        fleet_round(T0 + 4 * ROUND, a="fail", b="clean"),
    ]
    replayed = policy_replay(history, "enforce", NO_FLOOR, initial)

    assert [[d.tag for d in decisions] for _, decisions in replayed] == [
        ["b/fp8"],
        ["b/fp8"],
        ["a/fp8", "b/fp8"],
    ]
    # a/fp8 was not probed for two rounds; its suspension ended meanwhile and is noticed
    # when it is next evaluated.
    a = replayed[2][1][0]
    assert (a.action, a.streak, a.suspended_until) == ("expired", 1, None)


def test_replay_rejects_unsorted_history() -> None:
    history = [fleet_round(at(1), a="clean"), fleet_round(at(0), a="clean")]

    with pytest.raises(ValueError, match="sorted by time"):
        policy_replay(history, "enforce", DEFAULTS)


def test_replay_rejects_two_rounds_in_the_same_slot() -> None:
    history = [fleet_round(at(0), a="clean"), fleet_round(at(0), a="fail")]

    with pytest.raises(ValueError, match="one round per slot"):
        policy_replay(history, "enforce", DEFAULTS)


# --- inputs and settings -----------------------------------------------------------------


def test_unknown_outcome_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown outcome 'error' for borealis/fp8"):
        RoundInput(TAG, "error")


def test_nan_severity_is_rejected() -> None:
    with pytest.raises(ValueError, match="NaN"):
        RoundInput(TAG, "fail", severity=float("nan"))


def test_naive_now_is_rejected() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        policy_apply(datetime(2026, 3, 2, 9, 0), "enforce", {}, [RoundInput(TAG, "fail")], DEFAULTS)


def test_unknown_mode_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown mode 'shadow'"):
        policy_apply(T0, "shadow", {}, [RoundInput(TAG, "fail")], DEFAULTS)


def test_a_tag_twice_in_one_round_is_rejected() -> None:
    with pytest.raises(ValueError, match="appears twice"):
        policy_apply(
            T0, "enforce", {}, [RoundInput(TAG, "fail"), RoundInput(TAG, "clean")], DEFAULTS
        )


def test_state_filed_under_another_tag_is_rejected() -> None:
    with pytest.raises(ValueError, match="holds the state of"):
        policy_apply(
            T0, "enforce", {TAG: EndpointState("dynamo/bf16")}, [RoundInput(TAG, "fail")], DEFAULTS
        )


def test_state_rejects_naive_suspension_end() -> None:
    with pytest.raises(ValueError, match="suspended_until must be a timezone-aware"):
        EndpointState(TAG, suspended_until=datetime(2026, 3, 2))


def test_default_settings_are_the_issue_numbers() -> None:
    assert DEFAULTS.fail_rounds_to_suspend == 2
    assert DEFAULTS.clean_rounds_to_restore == 2
    assert DEFAULTS.suspension_durations == (DAY, 3 * DAY, 7 * DAY)
    assert DEFAULTS.decay_after == 14 * DAY
    assert DEFAULTS.floor == 2


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"fail_rounds_to_suspend": 0}, "fail_rounds_to_suspend must be an integer >= 1"),
        ({"clean_rounds_to_restore": 0}, "clean_rounds_to_restore must be an integer >= 1"),
        ({"floor": -1}, "floor must be an integer >= 0"),
        ({"suspension_durations": ()}, "at least one duration"),
        (
            {"suspension_durations": (DAY, timedelta(0))},
            r"suspension_durations\[1\] must be a positive",
        ),
        ({"suspension_durations": (-DAY,)}, r"suspension_durations\[0\] must be a positive"),
        ({"decay_after": timedelta(0)}, "decay_after must be a positive timedelta"),
    ],
)
def test_settings_reject_bad_values(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        PolicySettings(**overrides)  # type: ignore[arg-type]


def test_settings_store_durations_as_a_tuple() -> None:
    settings = PolicySettings(suspension_durations=[DAY, 2 * DAY])  # type: ignore[arg-type]

    assert settings.suspension_durations == (DAY, 2 * DAY)


def test_suspension_duration_steps_then_repeats_the_last() -> None:
    assert [suspension_duration(level, DEFAULTS) for level in (1, 2, 3, 4, 9)] == [
        DAY,
        3 * DAY,
        7 * DAY,
        7 * DAY,
        7 * DAY,
    ]
    with pytest.raises(ValueError, match="level must be an integer >= 1"):
        suspension_duration(0, DEFAULTS)
