"""Bench: the suspect rule's false alarms on healthy fleets and its detection delay on a
bad host, by simulation of the gateway's live verdicts (pure; no services).

Method. A model with ``--endpoints`` endpoints; live traffic at ``--rps`` requests a
second, split over the endpoints by the shares a gateway gives them (the best-ranked
route takes ``--top-share``, the others share the rest). Each reply gets ``--checks``
verdicts; on a healthy endpoint each fails independently at ``--base-rate`` (the judges'
false-fail share on real text is of this order). Verdicts fall into 10-second buckets;
every 5 s the rule runs on the last 600 s (as ``canary-live-sweep`` does) with the
default ``RuleSettings``. The commit-point streak is counted as the gateway does.

Prints, for healthy fleets over ``--hours`` simulated hours per run: false suspects per
endpoint-hour (rate and consecutive detectors apart); then, for a bad endpoint failing
one check at each rate of ``--bad-rates``, the median seconds from the change to its
first suspicion over ``--runs`` runs.

Run: ``.venv/bin/python bench/suspect_rule.py``.
"""

from __future__ import annotations

import argparse
import random
import statistics
from collections import deque

from _setup import ROOT  # noqa: F401 - puts the project on the path

from canary.live.rule import RuleSettings, Streak, Tally, suspects_find

BUCKET_S = 10
SWEEP_S = 5


def simulate(rng: random.Random, a: argparse.Namespace, *, seconds: int, bad: str | None = None,
             bad_rate: float = 0.0) -> tuple[dict[str, int], float | None]:
    """Run one fleet for ``seconds``; returns ({detector: false suspects}, seconds to the
    bad endpoint's first suspicion or None)."""
    tags = [f"e{i}/fp8" for i in range(a.endpoints)]
    weights = [a.top_share] + [(1 - a.top_share) / (a.endpoints - 1)] * (a.endpoints - 1)
    checks = [f"prefix.c{i}" for i in range(a.checks)]
    rule = RuleSettings()
    buckets: deque[dict[str, dict[str, list[int]]]] = deque(maxlen=600 // BUCKET_S)
    current: dict[str, dict[str, list[int]]] = {}
    streaks = {t: Streak() for t in tags}
    alarms = {"rate": 0, "consecutive": 0}
    suspected: set[str] = set()
    first: float | None = None
    carry = 0.0
    for second in range(seconds):
        if second % BUCKET_S == 0:
            current = {}
            buckets.append(current)
        carry += a.rps
        n_now, carry = int(carry), carry - int(carry)
        for _ in range(n_now):
            tag = rng.choices(tags, weights)[0]
            failed_any = ""
            for check in checks:
                rate = bad_rate if (tag == bad and check == checks[0]) else a.base_rate
                fail = rng.random() < rate
                cell = current.setdefault(tag, {}).setdefault(check, [0, 0])
                cell[0] += 1
                cell[1] += fail
                if fail and not failed_any:
                    failed_any = check
            old = streaks[tag]
            streaks[tag] = Streak(old.count + 1, failed_any) if failed_any else Streak()
        if second % SWEEP_S == 0:
            counts: dict[str, dict[str, Tally]] = {}
            for b in buckets:
                for tag, per in b.items():
                    for check, (n, f) in per.items():
                        counts.setdefault(tag, {})[check] = counts.get(tag, {}).get(check, Tally()) + Tally(n, f)
            for s in suspects_find(counts, streaks, rule, endpoints=tags):
                if s.tag in suspected:
                    continue
                suspected.add(s.tag)
                if s.tag == bad:
                    first = first if first is not None else float(second)
                else:
                    alarms[s.kind] += 1
    return alarms, first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--endpoints", type=int, default=6)
    parser.add_argument("--rps", type=float, default=5.0)
    parser.add_argument("--top-share", type=float, default=0.8)
    parser.add_argument("--checks", type=int, default=8)
    parser.add_argument("--base-rate", type=float, default=0.005)
    parser.add_argument("--hours", type=float, default=2.0)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--bad-rates", default="1.0,0.5,0.2,0.1")
    parser.add_argument("--seed", type=int, default=31)
    a = parser.parse_args()
    rng = random.Random(a.seed)
    total = {"rate": 0, "consecutive": 0}
    seconds = int(a.hours * 3600)
    for _ in range(a.runs):
        alarms, _ = simulate(rng, a, seconds=seconds)
        for k, v in alarms.items():
            total[k] += v
    endpoint_hours = a.runs * a.hours * a.endpoints
    print(f"healthy: {a.runs} runs x {a.hours:g} h x {a.endpoints} endpoints at {a.rps:g} rps, {a.checks} checks, "
          f"base failure rate {a.base_rate:g}: false suspects {total['rate']} (rate) + {total['consecutive']} "
          f"(consecutive) in {endpoint_hours:g} endpoint-hours = "
          f"{(total['rate'] + total['consecutive']) / endpoint_hours:.4f} per endpoint-hour")
    for bad_rate in (float(x) for x in a.bad_rates.split(",")):
        delays = []
        for _ in range(a.runs):
            _, first = simulate(rng, a, seconds=900, bad="e0/fp8", bad_rate=bad_rate)
            delays.append(first if first is not None else float("inf"))
        found = [d for d in delays if d != float("inf")]
        print(f"bad endpoint (the top route) failing one check at {bad_rate:.0%}: suspected in {len(found)}/{a.runs} runs "
              f"within 900 s, median {statistics.median(delays):.0f} s")


if __name__ == "__main__":
    main()
