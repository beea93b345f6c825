"""Bench: 10 models x 15 endpoints, one scheduled round each, on two Celery workers.

Issue "Scheduled, distributed canary rounds", scale, as restated by issue #30 (one
OpenRouter wire on httpx): the wall time from dispatching the 10 rounds to the last one
finalised must be at most 1.6 times the slowest single endpoint's
own probe chain (its four probes, concurrently, as in a round, measured in this same run
after a warm-up chain, so that loading the language models and the first connection do
not inflate it). Also prints tasks per second, broker (Redis) commands per probe, and the
CPU every part used during the rounds: their sum over the cores is the CPU floor, the
shortest wall time this machine allows whatever the scheduling.

Workers run ``-P threads -c 80`` (``BENCH_THREADS``): a round's endpoint tasks (150
endpoints in batches of ``CANARY_ENDPOINTS_PER_TASK``) are all in flight at once on the
two workers, as the README sizes ``-c`` for a deployment.
``--workers N`` runs N worker processes instead of two; the bench prints probes per
second per worker process and per second of a worker's CPU (what sizes a deployment:
README, "How it scales"), and the time to first token measured at the wire against the
drawn one (p50/p95), beside the wait on our own side that the measurement excludes, and
the simulator's own clock of the same probes' first tokens, which starts when its handler
does: the gap between the two clocks is the simulator's queue before its handler (its one
event loop under the round's burst) and our reading of the first token (README, "How it
scales": measured once, nearly all of it the simulator's queue).
Every wait has a timeout, and a worker that dies ends the bench with a message.
``BENCH_PROFILE_DIR=DIR`` samples the workers and the simulator with py-spy during the
rounds (``DIR/w0.raw``, ``DIR/sim.raw``: collapsed stacks of the thread holding the GIL,
100 Hz); the sampling slows the rounds, so such a run's ratio means nothing.
Needs PostgreSQL and Redis on loopback (`make bench` starts them). Uses a fresh database
`reverie_bench` and Redis database 9 (flushed; ``BENCH_DB_NAME`` and ``BENCH_REDIS_URL`` name others).
"""

from __future__ import annotations

import argparse
import math
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from _setup import ROOT, fresh_postgres, listen_overflows, proc_cpu_s, scale_fleet, simulator

# Two people benching on one machine name their own database and Redis database.
DB_URL = fresh_postgres(os.environ.get("BENCH_DB_NAME", "reverie_bench"))
BROKER = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/9")
os.environ["REDIS_URL"] = BROKER
os.environ["CELERY_BROKER_URL"] = BROKER
os.environ["CANARY_RATE_LIMIT_REDIS"] = "true"

from _setup import django_on  # noqa: E402

django_on(DB_URL)

import httpx  # noqa: E402
import redis  # noqa: E402
from django.conf import settings  # noqa: E402

from canary import judges  # noqa: E402
from canary.models import Endpoint, ProbeResult, Round  # noqa: E402
from canary.probes import PROBE_KINDS, EndpointFacts, probe_run  # noqa: E402
from canary.services.client import openrouter_client, probe_settings  # noqa: E402
from canary.tasks import round_start_task  # noqa: E402
from reverie_ops.celery import app  # noqa: E402

MODELS = [f"bench/model-{i}" for i in range(10)]
# The fleet draws every endpoint's TTFT uniformly from this range (ms): its p50 and p95.
DRAWN_TTFT_MS = (200.0, 1500.0)
# Importing Django, jsonschema's format grammars and the language models takes a worker
# about 10 s of CPU: on a loaded 2-core machine four of them starting together took
# longer than 90 s.
WORKERS_UP_BASE_S = 60.0
WORKERS_UP_PER_WORKER_S = 45.0
ROUNDS_DONE_S = 300.0
# How often the bench looks for the rounds' completion (s): the wall time is late by half
# of it on average (a COUNT over ten rows costs well under a millisecond).
POLL_S = 0.01

cpu_s = proc_cpu_s


class BenchError(SystemExit):
    """The bench cannot go on (a worker died, a wait timed out): the message says why."""


def start_worker(name: str, base_url: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "DATABASE_URL": DB_URL, "OPENROUTER_BASE_URL": base_url}
    return subprocess.Popen(  # noqa: S603
        [sys.executable, "-m", "celery", "-A", "reverie_ops", "worker", "-P", "threads", "-c", os.environ.get("BENCH_THREADS", "80"), "-Q", "canary",
         "-n", f"{name}@%h", "-l", os.environ.get("BENCH_WORKER_LOG", "warning"), "--without-gossip", "--without-mingle"],
        cwd=ROOT, env=env, stdout=open(log_path(name), "wb"), stderr=subprocess.STDOUT,
    )


def log_path(name: str) -> Path:
    return Path(f"/tmp/bench-{os.environ.get('BENCH_DB_NAME', 'reverie_bench')}-{name}.log")


def check_alive(workers: dict[str, subprocess.Popen[bytes]]) -> None:
    """Raise ``BenchError`` naming the first worker that exited, with its log's tail."""
    for name, proc in workers.items():
        if proc.poll() is not None:
            tail = log_path(name).read_text(errors="replace")[-1500:]
            raise BenchError(f"worker {name} died (exit code {proc.returncode}); the end of {log_path(name)}:\n{tail}")


