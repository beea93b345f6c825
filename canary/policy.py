"""The suspension policy: which endpoints the canary takes out of routing, and for how long.

Pure module: no Django, no I/O, no clock. ``now``, the settings and the remembered state
are arguments and the result is a list of values, so the same function serves the live
round (``canary.services``) and a replay over stored history (``canary_replay``).

Every rule below comes from the issue "Route quarantine"; the docstrings name the rule
they implement so a reader can check one against the other.

Vocabulary: an *endpoint* is one provider's deployment of a model,
addressed by its tag ``slug/variant``; a *round* probes every endpoint of one model once
(every 30 minutes) and yields one *outcome* per endpoint:

- ``fail``: at least one confirmed quality failure;
- ``clean``: healthy, with positive evidence;
- ``frozen``: transport errors only (timeouts, 429, 5xx), no quality failure;
- ``inconclusive``: no evidence either way; treated exactly like ``frozen``.

Design in one paragraph: the policy runs identically in observe and enforce mode. In
enforce mode a suspension is real (``enforced=True``, the canary layer of the ignore
list carries it). In observe mode the same suspension is kept in state as a *shadow*
(``enforced=False``): the ignore list never includes it, but it counts against the
capacity floor, can be restored and expires exactly like a real one, so replaying
observe-mode history measures what enforce mode would have done.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Final

from canary.checks import require_aware
from canary.terms import Action, Mode, Outcome

OUTCOMES: Final = frozenset(Outcome)
MODES: Final = tuple(Mode)


def _require_count(name: str, value: int, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")


def _require_positive(name: str, value: timedelta) -> None:
    if not isinstance(value, timedelta) or value <= timedelta(0):
        raise ValueError(f"{name} must be a positive timedelta, got {value!r}")


@dataclass(frozen=True)
class PolicySettings:
    """The numbers of the "Route quarantine" rules, all overridable.

    - ``fail_rounds_to_suspend`` (rounds, >= 1, default 2): consecutive failed rounds
      that suspend an endpoint ("two consecutive failed rounds suspend").
    - ``clean_rounds_to_restore`` (rounds, >= 1, default 2): consecutive clean rounds
      that restore a suspended endpoint early.
    - ``suspension_durations`` (non-empty tuple of positive timedeltas, default
      1, 3, 7 days): the escalation scale; the n-th suspension in the escalation window
      lasts ``suspension_durations[n - 1]``, the last step repeats.
    - ``decay_after`` (positive timedelta, default 14 days): with no new suspension for
      this long, the escalation scale starts again at its first step.
    - ``floor`` (endpoints, >= 0, default 2): never leave fewer endpoints of a model in
      production; 0 disables the floor.

    Raises ValueError naming the bad field.
    """

    fail_rounds_to_suspend: int = 2
    clean_rounds_to_restore: int = 2
    suspension_durations: tuple[timedelta, ...] = (
        timedelta(days=1),
        timedelta(days=3),
        timedelta(days=7),
    )
    decay_after: timedelta = timedelta(days=14)
    floor: int = 2

    def __post_init__(self) -> None:
        _require_count("fail_rounds_to_suspend", self.fail_rounds_to_suspend, 1)
        _require_count("clean_rounds_to_restore", self.clean_rounds_to_restore, 1)
        _require_count("floor", self.floor, 0)
        # Accept any sequence (a list from a settings file) but store a tuple, so the
        # frozen settings stay hashable and cannot be mutated behind the policy's back.
        durations = tuple(self.suspension_durations)
        if not durations:
            raise ValueError("suspension_durations must list at least one duration")
        for index, duration in enumerate(durations):
            _require_positive(f"suspension_durations[{index}]", duration)
        object.__setattr__(self, "suspension_durations", durations)
        _require_positive("decay_after", self.decay_after)


@dataclass(frozen=True)
class EndpointState:
    """What the policy remembers about one endpoint between rounds.

    - ``fail_streak`` (rounds): consecutive failed rounds; frozen and inconclusive
      rounds are skipped, a clean round resets it to 0.
    - ``clean_streak`` (rounds): consecutive clean rounds while suspended (frozen and
      inconclusive rounds skipped, a failed round resets it); 0 when not suspended.
    - ``suspended_until`` (aware datetime or None): end of the suspension in force.
    - ``enforced``: True for a real suspension (carried by the ignore list); False with
      ``suspended_until`` set is an observe-mode shadow suspension.
    - ``suspension_level``: suspensions in the current escalation window (0 = none or
      decayed); picks the next duration.
    - ``last_suspended_at`` (aware datetime or None): when the latest suspension was
      decided; the decay window runs from it.

    Raises ValueError on negative counters or naive datetimes.
    """

    tag: str
    fail_streak: int = 0
    clean_streak: int = 0
    suspended_until: datetime | None = None
    enforced: bool = False
    suspension_level: int = 0
    last_suspended_at: datetime | None = None

    def __post_init__(self) -> None:
        if not self.tag:
            raise ValueError("EndpointState.tag must be a non-empty endpoint tag")
        _require_count("fail_streak", self.fail_streak, 0)
        _require_count("clean_streak", self.clean_streak, 0)
        _require_count("suspension_level", self.suspension_level, 0)
        if self.suspended_until is not None:
            require_aware("suspended_until", self.suspended_until)
        if self.last_suspended_at is not None:
            require_aware("last_suspended_at", self.last_suspended_at)


@dataclass(frozen=True)
class RoundInput:
    """One endpoint's result in one round.

    - ``outcome``: ``fail`` | ``clean`` | ``frozen`` | ``inconclusive``.
    - ``severity`` (unitless, higher = worse, e.g. number of failed checks): orders
      suspensions when the capacity floor lets only some go.
    - ``excluded``: excluded by the reviewed or incident layer; ``down``: known down.
      Either way the endpoint is not in production, so it does not count toward the
      floor and suspending it costs no capacity.

    Raises ValueError on an unknown outcome, an empty tag or a NaN severity.
    """

    tag: str
    outcome: str
    severity: float = 0.0
    excluded: bool = False
    down: bool = False

    def __post_init__(self) -> None:
        if not self.tag:
            raise ValueError("RoundInput.tag must be a non-empty endpoint tag")
        if self.outcome not in OUTCOMES:
            raise ValueError(
                f"unknown outcome {self.outcome!r} for {self.tag}; "
                f"expected one of {', '.join(sorted(OUTCOMES))}"
            )
        # NaN compares false with everything and would make the worst-first order
        # depend on input order; refuse it rather than sort it somewhere arbitrary.
        if math.isnan(self.severity):
            raise ValueError(f"severity of {self.tag} must be a number, got NaN")


@dataclass(frozen=True)
class PolicyDecision:
    """The policy's decision for one endpoint in one round (one audit row).

    - ``action``: ``suspended`` (enforce) | ``would_suspend`` (observe) |
      ``floor_blocked`` | ``restored`` | ``expired`` | ``none``.
    - ``streak`` (rounds): failure streak after this round.
    - ``suspended_until``: end of the suspension (real or shadow) in force after this
      round, None when there is none.
    - ``reason``: one readable sentence citing the rule that decided.
    - ``state``: the state to store for the next round.
    """

    tag: str
    action: str
    outcome: str
    streak: int
    suspended_until: datetime | None
    reason: str
    state: EndpointState


def suspension_duration(level: int, settings: PolicySettings) -> timedelta:
    """Length of the ``level``-th suspension in an escalation window (level >= 1).

    Rule "escalation": 1 day the first time, 3 days the second, 7 days the third and
    after (``settings.suspension_durations``; the last step repeats).
    Raises ValueError for level < 1.
    """
    _require_count("level", level, 1)
    steps = settings.suspension_durations
    return steps[min(level, len(steps)) - 1]


def enforced_suspensions(states: Iterable[EndpointState], now: datetime) -> list[str]:
    """Tags with a real (enforced) suspension in force at ``now``, sorted.

    This is the canary layer of the ignore list; shadow suspensions are left out by
    design (observe mode changes nothing routing sees). Raises ValueError on naive now.
    """
    require_aware("now", now)
    return sorted(
        state.tag
        for state in states
        if state.enforced and state.suspended_until is not None and state.suspended_until > now
    )


def _blocks_routing(state: EndpointState, mode: str) -> bool:
    """Does this state's suspension (already known to be in force) count as "out"?

    A real suspension is out in both modes. A shadow suspension is out in observe mode
    only: there it mirrors what enforce would have done, floor included; in enforce
    mode (left over from an observe period) routing does not see it, so the endpoint
    is still serving traffic.
    """
    return state.suspended_until is not None and (state.enforced or mode == Mode.OBSERVE)


def _returned(state: EndpointState) -> EndpointState:
    # Rule "escalation": when a suspension ends (expiry, early restore) the endpoint
    # returns with a fresh streak. The escalation history stays: only time decays it.
    return replace(state, fail_streak=0, clean_streak=0, suspended_until=None, enforced=False)


def _span(duration: timedelta) -> str:
    days, rest = divmod(duration, timedelta(days=1))
    if not rest:
        return f"{days} day" if days == 1 else f"{days} days"
    hours, rest = divmod(duration, timedelta(hours=1))
    if not rest:
        return f"{hours} hour" if hours == 1 else f"{hours} hours"
    return str(duration)


def _at(moment: datetime) -> str:
    return moment.isoformat(timespec="minutes")


def _rounds(count: int, kind: str) -> str:
    return f"{count} consecutive {kind} round{'' if count == 1 else 's'}"


def _join(first: str, then: str) -> str:
    """Two clauses of one reason sentence, the second one lower-cased at its start."""
    return f"{first}; {then[0].lower()}{then[1:]}" if then else first


def _why_skipped(outcome: str) -> str:
    if outcome == Outcome.FROZEN:
        return "transport errors are not quality failures"
    return "no evidence either way"


@dataclass
class _Step:
    """Scratch for one endpoint while a round is evaluated (never leaves this module)."""

    result: RoundInput
    state: EndpointState
    action: str
    reason: str
    candidate: bool = False  # reached the suspension threshold; the floor decides


def _advance(
    now: datetime, mode: str, prior: EndpointState, result: RoundInput, settings: PolicySettings
) -> _Step:
    """Apply expiry, decay and this round's outcome to one endpoint, before the floor."""
    state = prior
    ended = ""
    # Rule "expiry": a suspension whose end is <= now has ended before this round counts.
    if state.suspended_until is not None and state.suspended_until <= now:
        ended = f"Suspension ended at {_at(state.suspended_until)}; returns with a fresh streak"
        state = _returned(state)
    # Rule "escalation": after decay_after without a new suspension the scale restarts.
    # Only while no suspension is in force: a suspension in force is not a quiet period.
    if (
        state.suspended_until is None
        and state.suspension_level > 0
        and state.last_suspended_at is not None
        and now - state.last_suspended_at >= settings.decay_after
    ):
        state = replace(state, suspension_level=0)

    outcome = result.outcome
    need_fail = settings.fail_rounds_to_suspend
    need_clean = settings.clean_rounds_to_restore
    step = _Step(result=result, state=state, action=Action.NONE, reason="")

    if state.suspended_until is not None:
        until = _at(state.suspended_until)
        kind = "Suspended" if state.enforced else "Shadow-suspended"
        if outcome == Outcome.CLEAN:
            # Rule "recovery": consecutive clean rounds restore early; a clean round
            # also resets the failure streak, as it does outside a suspension.
            state = replace(state, fail_streak=0, clean_streak=state.clean_streak + 1)
            if state.clean_streak < need_clean:
                step.reason = (
                    f"{kind} until {until}; {state.clean_streak} of {need_clean} consecutive "
                    "clean rounds needed to restore early"
                )
            elif state.enforced and mode == Mode.OBSERVE:
                # Observe mode changes nothing routing sees, and lifting a real
                # suspension (left from an enforce period) would; it runs to its end.
                step.reason = (
                    f"{_rounds(state.clean_streak, Outcome.CLEAN)} would restore early, but observe "
                    f"mode leaves the real suspension in force until {until}"
                )
            else:
                step.action = Action.RESTORED
                step.reason = (
                    f"{_rounds(state.clean_streak, Outcome.CLEAN)} while suspended (frozen rounds "
                    "skipped): restored early with a fresh streak"
                )
                state = _returned(state)
        elif outcome == Outcome.FAIL:
            state = replace(state, fail_streak=state.fail_streak + 1, clean_streak=0)
            if mode == Mode.ENFORCE and not state.enforced and state.fail_streak >= need_fail:
                # A shadow suspension left by observe mode does not protect routing; a
                # failure run that reaches the threshold makes it real (same episode).
                step.candidate = True
            else:
                # Escalation counts suspensions, not failures: an endpoint that is
                # already out is not suspended again (its fresh return decides).
                step.reason = (
                    f"{kind} until {until}; a failed round resets the clean run (0 of {need_clean})"
                )
        else:
            step.reason = (
                f"{kind} until {until}; {outcome} round skipped, clean run stays at "
                f"{state.clean_streak} of {need_clean} ({_why_skipped(outcome)})"
            )
    elif outcome == Outcome.FAIL:
        state = replace(state, fail_streak=state.fail_streak + 1)
        if state.fail_streak >= need_fail:
            step.candidate = True
        else:
            step.reason = (
                f"Failure streak {state.fail_streak} of {need_fail} consecutive failed "
                "rounds needed to suspend"
            )
    elif outcome == Outcome.CLEAN:
        step.reason = "Clean round: failure streak reset to 0"
        state = replace(state, fail_streak=0)
    else:
        # Rule "frozen": transport errors are not quality failures; the round neither
        # advances nor resets the streak (inconclusive rounds are treated the same).
        step.reason = (
            f"{outcome.capitalize()} round: failure streak unchanged at {state.fail_streak} "
            f"({_why_skipped(outcome)})"
        )

    step.state = state
    if ended:
        # The suspension decided by this round (if any) leads; the floor may still block it.
        if step.action == Action.NONE and not step.candidate:
            step.action = Action.EXPIRED
        step.reason = _join(ended, step.reason)
    return step


