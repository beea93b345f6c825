"""The on-call pages and /metrics over Django's test client, on the real database and Redis."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest
import redis
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from canary.models import Endpoint, EndpointRound, Exclusion
from core.tokens import service_token_issue
from observability.fixtures import request_add
from routing.models import Route
from routing.services import breaker_store, gateway_reset
from tests.observability.conftest import CANARY_MODEL, canary_state_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin() -> Client:
    user = User.objects.create_superuser("root", password="pw-for-tests-only")  # noqa: S106
    client = Client()
    client.force_login(user)
    return client


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


def _pinned_routes() -> None:
    for i in range(3):
        Route.objects.create(name=f"watched-{i}", model_id=CANARY_MODEL, provider_tag=f"acme/v{i}", modalities=["text"],
                             context_length=8192)


def test_metrics_needs_a_service_token_and_exposes_breakers_and_canary(client, breaker_prefix):
    canary_state_create(suspended=2, endpoints=3)
    _pinned_routes()
    now_ms = int(time.time() * 1000)
    store = breaker_store()
    for _ in range(2):
        store.record("watched-0", now_ms, "transient")
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer nope").status_code == 401
    _, token = service_token_issue("prometheus")
    text = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}").content.decode()
    assert 'reverie_gateway_breaker_state{failure_class="transient",route="watched-0"} 2.0' in text
    assert 'reverie_gateway_breaker_state{failure_class="transient",route="watched-1"} 0.0' in text
    assert f'reverie_canary_suspensions_active{{model="{CANARY_MODEL}"}} 2.0' in text
    assert f'reverie_canary_probe_verdicts{{check="structured",endpoint="acme/v0",model="{CANARY_MODEL}",verdict="fail"}} 1.0' in text
    assert f'reverie_canary_weak_probes{{check="refusal",model="{CANARY_MODEL}"}} 1.0' in text
    assert f'reverie_canary_rounds_total{{model="{CANARY_MODEL}",status="completed"}} 1.0' in text
    assert f'reverie_canary_last_round_duration_seconds{{model="{CANARY_MODEL}"}} 30.0' in text


def test_the_breakers_page_shows_state_failures_and_the_next_trial(admin, breaker_prefix):
    rnd = canary_state_create(suspended=1, endpoints=3)
    _pinned_routes()
    frozen = Endpoint.objects.get(tag="acme/v1")
    EndpointRound.objects.create(round=rnd, endpoint=frozen, outcome="frozen", created_at=rnd.started_at,
                                 evidence={"replies": {"transport": {"http_429": 4}, "probes": 4}})
    # The attempts that opened watched-2's breaker: an answer, then two rejected ones.
    now = timezone.now()
    request_add(now - timedelta(minutes=3), contract="chat@1", attempts=[("watched-2", "accepted")])
    for minutes in (2, 1):
        request_add(now - timedelta(minutes=minutes), contract="chat@1", attempts=[("watched-2", "rejected")],
                    outcome="failed")
    now_ms = int(time.time() * 1000)
    store = breaker_store()
    store.record("watched-2", now_ms, "invalid_response")
    store.record("watched-2", now_ms, "invalid_response")
    page = admin.get("/admin/observability/breakerboard/").content.decode()
    assert "1 open, 0 half-open." in page
    row = page.split('<th scope="row">watched-2</th>')[1].split("</tr>")[0]
    assert "invalid_response" in row and 'class="obs-open">open' in row
    assert time.strftime("%Y-%m-%d %H:%M", time.gmtime((now_ms + 30_000) / 1000)) in row  # next half-open trial
    why = page.split('<th scope="row">watched-2</th>')[1].split('class="obs-breaker-why"')[1].split("</tr>")[0]
    assert "<b>Recent attempts:</b> 2 of the last 3 attempts failed as invalid_response: invalid_response ×2" in why
    assert "<b>What to do:</b> Nothing to undo" in why
    closed = page.split('id="closed-routes"')[1]
    assert "suspended until" in closed.split("watched-0")[1].split("</tr>")[0]
    frozen_cell = closed.split("watched-1")[1].split("</tr>")[0]
    assert f'href="/admin/canary/endpoint/{frozen.pk}/history/"' in frozen_cell
    assert "last round frozen: http_429 on 4 of 4 probes" in frozen_cell


def test_the_routes_list_says_when_the_canary_suspended_or_an_exclusion_covers_a_route(admin, breaker_prefix):
    canary_state_create(suspended=1, endpoints=3)
    _pinned_routes()
    now = timezone.now()
    Exclusion.objects.create(model_id=CANARY_MODEL, layer="incident", target="acme/v2", reason="outage",
                             created_by="root", created_at=now, expires_at=now + timedelta(hours=2))
    assert Endpoint.objects.filter(model_id=CANARY_MODEL).count() == 3
    page = admin.get("/admin/routing/route/").content.decode()
    cells = {name: page.split(f">{name}</a>")[1].split("</tr>")[0] for name in ("watched-0", "watched-1", "watched-2")}
    assert "suspended until" in cells["watched-0"]
    assert "excluded (incident)" in cells["watched-2"]
    assert "suspended" not in cells["watched-1"] and "excluded" not in cells["watched-1"]


def test_the_reliability_page_shows_each_window_and_the_masking_warning(admin):
    now = timezone.now()
    for i in range(30):
        request_add(now - timedelta(minutes=90), contract="chat@1", attempts=[("alpha", "failed" if i < 9 else "accepted")],
                    outcome="failed" if i < 9 else "accepted")
    for i in range(30):
        request_add(now - timedelta(minutes=20), contract="chat@1",
                    attempts=[("alpha", "rejected"), ("beta", "accepted")] if i < 6 else [("alpha", "accepted")])
    page = admin.get("/admin/observability/reliability/").content.decode()
    for window in ("1h", "24h", "7d"):
        assert f'id="window-{window}"' in page
    warning = page.split('id="masking-warning"')[1].split("</div>")[0]
    assert "Route <b>alpha</b> over 1h" in warning and "70% → 100%" in warning and "0% → 20%" in warning
    assert 'id="roles-1h"' in page and "fallback" in page.split('id="roles-1h"')[1]


def _open_with_reason(store, route: str, now_ms: int, op: str) -> None:
    from routing.breaker import FailureDetail

    for i in range(2):
        store.record(route, now_ms, "invalid_response",
                     detail=FailureDetail("invalid_response", "language", None, f"{op}-{i}", now_ms, "German, not English"))


def test_an_open_breaker_says_why_on_the_page_the_json_endpoint_and_metrics(admin, client, breaker_prefix):
    _pinned_routes()
    now_ms = int(time.time() * 1000)
    store = breaker_store()
    _open_with_reason(store, "watched-1", now_ms - 10_000, "op")
    page = admin.get("/admin/observability/breakerboard/").content.decode()
    row = page.split('<th scope="row">watched-1</th>')[1].split("</tr>")[0]
    assert "invalid_response: language" in row and "op-1" in row and "German, not English" in row
    assert client.get("/api/v1/routing/breakers").status_code == 401
    _, token = service_token_issue("oncall")
    body = client.get("/api/v1/routing/breakers", HTTP_AUTHORIZATION=f"Bearer {token}").json()
    [breaker] = [b for b in body["breakers"] if b["route"] == "watched-1"]
    assert breaker["state"] == "open" and breaker["failure_class"] == "invalid_response"
    assert breaker["reason"]["operation_id"] == "op-1" and breaker["reason"]["check"] == "language"
    assert breaker["since"] < breaker["until"]
    assert [f["operation_id"] for f in breaker["last_failures"]] == ["op-1", "op-0"]
    assert 9.0 <= body["open_seconds"]["watched-1"] <= 15.0 and body["open_seconds"]["watched-0"] == 0
    text = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}").content.decode()
    line = next(x for x in text.splitlines() if x.startswith('reverie_gateway_breaker_open_seconds_total{route="watched-1"}'))
    assert 9.0 <= float(line.split()[-1]) <= 15.0
    assert 'reverie_gateway_breaker_open_seconds_total{route="watched-0"} 0.0' in text


def test_open_time_counts_overlapping_classes_once():
    from observability.breakers import open_seconds

    assert open_seconds({"open_total_ms": "30000", "open_covered_until": "100000"}, 90_000) == 20.0
    assert open_seconds({"open_total_ms": "30000", "open_covered_until": "100000"}, 200_000) == 30.0
    assert open_seconds({}, 1) == 0.0
