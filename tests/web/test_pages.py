"""Dashboard pages: each renders for a viewer, shows its data, and is closed to others."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse

from canary.models import Decision, Endpoint, EndpointPolicyState, Round

pytestmark = pytest.mark.django_db


def endpoint(tag: str) -> Endpoint:
    return Endpoint.objects.get(tag=tag)


def latest_round() -> Round:
    return Round.objects.order_by("-started_at").first()


def page_urls() -> dict[str, str]:
    """Every dashboard page, on the generated history."""
    return {
        "health": reverse("admin:canary_round_health"),
        "results": reverse("admin:canary_round_results", args=[latest_round().pk]),
        "endpoint": reverse("admin:canary_endpoint_history", args=[endpoint("borealis/fp8").pk]),
        "ignore_list": reverse("admin:canary_exclusion_ignore_list"),
        "observe_report": reverse("admin:canary_decision_observe_report"),
        "probe_health": reverse("admin:canary_round_probe_health"),
        "correlate": reverse("admin:canary_proberesult_correlate"),
    }


def test_every_page_renders_for_a_viewer(viewer: Client, day_history):
    for name, url in page_urls().items():
        response = viewer.get(url)
        assert response.status_code == 200, (name, response.status_code)
        assert b"canary-tabs" in response.content, name


def test_anonymous_users_are_sent_to_the_login(client: Client, day_history):
    for url in page_urls().values():
        response = client.get(url)
        assert response.status_code == 302
        assert reverse("admin:login") in response["Location"]


def test_staff_without_a_group_are_refused(staff, day_history):
    nobody = staff(None)
    for name, url in page_urls().items():
        assert nobody.get(url).status_code == 403, name


def test_health_matrix_shows_rounds_by_endpoints_coloured_by_outcome(viewer: Client, day_history):
    response = viewer.get(reverse("admin:canary_round_health"), {"rounds": 12})
    html = response.content.decode()
    rows = response.context["rows"]
    columns = response.context["columns"]
    assert len(rows) == 12
    assert len(columns) == 15
    assert {c.endpoint.tag for c in columns} >= {"atlas/fp8", "borealis/fp8", "orchid/fp8"}
    # borealis fails leading garbage nearly every round; atlas is clean.
    borealis = [c.endpoint.tag for c in columns].index("borealis/fp8")
    atlas = [c.endpoint.tag for c in columns].index("atlas/fp8")
    assert sum(1 for r in rows if r.cells[borealis]["outcome"] == "fail") >= 8
    assert all(r.cells[atlas]["outcome"] == "clean" for r in rows)
    assert "canary-cell canary-fail" in html and "canary-cell canary-clean" in html
    # Each cell opens the round's results focused on that endpoint.
    rnd = rows[0].round
    assert f"/admin/canary/round/{rnd.pk}/results/?endpoint={endpoint('borealis/fp8').pk}" in html
    # Enforce-mode suspensions in force are marked in the column header.
    assert next(c for c in columns if c.endpoint.tag == "borealis/fp8").state == "suspended"


def test_health_matrix_rounds_parameter_is_bounded(viewer: Client, day_history):
    response = viewer.get(reverse("admin:canary_round_health"), {"rounds": "9999"})
    assert response.context["rounds"] == 336
    assert len(response.context["rows"]) == 48  # all there is
    assert viewer.get(reverse("admin:canary_round_health"), {"rounds": "x"}).context["rounds"] == 48


def test_round_results_show_probe_results_with_evidence(viewer: Client, day_history):
    rnd = latest_round()
    ep = endpoint("borealis/fp8")
    response = viewer.get(reverse("admin:canary_round_results", args=[rnd.pk]), {"endpoint": ep.pk})
    html = response.content.decode()
    assert response.status_code == 200
    assert f'id="ep-{ep.pk}" open' in html
    assert "leading_punctuation" in html and "fleet_rate" in html
    assert len(response.context["endpoints"]) == 15
    assert viewer.get(reverse("admin:canary_round_results", args=[999999])).status_code == 404


def test_endpoint_page_has_ttft_chart_data_history_timeline_and_fleet_rates(viewer: Client, day_history):
    ep = endpoint("borealis/fp8")
    response = viewer.get(reverse("admin:canary_endpoint_history", args=[ep.pk]))
    html = response.content.decode()
    h = response.context["h"]
    assert len(h.chart["points"]) == 48 and len(h.chart["fleet"]) == 48
    assert h.chart["limit_ms"] == 10000.0
    assert 'id="ttft-data"' in html and 'data-chart="ttft"' in html
    assert "chart.umd.min.js" in html
    assert len(h.history) == 48 and len(h.history[0]["cells"]) == 6
    check = next(c for c in h.failed_checks if c["check"] == "leading_punctuation")
    assert check["failures"] >= 38
    # One endpoint of 15 fails it: the fleet's rate is about 1/15.
    assert 0.05 < check["fleet_rate"] < 0.08
    assert check["endpoints_failing"] == 1
    assert h.timeline, "borealis was (would-)suspended in the window"
    assert any(b.enforced for b in h.timeline) and any(not b.enforced for b in h.timeline)
    # The failing reply itself, its junk opener marked, with the rule and the language.
    shown = h.recent_failures[0]["shown"]
    assert shown.excerpt.bad == "," and shown.excerpt.at == 0 and shown.rule and shown.language
    assert h.state_label == "suspended"
    assert viewer.get(reverse("admin:canary_endpoint_history", args=[999999])).status_code == 404


def test_ignore_list_shows_each_entry_with_its_source(viewer: Client, day_history):
    from django.utils import timezone

    from canary.services.quarantine import exclusion_add

    now = timezone.now()
    exclusion_add(day_history, "reviewed", "dynamo", actor="alice", reason="runs its own content filter", now=now)
    exclusion_add(
        day_history, "incident", "fjord/fp8", actor="bob", reason="429 storm", now=now,
        expires_at=now + timedelta(hours=3),
    )
    response = viewer.get(reverse("admin:canary_exclusion_ignore_list"))
    lists = response.context["lists"]
    assert [x["model"] for x in lists] == [day_history]
    entry = lists[0]
    layers = {(e["target"], e["layer"]) for e in entry["entries"]}
    assert ("dynamo", "reviewed") in layers and ("fjord/fp8", "incident") in layers
    assert ("borealis/fp8", "canary") in layers
    assert "borealis/fp8" in entry["ignore"] and "dynamo" in entry["ignore"]
    html = response.content.decode()
    assert "runs its own content filter" in html and "429 storm" in html
    # A viewer sees no lift links.
    assert "canary-lift" not in html


def test_observe_report_counts_would_suspend_and_false_positives(viewer: Client, day_history):
    response = viewer.get(reverse("admin:canary_decision_observe_report"), {"days": 2})
    ctx = response.context
    would = Decision.objects.filter(action="would_suspend").count()
    fps = Decision.objects.filter(action="false_positive", refers_to__action="would_suspend").count()
    assert would > 0 and fps > 0
    assert ctx["total"] == would and ctx["false_positives"] == fps
    assert ctx["fp_rate"] == pytest.approx(fps / would)
    assert ctx["suspended_total"] == Decision.objects.filter(action="suspended").count()
    assert sum(ctx["chart"]["confirmed"]) + sum(ctx["chart"]["false_positive"]) == would
    assert 'data-chart="observe"' in response.content.decode()


def test_probe_health_shows_positive_controls_and_weak_rounds(viewer: Client, day_history):
    response = viewer.get(reverse("admin:canary_round_probe_health"), {"days": 2})
    ctx = response.context
    control = ctx["controls"][0]
    assert control["endpoint"].tag == "dynamo/bf16" and control["kind"] == "refusal"
    assert control["rounds"] == 48 and control["passed"] >= 1
    assert control["failed"] + control["passed"] + control["other"] == 48
    assert ctx["weak_rounds"] and ctx["weak_rounds"][0]["kinds"][0][0] == "refusal"
    assert ctx["weak_by_kind"] == [("refusal", len(ctx["weak_rounds"]))]


def test_a_missing_policy_state_does_not_break_the_pages(viewer: Client, day_history):
    EndpointPolicyState.objects.filter(endpoint__tag="atlas/fp8").delete()
    for url in page_urls().values():
        assert viewer.get(url).status_code == 200


def test_admin_index_links_the_dashboards(viewer: Client, day_history):
    html = viewer.get(reverse("admin:index")).content.decode()
    assert reverse("admin:canary_round_health") in html
    assert reverse("admin:canary_proberesult_correlate") in html


def test_the_site_root_sends_a_browser_to_the_admin(client: Client):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:index")
