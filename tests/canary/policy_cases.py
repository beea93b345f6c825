"""Shared cases of the suspension-policy tests: explicit UTC times, rounds 30 minutes
apart, and one-endpoint helpers (``NO_FLOOR`` keeps the capacity floor out of play)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from canary.policy import (
    EndpointState,
    PolicyDecision,
    PolicySettings,
    RoundInput,
    policy_replay,
)

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ROUND = timedelta(minutes=30)
DAY = timedelta(days=1)
TAG = "borealis/fp8"
NO_FLOOR = PolicySettings(floor=0)
DEFAULTS = PolicySettings()


def at(n: int) -> datetime:
    """Time of the n-th round after T0."""
    return T0 + n * ROUND


def solo(
    outcomes: Sequence[str],
    *,
    mode: str = "enforce",
    settings: PolicySettings = NO_FLOOR,
    initial: EndpointState | None = None,
) -> list[PolicyDecision]:
    """Replay one endpoint's outcomes at T0, T0+30m, ...; its decision per round."""
    history = [(at(i), [RoundInput(TAG, outcome)]) for i, outcome in enumerate(outcomes)]
    start = {TAG: initial} if initial else None
    return [decisions[0] for _, decisions in policy_replay(history, mode, settings, start)]


def solo_at(
    rounds: Sequence[tuple[datetime, str]], *, settings: PolicySettings = NO_FLOOR
) -> list[PolicyDecision]:
    """Replay one endpoint's (time, outcome) rounds in enforce mode."""
    history = [(moment, [RoundInput(TAG, outcome)]) for moment, outcome in rounds]
    return [decisions[0] for _, decisions in policy_replay(history, "enforce", settings)]


def by_tag(decisions: Sequence[PolicyDecision]) -> dict[str, PolicyDecision]:
    return {decision.tag: decision for decision in decisions}

def fleet_round(moment: datetime, **outcomes: str) -> tuple[datetime, list[RoundInput]]:
    """One round of a fleet whose endpoint tags are ``<name>/fp8``."""
    return moment, [RoundInput(f"{name}/fp8", outcome) for name, outcome in outcomes.items()]
