"""Route quarantine over real HTTP with the simulator: enforce rounds, the floor,
recovery, escalation and decay over simulated weeks (issue "Route quarantine")."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from canary.models import Decision, Notification
from tests.conftest import FLEETS

pytestmark = pytest.mark.django_db


def run_round(*args: str) -> dict:
    out = StringIO()
    call_command("canary_round", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def ignore_list(model: str, *args: str) -> dict:
    out = StringIO()
    call_command("ignore_list", "--model", model, "--json", *args, stdout=out)
    return json.loads(out.getvalue())


MODEL = "meta-llama/llama-3.3-70b-instruct"


@pytest.mark.slow(20)
def test_two_enforce_rounds_suspend_the_broken_hosts_of_the_default_fleet(start_sim, use_sim):
    use_sim(start_sim(FLEETS / "default.json"))
    first = run_round("--mode", "enforce", "--language", "pt", "--now", "2026-11-29T10:00:00Z")
    assert first["mode"] == "enforce"
    assert all(ep["action"] == "none" for ep in first["endpoints"])
    second = run_round("--mode", "enforce", "--language", "fr", "--now", "2026-11-29T10:30:00Z")
    actions = {ep["tag"]: ep["action"] for ep in second["endpoints"]}
    for tag in ("borealis/fp8", "cinder/fp8", "ember/bf16", "gale/fp8", "juniper/fp8"):
        assert actions[tag] == "suspended", (tag, actions[tag])
    for tag in ("fjord/fp8", "meridian/fp8"):
        assert actions[tag] == "none"
    borealis = next(ep for ep in second["endpoints"] if ep["tag"] == "borealis/fp8")
    assert borealis["streak"] == 2
    assert borealis["suspended_until"].startswith("2026-11-30T10:30")  # 1 day, first time
    listed = ignore_list(MODEL, "--now", "2026-11-29T11:00:00Z")
    for tag in ("borealis/fp8", "cinder/fp8", "ember/bf16", "gale/fp8", "juniper/fp8"):
        assert tag in listed["ignore"]
        assert tag in listed["sources"]["canary"]
    assert "fjord/fp8" not in listed["ignore"] and "meridian/fp8" not in listed["ignore"]


def test_observe_mode_records_would_suspend_and_routing_sees_nothing(start_sim, use_sim):
    use_sim(start_sim(FLEETS / "three-hosts.json"))
    run_round("--language", "pt", "--now", "2026-11-29T10:00:00Z")
    second = run_round("--language", "pt", "--now", "2026-11-29T10:30:00Z")
    assert second["mode"] == "observe"
    actions = {ep["tag"]: ep["action"] for ep in second["endpoints"]}
    assert actions["borealis/fp8"] == "would_suspend"
    assert ignore_list(MODEL, "--now", "2026-11-29T11:00:00Z")["ignore"] == []
    assert Notification.objects.filter(kind="would_suspend").count() == 1


def test_the_floor_lets_only_one_of_two_bad_hosts_go_and_alerts(start_sim, use_sim):
    fleet = json.loads((FLEETS / "three-hosts.json").read_text())
    fleet["models"][0]["endpoints"][2]["faults"] = {"structured_output": "missing_field", "template_leak": {"rate": 1.0}, "leading_garbage": {"rate": 1.0, "fragments": [";"]}}
    use_sim(start_sim(fleet))
    run_round("--mode", "enforce", "--language", "pt", "--now", "2026-11-29T10:00:00Z")
    second = run_round("--mode", "enforce", "--language", "pt", "--now", "2026-11-29T10:30:00Z")
    actions = {ep["tag"]: ep["action"] for ep in second["endpoints"]}
    assert sorted(actions.values()) == ["floor_blocked", "none", "suspended"]
    # Worst evidence first: Harbor fails more checks (corruption too) than Borealis.
    assert actions["harbor/fp4"] == "suspended"
    assert actions["borealis/fp8"] == "floor_blocked"
    assert Notification.objects.filter(kind="floor_blocked").count() == 1
    assert ignore_list(MODEL, "--now", "2026-11-29T11:00:00Z")["ignore"] == ["harbor/fp4"]


def test_two_clean_rounds_restore_a_fixed_host_early(start_sim, use_sim):
    sim = use_sim(start_sim(FLEETS / "three-hosts.json"))
    run_round("--mode", "enforce", "--language", "pt", "--now", "2026-11-29T10:00:00Z")
    run_round("--mode", "enforce", "--language", "pt", "--now", "2026-11-29T10:30:00Z")
    assert ignore_list(MODEL, "--now", "2026-11-29T10:45:00Z")["ignore"] == ["borealis/fp8"]
    fleet = json.loads((FLEETS / "three-hosts.json").read_text())
    fleet["models"][0]["endpoints"][1]["faults"] = {}
    sim.write_fleet(fleet)
    third = run_round("--mode", "enforce", "--language", "pt", "--now", "2026-11-29T11:00:00Z")
    assert {ep["tag"]: ep["outcome"] for ep in third["endpoints"]}["borealis/fp8"] == "clean"
    assert ignore_list(MODEL, "--now", "2026-11-29T11:15:00Z")["ignore"] == ["borealis/fp8"]
    fourth = run_round("--mode", "enforce", "--language", "pt", "--now", "2026-11-29T11:30:00Z")
    assert {ep["tag"]: ep["action"] for ep in fourth["endpoints"]}["borealis/fp8"] == "restored"
    assert ignore_list(MODEL, "--now", "2026-11-29T11:45:00Z")["ignore"] == []


def test_escalation_1_3_7_days_then_decay_after_14_quiet_days(start_sim, use_sim):
    use_sim(start_sim(FLEETS / "three-hosts.json"))

    def suspend_at(day: str) -> str:
        run_round("--mode", "enforce", "--language", "pt", "--now", f"{day}T10:00:00Z")
        report = run_round("--mode", "enforce", "--language", "pt", "--now", f"{day}T10:30:00Z")
        borealis = next(ep for ep in report["endpoints"] if ep["tag"] == "borealis/fp8")
        assert borealis["action"] == "suspended", borealis
        return borealis["suspended_until"][:16]

    assert suspend_at("2026-11-01") == "2026-11-02T10:30"  # 1 day
    assert suspend_at("2026-11-03") == "2026-11-06T10:30"  # 3 days
    assert suspend_at("2026-11-07") == "2026-11-14T10:30"  # 7 days
    assert suspend_at("2026-11-15") == "2026-11-22T10:30"  # 7 days: third and after
    # 14 days after the last suspension (2026-11-15T10:30) without a new one: back to 1 day.
    assert suspend_at("2026-12-01") == "2026-12-02T10:30"
    assert Decision.objects.filter(action="suspended", endpoint__tag="borealis/fp8").count() == 5
