"""The on-call pages in real headless Chromium: a superuser opens Observability >
Reliability (with a masking warning) and > Circuit breakers (an open breaker), and the
routes list with its canary column. No console or page errors; screenshots in
test-artifacts/."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest
import redis
from django.contrib.auth.models import User
from django.utils import timezone

from observability.fixtures import request_add
from routing.models import Route
from routing.services.wiring import breaker_store, gateway_reset
from tests.browser.test_dashboards_browser import ARTIFACTS, chromium_page, painted
from tests.observability.conftest import CANARY_MODEL, canary_state_create
from tests.web.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _shot(page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"observability-{name}.png"), full_page=True)


def test_on_call_reads_reliability_breakers_and_routes(live_server, settings):
    settings.ROUTING_BREAKER_PREFIX = f"test:breaker:{uuid.uuid4().hex}"
    settings.ROUTING_BREAKER = {"consecutive": 2, "open_s": 30}
    gateway_reset()
    now = timezone.now()
    canary_state_create(suspended=1, endpoints=3)
    for i in range(3):
        Route.objects.create(name=f"watched-{i}", model_id=CANARY_MODEL, provider_tag=f"acme/v{i}",
                             modalities=["text"], context_length=8192)
    for i in range(30):
        request_add(now - timedelta(minutes=90), contract="chat@1",
                    attempts=[("watched-1", "failed" if i < 9 else "accepted")], outcome="failed" if i < 9 else "accepted")
    for i in range(30):
        request_add(now - timedelta(minutes=20), contract="chat@1",
                    attempts=[("watched-1", "rejected"), ("watched-2", "accepted")] if i < 6 else [("watched-1", "accepted")])
    store = breaker_store()
    for _ in range(2):
        store.record("watched-2", int(time.time() * 1000), "transient")
    User.objects.create_superuser("oncall", password=PASSWORD)
    try:
        with chromium_page() as (page, console):
            page.goto(f"{live_server.url}/admin/login/?next=/admin/")
            page.fill("#id_username", "oncall")
            page.fill("#id_password", PASSWORD)
            page.click("input[type=submit]")
            page.goto(f"{live_server.url}/admin/observability/")
            page.click("text=Reliability")
            page.wait_for_selector("#window-7d", state="attached")
            assert "watched-1" in page.inner_text("#masking-warning")
            assert page.locator("#roles-1h tbody tr").count() == 2
            # Every time series is drawn; the masking warning is marked on the rate charts.
            for chart in ("success", "rejection", "fallback", "p95"):
                assert painted(page.wait_for_selector(f'canvas#{chart}-chart[data-rendered="true"]')) > 500, chart
            assert page.evaluate("JSON.parse(document.getElementById('rejection-data').textContent).marks.length") >= 1
            _shot(page, "01-reliability")
            page.click("nav.canary-tabs >> text=Circuit breakers")
            page.wait_for_selector("#breakers")
            row = page.locator("#breakers tbody tr", has_text="watched-2")
            assert "open" in row.inner_text() and "transient" in row.inner_text()
            # Breaker state over time: watched-2 steps up to open.
            assert painted(page.wait_for_selector('canvas#breaker-chart[data-rendered="true"]')) > 500
            steps = page.evaluate("JSON.parse(document.getElementById('breaker-data').textContent).routes")
            assert [r["route"] for r in steps] == ["watched-2"] and steps[0]["points"][-1]["y"] == 2
            _shot(page, "02-breakers")
            page.click("nav.canary-tabs >> text=Routes")
            page.wait_for_selector("#result_list")
            assert "suspended until" in page.locator("#result_list tr", has_text="watched-0").inner_text()
            _shot(page, "03-routes")
            # Every table fits the 1440 px window.
            assert page.evaluate("document.documentElement.scrollWidth") <= 1440
            assert console.errors == []
    finally:
        client = redis.Redis.from_url(settings.REDIS_URL)
        keys = list(client.scan_iter(f"{settings.ROUTING_BREAKER_PREFIX}:*"))
        if keys:
            client.delete(*keys)
