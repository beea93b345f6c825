"""What a new operator sees, in real headless Chromium at 1440 px: the home page's
operational state, the health matrix's failing checks, the TTFT chart with its limit line
and failing probes, the ignore list's reasons, and the user-report form, routes and events
lists without a horizontal scrollbar. Screenshots in test-artifacts/operator-*.png."""

from __future__ import annotations

import re
import time
import uuid
from datetime import timedelta
from typing import Any

import pytest
import redis
from django.contrib import admin
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone

from canary.models import Endpoint, ProbeResult
from observability.fixtures import request_add
from routing.models import Route
from routing.services.wiring import breaker_store, gateway_reset
from tests.browser.test_dashboards_browser import ARTIFACTS, chromium_page
from tests.web.conftest import PASSWORD, slot_floor
from tests.web.history import MODEL, history_build

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTH = 1440
NARROW = 1400


def _shot(page: Any, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"operator-{name}.png"), full_page=True)


def _overflow(page: Any) -> dict[str, int]:
    """How many px the page, and any scrolling box on it (the changelist's ``.results``,
    the dashboards' ``.canary-scroll``), are wider than what they show."""
    return page.evaluate(
        """() => {
          const out = {page: document.documentElement.scrollWidth - window.innerWidth};
          document.querySelectorAll('#changelist .results, .canary-form-grid').forEach((el, i) => {
            out[(el.className || 'box') + i] = el.scrollWidth - el.clientWidth; });
          return out; }"""
    )


def _world(now) -> int:  # type: ignore[no-untyped-def]
    end = slot_floor(now)
    history_build(start=end - timedelta(hours=18), end=end - timedelta(hours=6), mode="observe")
    history_build(start=end - timedelta(hours=6), end=end, mode="enforce", seed=8)
    harbor = Endpoint.objects.get(tag="atlas/fp8")
    # Three rounds where atlas's stream stayed silent past the limit: no first token.
    for result in ProbeResult.objects.filter(endpoint=harbor, kind="ttft", sample=0).order_by("-created_at")[:3]:
        result.ttft_ms, result.verdict, result.check_name = None, "fail", "ttft_limit"
        result.save()
    for ep in Endpoint.objects.filter(model_id=MODEL).order_by("tag"):
        Route.objects.create(name=f"llama-70b-{ep.tag.replace('/', '-')}", model_id=MODEL, provider_tag=ep.tag,
                             modalities=["text"], context_length=131072)
    routes = list(Route.objects.order_by("name").values_list("name", flat=True))
    for i in range(40):
        attempts = [(routes[0], "rejected"), (routes[1], "accepted")] if i % 5 == 0 else [(routes[0], "accepted")]
        request_add(now - timedelta(minutes=5 + i), contract="companion-chat-structured@3", attempts=attempts)
    request_add(now - timedelta(minutes=3), contract="companion-chat-structured@3", attempts=[(routes[2], "failed")],
                outcome="failed", error_code="deadline_exhausted")
    store = breaker_store()
    for _ in range(2):
        store.record(routes[3], int(time.time() * 1000), "transient")
    return harbor.pk


