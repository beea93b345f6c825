"""Bench: 10 models x 15 endpoints, one scheduled round each, on two Celery workers.

Issue "Scheduled, distributed canary rounds", scale: the wall time from dispatching the 10
rounds to the last one finalised must be at most 1.5 times the slowest single endpoint's
own probe chain (its four probes, concurrently, measured in this same run). Also prints
tasks per second and broker (Redis) commands per probe.

Needs PostgreSQL and Redis on loopback (`make bench` starts them). Uses a fresh database
`reverie_bench` and Redis database 9 (flushed).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from _setup import ROOT, fresh_postgres, simulator

DB_URL = fresh_postgres("reverie_bench")
BROKER = "redis://127.0.0.1:6379/9"
os.environ["REDIS_URL"] = BROKER
os.environ["CELERY_BROKER_URL"] = BROKER
os.environ["CANARY_RATE_LIMIT_REDIS"] = "true"

from _setup import django_on  # noqa: E402

django_on(DB_URL)

import redis  # noqa: E402
from django.conf import settings  # noqa: E402

from canary.models import Endpoint, Round  # noqa: E402
from canary.probes import PROBE_KINDS, EndpointFacts, probe_run  # noqa: E402
from canary.services import openrouter_client, probe_settings  # noqa: E402
from canary.tasks import round_start_task  # noqa: E402
from tests.verdicts.fleets import NAMES, endpoint  # noqa: E402

MODELS = [f"bench/model-{i}" for i in range(10)]


def scale_fleet() -> dict:
    models = []
    for i, model_id in enumerate(MODELS):
        eps = [endpoint(name, {"ttft_ms": [200, 1500]}) for name in NAMES]
        models.append({"id": model_id, "context_length": 131072, "endpoints": eps})
        del i
    return {"seed": 11, "models": models}


def start_worker(name: str, base_url: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "DATABASE_URL": DB_URL, "OPENROUTER_BASE_URL": base_url}
    return subprocess.Popen(  # noqa: S603
        [sys.executable, "-m", "celery", "-A", "reverie_ops", "worker", "-P", "threads", "-c", os.environ.get("BENCH_THREADS", "16"), "-Q", "canary",
         "-n", f"{name}@%h", "-l", os.environ.get("BENCH_WORKER_LOG", "warning"), "--without-gossip", "--without-mingle"],
        cwd=ROOT, env=env, stdout=open(f"/tmp/bench-{name}.log", "wb"), stderr=subprocess.STDOUT,
    )


def chain_s(client, model_id: str, info) -> float:  # type: ignore[no-untyped-def]
    facts = EndpointFacts(info.tag, info.provider_name, "structured_outputs" in info.supported_parameters)
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda k: probe_run(k, client, model_id, facts, "pt", probe_settings()), PROBE_KINDS))
    return time.perf_counter() - start


def main() -> None:
    r = redis.Redis.from_url(BROKER)
    r.flushdb()
    sim, base = simulator(scale_fleet())
    settings.OPENROUTER_BASE_URL = base
    workers = [start_worker(f"w{i}", base) for i in range(2)]
    try:
        time.sleep(6)  # both workers up
        client = openrouter_client()
        infos = client.list_endpoints(MODELS[0])
        chains = [chain_s(client, MODELS[0], info) for info in infos]
        slowest = max(chains)
        stats_before = r.info("commandstats")
        at = datetime(2026, 12, 1, 10, 0, tzinfo=UTC).isoformat()
        start = time.perf_counter()
        for model_id in MODELS:
            round_start_task.delay(model_id, at)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if Round.objects.filter(status="completed").count() == len(MODELS):
                break
            time.sleep(0.05)
        wall = time.perf_counter() - start
        stats_after = r.info("commandstats")
        commands = sum(v["calls"] for v in stats_after.values()) - sum(v["calls"] for v in stats_before.values())
        probes = Endpoint.objects.count() * len(PROBE_KINDS)
        tasks = len(MODELS) * 2 + Endpoint.objects.count()  # start + finalizer timer per round, one task per endpoint
        done = Round.objects.filter(status="completed").count()
        print(f"rounds completed: {done} of {len(MODELS)}; endpoints: {Endpoint.objects.count()}; probes: {probes}")
        print(f"slowest single endpoint chain: {slowest:.2f} s (of {len(chains)} measured)")
        print(f"wall time of the 10 rounds: {wall:.2f} s")
        print(f"ratio wall / slowest chain: {wall / slowest:.3f} (target <= 1.5)")
        print(f"tasks per second: {tasks / wall:.1f}")
        print(f"broker (Redis) commands per probe: {commands / probes:.1f} (includes rate-limit counters)")
        tick = os.sysconf("SC_CLK_TCK")

        def cpu_s(pid: int) -> float:
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / tick

        print(f"CPU seconds: simulator {cpu_s(sim.pid):.1f}, workers {', '.join(f'{cpu_s(w.pid):.1f}' for w in workers)}")
    finally:
        for w in workers:
            w.terminate()
        for w in workers:
            w.wait(15)
        sim.terminate()
        sim.wait(15)
        t = os.times()
        print(f"CPU seconds used by the workers and the simulator together: {t.children_user + t.children_system:.1f} "
              f"(this process: {t.user + t.system:.1f}) on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
