"""Per-check baselines: the healthy failure rate of a model's check, the decision derived
from it, and the false-suspension rate that decision declares (docs/baselines.md).

Pure module: counts in, numbers out; no Django, no clock. The service that reads history
is ``canary.services.baselines``; the round judgement applies ``check_decision``.

The rule. A check's failure on one endpoint in one round stands (stays ``fail``) when it
is improbable under the model's baseline ``p0`` for that check: with ``k`` failures in
the endpoint's last ``n`` judged samples of the check (this round included), the
binomial upper tail ``P(X >= k | n, p0) <= alpha``. A failure that is not improbable is
the model's habit, not the host's: it becomes ``inconclusive``. Until the baseline has
``min_volume`` judged samples the fixed rule stands (every failure counts), which is the
same test with ``p0`` at or below ``alpha`` and a window of one round.

Sources (in our words, docs/baselines.md): a one-sided exact binomial test of an observed
count against a reference rate; Wald's sequential tests for deciding with as few samples
as the evidence allows; Kayenta's canary analysis, which judges a canary against a
baseline fleet measured in the same window rather than against a fixed threshold.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

ROUNDS_PER_YEAR_AT_30_MIN = 365 * 48


@dataclass(frozen=True)
class BaselineSettings:
    """The declared numbers of the rule, all overridable from settings.

    - ``alpha`` (probability, 0 < alpha < 1, default 0.01): the tail probability under
      the baseline below which a failure stands.
    - ``endpoint_window`` (samples, >= 1, default 8): how many of the endpoint's latest
      judged samples of the check the tail counts (this round's included).
    - ``min_volume`` (samples, >= 1, default 30): judged samples the model needs before
      its baseline replaces the fixed rule.
    - ``history_rounds`` (rounds, >= 1, default 48: one day at 30 minutes): the trailing
      window the baseline is measured over.

    Raises ValueError naming the bad field.
    """

    alpha: float = 0.01
    endpoint_window: int = 8
    min_volume: int = 30
    history_rounds: int = 48

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must lie strictly between 0 and 1, got {self.alpha!r}")
        for name in ("endpoint_window", "min_volume", "history_rounds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


@dataclass(frozen=True)
class Baseline:
    """A model's healthy failure rate for one check.

    ``failures`` and ``trials`` (judged samples: pass or fail) over the trailing window,
    excluding suspended endpoints, positive controls and frozen probes; ``rate`` =
    failures / trials (0.0 with no trials); ``established`` when ``trials >=
    min_volume``.
    """

    kind: str
    failures: int
    trials: int
    established: bool

    @property
    def rate(self) -> float:
        return self.failures / self.trials if self.trials else 0.0


@dataclass(frozen=True)
class CheckDecision:
    """What the rule says about one endpoint's failure of one check in one round.

    ``stands``: the failure counts; ``p_value``: ``P(X >= failures | samples, rate)``
    (None under the fixed rule); ``threshold``: the fewest failures in ``samples`` that
    would stand; ``reason``: one sentence naming the check, the rate and the baseline.
    """

    kind: str
    stands: bool
    failures: int
    samples: int
    rate: float
    p_value: float | None
    threshold: int
    alpha: float
    reason: str


def binomial_tail(k: int, n: int, p: float) -> float:
    """``P(X >= k)`` for X ~ Binomial(n, p), exact. ``k <= 0`` gives 1.0, ``k > n`` 0.0.

    Raises ValueError for n < 0 or p outside [0, 1].
    """
    if n < 0 or not 0.0 <= p <= 1.0:
        raise ValueError(f"need n >= 0 and 0 <= p <= 1, got n={n!r}, p={p!r}")
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    return min(1.0, math.fsum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1)))


def threshold(n: int, p0: float, alpha: float) -> int:
    """The fewest failures in ``n`` samples whose tail under ``p0`` is ``<= alpha``
    (``n + 1`` when even ``n`` of ``n`` is not improbable)."""
    for k in range(0, n + 1):
        if binomial_tail(k, n, p0) <= alpha:
            return max(k, 1)
    return n + 1


def check_decision(kind: str, window: Sequence[bool], baseline: Baseline, settings: BaselineSettings) -> CheckDecision:
    """Decide whether this round's failure of ``kind`` stands.

    ``window``: the endpoint's latest judged samples of the check, oldest first, True =
    failed, this round's failure last (so ``window[-1]`` is True); only the last
    ``settings.endpoint_window`` are read. Raises ValueError on an empty window.
    """
    if not window:
        raise ValueError("window must hold at least this round's sample")
    recent = list(window)[-settings.endpoint_window :]
    k, n, p0 = sum(recent), len(recent), baseline.rate
    if not baseline.established:
        return CheckDecision(
            kind, True, k, n, p0, None, 1, settings.alpha,
            f"{kind}: fixed rule (the model's baseline has {baseline.trials} of "
            f"{settings.min_volume} samples needed): every failure counts",
        )
    p = binomial_tail(k, n, p0)
    needed = threshold(n, p0, settings.alpha)
    share = f"{k} of the last {n} samples failed"
    base = f"the model's baseline is {p0:.1%} over {baseline.trials} samples"
    if p <= settings.alpha:
        return CheckDecision(
            kind, True, k, n, p0, p, needed, settings.alpha,
            f"{kind}: {share}; {base}: P = {p:.2g} <= alpha {settings.alpha:g}, the failure stands",
        )
    return CheckDecision(
        kind, False, k, n, p0, p, needed, settings.alpha,
        f"{kind}: {share}; {base}: P = {p:.2g} > alpha {settings.alpha:g} "
        f"({needed} of {n} needed), within the model's habit",
    )


@lru_cache(maxsize=256)
def _round_fail_table(window: int, p0: float, alpha: float) -> tuple[bool, ...]:
    """For each window bitmask whose newest bit (bit 0) is a failure: does it stand?"""
    return tuple(bool(mask & 1) and binomial_tail(bin(mask).count("1"), window, p0) <= alpha for mask in range(1 << window))


@lru_cache(maxsize=1024)
def false_suspensions_per_endpoint_year(
    p0: float,
    settings: BaselineSettings,
    fail_rounds_to_suspend: int,
    *,
    rounds_per_year: int = ROUNDS_PER_YEAR_AT_30_MIN,
    established: bool = True,
) -> float:
    """Expected suspensions a year of one healthy endpoint from one check alone.

    The endpoint fails the check with probability ``p0`` in each round, independently (one
    sample a round). Exact for that model: a Markov chain over the endpoint's last
    ``endpoint_window`` samples and its failure streak, run to its stationary
    distribution; a suspension resets the streak (the suspended day is not subtracted,
    so the figure errs high). ``established=False`` gives the fixed rule's figure
    (every failure counts). Cached (about a second for a window of 10): scrapes ask for
    the same few rates again and again. Raises ValueError on p0 outside [0, 1].
    """
    if not 0.0 <= p0 <= 1.0:
        raise ValueError(f"p0 must lie in [0, 1], got {p0!r}")
    need = fail_rounds_to_suspend
    if not established:
        # The fixed rule: the streak alone is the state.
        streaks = [1.0] + [0.0] * (need - 1)
        rates: list[float] = []
        for _ in range(_ITERATIONS):
            nxt_streaks = [0.0] * need
            rate = streaks[need - 1] * p0
            nxt_streaks[0] += sum(streaks) * (1 - p0) + rate
            for s in range(need - 1):
                nxt_streaks[s + 1] += streaks[s] * p0
            streaks = nxt_streaks
            rates.append(rate)
        return _settled(rates) * rounds_per_year
    w = settings.endpoint_window
    table = _round_fail_table(w, p0, settings.alpha)
    full = (1 << w) - 1
    # state = (mask, streak); start from an all-pass window.
    dist: dict[tuple[int, int], float] = {(0, 0): 1.0}
    rates = []
    for _ in range(_ITERATIONS):
        nxt: dict[tuple[int, int], float] = {}
        per_round = 0.0
        for (mask, streak), prob in dist.items():
            if prob < 1e-15:
                continue
            for bit, q in ((1, p0), (0, 1 - p0)):
                if q == 0:
                    continue
                new_mask = ((mask << 1) | bit) & full
                if table[new_mask]:
                    new_streak = streak + 1
                    if new_streak >= need:
                        per_round += prob * q
                        new_streak = 0
                else:
                    new_streak = 0
                key = (new_mask, new_streak)
                nxt[key] = nxt.get(key, 0.0) + prob * q
        dist = nxt
        rates.append(per_round)
    return _settled(rates) * rounds_per_year


# Rounds the chains are run for: the window chain forgets its start after `window` rounds
# and the streak after a few more; 400 leaves the figure settled to many digits.
_ITERATIONS = 400


def _settled(rates: list[float]) -> float:
    """The mean per-round rate over the second half of the run: a chain that never
    forgets its parity (a host that always fails alternates streak 0 and 1) has no limit,
    but its time average is the rate."""
    tail = rates[len(rates) // 2 :]
    return math.fsum(tail) / len(tail)


__all__ = [
    "Baseline",
    "BaselineSettings",
    "CheckDecision",
    "binomial_tail",
    "check_decision",
    "false_suspensions_per_endpoint_year",
    "threshold",
]
