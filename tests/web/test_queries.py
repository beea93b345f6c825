"""Each dashboard page runs a bounded number of queries, and the count does not grow with
the length of the history (the full 30-day figures come from bench/dashboards.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.web.history import history_build
from tests.web.test_pages import page_urls

pytestmark = pytest.mark.django_db

# Per page: session, user, the user's and the groups' permissions (4), plus the selector's.
MAX_QUERIES = {
    "health": 10,
    "results": 9,
    "endpoint": 16,  # + the canary side of the live evidence panel (one aggregate)
    "ignore_list": 12,  # one model: 4 + 2 per model
    "observe_report": 10,
    "probe_health": 16,  # 10, and 6 for the baselines (history: 3, realised rate: 2, page: 1)
    "correlate": 6,
    "correlate_report": 10,
}

CHANGELISTS = ("endpoint", "round", "proberesult", "endpointround", "decision", "exclusion",
               "endpointpolicystate", "modelconfig", "provider", "notification")


def urls(now) -> dict[str, str]:
    out = page_urls()
    at = (now - timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M")
    out["correlate_report"] = out["correlate"] + f"?at={at}&symptom=language&language=pt"
    return out


def count_queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200, url
    return len(ctx.captured_queries)


def test_each_page_runs_a_bounded_number_of_queries(viewer: Client, day_history, now, django_assert_max_num_queries):
    for name, url in urls(now).items():
        with django_assert_max_num_queries(MAX_QUERIES[name], info=name):
            assert viewer.get(url).status_code == 200


def test_query_counts_do_not_grow_with_the_history(viewer: Client, day_history, now):
    before = {name: count_queries(viewer, url) for name, url in urls(now).items()}
    # Four more days of older history: four times the rows behind every page.
    oldest = min(history_start(), now)
    history_build(start=oldest - timedelta(days=4), end=oldest, mode="observe", seed=3)
    after = {name: count_queries(viewer, url) for name, url in urls(now).items()}
    assert after == before


def test_changelists_run_a_bounded_number_of_queries(viewer: Client, day_history, django_assert_max_num_queries):
    for model in CHANGELISTS:
        with django_assert_max_num_queries(12, info=model):
            assert viewer.get(reverse(f"admin:canary_{model}_changelist")).status_code == 200


def history_start():
    from canary.models import Round

    return Round.objects.order_by("started_at").values_list("started_at", flat=True).first()
