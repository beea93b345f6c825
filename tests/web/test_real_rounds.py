"""The pages on rows written by real canary rounds (simulator over real HTTP), not only on
the generated history: two enforce rounds on three hosts suspend borealis/fp8."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from canary.models import Endpoint, Round
from canary.services.ignore_list import ignore_list_get
from tests.conftest import FLEETS
from tests.web.conftest import slot_floor

pytestmark = pytest.mark.django_db


def run_round(at, *args: str) -> dict:
    out = StringIO()
    call_command(
        "canary_round", "--json", "--mode", "enforce", "--language", "pt",
        "--now", at.strftime("%Y-%m-%dT%H:%M:%SZ"), *args, stdout=out,
    )
    return json.loads(out.getvalue())


def test_pages_and_lift_on_real_rounds(start_sim, use_sim, operator: Client):
    use_sim(start_sim(FLEETS / "three-hosts.json"))
    # Recent rounds, so the suspension is in force now (a fixed date would expire).
    second = slot_floor(timezone.now()) - timedelta(minutes=30)
    run_round(second - timedelta(minutes=30))
    report = run_round(second)
    assert {ep["tag"]: ep["action"] for ep in report["endpoints"]}["borealis/fp8"] == "suspended"
    model = Round.objects.values_list("model_id", flat=True).first()
    borealis = Endpoint.objects.get(tag="borealis/fp8")

    matrix = operator.get(reverse("admin:canary_round_health"))
    assert len(matrix.context["rows"]) == 2 and len(matrix.context["columns"]) == 3
    html = matrix.content.decode()
    # The suspension, marked in its cell, with the check that failed under the letter.
    assert re.search(r'>S<span class="canary-cell-check">(ttft|ref|json|lang|lead|corr)(\+\d)?</span></a>', html)

    results = operator.get(reverse("admin:canary_round_results", args=[report["round"]]), {"endpoint": borealis.pk})
    assert results.status_code == 200 and "leading" in results.content.decode()

    page = operator.get(reverse("admin:canary_endpoint_history", args=[borealis.pk]))
    h = page.context["h"]
    assert h.state_label == "suspended" and len(h.chart["points"]) == 2
    assert h.failed_checks and h.timeline

    assert "borealis/fp8" in ignore_list_get(model, timezone.now())["ignore"]
    lift = operator.post(reverse("admin:canary_endpoint_lift", args=[borealis.pk]), {"reason": "checked by hand"})
    assert lift.status_code == 302
    assert "borealis/fp8" not in ignore_list_get(model, timezone.now())["ignore"]
    for name in ("admin:canary_exclusion_ignore_list", "admin:canary_decision_observe_report",
                 "admin:canary_round_probe_health", "admin:canary_proberesult_correlate"):
        assert operator.get(reverse(name)).status_code == 200