def test_an_operator_reads_state_at_a_glance_and_every_list_fits_1440_px(live_server, settings):
    settings.ROUTING_BREAKER_PREFIX = f"test:breaker:{uuid.uuid4().hex}"
    settings.ROUTING_BREAKER = {"consecutive": 2, "open_s": 30}
    gateway_reset()
    now = timezone.now()
    harbor = _world(now)
    User.objects.create_superuser("oncall", password=PASSWORD)
    base = live_server.url
    overflow: dict[str, int] = {}
    narrow: dict[str, int] = {}
    changelists = sorted(reverse(f"admin:{m._meta.app_label}_{m._meta.model_name}_changelist") for m in admin.site._registry)
    try:
        with chromium_page() as (page, console):
            page.goto(f"{base}/admin/login/?next=/admin/")
            page.fill("#id_username", "oncall")
            page.fill("#id_password", PASSWORD)
            page.click("input[type=submit]")
            page.wait_for_selector("#ops-state")
            row = page.locator("#ops-canary tr", has_text=MODEL)
            assert "enforce" in row.inner_text() and "completed" in row.inner_text()
            assert int(row.locator("td.ops-suspended").inner_text()) >= 1
            assert "1 open" in page.inner_text("#ops-breakers")
            assert page.inner_text("#ops-rejections").startswith("16.7% of 48 answers")
            _shot(page, "01-home")

            page.goto(f"{base}/admin/canary/round/health/?rounds=24")
            page.wait_for_selector("#health-matrix")
            assert page.locator("#health-matrix .canary-cell-check").count() >= 10
            _shot(page, "02-health-matrix")

            page.goto(f"{base}/admin/canary/endpoint/{harbor}/history/")
            page.wait_for_selector('canvas#ttft-chart[data-rendered="true"]')
            shown = page.evaluate(
                """() => { const c = Chart.getChart(document.getElementById('ttft-chart'));
                           return c.data.datasets.map((d, i) => [d.label, c.isDatasetVisible(i), d.data.length]); }"""
            )
            labels = {label: (visible, n) for label, visible, n in shown}
            # The scale follows the values (far below the 10 s limit): the legend names the
            # limit instead of drawing it, and the probes with no first token sit at the top.
            limit = next(label for label in labels if label.startswith("limit"))
            assert "far above these values" in limit and labels[limit] == (True, 0)
            assert float(page.get_attribute("#ttft-chart", "data-y-max")) < 10_000
            assert labels["failed, no first token (drawn at the top)"] == (True, 3)
            page.locator("#ttft-chart").scroll_into_view_if_needed()
            _shot(page, "03-endpoint-ttft")

            page.goto(f"{base}/admin/canary/exclusion/ignore-list/")
            page.wait_for_selector("table.canary-ignore")
            canary_rows = page.locator('tr[data-layer="canary"]')
            assert canary_rows.count() >= 1
            assert "failed:" in canary_rows.first.inner_text()
            assert canary_rows.first.locator("a.canary-evidence").count() == 1
            _shot(page, "04-ignore-list")

            for name, url in (
                ("05-user-report", "/admin/canary/proberesult/correlate/"),
                ("06-routes", "/admin/routing/route/"),
                ("07-events", "/admin/routing/requestevent/"),
            ):
                page.goto(f"{base}{url}")
                page.wait_for_load_state("load")
                overflow[name] = max(_overflow(page).values())
                _shot(page, name)
            # Every changelist of the admin fits 1,400 px, rounded figures with units, one
            # time format, and no boolean icon (a red cross read as a failure where it meant
            # "no" or "not applicable").
            page.set_viewport_size({"width": NARROW, "height": 1000})
            for url in changelists:
                page.goto(f"{base}{url}")
                page.wait_for_load_state("load")
                narrow[url] = max(_overflow(page).values())
                assert page.locator("#result_list img[src*='icon-no']").count() == 0, url
            page.goto(f"{base}/admin/canary/proberesult/")
            assert re.search(r"\b\d[\d,]* ms\b", page.inner_text("#result_list")), "TTFT in whole ms"
            assert not re.search(r"\d+\.\d{4,}", page.inner_text("#result_list")), "a raw float"
            assert re.search(r"\b20\d\d-\d\d-\d\d \d\d:\d\d\b", page.inner_text("#result_list"))
            _shot(page, "08-probe-results-1400")
            page.set_viewport_size({"width": WIDTH, "height": 1000})
            page.goto(f"{base}/admin/canary/proberesult/correlate/")
            box = page.locator("#id_symptom").bounding_box()
            assert box is not None and box["x"] + box["width"] <= WIDTH
            assert console.errors == []
    finally:
        client = redis.Redis.from_url(settings.REDIS_URL)
        keys = list(client.scan_iter(f"{settings.ROUTING_BREAKER_PREFIX}:*"))
        if keys:
            client.delete(*keys)
    assert all(px <= 0 for px in overflow.values()), overflow
    assert all(px <= 0 for px in narrow.values()), {url: px for url, px in narrow.items() if px > 0}
