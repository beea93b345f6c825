"""The reliability page with a million request events: render time, side by side.

Fills a fresh PostgreSQL database with ``--events`` requests (default 1,000,000, with
about 1.1 attempts each) spread over the last 8 days, rolls the closed hours up once
(timed: the one-off cost a new deployment pays), then times the admin page: the
selector alone (``reliability_report``) and the whole page over HTTP through Django's
test client as a superuser, median of ``--renders``. Target: under 500 ms.

``python bench/reliability_page.py`` (PostgreSQL on 127.0.0.1; database
``reverie_ops_bench_reliability`` is dropped and re-created).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import timedelta

from _setup import django_on, fresh_postgres

REUSE = "--reuse" in sys.argv  # the events of the previous run are still there: skip filling
django_on("postgres://postgres@127.0.0.1:5432/reverie_ops_bench_reliability" if REUSE
          else fresh_postgres("reverie_ops_bench_reliability"), migrate=True)

from django.contrib.auth.models import User  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from observability.fixtures import events_bulk_insert  # noqa: E402
from observability.reliability import reliability_report, rollup_refresh  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--renders", type=int, default=10)
    parser.add_argument("--reuse", action="store_true", help="keep the previous run's events (no fill)")
    args = parser.parse_args()
    now = timezone.now()
    start = time.perf_counter()
    if not args.reuse:
        events_bulk_insert(args.events, until=now, span=timedelta(days=8))
        with connection.cursor() as cur:
            cur.execute("ANALYZE")
    filled_s = time.perf_counter() - start
    start = time.perf_counter()
    rollup_refresh(timezone.now())
    rollup_s = time.perf_counter() - start

    selector = []
    for _ in range(args.renders):
        t = time.perf_counter()
        reliability_report(timezone.now())
        selector.append((time.perf_counter() - t) * 1000)
    client = Client()
    user = User.objects.filter(username="bench").first() or User.objects.create_superuser("bench", password="bench-only")  # noqa: S106
    client.force_login(user)
    pages = []
    for _ in range(args.renders + 1):
        t = time.perf_counter()
        response = client.get("/admin/observability/reliability/", HTTP_HOST="localhost")
        pages.append((time.perf_counter() - t) * 1000)
        assert response.status_code == 200, response.status_code
    pages = pages[1:]  # the first render compiles the templates
    print(f"{args.events:,} request events over 8 days (inserted in {filled_s:.0f} s); first rollup of the closed "
          f"hours: {rollup_s:.1f} s (once per deployment; then one hour at a time)")
    print(f"reliability_report (1 h, 24 h, 7 d and the windows before them): median {statistics.median(selector):.0f} ms, "
          f"fastest {min(selector):.0f} ms over {args.renders}")
    print(f"admin page over HTTP (test client, superuser): median {statistics.median(pages):.0f} ms, "
          f"fastest {min(pages):.0f} ms over {args.renders} (target < 500 ms)")


if __name__ == "__main__":
    main()