def _in_production(step: _Step, mode: str) -> bool:
    """Not excluded by any layer, not down, not suspended (as counted in this mode)."""
    return not (step.result.excluded or step.result.down or _blocks_routing(step.state, mode))


def _suspend(now: datetime, mode: str, step: _Step, settings: PolicySettings) -> None:
    state = step.state
    if state.suspended_until is not None:
        # Promotion of an observe-mode shadow: the same episode, so no escalation step.
        level = state.suspension_level
        decided_at = state.last_suspended_at or now
    else:
        level = state.suspension_level + 1
        decided_at = now
    duration = suspension_duration(level, settings)
    until = now + duration
    span = f"for {_span(duration)}"
    # Rule "never shorten": a later decision keeps a longer suspension already recorded.
    if state.suspended_until is not None and state.suspended_until > until:
        until = state.suspended_until
        span = f"for longer than {_span(duration)} (a recorded suspension is never shortened)"
    enforced = mode == Mode.ENFORCE
    step.state = replace(
        state,
        suspended_until=until,
        enforced=enforced,
        suspension_level=level,
        last_suspended_at=decided_at,
    )
    step.action = Action.SUSPENDED if enforced else Action.WOULD_SUSPEND
    if state.suspended_until is not None:
        verb = "shadow suspension made real"
    elif enforced:
        verb = "suspended"
    else:
        verb = "would suspend (observe mode: shadow suspension)"
    step.reason = _join(
        f"{_rounds(settings.fail_rounds_to_suspend, 'failed')} (frozen rounds skipped): "
        f"{verb} {span}, suspension {level} in the escalation window, until {_at(until)}",
        step.reason,
    )


