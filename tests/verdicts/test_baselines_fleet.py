"""Baselines on the simulator (issue "Verdicts whose error rate is known", done-when): a
fleet whose every host shares a 15 % refusal habit and one host refuses 90 %. Before the
baselines, eight enforce rounds suspended the 90 % host and a healthy one; now only the
90 % host. Four observe rounds come first, as an operator runs a model before switching
it to enforce: they give the model's baseline its volume."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from canary.models import Decision, EndpointRound
from canary.terms import Action
from tests.verdicts.fleets import MODEL, NAMES, endpoint, fleet

pytestmark = pytest.mark.django_db

HABIT = {"refusal": {"rate": 0.15, "style": "text"}}
BROKEN = {"refusal": {"rate": 0.9, "style": "text"}}


@pytest.fixture
def fast_limits(settings):
    settings.CANARY_TTFT_LIMIT_S = 3.0
    settings.CANARY_TOTAL_TIMEOUT_S = 10.0


def run_round(i: int, mode: str) -> dict:
    out = StringIO()
    at = f"2026-11-29T{i // 2:02d}:{30 * (i % 2):02d}:00Z"
    call_command("canary_round", "--json", "--language", "en", "--mode", mode, "--now", at, stdout=out)
    return json.loads(out.getvalue())


def habit_fleet(seed: int) -> dict:
    hosts = [endpoint(name, HABIT) for name in NAMES[:10]] + [endpoint(NAMES[10], BROKEN)]
    return fleet(hosts, seed=seed)


@pytest.mark.slow(60)
@pytest.mark.parametrize("seed", [7, 20261203])
def test_a_shared_refusal_habit_suspends_only_the_host_far_above_it(seed, start_sim, use_sim, fast_limits):
    use_sim(start_sim(habit_fleet(seed)))
    for i in range(4):
        run_round(i, "observe")
    for i in range(4, 12):
        run_round(i, "enforce")
    suspended = set(
        Decision.objects.filter(model_id=MODEL, action=Action.SUSPENDED).values_list("endpoint__tag", flat=True)
    )
    assert suspended == {"kestrel/fp8"}
    # The habit showed: healthy hosts' refusals were held against the baseline, not counted.
    softened = [
        er.evidence["baselines"]
        for er in EndpointRound.objects.filter(round__model_id=MODEL).exclude(endpoint__tag="kestrel/fp8")
        if er.evidence.get("baselines")
    ]
    assert any(not d["stands"] for decided in softened for d in decided.values())

    out = StringIO()
    call_command("canary_baselines", "--model", MODEL, "--now", "2026-11-29T06:00:00Z", "--json", stdout=out)
    declared = {c["check"]: c for c in json.loads(out.getvalue())["checks"]}
    refusal = declared["refusal"]
    assert refusal["established"] and refusal["samples"] >= 30
    assert 0.05 <= refusal["baseline_rate"] <= 0.3, refusal
    # The fixed rule would suspend a host with this habit many times a year; the baseline rule rarely.
    assert refusal["fixed_rule_false_suspensions_per_endpoint_year"] > 50
    assert refusal["expected_false_suspensions_per_endpoint_year"] < 2
