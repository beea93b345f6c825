"""A canary round over real HTTP against the simulator running the default fleet.

Acceptance of the issue "Canary round end to end": each faulty host fails the contract its
fault breaks, transport faults are never quality failures, healthy hosts pass.
"""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from canary.models import ProbeResult, Round
from tests.conftest import FLEETS

pytestmark = pytest.mark.django_db

HEALTHY = ("atlas/fp8", "harbor/fp4", "indigo/bf16", "lumen/fp8", "nimbus/fp16", "orchid/fp8")


def run_round(*args: str) -> dict:
    out = StringIO()
    call_command("canary_round", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def verdicts(report: dict) -> dict[str, dict[str, str]]:
    return {ep["tag"]: {p["kind"]: p["verdict"] for p in ep["probes"]} for ep in report["endpoints"]}




def test_default_fleet_round_in_portuguese(start_sim, use_sim):
    use_sim(start_sim(FLEETS / "default.json"))
    report = run_round("--language", "pt", "--now", "2026-11-29T10:00:00Z")
    v = verdicts(report)
    outcome = {ep["tag"]: ep["outcome"] for ep in report["endpoints"]}
    assert len(v) == 15
    assert report["model"] == "meta-llama/llama-3.3-70b-instruct"
    assert v["borealis/fp8"]["leading_garbage"] == "fail"
    assert v["cinder/fp8"]["language"] == "fail"
    assert v["dynamo/bf16"]["refusal"] == "fail"
    assert v["ember/bf16"]["ttft"] == "fail"
    assert v["gale/fp8"]["structured_output"] == "fail"
    assert v["juniper/fp8"]["language"] == "fail"
    assert v["kestrel/bf16"]["structured_output"] == "not_applicable"
    for tag in ("fjord/fp8", "meridian/fp8"):
        assert "fail" not in v[tag].values(), (tag, v[tag])
        assert outcome[tag] != "fail"
    for tag in HEALTHY:
        bad = {k: x for k, x in v[tag].items() if x not in ("pass", "not_applicable")}
        assert not bad, (tag, bad)
        assert outcome[tag] == "clean"
    for tag in ("borealis/fp8", "cinder/fp8", "ember/bf16", "gale/fp8", "juniper/fp8"):
        assert outcome[tag] == "fail", tag
    # Every result was stored, with the measured TTFT of the healthy hosts in ms.
    rnd = Round.objects.get(pk=report["round"])
    assert rnd.status == "completed"
    ttft = ProbeResult.objects.get(round=rnd, endpoint__tag="atlas/fp8", kind="ttft")
    assert ttft.ttft_ms is not None and 0 < ttft.ttft_ms < 10_000
    ember = ProbeResult.objects.get(round=rnd, endpoint__tag="ember/bf16", kind="ttft")
    assert ember.ttft_ms is None or ember.ttft_ms > 10_000
    assert rnd.cost_usd > 0


def test_cinder_passes_language_when_the_round_is_spanish(start_sim, use_sim):
    use_sim(start_sim(FLEETS / "default.json"))
    report = run_round("--language", "es")
    assert report["language"] == "es"
    assert verdicts(report)["cinder/fp8"]["language"] == "pass"


def test_a_down_endpoint_yields_transport_errors_never_another_providers_pass(start_sim, use_sim, default_fleet):
    model = default_fleet["models"][0]
    keep = {"atlas/fp8", "harbor/fp4", "indigo/bf16"}
    model["endpoints"] = [e for e in model["endpoints"] if e["tag"] in keep]
    model["endpoints"][0]["faults"] = {"down": True}
    use_sim(start_sim(default_fleet))
    report = run_round("--language", "en")
    v = verdicts(report)["atlas/fp8"]
    for kind in ("ttft", "refusal", "structured_output", "language"):
        assert v[kind] == "transport_error", (kind, v)
    atlas = next(ep for ep in report["endpoints"] if ep["tag"] == "atlas/fp8")
    assert atlas["outcome"] == "frozen"
    served = set(
        ProbeResult.objects.filter(round_id=report["round"], endpoint__tag="atlas/fp8").values_list("http_status", flat=True)
    )
    assert served == {503} or served <= {503, None}


def test_discovery_failure_exits_with_a_clear_message(settings):
    from django.core.management.base import CommandError

    from fake_openrouter.process import free_port

    settings.OPENROUTER_BASE_URL = f"http://127.0.0.1:{free_port()}/api/v1"
    with pytest.raises(CommandError, match="discovery of .* failed"):
        call_command("canary_round", "--json")
    assert Round.objects.get().status == "failed"


def test_bad_arguments_are_rejected_with_a_message():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="unknown language"):
        call_command("canary_round", "--language", "xx")
    with pytest.raises(CommandError, match="ISO 8601"):
        call_command("canary_round", "--now", "yesterday")