def policy_apply(
    now: datetime,
    mode: str,
    states: Mapping[str, EndpointState],
    results: Sequence[RoundInput],
    settings: PolicySettings,
    *,
    peers_in_production: int = 0,
) -> list[PolicyDecision]:
    """Decide one round of one model: one PolicyDecision per result, in input order.

    ``peers_in_production``: endpoints of the model not in ``results`` known to serve
    (a confirmation round probes one endpoint; its peers still count for the floor).

    ``now`` (aware datetime) is the round's time; ``mode`` is ``observe`` or
    ``enforce``; ``states`` maps tag -> EndpointState remembered from earlier rounds
    (a tag without state starts fresh); ``results`` holds one RoundInput per endpoint
    probed in this round, all of the same model (the floor is per model). Endpoints in
    ``states`` but not in ``results`` are unaffected and are not counted as capacity:
    the policy cannot vouch for an endpoint it did not probe.

    Rules (issue "Route quarantine"), in the order they apply:

    1. Expiry: a suspension with ``suspended_until <= now`` has ended; the endpoint
       returns with a fresh streak (action ``expired`` unless something else happens).
    2. Decay: ``decay_after`` without a new suspension resets the escalation level.
    3. Streaks: ``fail`` advances the failure streak, ``clean`` resets it to 0,
       ``frozen``/``inconclusive`` do neither. While suspended, ``clean`` advances the
       clean run, ``fail`` resets it, ``frozen``/``inconclusive`` do neither; a full
       clean run restores early (``restored``), except that observe mode leaves a
       real suspension (from an enforce period) to run to its end. An endpoint already
       out is not suspended again: escalation counts suspensions, not failures.
    4. Suspension: a failed round that brings the streak to ``fail_rounds_to_suspend``
       or more suspends for ``suspension_duration(level)`` (1, 3, 7 days), never
       shortening a longer suspension already recorded. In observe mode the same
       suspension is stored as a shadow (``enforced=False``, action ``would_suspend``).
       In enforce mode a shadow left by observe mode is not "out" (routing never saw
       it): a failure run reaching the threshold makes it real, at the same level.
    5. Capacity floor: suspensions that would leave fewer than ``floor`` endpoints in
       production are ``floor_blocked`` (streak kept; the next failed round tries
       again). Worst evidence goes first: higher severity, then longer failure streak,
       then tag ascending. Suspending an endpoint already out of production (excluded
       or down) costs no capacity and is never blocked.

    Raises ValueError on a naive ``now``, an unknown mode, a tag twice in ``results``,
    or a ``states`` key that differs from its state's tag.
    """
    require_aware("now", now)
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; expected 'observe' or 'enforce'")
    for key, known in states.items():
        if key != known.tag:
            raise ValueError(f"states[{key!r}] holds the state of {known.tag!r}")
    seen: set[str] = set()
    for result in results:
        if result.tag in seen:
            raise ValueError(f"{result.tag} appears twice in one round")
        seen.add(result.tag)

    steps = [
        _advance(
            now, mode, states.get(result.tag) or EndpointState(tag=result.tag), result, settings
        )
        for result in results
    ]

    # Capacity after this round's expiries and restores (they only add capacity back),
    # before any new suspension.
    in_production = sum(1 for step in steps if _in_production(step, mode)) + peers_in_production
    candidates = sorted(
        (step for step in steps if step.candidate),
        key=lambda step: (-step.result.severity, -step.state.fail_streak, step.result.tag),
    )
    for step in candidates:
        costs_capacity = _in_production(step, mode)
        if costs_capacity and in_production - 1 < settings.floor:
            step.action = Action.FLOOR_BLOCKED
            step.reason = _join(
                f"{_rounds(settings.fail_rounds_to_suspend, 'failed')} (frozen rounds "
                f"skipped), but suspending would leave {in_production - 1} endpoint(s) in "
                f"production, below the floor of {settings.floor}; streak kept at "
                f"{step.state.fail_streak} to suspend when capacity allows",
                step.reason,
            )
            continue
        _suspend(now, mode, step, settings)
        if costs_capacity:
            in_production -= 1

    return [
        PolicyDecision(
            tag=step.result.tag,
            action=step.action,
            outcome=step.result.outcome,
            streak=step.state.fail_streak,
            suspended_until=step.state.suspended_until,
            reason=step.reason,
            state=step.state,
        )
        for step in steps
    ]


