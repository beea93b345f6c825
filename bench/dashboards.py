"""Bench: render time and query count of each staff dashboard on a 30-day history.

Issue "Staff web UI", performance: with 30 days of history for 15 endpoints (48 rounds a
day), each dashboard page runs a bounded number of queries and renders in under 300 ms.
This prints, per page, the query count and the render time (median and worst of several
requests through the whole Django stack: middleware, session, admin, template). It is a
measurement, not a test; tests/web/test_queries.py asserts the query bounds.

Run: `.venv/bin/python bench/dashboards.py [--days 30] [--repeat 7]`. Uses its own
PostgreSQL database (``<name of DATABASE_URL>_bench_dashboards``, dropped and re-created),
so no one's data is touched.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlparse, urlunparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BUDGET_MS = 300.0


def bench_database_url() -> str:
    """DATABASE_URL with the database name suffixed, on the same PostgreSQL server."""
    url = urlparse(os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/reverie_ops"))
    if not url.scheme.startswith("postgres"):
        raise SystemExit("bench/dashboards.py measures PostgreSQL: set DATABASE_URL to a postgres:// URL")
    name = (url.path.lstrip("/") or "reverie_ops") + "_bench_dashboards"
    return urlunparse(url._replace(path="/" + name))


def recreate_database(url: str) -> None:
    import psycopg

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    admin_url = urlunparse(parsed._replace(path="/postgres"))
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    url = bench_database_url()
    recreate_database(url)
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reverie_ops.settings")
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.urls import reverse

    from canary.models import Endpoint, ProbeResult, Round
    from tests.web.history import history_build

    setup_test_environment()
    call_command("migrate", verbosity=0)
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    end = now.replace(minute=now.minute - now.minute % 30)
    t0 = time.perf_counter()
    # Observe mode for the first three weeks, enforce since: both kinds of decisions.
    switch = end - timedelta(days=min(7, args.days))
    history_build(start=end - timedelta(days=args.days), end=switch, mode="observe")
    history_build(start=switch, end=end, mode="enforce", seed=8)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    built_s = time.perf_counter() - t0
    print(
        f"history: {Round.objects.count()} rounds, {Endpoint.objects.count()} endpoints, "
        f"{ProbeResult.objects.count()} probe results; built in {built_s:.1f} s"
    )

    user = User.objects.create_user("bench-viewer", is_staff=True)
    user.groups.add(Group.objects.get(name="viewer"))
    client = Client()
    client.force_login(user)
    latest = Round.objects.order_by("-started_at").first()
    assert latest is not None
    borealis = Endpoint.objects.get(tag="borealis/fp8")
    at = (end - timedelta(hours=9)).strftime("%Y-%m-%dT%H:%M")
    pages = {
        "fleet health (48 rounds)": reverse("admin:canary_round_health"),
        "fleet health (336 rounds)": reverse("admin:canary_round_health") + "?rounds=336",
        "round results": reverse("admin:canary_round_results", args=[latest.pk]),
        "endpoint (336 rounds)": reverse("admin:canary_endpoint_history", args=[borealis.pk]),
        "endpoint (1440 rounds)": reverse("admin:canary_endpoint_history", args=[borealis.pk]) + "?rounds=1440",
        "ignore list": reverse("admin:canary_exclusion_ignore_list"),
        "observe-mode report (30 d)": reverse("admin:canary_decision_observe_report"),
        "probe health (7 d)": reverse("admin:canary_round_probe_health"),
        "probe health (30 d)": reverse("admin:canary_round_probe_health") + "?days=30",
        "user report (form)": reverse("admin:canary_proberesult_correlate"),
        "user report (±2 h)": reverse("admin:canary_proberesult_correlate") + f"?at={at}&symptom=language&language=es",
        "endpoints changelist": reverse("admin:canary_endpoint_changelist"),
        "rounds changelist": reverse("admin:canary_round_changelist"),
        "decisions changelist": reverse("admin:canary_decision_changelist"),
        "probe results changelist": reverse("admin:canary_proberesult_changelist"),
    }
    # Count queries with an execute wrapper: the connection is closed after each request
    # (CONN_MAX_AGE 0, as deployed), and Django resets its own query log per request.
    executed = []

    def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        executed.append(sql)
        return execute(sql, params, many, context)

    connection.execute_wrappers.append(count)
    print(f"\n{'page':<30} {'queries':>7} {'median ms':>10} {'max ms':>8}  (budget {BUDGET_MS:.0f} ms)")
    over = []
    for name, page_url in pages.items():
        executed.clear()
        response = client.get(page_url)  # warm-up; also the query count
        queries = len(executed)
        assert response.status_code == 200, (name, response.status_code)
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            client.get(page_url)
            times.append((time.perf_counter() - t) * 1000)
        median = statistics.median(times)
        if median > BUDGET_MS:
            over.append(name)
        print(f"{name:<30} {queries:>7} {median:>10.1f} {max(times):>8.1f}")
    print("\nall pages within budget" if not over else f"\nover budget: {', '.join(over)}")


if __name__ == "__main__":
    main()
