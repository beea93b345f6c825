"""Warm before the first request, against a real gunicorn with the deployed settings file:
each worker's warm-up (the judges and the language detector, then its gateway) is logged
before the worker serves its first request. Ordering, not timing: the log lines and the
access lines go to one file in the order the processes wrote them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest
from django.conf import settings

from core.tokens import service_token_issue
from fake_openrouter.process import free_port, wait_accepting
from routing.models import Route
from routing.services.contracts import contract_version_create
from tests.routing.conftest import MODEL, endpoint, fleet
from tests.routing.counting_front import CountingFront

REPO = Path(__file__).resolve().parents[2]
WARM = re.compile(r"warm: pid=(\d+) (.*)$")
ACCESS = re.compile(r"^ACCESS <(\d+)> GET /api/v1/health")


def _serve_first_request(tmp_path: Path, preload: bool, env: dict[str, str] | None = None,
                         first: tuple[str, dict[str, str], bytes] | None = None,
                         wait_for: tuple[str, int] | None = None) -> tuple[list[str], int]:
    """Start gunicorn (2 workers), send ``first`` (method and path, headers, body; by
    default ``GET /api/v1/health``) as soon as it listens, wait until the log holds
    ``wait_for`` (a text, how many times; at most 60 s), stop it; its log lines and the
    arbiter's pid."""
    db = settings.DATABASES["default"]
    port = free_port()
    env = {**os.environ, "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
           "REDIS_URL": settings.REDIS_URL, "LOG_LEVEL": "INFO", "REVERIE_WARM_START": "1",
           "REVERIE_PRELOAD_APP": "1" if preload else "0", "DJANGO_SECRET_KEY": "warm-start-test-" + "x" * 40,
           "DJANGO_HTTPS": "false", **(env or {})}
    log_path = tmp_path / "gunicorn.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
            [sys.executable, "-m", "gunicorn", "-c", "observability/gunicorn_conf.py", "reverie_ops.wsgi",
             "-k", "gthread", "--threads", "4", "-w", "2", "-b", f"127.0.0.1:{port}", "--timeout", "120",
             "--access-logfile", "-", "--access-logformat", "ACCESS %(p)s %(r)s %(s)s",
             "--control-socket", str(tmp_path / "gunicorn.ctl")],
            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        # The first request goes out as soon as the arbiter listens: before any worker
        # has loaded, so it waits in the listen queue for the first warm worker.
        if not wait_accepting(port, proc, 120):
            raise RuntimeError(log_path.read_text()[-2000:])
        if first is None:
            response = httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=120)
            assert response.status_code in (200, 503)
        else:
            (method, path), headers, body = first[0].split(" ", 1), first[1], first[2]
            response = httpx.request(method, f"http://127.0.0.1:{port}{path}", headers=headers, content=body, timeout=120)
            assert response.status_code == 200, response.text
        time.sleep(0.5)  # the access line is written after the response
        end = time.monotonic() + 60
        while wait_for is not None and log_path.read_text().count(wait_for[0]) < wait_for[1] and time.monotonic() < end:
            time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(30)
    return log_path.read_text().splitlines(), proc.pid


@pytest.mark.django_db
@pytest.mark.parametrize("preload", [True, False])
def test_every_worker_warms_before_its_first_request(tmp_path, preload):
    lines, master = _serve_first_request(tmp_path, preload)
    access = next(i for i, line in enumerate(lines) if ACCESS.match(line))
    worker = int(ACCESS.match(lines[access]).group(1))  # type: ignore[union-attr]
    warmed = {(int(m.group(1)), m.group(2)) for line in lines[:access] if (m := WARM.search(line))}
    steps = {pid: text for pid, text in warmed}
    if preload:
        # The arbiter built the judges once before forking; the worker built its gateway.
        assert "detector=" in steps[master] and "judges=" in steps[master]
        assert "gateway=" in steps[worker] and "detector=" not in steps[worker]
    else:
        assert "detector=" in steps[worker] and "gateway=" in steps[worker]
        assert master not in steps


@pytest.mark.django_db(transaction=True)  # the server reads the rows: committed, not a test's transaction
def test_each_worker_opens_its_upstream_connection_before_its_first_request(tmp_path, start_sim, monkeypatch):
    """Preloaded (the deployed default): the arbiter opens none before the fork (a socket
    shared by the workers), each worker opens its own, and the first gateway request
    goes out on one of them: the front counts one connection per worker, no more."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    sim = start_sim(fleet(endpoint("alpha")))
    front = CountingFront(sim.port)
    Route.objects.create(name="alpha", model_id=MODEL, provider_tag="alpha/fp8", modalities=["text"],
                         context_length=131072, price_prompt_usd="0.0000001", price_completion_usd="0.0000002")
    contract_version_create({"name": "chat", "workload": "text", "deadline_s": 30, "max_attempts": 1,
                             "max_fallbacks": 0, "finish_reasons": ["stop", "length"]})
    _, token = service_token_issue("warm-start")
    body = b'{"model": "%s", "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 30}' % MODEL.encode()
    headers = {"Authorization": f"Bearer {token}", "X-Routing-Contract": "chat@1", "Content-Type": "application/json"}
    try:
        lines, master = _serve_first_request(
            tmp_path, preload=True, env={"OPENROUTER_BASE_URL": f"{front.url}/api/v1", "OPENROUTER_API_KEY": "sk-or-v1-test",
                                         "ROUTING_BREAKER_PREFIX": f"test:breaker:{uuid.uuid4().hex}"},
            first=("POST /v1/chat/completions", headers, body), wait_for=("connection kept", 2))
    finally:
        front.close()
    upstream = {int(m.group(1)) for line in lines if (m := WARM.search(line)) and "upstream=" in m.group(2)}
    assert len(upstream) == 2 and master not in upstream, lines
    assert sum("connection kept" in line for line in lines) == 2, lines
    assert front.connections == 2  # the workers' two, none for the first request
