"""Scaling out on one machine, as `docker compose up --scale web=2 --scale worker=2` would:
two web processes (the web service's gunicorn command twice, one address each, both
behind the proxy) share their circuit breakers through Redis, and two Celery workers
split one round's endpoint tasks.

Compose gives each replica its own host name (Celery's node name); here the second
worker gets one with ``-n``, the only change to its command.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from tests.deploy.compose import ROOT
from tests.deploy.stack import Stack, staging_stack, wait_for
from tests.deploy.test_compose_stack import BROWSER_HOST, MESSAGES, MODEL

CONSECUTIVE_TO_OPEN = 5  # routing.breaker.BreakerConfig.consecutive


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    # One endpoint per probe task, so a six-endpoint round is six tasks to share.
    with staging_stack(tmp_path, "scale", CANARY_ENDPOINTS_PER_TASK="1") as s:
        yield s


def _second(stack: Stack, service: str, port: int | None = None, name: str | None = None) -> None:
    """A second replica of ``service``: the same command, its own address or node name."""
    argv = stack.argv(service)
    if port is not None:
        argv = [a.replace(f"127.0.0.1:{stack.port(service)}", f"127.0.0.1:{port}") for a in argv]
    env = stack.environment(service)
    if name is not None:
        argv += ["-n", name]
        env["OBSERVABILITY_WORKER_METRICS_PORT"] = "0"  # the replica's own container port; unused here
    if "PROMETHEUS_MULTIPROC_DIR" in env:
        env["PROMETHEUS_MULTIPROC_DIR"] += "-2"
    stack.start(service, argv, env=env, label=f"{service}-2")


def _chat(base: str, token: str) -> httpx.Response:
    return httpx.post(f"{base}/v1/chat/completions", timeout=60,
                      json={"messages": MESSAGES, "max_tokens": 60},
                      headers={"Host": BROWSER_HOST, "Authorization": f"Bearer {token}",
                               "X-Routing-Contract": "roleplay-reply@1"})


@pytest.mark.slow(180)
def test_two_web_processes_share_breakers_and_two_workers_split_a_round(stack: Stack):
    from fake_openrouter.process import free_port

    stack.start_base()
    stack.start("web")
    web2 = free_port()
    _second(stack, "web", port=web2)
    stack.start("worker")
    _second(stack, "worker", name="worker-2@%h")
    stack.wait_healthy("web")
    stack.wait_answers(f"http://127.0.0.1:{web2}/api/v1/health", "web-2", headers={"Host": "localhost"})
    stack.wait_log("worker", "ready.")
    stack.wait_log("worker-2", "ready.")

    # Two workers, one round: its endpoint tasks go to both.
    sent = subprocess.run([sys.executable, "-m", "celery", "-A", "reverie_ops", "call", "canary.tasks.round_start_task",
                           "--args", f'["{MODEL}"]'], cwd=ROOT, env=stack.environment("worker"), capture_output=True,
                          text=True, timeout=60)
    assert sent.returncode == 0, sent.stderr

    def ended() -> str | None:
        rows = stack.sql("SELECT status FROM canary_round WHERE model_id = %s", MODEL)
        return rows[0][0] if rows and rows[0][0] not in ("running", "finalizing") else None

    assert wait_for(ended, 180, "the round to end", every_s=2) == "completed"
    done = {label: len(re.findall(r"Task canary\.tasks\.endpoint_probes_task\[[^\]]+\] succeeded", stack.tail(label, 10**6)))
            for label in ("worker", "worker-2")}
    assert sum(done.values()) == 6 and all(done.values()), f"endpoint tasks per worker: {done}"
    print(f"\nendpoint tasks per worker: {done}")

    # Two web processes, one breaker: failures seen by one open the route for both.
    stack.manage("routing_contracts_load", "routing/contract_files/workloads.json")
    stack.manage("routes_sync", "--model", MODEL, "--enable-new", "--model-class", "chat-70b")
    stack.steer(["cutoff/fp8", "spare/fp8"])
    token = stack.manage("service_token", "issue", "backend").strip().split()[-1]
    first = stack.base("web")
    second = f"http://127.0.0.1:{web2}"
    for _ in range(CONSECUTIVE_TO_OPEN):
        reply = _chat(first, token)
        assert reply.status_code == 200 and reply.headers["x-routing-attempts"] == "2", reply.text[:300]
    keys = redis.Redis(port=stack.port("redis")).keys("routing:breaker*")
    assert keys, "no breaker state in Redis"
    reply = _chat(second, token)
    assert reply.status_code == 200, reply.text[:300]
    assert reply.headers["x-routing-attempts"] == "1", "the second web process tried the route the first one's failures opened"
    spare = stack.sql("SELECT name FROM routing_route WHERE provider_tag = 'spare/fp8'")[0][0]
    assert reply.headers["x-routing-route"] == spare
