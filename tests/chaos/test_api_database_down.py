"""PostgreSQL stopped under the internal API: a throwaway cluster this test creates with
the machine's PostgreSQL binaries (never the shared server), the web app under gunicorn
with the compose web service's database settings, the cluster stopped and started again."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest
from django.conf import settings

from core.tokens import VERIFY_CACHE_S
from fake_openrouter.process import free_port
from tests.deploy.compose import ROOT, service_environment

MODEL = "meta-llama/llama-3.3-70b-instruct"
PATHS = ("/api/v1/routing/ignore", "/api/v1/routing/provider")


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not found:
        pytest.skip(f"no PostgreSQL {name} on this machine")
    return found[-1]


class Cluster:
    """A PostgreSQL cluster of its own in a temporary directory, on a free port. initdb
    refuses root, so as root it runs as the ``postgres`` user."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="reverie-chaos-pg-"))
        self.data = self.dir / "data"
        self.port = free_port()
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_user:
            shutil.chown(self.dir, "postgres")
        self._run(_bin("initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/reverie_ops_chaos"

    def _run(self, *argv: str) -> None:
        subprocess.run([*self.as_user, *argv], check=True, capture_output=True, timeout=60, cwd=self.dir)

    def start(self) -> None:
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
        self._run(_bin("pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.dir / "log"), "-w", "start")

    def stop(self) -> None:
        self._run(_bin("pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def remove(self) -> None:
        try:
            self.stop()
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    pg = Cluster()
    try:
        pg.start()
        with psycopg.connect(f"postgres://postgres@127.0.0.1:{pg.port}/postgres", autocommit=True) as conn:
            conn.execute("CREATE DATABASE reverie_ops_chaos")
        yield pg
    finally:
        pg.remove()


def _web_env(url: str) -> dict[str, str]:
    """The compose web service's database settings (pool size and timeouts), pointed at
    the throwaway cluster; the suite's secret and plain HTTP."""
    compose_env = service_environment("web")
    env = {**os.environ, "DATABASE_URL": url}
    env.update({k: v for k, v in compose_env.items() if k.startswith("DATABASE_") and k != "DATABASE_URL"})
    return env


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def web(cluster: Cluster) -> Iterator[tuple[str, str, Cluster]]:
    env = _web_env(cluster.url)
    _manage(env, "migrate", "--noinput", "-v", "0")
    token = _manage(env, "service_token", "issue", "chaos").splitlines()[-1]
    port = free_port()
    proc = subprocess.Popen(  # noqa: S603 - our own interpreter and app
        [sys.executable, "-m", "gunicorn", "reverie_ops.wsgi", "-b", f"127.0.0.1:{port}", "--worker-class", "gthread",
         "-w", "1", "--threads", "8", "--timeout", "120", "--control-socket", str(cluster.dir / "gunicorn.ctl")],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                httpx.get(base + "/api/v1/health", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        yield base, token, cluster
    finally:
        proc.terminate()
        proc.wait(10)


def _get(base: str, path: str, token: str) -> tuple[httpx.Response, float]:
    start = time.monotonic()
    response = httpx.get(base + path, params={"model": MODEL}, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    return response, time.monotonic() - start


@pytest.mark.slow(30)
def test_database_down_is_a_json_503_with_retry_after_within_2_s_and_recovers(web: tuple[str, str, Cluster]):
    base, token, cluster = web
    for path in PATHS:
        assert _get(base, path, token)[0].status_code == 200
    cluster.stop()
    timings = []
    # A bad token cannot be checked either: 503 at once. A good one is served from the
    # per-process caches of verified tokens and lists until they expire, then 503 too.
    for tok, wait_s in (("not-a-token", 0.0), (token, max(VERIFY_CACHE_S, settings.ROUTING_IGNORE_CACHE_S) + 0.5)):
        time.sleep(wait_s)
        for path in PATHS:
            for _ in range(2):  # the first request of a connection and the ones after
                response, elapsed = _get(base, path, tok)
                timings.append(elapsed)
                assert response.status_code == 503, response.text[:300]
                assert response.headers["Content-Type"] == "application/json"
                assert int(response.headers["Retry-After"]) > 0
                assert response.json()["error"]["code"] == 503
                assert "database" in response.json()["error"]["message"]
    # The gateway answers in its own error shape, as a transient failure.
    start = time.monotonic()
    gateway = httpx.post(base + "/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]},
                         headers={"Authorization": "Bearer not-a-token", "X-Routing-Contract": "roleplay-reply@1"}, timeout=30)
    timings.append(time.monotonic() - start)
    assert gateway.status_code == 503 and int(gateway.headers["Retry-After"]) > 0, gateway.text[:300]
    error = gateway.json()["error"]
    assert (error["type"], error["failure_class"], error["code"]) == ("routing_error", "transient", "database_unavailable")
    assert error["operation_id"] and gateway.headers["X-Routing-Operation-Id"] == error["operation_id"]
    assert max(timings) < 2.0, f"503s took {timings}"
    cluster.start()
    back = time.monotonic()
    while True:
        response, _ = _get(base, PATHS[0], token)
        if response.status_code == 200:
            break
        assert response.status_code == 503
        assert time.monotonic() - back < 15, "the API did not recover within 15 s of PostgreSQL's return"
        time.sleep(0.2)
    recovered_s = time.monotonic() - back
    print(f"503 answers in at most {max(timings):.2f} s; recovered {recovered_s:.2f} s after PostgreSQL restarted")
    assert _get(base, PATHS[1], token)[0].status_code == 200
    assert _get(base, PATHS[0], "not-a-token")[0].status_code == 401


@pytest.mark.slow(30)
def test_with_the_database_down_health_says_so_and_metrics_answers_json(web: tuple[str, str, Cluster]):
    base, token, cluster = web
    assert httpx.get(base + "/api/v1/health", timeout=10).json()["status"] == "ok"
    cluster.stop()
    time.sleep(1.1)  # past the health check's per-process cache
    health = httpx.get(base + "/api/v1/health", timeout=10)
    assert health.status_code == 503 and int(health.headers["Retry-After"]) > 0, health.text[:300]
    body = health.json()
    assert body["down"] == ["database"] and body["checks"]["redis"] == "ok" and body["checks"]["broker"] == "ok"
    assert body["checks"]["database"].startswith("down: ")
    # /metrics cannot check a token it has not seen without the database: its own JSON 503.
    metrics = httpx.get(base + "/metrics", headers={"Authorization": "Bearer not-a-token"}, timeout=10)
    assert metrics.status_code == 503 and metrics.headers["Content-Type"] == "application/json", metrics.text[:300]
    assert int(metrics.headers["Retry-After"]) > 0 and "database" in metrics.json()["error"]["message"]
    cluster.start()
    back = time.monotonic()
    while httpx.get(base + "/api/v1/health", timeout=10).status_code != 200:
        assert time.monotonic() - back < 15, "health did not recover within 15 s of PostgreSQL's return"
        time.sleep(0.3)