def policy_replay(
    history: Sequence[tuple[datetime, Sequence[RoundInput]]],
    mode: str,
    settings: PolicySettings,
    initial: Mapping[str, EndpointState] | None = None,
) -> list[tuple[datetime, list[PolicyDecision]]]:
    """Run ``policy_apply`` over rounds in time order, threading the states through.

    ``history`` is ``[(round_time, results), ...]`` with strictly increasing aware
    times (one round per model per slot); ``initial`` is the state before the first
    round (default: every endpoint fresh). Returns ``[(round_time, decisions), ...]``.
    Used by ``canary_replay`` to count would-be suspensions before switching a model
    from observe to enforce. Raises ValueError on unsorted or repeated times, plus
    everything ``policy_apply`` raises.
    """
    states: dict[str, EndpointState] = dict(initial or {})
    replayed: list[tuple[datetime, list[PolicyDecision]]] = []
    previous: datetime | None = None
    for at, results in history:
        require_aware("round time", at)
        if previous is not None and at <= previous:
            raise ValueError(
                f"history must be sorted by time with one round per slot: "
                f"{_at(at)} comes after {_at(previous)}"
            )
        decisions = policy_apply(at, mode, states, results, settings)
        for decision in decisions:
            states[decision.tag] = decision.state
        replayed.append((at, decisions))
        previous = at
    return replayed
