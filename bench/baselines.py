"""Bench: per-check baselines (docs/baselines.md), side by side with the fixed rule.

1. The habit fleet of the issue "Verdicts whose error rate is known": ten hosts refusing
   15 % of the time and one 90 %, four observe rounds then eight enforce rounds, run once
   with the fixed rule (every failure counts: ``CANARY_BASELINE_MIN_VOLUME`` out of
   reach) and once with the baseline rule, per seed: which hosts were suspended.
2. The default fleet (``canary/fleets/default.json``): ``--rounds`` observe rounds, then
   the declared rates ``canary_baselines --json`` prints for it.

Real rounds (``round_run``) against the simulator over HTTP on a throwaway SQLite
database. Run: `.venv/bin/python bench/baselines.py [--seeds N] [--rounds N]`.
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import UTC, datetime, timedelta
from io import StringIO
from pathlib import Path

from _setup import django_on, simulator

django_on()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

from canary.models import Decision  # noqa: E402
from canary.services.rounds import round_run  # noqa: E402
from tests.verdicts.fleets import NAMES, endpoint, fleet  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
T0 = datetime(2026, 12, 1, tzinfo=UTC)
_slot = 0


def _at() -> datetime:
    global _slot
    _slot += 1
    return T0 + timedelta(minutes=30 * _slot)


def habit_run(seed: int, fixed: bool) -> list[str]:
    """Suspended tags after 4 observe and 8 enforce rounds of the habit fleet."""
    settings.CANARY_BASELINE_MIN_VOLUME = 10**9 if fixed else 30
    # A model of its own per run: decisions are audit rows, never deleted between runs.
    model = f"bench/habit-{seed}-{'fixed' if fixed else 'baseline'}"
    hosts = [endpoint(n, {"refusal": {"rate": 0.15, "style": "text"}}) for n in NAMES[:10]]
    hosts.append(endpoint(NAMES[10], {"refusal": {"rate": 0.9, "style": "text"}}))
    data = fleet(hosts, seed=seed)
    data["models"][0]["id"] = model
    proc, base = simulator(data)
    settings.OPENROUTER_BASE_URL = base
    try:
        for i in range(12):
            round_run(model, now=_at(), language="en", mode="observe" if i < 4 else "enforce")
    finally:
        proc.terminate()
        proc.wait(5)
    suspended = Decision.objects.filter(model_id=model, action="suspended")
    return sorted(set(suspended.values_list("endpoint__tag", flat=True)))


def default_fleet_declared(rounds: int) -> dict:
    settings.CANARY_BASELINE_MIN_VOLUME = 30
    data = json.loads((ROOT / "canary/fleets/default.json").read_text())
    model = data["models"][0]["id"]
    proc, base = simulator(data)
    settings.OPENROUTER_BASE_URL = base
    languages = ["en", "pt", "es", "fr", "de", "it"]
    try:
        for i in range(rounds):
            last = _at()
            round_run(model, now=last, language=languages[i % len(languages)], mode="observe")
    finally:
        proc.terminate()
        proc.wait(5)
    out = StringIO()
    call_command("canary_baselines", "--model", model, "--now", (last + timedelta(minutes=1)).isoformat(), "--json", stdout=out)
    return json.loads(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="habit fleets to run (seeds 1..N)")
    parser.add_argument("--rounds", type=int, default=12, help="observe rounds of the default fleet")
    args = parser.parse_args()
    settings.CANARY_TTFT_LIMIT_S = 3.0
    settings.CANARY_TOTAL_TIMEOUT_S = 10.0
    started = time.perf_counter()
    print("habit fleet (10 hosts at 15 %, kestrel/fp8 at 90 %): 4 observe + 8 enforce rounds")
    wrong = {"fixed": 0, "baseline": 0}
    for seed in range(1, args.seeds + 1):
        for name, fixed in (("fixed", True), ("baseline", False)):
            tags = habit_run(seed, fixed)
            wrong[name] += tags != ["kestrel/fp8"]
            print(f"  seed {seed} {name:<8} suspended: {', '.join(tags) or '-'}")
    print(f"  runs suspending anything but exactly kestrel: fixed {wrong['fixed']} of {args.seeds}, baseline {wrong['baseline']} of {args.seeds}")
    settings.CANARY_TTFT_LIMIT_S = 10.0
    settings.CANARY_TOTAL_TIMEOUT_S = 45.0
    declared = default_fleet_declared(args.rounds)
    print(f"\ndefault fleet after {args.rounds} observe rounds ({declared['model']}):")
    print(f"  {'check':<18} {'baseline':>8} {'samples':>7} {'threshold':>9} {'declared/ep-yr':>14} {'fixed rule':>10}")
    for c in declared["checks"]:
        rule = f"{c['threshold']} of {c['window']}" if c["established"] else "fixed"
        print(f"  {c['check']:<18} {c['baseline_rate']:>8.2%} {c['samples']:>7} {rule:>9} "
              f"{c['expected_false_suspensions_per_endpoint_year']:>14.4f} {c['fixed_rule_false_suspensions_per_endpoint_year']:>10.4f}")
    print(f"  all checks: {declared['expected_false_suspensions_per_endpoint_year']} false suspensions per endpoint-year")
    print(f"\nbench took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
