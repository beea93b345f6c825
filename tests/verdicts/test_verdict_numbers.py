"""The numbers of the issue "Verdicts you can trust", over real HTTP with the simulator.

- each fault kind at rate 1.0 on one endpoint: that endpoint's outcome is ``fail`` where
  the fault is observable (transport faults: ``frozen``, never ``fail``), and no other
  endpoint's is;
- a healthy fleet of 15 endpoints over all 17 languages: zero ``fail`` outcomes
  (``bench/verdicts.py`` runs the full 34 rounds and prints the count);
- ``leading_garbage`` at rate 0.95: ``fail`` in at least 9 of 10 rounds.

The TTFT limit is 3 s here (a setting) so that silent hosts cost 3 s, not 10.
"""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from core.languages import DEFAULT_LANGUAGES
from tests.verdicts.fleets import FAULTS, endpoint, fault_fleet, fleet, healthy_fleet

pytestmark = pytest.mark.django_db


@pytest.fixture
def fast_limits(settings):
    settings.CANARY_TTFT_LIMIT_S = 3.0
    settings.CANARY_TOTAL_TIMEOUT_S = 10.0


def run_round(language: str, at: str) -> dict:
    out = StringIO()
    call_command("canary_round", "--json", "--language", language, "--now", at, stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_each_fault_kind_fails_or_freezes_only_its_endpoint(name, start_sim, use_sim, fast_limits):
    faults, expected = FAULTS[name]
    use_sim(start_sim(fault_fleet(faults)))
    report = run_round("pt", "2026-11-29T10:00:00Z")
    outcomes = {ep["tag"]: ep["outcome"] for ep in report["endpoints"]}
    assert outcomes.pop("borealis/fp8") == expected, report
    assert set(outcomes.values()) == {"clean"}, outcomes


def test_language_drift_into_the_rounds_own_language_is_not_observable(start_sim, use_sim, fast_limits):
    use_sim(start_sim(fault_fleet(FAULTS["language_drift"][0])))
    report = run_round("es", "2026-11-29T10:00:00Z")
    assert {ep["tag"]: ep["outcome"] for ep in report["endpoints"]}["borealis/fp8"] == "clean"


@pytest.mark.slow(15)
def test_a_healthy_fleet_never_fails_in_any_of_the_17_languages(start_sim, use_sim, fast_limits):
    use_sim(start_sim(healthy_fleet(15)))
    fails = []
    for i, language in enumerate(DEFAULT_LANGUAGES):
        report = run_round(language, f"2026-11-29T{i // 2:02d}:{30 * (i % 2):02d}:00Z")
        assert len(report["endpoints"]) == 15
        fails += [(language, ep["tag"], ep["probes"]) for ep in report["endpoints"] if ep["outcome"] == "fail"]
    assert fails == []


def test_leading_garbage_at_rate_095_fails_in_at_least_9_of_10_rounds(start_sim, use_sim, fast_limits):
    garbage = {"leading_garbage": {"rate": 0.95, "fragments": [",", ".", "ingu", ")", ";", "ción"]}}
    use_sim(start_sim(fleet([endpoint("Atlas"), endpoint("Borealis", garbage), endpoint("Harbor")], seed=20261129)))
    languages = ["pt", "en", "es", "fr", "de", "it", "nl", "pl", "tr", "id"]
    failed = 0
    for i, language in enumerate(languages):
        report = run_round(language, f"2026-11-30T{i:02d}:00:00Z")
        failed += {ep["tag"]: ep["outcome"] for ep in report["endpoints"]}["borealis/fp8"] == "fail"
    assert failed >= 9, failed