def wait_workers_up(workers: dict[str, subprocess.Popen[bytes]]) -> None:
    """Until every worker answers a ping (at most ``WORKERS_UP_BASE_S`` plus
    ``WORKERS_UP_PER_WORKER_S`` per worker)."""
    expected = {f"{name}@{socket.gethostname()}" for name in workers}
    limit_s = WORKERS_UP_BASE_S + WORKERS_UP_PER_WORKER_S * len(workers)
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        check_alive(workers)
        replies = app.control.ping(timeout=1.0) or []
        if expected <= {host for reply in replies for host in reply}:
            return
    raise BenchError(f"the workers did not all answer a ping within {limit_s:.0f} s: expected {sorted(expected)}")


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``, nearest rank."""
    xs = sorted(values)
    return xs[min(len(xs) - 1, max(0, math.ceil(q * len(xs)) - 1))]


def uniform_quantile(low: float, high: float, q: float) -> float:
    return low + (high - low) * q


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


def profilers_start(pids: dict[str, int]) -> list[subprocess.Popen[bytes]]:
    """With ``BENCH_PROFILE_DIR`` set, py-spy samples each process (GIL holder only, 100 Hz)
    during the rounds into ``DIR/NAME.raw`` (collapsed stacks); none otherwise."""
    out = os.environ.get("BENCH_PROFILE_DIR")
    if not out:
        return []
    spy = Path(sys.executable).with_name("py-spy")
    if not spy.exists():
        raise BenchError(f"BENCH_PROFILE_DIR needs py-spy beside {sys.executable}: {spy.parent}/pip install py-spy")
    Path(out).mkdir(parents=True, exist_ok=True)
    procs = [
        subprocess.Popen(  # noqa: S603
            [str(spy), "record", "--pid", str(pid), "--gil", "-r", "100", "-f", "raw", "-o", f"{out}/{name}.raw"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        for name, pid in pids.items()
    ]
    time.sleep(1.0)  # py-spy attaches before the rounds start
    return procs


def profilers_stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """Stop the samplers (SIGINT: py-spy writes its file and exits)."""
    for proc in procs:
        proc.send_signal(2)
    for proc in procs:
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


def chain_s(client, model_id: str, info) -> float:  # type: ignore[no-untyped-def]
    facts = EndpointFacts(info.tag, info.provider_name, "structured_outputs" in info.supported_parameters)
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda k: probe_run(k, client, model_id, facts, "pt", probe_settings()), PROBE_KINDS))
    return time.perf_counter() - start


def ttft_split(base_url: str, measured: Iterable[tuple[str, float]], sample: int = 200) -> str:
    """Where a measured TTFT's excess over the drawn one comes from: the simulator's own
    clock (``latency`` of ``GET /generation``: from its handler starting, the request's
    arrival, to its first content write, ms) against ours (headers sent to first token read), for
    up to ``sample`` probes. The gap between the two is the time from our sending to the
    simulator's handler starting (its queue under the burst, the network) plus our
    reading of the first token (the event loop, the GIL)."""
    pairs = list(measured)[:sample]
    ours, theirs, gaps = [], [], []
    with httpx.Client(base_url=base_url, timeout=5.0) as http:
        for gen_id, ttft in pairs:
            reply = http.get("/generation", params={"id": gen_id})
            if reply.status_code != 200:
                continue
            latency = reply.json()["data"].get("latency")
            if isinstance(latency, int | float):
                ours.append(ttft)
                theirs.append(float(latency))
                gaps.append(ttft - float(latency))
    if not gaps:
        return "TTFT by the simulator's clock: no generation found"
    return (f"TTFT by the simulator's clock over {len(gaps)} probes: p50 {percentile(theirs, 0.5):.0f} ms, "
            f"p95 {percentile(theirs, 0.95):.0f} ms; ours minus the simulator's, per probe: "
            f"p50 {percentile(gaps, 0.5):.0f} ms, p95 {percentile(gaps, 0.95):.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2, help="Celery worker processes (default 2)")
    args = parser.parse_args()
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    r = redis.Redis.from_url(BROKER)
    r.flushdb()
    sim, base = simulator(scale_fleet(MODELS))
    settings.OPENROUTER_BASE_URL = base
    named = {f"w{i}": start_worker(f"w{i}", base) for i in range(args.workers)}
    workers = list(named.values())
    try:
        wait_workers_up(named)
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
        overflows_before = listen_overflows()
        profilers = profilers_start({"sim": sim.pid, **{name: w.pid for name, w in named.items()}})
        at = datetime(2026, 12, 1, 10, 0, tzinfo=UTC).isoformat()
        start = time.perf_counter()
        dispatched_at = datetime.now(UTC)
        for model_id in MODELS:
            round_start_task.delay(model_id, at)
        deadline = time.monotonic() + ROUNDS_DONE_S
        while Round.objects.filter(status="completed").count() < len(MODELS):
            check_alive(named)
            if time.monotonic() > deadline:
                raise BenchError(f"the rounds did not all complete within {ROUNDS_DONE_S:.0f} s")
            time.sleep(POLL_S)
        wall = time.perf_counter() - start
        profilers_stop(profilers)
        stats_after = r.info("commandstats")
        cpu_round = {pid: cpu_s(pid) - before for pid, before in cpu_before.items()}
        workers_sys = sum(cpu_s(w.pid, (12,)) for w in workers) - sys_before
        services_after = service_cpu_s()
        # Backends that exited during the round took their CPU with them: a lower bound.
        services_round = {k: max(0.0, services_after[k] - v) for k, v in services_before.items()}
        own_round = time.process_time() - own_before
        overflows = listen_overflows() - overflows_before
        commands = sum(v["calls"] for v in stats_after.values()) - sum(v["calls"] for v in stats_before.values())
        probes = Endpoint.objects.count() * len(PROBE_KINDS)
        # A start and a finaliser timer per round, one endpoint task per batch of endpoints.
        per_task = max(1, settings.CANARY_ENDPOINTS_PER_TASK)
        tasks = sum(2 + math.ceil(Endpoint.objects.filter(model_id=m).count() / per_task) for m in MODELS)
        done = Round.objects.filter(status="completed").count()
        print(f"rounds completed: {done} of {len(MODELS)}; endpoints: {Endpoint.objects.count()}; probes: {probes}")
        print(f"slowest single endpoint chain: {slowest:.2f} s (of {len(chains)} measured)")
        print(f"wall time of the 10 rounds: {wall:.2f} s")
        print(f"ratio wall / slowest chain: {wall / slowest:.3f} (target <= 1.6)")
        print(f"tasks per second: {tasks / wall:.1f}")
        # A round's deadline is set when it opens (discovery done), its budget after.
        budget_s = settings.CANARY_ROUND_BUDGET_S
        times = sorted(
            ((d - dispatched_at).total_seconds() - budget_s, (f - dispatched_at).total_seconds())
            for d, f in Round.objects.filter(model_id__in=MODELS, status="completed").values_list("deadline_at", "finished_at")
            if d and f
        )
        print("rounds opened / finalised (s after dispatch): " + ", ".join(f"{o:.2f}/{f:.2f}" for o, f in times))
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
        workers_cpu = sum(cpu_round[w.pid] for w in workers)
        print(f"worker CPU per probe: {workers_cpu / probes * 1000:.2f} ms (no target: CPU is retired as a target, the ratio is what users feel); simulator CPU per reply: "
              f"{cpu_round[sim.pid] / probes * 1000:.2f} ms")
        print(f"probes per second per worker process: {probes / wall / len(workers):.1f} with {len(workers)} workers "
              f"({probes / workers_cpu:.0f} per second of a worker's CPU)")
        rows = ProbeResult.objects.filter(sample=0, kind__in=PROBE_KINDS, round__model_id__in=MODELS)
        ttfts = [v for v in rows.values_list("ttft_ms", flat=True) if v is not None]
        waits = [v for v in rows.values_list("wait_ms", flat=True) if v is not None]
        low, high = DRAWN_TTFT_MS
        if ttfts:
            print(f"TTFT at the wire over {len(ttfts)} probes: p50 {percentile(ttfts, 0.5):.0f} ms, p95 {percentile(ttfts, 0.95):.0f} ms; "
                  f"drawn: p50 {uniform_quantile(low, high, 0.5):.0f} ms, p95 {uniform_quantile(low, high, 0.95):.0f} ms "
                  f"(uniform {low:.0f}-{high:.0f} ms)")
        if waits:
            print(f"our side's wait before the wire (rate limit, event loop, pool, connect), excluded from TTFT: "
                  f"p50 {percentile(waits, 0.5):.0f} ms, p95 {percentile(waits, 0.95):.0f} ms")
        per_provider = max(Counter(rows.values_list("endpoint__provider__slug", flat=True)).values(), default=0)
        rps, burst = settings.CANARY_PROVIDER_RPS, settings.CANARY_PROVIDER_BURST
        print(f"per-provider rate limit: up to {per_provider} probes per provider in the burst; an idle provider admits "
              f"{burst} at once (CANARY_PROVIDER_BURST), then {rps} per second (CANARY_PROVIDER_RPS): the last start "
              f"up to {max(0, per_provider - burst) / rps:.2f} s after the first")
        print(f"connections refused a place in a listen queue during the rounds (the kernel's ListenOverflows; each "
              f"costs a probe the one-second SYN retransmission): {overflows}")
        print(ttft_split(base, rows.exclude(generation_id="").exclude(ttft_ms=None).values_list("generation_id", "ttft_ms")))
    finally:
        for w in workers:
            w.terminate()
        for w in workers:
            try:
                w.wait(15)
            except subprocess.TimeoutExpired:
                w.kill()
        sim.terminate()
        sim.wait(15)
        t = os.times()
        print(f"CPU seconds used by the workers and the simulator together: {t.children_user + t.children_system:.1f} "
              f"(this process: {t.user + t.system:.1f}) on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
