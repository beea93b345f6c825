"""Observability under faults (issue "Hardening, round three", item 5): health says what
is down with 503, ``POST /metrics`` is the wrong method (405, not a CSRF 403), and the
worker's metrics listener binds loopback by default and wants a token. Real HTTP to a
real listener; Redis down is a port nobody listens on."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from django.conf import settings
from django.test import Client
from prometheus_client import CollectorRegistry, Counter

from core.health import health_cache_clear
from core.tokens import service_token_issue
from fake_openrouter.process import free_port
from observability.worker_listener import TokenUnverifiable, metrics_listener_start


@pytest.fixture(autouse=True)
def _fresh_health() -> Iterator[None]:
    health_cache_clear()
    yield
    health_cache_clear()


@pytest.mark.django_db
def test_health_is_200_and_lists_its_checks_when_everything_answers(client):
    response = client.get("/api/v1/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "redis": "ok", "broker": "ok"}}


@pytest.mark.django_db
def test_health_names_redis_and_the_broker_when_they_are_down(client, settings):
    dead = f"redis://127.0.0.1:{free_port()}/0"
    settings.REDIS_URL = dead
    settings.CELERY_BROKER_URL = dead
    response = client.get("/api/v1/health")
    assert response.status_code == 503 and int(response["Retry-After"]) > 0
    body = response.json()
    assert body["down"] == ["redis", "broker"] and body["checks"]["database"] == "ok"
    assert body["checks"]["redis"].startswith("down: ") and "refused" in body["checks"]["redis"].lower()
    assert body["error"] == {"code": 503, "message": "down: redis, broker"}


@pytest.mark.django_db
def test_post_to_metrics_is_405_with_allow_not_a_csrf_403():
    _, token = service_token_issue("prometheus")
    browserless = Client(enforce_csrf_checks=True)
    response = browserless.post("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 405 and "GET" in response["Allow"]
    assert browserless.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 200


def test_the_worker_listener_defaults_to_loopback():
    assert settings.OBSERVABILITY_WORKER_METRICS_ADDR == "127.0.0.1"


def test_the_worker_listener_answers_only_a_valid_token():
    registry = CollectorRegistry()
    Counter("reverie_probe_total", "a sample", registry=registry).inc()
    state = {"down": False}

    def verify(authorization: str | None) -> bool:
        if state["down"]:
            raise TokenUnverifiable("the database is unavailable")
        return authorization == "Bearer good"

    port = free_port()
    server = metrics_listener_start("127.0.0.1", port, registry, verify)
    try:
        url = f"http://127.0.0.1:{port}/metrics"
        refused = httpx.get(url, timeout=5)
        assert refused.status_code == 401 and refused.headers["WWW-Authenticate"].startswith("Bearer")
        assert "reverie_probe_total" not in refused.text
        assert httpx.get(url, headers={"Authorization": "Bearer bad"}, timeout=5).status_code == 401
        served = httpx.get(url, headers={"Authorization": "Bearer good"}, timeout=5)
        assert served.status_code == 200 and "reverie_probe_total 1.0" in served.text
        state["down"] = True
        unavailable = httpx.get(url, headers={"Authorization": "Bearer good"}, timeout=5)
        assert unavailable.status_code == 503 and "database" in unavailable.text
    finally:
        server.shutdown()
        server.server_close()
