"""Bench: worker CPU per probe and simulator CPU per reply, on the scale bench's fleet.

Runs what a Celery worker runs for a round (``round_endpoint_probes`` of every endpoint:
probes, judges, storing, the finalisation of the last one) inside this process, without
Celery, so that its CPU can be profiled: ``--profile`` prints cProfile's top functions.
The process's own CPU (``time.process_time``) over the probes it ran is the number the
scale bench's target of 4 ms per probe is about; the simulator's CPU per reply is read
from /proc.

Usage: ``bench/probe_cpu.py [--models N] [--threads N] [--profile] [--top N]``. Uses a
fresh database ``reverie_probe_cpu`` and Redis database 9 (flushed).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import time
from collections.abc import Iterable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

from _setup import fresh_postgres, proc_cpu_s, scale_fleet, simulator

DB_URL = fresh_postgres("reverie_probe_cpu")
BROKER = "redis://127.0.0.1:6379/9"
os.environ["REDIS_URL"] = BROKER
os.environ["CANARY_RATE_LIMIT_REDIS"] = "true"

from _setup import django_on  # noqa: E402

django_on(DB_URL)

import redis  # noqa: E402
from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402

from canary import judges  # noqa: E402
from canary.models import ProbeResult, Round  # noqa: E402
from canary.services import probes_run  # noqa: E402
from canary.services.client import openrouter_client  # noqa: E402
from canary.services.rounds import endpoint_batches, round_endpoint_probes, round_open  # noqa: E402


class InlineExecutor(Executor):
    """Runs each submitted call at once in the caller's thread (profiling only)."""

    def __init__(self, max_workers: int | None = None) -> None:
        del max_workers

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def,override]
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
            future.set_exception(exc)
        return future


def task_run(round_id: int, endpoint_ids: list[int], language: str) -> None:
    """One endpoint task (a batch of endpoints, as the round start sends them), and its
    connection back to the pool after it (as Celery's task end does)."""
    try:
        round_endpoint_probes(round_id, endpoint_ids, language)
    finally:
        connection.close()


def pcts(values: Iterable[float | None], name: str) -> str:
    """p50 and p95 of the values that are not None, in ms."""
    xs = sorted(v for v in values if v is not None)
    if not xs:
        return f"{name}: none measured"
    return f"{name} p50 {xs[len(xs) // 2]:.0f} ms, p95 {xs[min(len(xs) - 1, int(len(xs) * 0.95))]:.0f} ms (n={len(xs)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--threads", type=int, default=80, help="endpoint tasks in flight (0: one after another)")
    parser.add_argument("--profile", action="store_true", help="cProfile (implies --threads 0 unless the probes share one thread)")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    redis.Redis.from_url(BROKER).flushdb()
    models = [f"bench/model-{i}" for i in range(args.models)]
    sim, base = simulator(scale_fleet(models))
    settings.OPENROUTER_BASE_URL = base
    try:
        judges.warm_up()
        at = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
        # A warm-up round: first connections, lazy imports.
        warm, warm_jobs = round_open(models[0], now=at - timedelta(hours=1))
        for endpoint_ids, language in endpoint_batches(warm_jobs, settings.CANARY_ENDPOINTS_PER_TASK)[:1]:
            round_endpoint_probes(warm.pk, endpoint_ids, language)
        tasks = []
        for model_id in models:
            rnd, jobs = round_open(model_id, now=at)
            tasks += [(rnd.pk, ids, lang) for ids, lang in endpoint_batches(jobs, settings.CANARY_ENDPOINTS_PER_TASK)]
        if args.profile:
            # Every probe in this one thread, so that cProfile sees them all; timed by CPU.
            probes_run.probe_threads = InlineExecutor  # type: ignore[assignment]
        # Timed by each thread's own CPU; the event loop's thread gets its own profiler.
        profiler = cProfile.Profile(time.thread_time) if args.profile else None
        loop_profiler = cProfile.Profile(time.thread_time) if args.profile else None
        if loop_profiler is not None:
            loop = openrouter_client()._runner.loop()
            loop.call_soon_threadsafe(loop_profiler.enable)
        sim_before = proc_cpu_s(sim.pid)
        cpu_before = time.process_time()
        start = time.perf_counter()
        if profiler is not None:
            profiler.enable()
        if args.threads <= 0:
            for task in tasks:
                task_run(*task)
        else:
            with ThreadPoolExecutor(max_workers=args.threads) as pool:
                list(pool.map(lambda t: task_run(*t), tasks))
        if profiler is not None and loop_profiler is not None:
            profiler.disable()
            loop.call_soon_threadsafe(loop_profiler.disable)
            time.sleep(0.2)
        wall = time.perf_counter() - start
        cpu = time.process_time() - cpu_before
        sim_cpu = proc_cpu_s(sim.pid) - sim_before
        probes = ProbeResult.objects.filter(round__started_at=at).exclude(prompt_id="round").count()
        done = Round.objects.filter(started_at=at, status="completed").count()
        print(f"rounds completed: {done} of {len(models)}; endpoint tasks: {len(tasks)}; probe requests stored: {probes}")
        print(f"wall {wall:.2f} s; this process's CPU {cpu:.2f} s = {cpu / probes * 1000:.2f} ms per probe "
              f"(threads: {args.threads}); simulator {sim_cpu:.2f} s = {sim_cpu / probes * 1000:.2f} ms per reply")
        rows = ProbeResult.objects.filter(round__started_at=at, sample=0).exclude(prompt_id="round")
        print("measured at the wire:", pcts(rows.values_list("ttft_ms", flat=True), "TTFT"), "| our side's wait:",
              pcts(rows.values_list("wait_ms", flat=True), "wait"))
        if profiler is not None and loop_profiler is not None:
            for name, prof in (("task threads", profiler), ("event loop", loop_profiler)):
                print(f"=== {name}")
                stats = pstats.Stats(prof)
                stats.sort_stats("tottime").print_stats(args.top)
                stats.sort_stats("cumulative").print_stats(args.top)
    finally:
        sim.terminate()
        sim.wait(15)


if __name__ == "__main__":
    main()
