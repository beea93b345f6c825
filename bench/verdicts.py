"""Bench: the numbers of the issue "Verdicts you can trust", printed from one run.

- a healthy fleet of 15 endpoints, 34 rounds (all 17 languages twice): fail outcomes;
- each fault kind of the fleet format at rate 1.0 on one endpoint: its outcome, and
  whether any other endpoint failed;
- leading_garbage at rate 0.95: in how many of 10 rounds the endpoint failed.

Real rounds (``round_run``) against the simulator over HTTP; TTFT limit 3 s so silent
hosts cost 3 s. Run: `.venv/bin/python bench/verdicts.py` (about 3 minutes).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from _setup import django_on, simulator

django_on()

from django.conf import settings  # noqa: E402

from canary.models import EndpointRound  # noqa: E402
from canary.services.rounds import round_run  # noqa: E402
from core.languages import DEFAULT_LANGUAGES  # noqa: E402
from tests.verdicts.fleets import FAULTS, MODEL, endpoint, fault_fleet, fleet, healthy_fleet  # noqa: E402

settings.CANARY_TTFT_LIMIT_S = 3.0
settings.CANARY_TOTAL_TIMEOUT_S = 10.0
T0 = datetime(2026, 12, 1, tzinfo=UTC)
_slot = 0


def rounds_on(fleet_data: dict, languages: list[str]) -> list[dict[str, str]]:
    """Run one round per language on a fresh simulator; outcomes per tag per round."""
    global _slot
    proc, base = simulator(fleet_data)
    settings.OPENROUTER_BASE_URL = base
    out = []
    try:
        for language in languages:
            _slot += 1
            rnd = round_run(MODEL, now=T0 + timedelta(minutes=30 * _slot), language=language)
            out.append({er.endpoint.tag: er.outcome for er in EndpointRound.objects.filter(round=rnd).select_related("endpoint")})
    finally:
        proc.terminate()
        proc.wait(5)
    return out


def main() -> None:
    start = time.perf_counter()
    healthy = rounds_on(healthy_fleet(15), list(DEFAULT_LANGUAGES) * 2)
    fails = sum(1 for r in healthy for o in r.values() if o == "fail")
    print(f"healthy fleet: {len(healthy)} rounds x 15 endpoints = {sum(len(r) for r in healthy)} endpoint-rounds, fail outcomes: {fails} (target 0)")
    print("fault kinds at rate 1.0 (round in pt):")
    wrong = 0
    for name in sorted(FAULTS):
        faults, expected = FAULTS[name]
        (result,) = rounds_on(fault_fleet(faults), ["pt"])
        got = result.pop("borealis/fp8")
        others = sorted({o for o in result.values()})
        ok = got == expected and others == ["clean"]
        wrong += not ok
        print(f"  {name:<26} outcome {got:<8} expected {expected:<7} others {others}{'' if ok else '  <-- WRONG'}")
    garbage = {"leading_garbage": {"rate": 0.95, "fragments": [",", ".", "ingu", ")", ";", "ción"]}}
    langs = ["pt", "en", "es", "fr", "de", "it", "nl", "pl", "tr", "id"]
    series = rounds_on(fleet([endpoint("Atlas"), endpoint("Borealis", garbage), endpoint("Harbor")], seed=20261129), langs)
    failed = sum(1 for r in series if r["borealis/fp8"] == "fail")
    print(f"leading_garbage at 0.95: fail in {failed} of {len(series)} rounds (target >= 9)")
    print(f"fault kinds judged wrong: {wrong} of {len(FAULTS)}; bench took {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
