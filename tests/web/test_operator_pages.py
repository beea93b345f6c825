"""What a new operator missed on the existing pages: the home page's operational state, the
TTFT chart's failing probes, why an entry is in the ignore list, the failing check in the
health matrix, one percent format, and a mistyped model id that leaves no trace in pickers."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta
from io import StringIO

import pytest
import redis
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from canary import formatting
from canary.dashboard_selectors import models_known
from canary.models import EndpointPolicyState, EndpointRound, ModelConfig, ProbeResult, Round
from canary.report import render_round_table
from canary.selectors import round_report
from observability.fixtures import request_add
from routing.models import Route
from routing.services.wiring import breaker_store, gateway_reset
from tests.web.conftest import slot_floor
from tests.web.history import MODEL, history_build

pytestmark = pytest.mark.django_db


# --------------------------------------------------------------------- one percent format


@pytest.mark.parametrize(
    ("share", "text"),
    [(0.6, "60%"), (0.125, "12.5%"), (0.004, "0.4%"), (1, "100%"), (0, "0%"), (2 / 3, "66.7%"), (None, "—"), ("x", "—")],
)
def test_a_share_reads_as_one_percent_format(share, text):
    assert formatting.percent(share) == text


def test_the_fleet_rate_is_a_percent_on_the_endpoint_page_and_in_the_terminal(viewer: Client, day_history):
    result = ProbeResult.objects.filter(verdict="fail", sample=0, endpoint__tag="borealis/fp8").order_by("-created_at").first()
    result.fleet_rate = 0.125
    result.save(update_fields=["fleet_rate"])
    page = viewer.get(reverse("admin:canary_endpoint_history", args=[result.endpoint_id])).content.decode()
    assert "fleet rate 12.5%" in page
    assert "fleet rate 0.125" not in page
    results = viewer.get(reverse("admin:canary_round_results", args=[result.round_id])).content.decode()
    assert "<td>12.5%</td>" in results
    table = render_round_table(round_report(result.round))
    assert "fleet rate 12.5%" in table


# --------------------------------------------------------------------- TTFT chart


def test_a_ttft_probe_that_failed_without_a_first_token_is_on_the_chart_at_the_limit(viewer: Client, day_history):
    result = ProbeResult.objects.filter(kind="ttft", sample=0, endpoint__tag="atlas/fp8").order_by("-created_at").first()
    result.ttft_ms = None
    result.verdict = "fail"
    result.check_name = "ttft_limit"
    result.save()
    response = viewer.get(reverse("admin:canary_endpoint_history", args=[result.endpoint_id]))
    chart = response.context["h"].chart
    x = int(result.round.started_at.timestamp() * 1000)
    assert chart["capped"] == [{"x": x, "y": 10000.0, "v": "fail"}]
    assert all(p["x"] != x for p in chart["points"])
    assert f'"capped": [{{"x": {x}' in response.content.decode()


# --------------------------------------------------------------------- ignore list and matrix


def test_the_ignore_list_says_which_check_failed_and_links_the_round(viewer: Client, day_history, now):
    state = (
        EndpointPolicyState.objects.filter(enforced=True, suspended_until__gt=now, endpoint__tag="borealis/fp8")
        .select_related("endpoint").get()
    )
    page = viewer.get(reverse("admin:canary_exclusion_ignore_list")).content.decode()
    row = page.split(f'data-target="{state.endpoint.tag}" data-layer="canary"')[1].split("</tr>")[0]
    # borealis fails leading garbage (its fleet fault).
    assert "failed: <span class=\"canary-failed-check\"><b>leading garbage</b> <code>leading_punctuation</code>" in row
    suspending = EndpointRound.objects.filter(endpoint=state.endpoint, action="suspended").order_by("-created_at").first()
    assert f'/admin/canary/round/{suspending.round_id}/results/?endpoint={state.endpoint.pk}#ep-{state.endpoint.pk}' in row


def test_the_health_matrix_prints_the_failing_check_in_the_cell(viewer: Client, day_history):
    response = viewer.get(reverse("admin:canary_round_health"), {"rounds": 6})
    columns = response.context["columns"]
    borealis = [c.endpoint.tag for c in columns].index("borealis/fp8")
    failing = [r.cells[borealis] for r in response.context["rows"] if r.cells[borealis]["outcome"] == "fail"]
    assert failing and all(c["failed_short"].startswith("lead") for c in failing)
    html = response.content.decode()
    assert '<span class="canary-cell-check">lead' in html
    assert "<b>lead</b> leading garbage" in html  # the legend


# --------------------------------------------------------------------- a mistyped model id


def test_a_mistyped_model_round_leaves_no_model_in_the_pickers(viewer: Client, day_history, start_sim, use_sim, default_fleet):
    use_sim(start_sim(default_fleet))
    typo = "meta-lama/llama-3.3-70b-instruct"
    with pytest.raises(CommandError, match="discovery of meta-lama/llama-3.3-70b-instruct failed"):
        call_command("canary_round", "--model", typo, stdout=StringIO())
    # The failed round stays (an audit of what happened), so does the config row it opened with.
    assert Round.objects.filter(model_id=typo, status="failed").exists()
    assert ModelConfig.objects.filter(model_id=typo).exists()
    assert typo not in models_known()
    for name in ("admin:canary_round_health", "admin:canary_exclusion_ignore_list", "admin:canary_proberesult_correlate", "admin:index"):
        page = viewer.get(reverse(name)).content.decode()
        assert typo not in page, name
        assert MODEL in page, name
    # A config an admin changed stays offered even before the model has endpoints.
    ModelConfig.objects.create(model_id="vendor/new-model", mode="enforce", updated_by="root")
    assert "vendor/new-model" in models_known()


# --------------------------------------------------------------------- the admin's home page


@pytest.fixture
def breaker_prefix(settings):
    settings.ROUTING_BREAKER_PREFIX = f"test:breaker:{uuid.uuid4().hex}"
    settings.ROUTING_BREAKER = {"consecutive": 2, "open_s": 30}
    gateway_reset()
    yield settings.ROUTING_BREAKER_PREFIX
    client = redis.Redis.from_url(settings.REDIS_URL)
    keys = list(client.scan_iter(f"{settings.ROUTING_BREAKER_PREFIX}:*"))
    if keys:
        client.delete(*keys)


def test_the_home_page_shows_suspensions_shadow_suspensions_and_the_last_round(viewer: Client, day_history, now):
    html = viewer.get(reverse("admin:index")).content.decode()
    [row] = [r for r in viewer.get(reverse("admin:index")).context["ops_canary"] if r["model"] == MODEL]
    states = EndpointPolicyState.objects.filter(endpoint__model_id=MODEL, suspended_until__gt=now)
    assert row["suspended"] == states.filter(enforced=True).count() > 0
    assert row["shadow_suspended"] == states.filter(enforced=False).count()
    last = Round.objects.filter(model_id=MODEL).order_by("-started_at").first()
    assert row["last_round"]["id"] == last.pk and row["last_round"]["status"] == "completed"
    block = html.split('id="ops-canary"')[1].split("</table>")[0]
    assert f'<b>{row["suspended"]}</b>' in block
    assert f'/admin/canary/round/{last.pk}/results/' in block


def test_the_home_page_reads_a_fixed_number_of_queries_whatever_the_history(viewer: Client, now):
    end = slot_floor(now)
    history_build(start=end - timedelta(hours=6), end=end, mode="enforce")
    with CaptureQueriesContext(connection) as short:
        assert viewer.get(reverse("admin:index")).status_code == 200
    history_build(start=end - timedelta(days=3), end=end - timedelta(hours=6), mode="observe", seed=3)
    history_build(start=end - timedelta(hours=6), end=end, model_id="vendor/second-model", mode="observe", seed=4)
    with CaptureQueriesContext(connection) as long:
        assert viewer.get(reverse("admin:index")).status_code == 200
    assert len(long.captured_queries) == len(short.captured_queries)


def test_the_home_page_shows_open_breakers_and_the_rejection_rate(staff, breaker_prefix, now):
    admin = staff(None, superuser=True)
    for name in ("alpha", "beta"):
        Route.objects.create(name=name, model_id=MODEL, provider_tag=f"{name}/fp8", modalities=["text"], context_length=8192)
    store = breaker_store()
    now_ms = int(time.time() * 1000)
    store.record("beta", now_ms, "invalid_response")
    store.record("beta", now_ms, "invalid_response")
    for i in range(8):  # 10 answers, 2 rejected by validation
        attempts = [("alpha", "rejected"), ("beta", "accepted")] if i < 2 else [("alpha", "accepted")]
        request_add(now - timedelta(minutes=10), contract="chat@1", attempts=attempts)
    html = admin.get(reverse("admin:index")).content.decode()
    breakers = html.split('id="ops-breakers">')[1].split("</td>")[0]
    assert "1 open</b>, 0 half-open: <code>beta</code> invalid_response (open)" in breakers
    rejections = html.split('id="ops-rejections">')[1].split("</td>")[0]
    assert rejections.startswith("20% of 10 answers in the last 1 h")


def test_staff_who_see_neither_half_get_the_plain_index(staff, day_history):
    html = staff(None).get(reverse("admin:index")).content.decode()
    assert 'id="ops-state"' not in html


# --------------------------------------------------------------------- lists that fit 1440 px


def test_the_events_list_shows_the_failure_under_the_outcome_and_a_short_operation_id(staff, now):
    admin = staff(None, superuser=True)
    req = request_add(now - timedelta(minutes=3), contract="chat@1", attempts=[("alpha", "failed")], outcome="failed",
                      error_code="deadline_exhausted")
    html = admin.get("/admin/routing/requestevent/").content.decode()
    row = html.split(f"{req.operation_id[:12]}…")[1].split("</tr>")[0]
    assert req.operation_id not in html.split('id="result_list"')[1].split("</table>")[0]
    assert 'Failed<br><span class="quiet">transient · deadline_exhausted</span>' in row
    assert "routing/changelist.css" in html


def test_the_routes_list_gives_the_context_in_thousands_and_the_model_as_a_filter(staff):
    admin = staff(None, superuser=True)
    Route.objects.create(name="alpha", model_id=MODEL, provider_tag="alpha/fp8", modalities=["text"], context_length=131072)
    html = admin.get("/admin/routing/route/").content.decode()
    assert '<td class="field-context">128k</td>' in html
    assert f"?model_id={MODEL.replace('/', '%2F')}" in html
