"""Shared pieces of the gateway benches: statistics, process CPU, and a load harness
whose every wait has a timeout (a worker that dies ends the run with a message).

Statistics: the added latency is taken within each round (system p50 minus direct p50
of the same round) and summarised by its median over rounds, its interquartile range
and the 95 % confidence interval of that median (order statistics).

Load: ``concurrency`` requests in flight spread over ``workers`` client processes (one
Python process is GIL-bound long before 50 streams saturate anything else), direct and
system phases alternating in rounds, all workers in step at a barrier. Each barrier wait
and each result read has a timeout; a worker that exits or raises sends its error and
the parent stops the others and raises ``LoadError`` naming it.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import statistics
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from math import comb
from pathlib import Path
from typing import Any

# Longest a phase may take (200 requests at 50 in flight take about a second here).
PHASE_TIMEOUT_S = 120.0
_CLK_TCK = os.sysconf("SC_CLK_TCK")


class LoadError(RuntimeError):
    """A bench worker died, raised, or missed a barrier: the message says which."""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def quartiles(values: list[float]) -> tuple[float, float, float]:
    """(25th percentile, median, 75th percentile)."""
    if len(values) < 2:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


def median_ci(values: list[float], level: float = 0.95) -> tuple[float, float]:
    """Distribution-free confidence interval of the median of ``values`` (order
    statistics: the k-th smallest and k-th largest, k from the binomial(n, 1/2) tail)."""
    ordered = sorted(values)
    n = len(ordered)
    tail = (1.0 - level) / 2.0
    k, below = 0, 0.0  # below = P(Binomial(n, 1/2) <= k - 1)
    while k < n // 2 and below + comb(n, k) / 2**n <= tail:
        below += comb(n, k) / 2**n
        k += 1
    if k == 0:
        return ordered[0], ordered[-1]  # too few rounds for this level: the whole range
    return ordered[k - 1], ordered[n - k]


def summarise(name: str, direct_rounds: list[list[float]], system_rounds: list[list[float]]) -> dict[str, Any]:
    """Latencies in ms, per round: the added p50 and p99 per round (system minus direct
    of the same round), summarised over rounds (median, IQR, CI); pooled p50/p99 for scale."""
    added_p50 = [statistics.median(s) - statistics.median(d) for d, s in zip(direct_rounds, system_rounds, strict=True)]
    added_p99 = [percentile(s, 0.99) - percentile(d, 0.99) for d, s in zip(direct_rounds, system_rounds, strict=True)]
    direct_all = [ms for r in direct_rounds for ms in r]
    system_all = [ms for r in system_rounds for ms in r]
    return {
        "name": name,
        "rounds": len(system_rounds),
        "requests": len(system_all),
        "direct_median_ms": statistics.median(direct_all),
        "direct_p99_ms": percentile(direct_all, 0.99),
        "system_median_ms": statistics.median(system_all),
        "system_p99_ms": percentile(system_all, 0.99),
        "added_median_ms": quartiles(added_p50),
        "added_median_ci_ms": median_ci(added_p50),
        "added_p99_ms": quartiles(added_p99),
    }


def tree_cpu_s(root: int) -> float:
    """User + system CPU seconds of process ``root`` and all its live descendants
    (``/proc/PID/stat``; exited children's time is counted once their parent reaped them)."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "stat").read_text()
        except OSError:
            continue
        fields = raw[raw.rindex(")") + 2:].split()
        pid = int(entry.name)
        parents[pid] = int(fields[1])
        # utime, stime, cutime, cstime (fields 14-17 of stat; here offset by the two skipped)
        ticks[pid] = int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += ticks.get(pid, 0)
        todo.extend(child for child, parent in parents.items() if parent == pid)
    return total / _CLK_TCK


def run_phase(call: Callable[[int], None], n: int, concurrency: int, timeout_s: float = PHASE_TIMEOUT_S) -> list[float]:
    """Run ``n`` calls on ``concurrency`` threads; per-call latencies in ms. Raises
    ``LoadError`` when the phase takes longer than ``timeout_s``."""

    def timed(i: int) -> float:
        start = time.perf_counter()
        call(i)
        return (time.perf_counter() - start) * 1000.0

    pool = ThreadPoolExecutor(concurrency)
    try:
        futures = [pool.submit(timed, i) for i in range(n)]
        end = time.monotonic() + timeout_s
        out = []
        for fut in futures:
            try:
                out.append(fut.result(timeout=max(0.0, end - time.monotonic())))
            except FutureTimeout:
                raise LoadError(f"a phase of {n} calls took longer than {timeout_s:.0f} s") from None
        return out
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _worker_main(make: Callable[[], tuple[Callable[[int], None], Callable[[int], None], Callable[[], None]]],
                 barrier: Any, out: Any, index: int, n: int, rounds: int, threads: int, warmup: int) -> None:
    try:
        direct, system, after_phase = make()
        run_phase(direct, warmup, threads)
        run_phase(system, warmup, threads)
        after_phase()
        direct_ms: list[list[float]] = []
        system_ms: list[list[float]] = []
        for _ in range(rounds):
            barrier.wait(PHASE_TIMEOUT_S)  # every worker in the same phase at the same time
            direct_ms.append(run_phase(direct, n, threads))
            barrier.wait(PHASE_TIMEOUT_S)
            system_ms.append(run_phase(system, n, threads))
            after_phase()
        barrier.wait(PHASE_TIMEOUT_S)
        out.put(("ok", index, (direct_ms, system_ms)))
    except BaseException as exc:  # noqa: BLE001 - any death is reported to the parent, never a hang
        barrier.abort()  # the others stop waiting at once (BrokenBarrierError)
        out.put(("error", index, f"{type(exc).__name__}: {exc}\n{traceback.format_exc()[-1500:]}"))


def measure(name: str, make: Callable[[], tuple[Callable[[int], None], Callable[[int], None], Callable[[], None]]], *,
            n: int, rounds: int, concurrency: int, workers: int, warmup: int = 100,
            on_round: Callable[[str], None] | None = None) -> dict[str, Any]:
    """``concurrency`` requests in flight over ``workers`` forked processes; each builds
    its callers with ``make()`` -> (direct, system, after_phase). Returns ``summarise``'s
    dict. Raises ``LoadError`` when a worker dies, raises or stalls (nothing waits for
    ever: barriers, phases and the result queue all have timeouts)."""
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(workers)
    out = ctx.Queue()
    threads = max(1, concurrency // workers)
    procs = [ctx.Process(target=_worker_main, args=(make, barrier, out, i, max(1, n // workers), rounds, threads, warmup),
                         daemon=True) for i in range(workers)]
    for proc in procs:
        proc.start()
    direct_rounds: list[list[float]] = [[] for _ in range(rounds)]
    system_rounds: list[list[float]] = [[] for _ in range(rounds)]
    deadline = time.monotonic() + PHASE_TIMEOUT_S * (2 * rounds + 4)
    got = 0
    try:
        while got < workers:
            try:
                status, index, payload = out.get(timeout=5.0)
            except queue.Empty:
                dead = [i for i, p in enumerate(procs) if p.exitcode not in (None, 0)]
                if dead:
                    raise LoadError(f"{name}: worker {dead[0]} died (exit code {procs[dead[0]].exitcode})") from None
                if time.monotonic() > deadline:
                    raise LoadError(f"{name}: workers gave no result within {deadline:.0f} s") from None
                continue
            if status != "ok":
                raise LoadError(f"{name}: worker {index} failed: {payload}")
            d, s = payload
            for i in range(rounds):  # round i of every worker ran at the same time
                direct_rounds[i] += d[i]
                system_rounds[i] += s[i]
            got += 1
    finally:
        for proc in procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=5)
    return summarise(name, direct_rounds, system_rounds)


def sequential(direct: Callable[[int], None], system: Callable[[int], None], *, rounds: int, n: int,
               cpu: Callable[[], float] | None = None) -> dict[str, Any]:
    """One request at a time: ``rounds`` alternating blocks of ``n`` direct then ``n``
    system calls. Returns ``summarise``'s dict plus, when ``cpu()`` (seconds, the system's
    own CPU clock) is given, ``system_cpu_ms`` per system request measured over the
    system blocks."""
    direct_rounds: list[list[float]] = []
    system_rounds: list[list[float]] = []
    spent = 0.0
    for _ in range(rounds):
        direct_rounds.append(run_phase(direct, n, 1))
        before = cpu() if cpu is not None else 0.0
        system_rounds.append(run_phase(system, n, 1))
        if cpu is not None:
            spent += cpu() - before
    result = summarise("sequential", direct_rounds, system_rounds)
    if cpu is not None:
        result["system_cpu_ms"] = spent * 1000.0 / (rounds * n)
    return result
