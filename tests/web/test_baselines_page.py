"""The probe-health page shows each check's baseline, threshold and declared false
suspensions per endpoint-year, the same numbers ``canary_baselines --json`` prints."""

from __future__ import annotations

import json
from io import StringIO

from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from canary.probes import ALL_KINDS


def test_probe_health_declares_the_same_rates_as_the_command(viewer: Client, day_history, now):
    response = viewer.get(reverse("admin:canary_round_probe_health"), {"days": 2})
    assert response.status_code == 200
    ctx = response.context
    shown = {b["check"]: b for b in ctx["baselines"]}
    assert set(shown) == set(ALL_KINDS)
    html = response.content.decode()
    assert 'id="baselines"' in html and 'id="declared-total"' in html

    out = StringIO()
    call_command("canary_baselines", "--model", day_history, "--now", ctx["now"].isoformat() if "now" in ctx else now.isoformat(), "--json", stdout=out)
    printed = json.loads(out.getvalue())
    for check in printed["checks"]:
        row = shown[check["check"]]
        assert row["samples"] == check["samples"] and row["baseline_rate"] == check["baseline_rate"]
        assert row["expected_false_suspensions_per_endpoint_year"] == check["expected_false_suspensions_per_endpoint_year"]
    # A day of the default fleet is volume enough: every probe kind has an established baseline.
    assert all(shown[k]["established"] for k in ("ttft", "refusal", "structured_output", "language")), shown
    assert printed["realised"]["endpoints"] == 15
