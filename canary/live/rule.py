"""The suspect rule: which endpoints live traffic says are worse than their peers. Pure.

No Django, no I/O, no clock: the window's counts are arguments, the suspects the result.
The rule and its public sources (Envoy's outlier detection: the success-rate and the
consecutive-failure detectors, their minimum hosts and requests, the maximum ejection
share) are described in docs/live-evidence.md.

Two detectors, per model, over one sliding window of the gateway's check verdicts:

- **rate**: an endpoint's failure share on one check against the pooled share of its
  peers (the model's other endpoints) on the same check in the same window, by a
  one-sided exact two-proportion test (Fisher's, the hypergeometric tail), at the
  declared false-alarm rate ``alpha`` per (endpoint, check, window), and only with at
  least ``min_volume`` judged replies on the endpoint, ``min_peer_volume`` on its
  peers from at least ``min_peers`` peer endpoints (one is enough for the pooled test;
  a gateway sends most traffic to its best route, so often only the fallback has
  volume), and a failure share at least ``min_excess``
  above the peers' (a significant but tiny difference is not worth a round);
- **consecutive**: ``consecutive`` commit-point failures in a row on the endpoint
  (nothing passed between), unless its peers fail the same check at least
  ``consecutive_peer_max`` of the time in the window (then it is the model, or the
  traffic, not the host).

A suspect is never a suspension: it asks the canary for a confirmation round.
At most ``max_share`` of a model's endpoints (at least one) are suspects at once, worst
evidence first, and demotion (``demotable``) never leaves fewer than ``floor``
endpoints preferred.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Tally:
    """Judged replies (``n``) and how many failed (``failed``) on one check, ``0 <= failed <= n``."""

    n: int = 0
    failed: int = 0

    def __post_init__(self) -> None:
        if self.n < 0 or self.failed < 0 or self.failed > self.n:
            raise ValueError(f"a tally needs 0 <= failed <= n, got failed={self.failed}, n={self.n}")

    @property
    def rate(self) -> float:
        return self.failed / self.n if self.n else 0.0

    def __add__(self, other: Tally) -> Tally:
        return Tally(self.n + other.n, self.failed + other.failed)


@dataclass(frozen=True)
class Streak:
    """Commit-point failures in a row on one endpoint (``count``) and the check of the last one."""

    count: int = 0
    check: str = ""


@dataclass(frozen=True)
class RuleSettings:
    """The numbers of the suspect rule (docs/live-evidence.md), all overridable.

    ``alpha``: one-sided false-alarm rate per (endpoint, check, window) of the rate
    detector; ``min_volume``/``min_peer_volume``: judged replies; ``min_peers``:
    peer endpoints with judged replies; ``min_excess``: failure share above the peers'
    (0..1); ``consecutive``: commit-point failures in a row (0 disables);
    ``consecutive_peer_max``: peers' failure share on that check at or above which the
    streak is the model's, not the host's; ``max_share``: most of a model's endpoints
    suspected at once (0..1, at least one); ``floor``: endpoints always preferred.
    Raises ValueError naming a bad field.
    """

    alpha: float = 1e-6
    min_volume: int = 20
    min_peer_volume: int = 20
    min_peers: int = 1
    min_excess: float = 0.05
    consecutive: int = 5
    consecutive_peer_max: float = 0.2
    max_share: float = 0.5
    floor: int = 2

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha!r}")
        for name in ("min_volume", "min_peer_volume", "min_peers", "consecutive", "floor"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
        for name in ("min_excess", "consecutive_peer_max", "max_share"):
            value = getattr(self, name)
            if not 0 <= value <= 1:
                raise ValueError(f"{name} must be in [0, 1], got {value!r}")


@dataclass(frozen=True)
class Suspect:
    """One suspected endpoint and the evidence that made it one.

    ``kind``: "rate" or "consecutive"; ``check``: the failing check (e.g.
    ``prefix.leading_garbage``); ``tally``/``peers``: the endpoint's and its peers'
    judged replies on that check in the window; ``p_value``: the exact test's (1.0 for
    a streak); ``streak``: commit-point failures in a row; ``reason``: one line for a person.
    """

    tag: str
    check: str
    kind: str
    tally: Tally
    peers: Tally
    p_value: float
    streak: int
    reason: str
    extra: dict[str, float] = field(default_factory=dict)

    def strength(self) -> tuple[float, int, str]:
        """Sort key, worst evidence first: smaller p-value, longer streak, then tag."""
        return (self.p_value, -self.streak, self.tag)


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def exact_excess_p(mine: Tally, peers: Tally) -> float:
    """One-sided p-value that ``mine``'s failure share exceeds ``peers``' by chance
    (Fisher's exact test: the hypergeometric tail P(X >= mine.failed) with the margins
    fixed). 1.0 when either side has no replies. Exact at any volume, zeros included
    (the normal approximation is not, at the rare failure shares healthy hosts show)."""
    if mine.n == 0 or peers.n == 0:
        return 1.0
    total = mine.n + peers.n
    failures = mine.failed + peers.failed
    low = mine.failed
    high = min(mine.n, failures)
    if low > high:
        return 1.0
    denom = _log_comb(total, mine.n)
    terms = [_log_comb(failures, k) + _log_comb(total - failures, mine.n - k) - denom for k in range(low, high + 1)]
    top = max(terms)
    return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in terms))


def _rate_suspect(tag: str, check: str, mine: Tally, peers: Tally, peer_count: int, s: RuleSettings) -> Suspect | None:
    if mine.n < s.min_volume or peers.n < s.min_peer_volume or peer_count < s.min_peers:
        return None
    if mine.rate < peers.rate + s.min_excess:
        return None
    p = exact_excess_p(mine, peers)
    if p > s.alpha:
        return None
    return Suspect(
        tag=tag, check=check, kind="rate", tally=mine, peers=peers, p_value=p, streak=0,
        reason=(f"{check} failed {mine.failed}/{mine.n} ({mine.rate:.0%}) against its peers' "
                f"{peers.failed}/{peers.n} ({peers.rate:.1%}); exact one-sided p = {p:.1e} <= {s.alpha:g}"),
    )


def suspects_find(
    counts: Mapping[str, Mapping[str, Tally]],
    streaks: Mapping[str, Streak],
    settings: RuleSettings,
    *,
    endpoints: Sequence[str] | None = None,
) -> list[Suspect]:
    """The suspects of one model in one window, worst evidence first, one per endpoint.

    ``counts``: endpoint tag -> check -> ``Tally`` in the window; ``streaks``: endpoint
    tag -> its current commit-point failure ``Streak``; ``endpoints``: the model's
    endpoints (default: the tags of ``counts`` and ``streaks``), which set the
    ``max_share`` cap. An endpoint's peers are the model's other endpoints with judged
    replies on the same check. Raises ValueError for a bad tally (``Tally``).
    """
    tags = sorted(set(endpoints or ()) | set(counts) | set(streaks))
    found: dict[str, Suspect] = {}
    checks = sorted({check for per in counts.values() for check in per})
    for check in checks:
        for tag in tags:
            mine = counts.get(tag, {}).get(check, Tally())
            others = [per[check] for other, per in counts.items() if other != tag and check in per and per[check].n > 0]
            peers = sum(others, Tally())
            suspect = _rate_suspect(tag, check, mine, peers, len(others), settings)
            if suspect is not None and (tag not in found or suspect.strength() < found[tag].strength()):
                found[tag] = suspect
    if settings.consecutive > 0:
        for tag, streak in streaks.items():
            if streak.count < settings.consecutive or tag in found:
                continue
            peers = sum((per.get(streak.check, Tally()) for other, per in counts.items() if other != tag), Tally())
            if peers.n >= settings.min_peer_volume and peers.rate >= settings.consecutive_peer_max:
                continue
            found[tag] = Suspect(
                tag=tag, check=streak.check, kind="consecutive", tally=counts.get(tag, {}).get(streak.check, Tally()),
                peers=peers, p_value=1.0, streak=streak.count,
                reason=f"{streak.count} commit-point failures in a row (last: {streak.check}); peers fail it "
                       f"{peers.failed}/{peers.n}",
            )
    ranked = sorted(found.values(), key=Suspect.strength)
    cap = max(1, math.floor(settings.max_share * len(tags)))
    return ranked[:cap]


def demotable(suspects: Sequence[str], endpoints: Sequence[str], floor: int) -> list[str]:
    """Which ``suspects`` (tags, worst first) the gateway may prefer its peers over:
    as many as leave at least ``floor`` of ``endpoints`` (the model's endpoints in
    production) not demoted, worst first. Demotion only reorders routes: a demoted
    endpoint still serves when nothing else satisfies the contract."""
    room = max(0, len(set(endpoints)) - floor)
    return [tag for tag in suspects if tag in set(endpoints)][:room]
