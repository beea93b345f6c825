"""Bench: the CPU of an endpoint task's probe threads, started and joined per task against
kept in the process's pool (``canary.services.probes_run.probe_threads``), side by side.

Each task has the shape of a Celery endpoint task of 10 endpoints: 10 admissions, then 40
probes that wait on their endpoint's admission and then on the network (a 20 ms sleep in
place of a stream). ``--tasks`` tasks run 8 at a time from task threads, as a worker runs
them, once per setting, alternating ``--pairs`` times in one run (the machine's speed
drifts): prints this process's CPU per job (one probe's or one admission's work on a thread)
for each batch and the ratio of the means, kept / per task. Below about 40 tasks per batch
the ratio is in the noise of a shared machine. No database, no network.

Usage: ``bench/probe_threads.py [--tasks N] [--pairs N]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor, as_completed

from _setup import django_on

django_on(migrate=False)

from canary.services.probes_run import probe_threads  # noqa: E402

ENDPOINTS = 10
PROBES_PER_ENDPOINT = 4
NETWORK_S = 0.02


def admitted(admission: Future[float]) -> float:
    """A probe: its endpoint's admission, then the network."""
    waited = admission.result()
    time.sleep(NETWORK_S)
    return waited


def endpoint_task(pool: Executor) -> int:
    """One endpoint task's admissions and probes on ``pool``; returns the probes done."""
    admissions = [pool.submit(float, 0) for _ in range(ENDPOINTS)]
    probes = [pool.submit(admitted, a) for a in admissions for _ in range(PROBES_PER_ENDPOINT)]
    return sum(1 for f in as_completed(probes) if f.result() == 0)


def per_task_pool() -> int:
    """Today's alternative: a pool of its own per task (one thread per job), joined at its end."""
    with ThreadPoolExecutor(max_workers=ENDPOINTS * (PROBES_PER_ENDPOINT + 1)) as pool:
        return endpoint_task(pool)


def kept_pool() -> int:
    return endpoint_task(probe_threads())


def cpu_per_thread_us(task: Callable[[], int], tasks: int) -> float:
    """This process's CPU per probe-or-admission job (µs) over ``tasks`` tasks."""
    before = time.process_time()
    with ThreadPoolExecutor(8) as workers:
        done = sum(workers.map(lambda _: task(), range(tasks)))
    if done != tasks * ENDPOINTS * PROBES_PER_ENDPOINT:
        raise SystemExit(f"error: {done} probes finished of {tasks * ENDPOINTS * PROBES_PER_ENDPOINT}")
    return (time.process_time() - before) / (tasks * ENDPOINTS * (PROBES_PER_ENDPOINT + 1)) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=40, help="endpoint tasks per batch (default 40; below about 40 the ratio is noise)")
    parser.add_argument("--pairs", type=int, default=5, help="alternations of the two settings (default 5)")
    args = parser.parse_args()
    for flag, value in (("--tasks", args.tasks), ("--pairs", args.pairs)):
        if value < 1:
            parser.error(f"{flag} must be at least 1, got {value}")
    kept_pool()  # the kept pool's threads exist before the first measured batch, as in a worker
    fresh, kept = [], []
    for _ in range(args.pairs):
        fresh.append(cpu_per_thread_us(per_task_pool, args.tasks))
        kept.append(cpu_per_thread_us(kept_pool, args.tasks))
        print(f"CPU per job (a probe or an admission): threads per task {fresh[-1]:.0f} µs, kept threads {kept[-1]:.0f} µs")
    ratio = statistics.mean(kept) / statistics.mean(fresh)
    print(f"mean: threads per task {statistics.mean(fresh):.0f} µs, kept {statistics.mean(kept):.0f} µs; "
          f"ratio kept / per task: {ratio:.2f} ({args.tasks} tasks of {ENDPOINTS * (PROBES_PER_ENDPOINT + 1)} jobs per batch)")


if __name__ == "__main__":
    main()
