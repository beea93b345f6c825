"""Bench: 10 models x 15 endpoints, one scheduled round each, on two Celery workers.

Issue "Scheduled, distributed canary rounds", scale: the wall time from dispatching the 10
rounds to the last one finalised must be at most 1.5 times the slowest single endpoint's
own probe chain (its four probes, concurrently, as in a round, measured in this same run
after a warm-up chain, so that loading the language models and the first connection do
not inflate it). Also prints tasks per second, broker (Redis) commands per probe, and the
CPU every part used during the rounds: their sum over the cores is the CPU floor, the
shortest wall time this machine allows whatever the scheduling.

Workers run ``-P threads -c 80`` (``BENCH_THREADS``): a round's 150 endpoint tasks are
all in flight at once on the two workers, as the README sizes ``-c`` for a deployment.
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

from canary import judges  # noqa: E402
from canary.models import Endpoint, Round  # noqa: E402
from canary.probes import PROBE_KINDS, EndpointFacts, probe_run  # noqa: E402
from canary.services.client import openrouter_client, probe_settings  # noqa: E402
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
        [sys.executable, "-m", "celery", "-A", "reverie_ops", "worker", "-P", "threads", "-c", os.environ.get("BENCH_THREADS", "80"), "-Q", "canary",
         "-n", f"{name}@%h", "-l", os.environ.get("BENCH_WORKER_LOG", "warning"), "--without-gossip", "--without-mingle"],
        cwd=ROOT, env=env, stdout=open(f"/tmp/bench-{name}.log", "wb"), stderr=subprocess.STDOUT,
    )


def cpu_s(pid: int, parts: tuple[int, ...] = (11, 12)) -> float:
    """CPU seconds used so far by process ``pid`` (Linux /proc; user + system by default,
    ``(12,)`` for system only); 0 if it is gone."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(fields[i]) for i in parts) / os.sysconf("SC_CLK_TCK")


def service_cpu_s() -> dict[str, float]:
    """CPU seconds used so far by PostgreSQL (all backends) and Redis, by process name."""
    totals = {"postgres": 0.0, "redis-server": 0.0}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            comm = open(f"/proc/{entry}/comm").read().strip()
        except OSError:
            continue
        if comm in totals:
            totals[comm] += cpu_s(int(entry))
    return totals


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
        judges.warm_up()
        infos = client.list_endpoints(MODELS[0])
        chain_s(client, MODELS[1], infos[0])  # warm-up: first TLS-free connect, lazy imports
        chains = [chain_s(client, MODELS[0], info) for info in infos]
        slowest = max(chains)
        print("single endpoint chains (s):", " ".join(f"{c:.2f}" for c in chains))
        stats_before = r.info("commandstats")
        cpu_before = {p.pid: cpu_s(p.pid) for p in (sim, *workers)}
        sys_before = sum(cpu_s(w.pid, (12,)) for w in workers)
        services_before = service_cpu_s()
        own_before = time.process_time()
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
        cpu_round = {pid: cpu_s(pid) - before for pid, before in cpu_before.items()}
        workers_sys = sum(cpu_s(w.pid, (12,)) for w in workers) - sys_before
        services_after = service_cpu_s()
        # Backends that exited during the round took their CPU with them: a lower bound.
        services_round = {k: max(0.0, services_after[k] - v) for k, v in services_before.items()}
        own_round = time.process_time() - own_before
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
        cores = os.cpu_count() or 1
        used = sum(cpu_round.values()) + sum(services_round.values()) + own_round
        print(f"CPU seconds during the rounds: workers {', '.join(f'{cpu_round[w.pid]:.1f}' for w in workers)}, "
              f"simulator {cpu_round[sim.pid]:.1f}, PostgreSQL {services_round['postgres']:.1f}, "
              f"Redis {services_round['redis-server']:.1f}, this process {own_round:.1f}: "
              f"{used:.1f} of {wall * cores:.1f} available on {cores} cores "
              f"(workers' share in the kernel: {workers_sys:.1f})")
        print(f"CPU floor: {used / cores:.2f} s of wall even if every core were busy all the time "
              f"-> ratio floor {used / cores / slowest:.2f} on this machine")
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
