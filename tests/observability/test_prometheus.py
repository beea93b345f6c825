"""A real Prometheus server scrapes the web app (gunicorn, two worker processes, in
multiprocess mode) and a Celery worker; the test reads a gateway counter, a canary gauge
and a worker counter back through Prometheus's HTTP API after known traffic.

Prometheus comes from Debian's package (scripts/prometheus.sh installs it when missing).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

from core.tokens import service_token_issue
from fake_openrouter.process import free_port
from routing.tasks import route_measurements_refresh_task
from tests.celery import conftest as celery_conftest
from tests.celery.conftest import broker_clean, start_worker  # noqa: F401 - fixtures
from tests.observability.conftest import (
    CANARY_MODEL,
    canary_state_create,
    contracts_create,
    routes_create,
)

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
PROMETHEUS = Path("/usr/bin/prometheus")


def _prometheus_binary() -> Path:
    if not PROMETHEUS.exists():
        subprocess.run(["bash", str(ROOT / "scripts" / "prometheus.sh")], check=True)  # noqa: S603, S607
    return PROMETHEUS


def _wait_http(url: str, proc: subprocess.Popen[bytes], log: Path, timeout_s: float = 40.0, **kw: object) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: process exited: {log.read_text()[-3000:]}")
        try:
            httpx.get(url, timeout=1, **kw)  # type: ignore[arg-type]
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer in {timeout_s} s: {log.read_text()[-3000:]}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


def _query(base: str, expr: str) -> list[dict]:
    body = httpx.get(f"{base}/api/v1/query", params={"query": expr}, timeout=5).json()
    assert body["status"] == "success", body
    return body["data"]["result"]


def _value_eventually(base: str, expr: str, expected: float, timeout_s: float = 20.0) -> float:
    """Poll Prometheus until ``expr`` (one series) equals ``expected``; returns the last value."""
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        result = _query(base, expr)
        if result:
            last = float(result[0]["value"][1])
            if last == expected:
                return last
        time.sleep(0.5)
    raise AssertionError(f"{expr}: expected {expected}, Prometheus says {last}")


@pytest.mark.slow(30)
def test_prometheus_reads_gateway_canary_and_worker_metrics_after_known_traffic(
        tmp_path, gateway_world, start_worker, settings):  # noqa: F811 - fixture
    binary = _prometheus_binary()
    routes_create()
    contracts_create()
    canary_state_create(suspended=2, endpoints=3)
    _, scrape_token = service_token_issue("prometheus")
    _, backend_token = service_token_issue("backend")

    web_dir, worker_dir = tmp_path / "prom-web", tmp_path / "prom-worker"
    web_port, worker_port, prom_port = free_port(), free_port(), free_port()
    env = {**os.environ, "DATABASE_URL": celery_conftest.test_database_url(), "REDIS_URL": settings.REDIS_URL,
           "CELERY_BROKER_URL": settings.CELERY_BROKER_URL, "OPENROUTER_BASE_URL": gateway_world.base_url,
           "OPENROUTER_API_KEY": "sk-or-v1-test", "ROUTING_BREAKER_PREFIX": f"test:breaker:{uuid.uuid4().hex}",
           "PROMETHEUS_MULTIPROC_DIR": str(web_dir), "DJANGO_DEBUG": "true"}
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    web_dir.mkdir()
    web_log = tmp_path / "web.log"
    web = subprocess.Popen(  # noqa: S603
        [sys.executable, "-m", "gunicorn", "reverie_ops.wsgi", "-c", "observability/gunicorn_conf.py", "-w", "2",
         "-b", f"127.0.0.1:{web_port}"],
        cwd=ROOT, env=env, stdout=web_log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)
    worker = start_worker("metrics", PROMETHEUS_MULTIPROC_DIR=str(worker_dir),
                          OBSERVABILITY_WORKER_METRICS_PORT=str(worker_port))
    config = tmp_path / "prometheus.yml"
    config.write_text(json.dumps({  # YAML is a superset of JSON
        "global": {"scrape_interval": "1s", "scrape_timeout": "900ms"},
        "scrape_configs": [
            {"job_name": "web", "metrics_path": "/metrics",
             "authorization": {"type": "Bearer", "credentials": scrape_token},
             "static_configs": [{"targets": [f"127.0.0.1:{web_port}"]}]},
            {"job_name": "worker", "authorization": {"type": "Bearer", "credentials": scrape_token},
             "static_configs": [{"targets": [f"127.0.0.1:{worker_port}"]}]},
        ],
    }))
    prom_log = tmp_path / "prometheus.log"
    prom = subprocess.Popen(  # noqa: S603
        [str(binary), f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{prom_port}"],
        stdout=prom_log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)
    prom_base = f"http://127.0.0.1:{prom_port}"
    try:
        _wait_http(f"http://127.0.0.1:{web_port}/api/v1/health", web, web_log)
        _wait_http(f"{prom_base}/-/ready", prom, prom_log)
        assert httpx.get(f"http://127.0.0.1:{web_port}/metrics", timeout=5).status_code == 401
        # The worker's listener wants the same token (it answered anyone before).
        assert httpx.get(f"http://127.0.0.1:{worker_port}/metrics", timeout=5).status_code == 401

        # Known traffic: two chat requests alpha serves, one npc request whose answer from
        # alpha fails the schema (one validation rejection) and beta serves (one fallback).
        auth = {"Authorization": f"Bearer {backend_token}"}
        body = {"messages": [{"role": "user", "content": "Say hello to the traveller."}], "max_tokens": 60}
        for contract in ("chat@1", "chat@1", "npc@1"):
            reply = httpx.post(f"http://127.0.0.1:{web_port}/v1/chat/completions", json=body, timeout=20,
                               headers={**auth, "X-Routing-Contract": contract})
            assert reply.status_code == 200, reply.text
        route_measurements_refresh_task.delay()

        _value_eventually(prom_base, 'sum(reverie_gateway_requests_total{job="web"})', 3)
        _value_eventually(prom_base, 'reverie_gateway_requests_total{contract="chat@1",outcome="accepted",final_route="alpha"}', 2)
        _value_eventually(prom_base, 'reverie_gateway_requests_total{contract="npc@1",outcome="accepted",final_route="beta"}', 1)
        _value_eventually(prom_base, 'sum(reverie_gateway_fallbacks_total)', 1)
        _value_eventually(prom_base, 'reverie_gateway_fallbacks_total{contract="npc@1",reason="invalid_response"}', 1)
        _value_eventually(prom_base, 'sum(reverie_gateway_validation_rejections_total)', 1)
        _value_eventually(prom_base, 'reverie_gateway_validation_rejections_total{route="alpha",check="schema"}', 1)
        _value_eventually(prom_base, 'sum(reverie_gateway_attempts_total)', 4)
        _value_eventually(prom_base, f'reverie_canary_suspensions_active{{model="{CANARY_MODEL}"}}', 2)
        _value_eventually(prom_base, f'sum(reverie_canary_probe_verdicts{{model="{CANARY_MODEL}",check="structured",verdict="fail"}})', 2)
        _value_eventually(prom_base, 'reverie_gateway_breaker_state{route="alpha",failure_class="invalid_response"}', 0)
        _value_eventually(
            prom_base,
            'reverie_celery_tasks_total{job="worker",task="routing.tasks.route_measurements_refresh_task",state="success"}', 1)
        targets = httpx.get(f"{prom_base}/api/v1/targets", timeout=5).json()["data"]["activeTargets"]
        assert {t["labels"]["job"]: t["health"] for t in targets} == {"web": "up", "worker": "up"}
    finally:
        _stop(prom)
        _stop(web)
        worker.stop()
