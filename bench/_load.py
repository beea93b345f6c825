"""Shared pieces of the gateway benches: statistics, process CPU, and a load harness
whose every wait has a timeout (a worker that dies ends the run with a message).

Statistics: the added latency is taken within each round (system p50 minus direct p50
of the same round) and summarised by its median over rounds, its interquartile range
and the 95 % confidence interval of that median (order statistics: no assumption about
the shape of the per-round differences).

Load (``measure``): ``concurrency`` requests in flight spread over ``workers`` client
processes (one Python process is GIL-bound long before 50 streams saturate anything
else). The design, and why:

- **One closed loop, one timetable** (``SlotPlan``, ``run_slots``): every client thread
  of every process sends one request after another from a common start to the end; the
  side it sends (direct or system) is the one of the time slot it sends in, on one
  clock (``time.monotonic``) for all processes. The load never stops, so there is no
  ramp-up and no drain; only requests sent after a slot's first ``settle_s`` (the other
  side's requests have finished) and before its last ``tail_s`` are kept, so every kept
  request ran among ``concurrency`` requests of its own side. The earlier design ran a
  fixed count of requests per phase between barriers (50 threads, 4 requests each):
  much of each phase ramped up or drained, at a load that was neither 50 nor the same
  from one phase to the next, and the barriers and flushes between phases left the two
  phases of a round seconds apart.
- **Rounds in ABBA order**: a round is two adjacent slots, direct first in even rounds,
  the system first in odd ones, so a drift and any effect of going first or second (the
  event writer's flush after each system slot, which lands in the next slot's settling
  time, never kept) cancel instead of being charged to one side.
- **Settling as long as the slower side's requests**: the workers warm up together, at
  full load, and a slot settles for at least the p90 latency of the slower side there
  (its slots grow by as much). A system whose requests take a second under this load
  (LiteLLM's) would otherwise be measured with the previous slot's requests still in
  flight beside its own.
- **The median of per-round differences** (system p50 minus direct p50 of the same
  round) with an order-statistic confidence interval: a load spike from another program
  moves one round, not the estimate, and the interval narrows as the square root of the
  number of rounds.

What the rounds showed (2 cores shared by 5 client processes, the gateway, the
simulator and Redis, at ~180 ms p50): a round's difference moves by tens of ms (IQR
about 50 ms) whatever the design, and the two slots of a round differ about as much as
any two slots: that noise is the saturated machine's own scheduling, not a slow drift
pairing can remove. So the interval narrows only with more rounds, and per minute short
slots give more of them: 100 rounds of 0.6 s slots (two and a half minutes a row) gave
95 % intervals 12 and 18 ms wide in two runs, where 20 rounds of fixed-count phases gave
one 38 ms wide and 60 rounds of 1 s slots one 35 ms wide. ``--rounds`` buys more (width ~ 1 / sqrt(rounds)).

What is measured is unchanged: the client-observed latency of the same streamed
request, direct and through the system, at the same load. Each barrier wait, call and
result read has a timeout; a worker that exits or raises sends its error and the parent
stops the others and raises ``LoadError`` naming it.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import statistics
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, replace
from math import comb
from pathlib import Path
from typing import Any

# Longest a one-at-a-time phase, a barrier wait, or one call past the end of a timetable may take.
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


@dataclass(frozen=True)
class SlotPlan:
    """The shared timetable of a concurrent measurement (``measure``), in seconds.

    ``2 * rounds`` slots of ``slot_s`` each from ``start`` (``time.monotonic``, one clock
    for every process on the machine): slot ``k`` belongs to round ``k // 2``, and within
    a round the direct slot comes first in even rounds, the system slot in odd ones
    (ABBA). A call is kept when it was sent at least ``settle_s`` after its slot began
    (the requests of the other side have drained) and ``tail_s`` before it ends (it is
    not overtaken by the next slot's requests)."""

    start: float
    rounds: int
    slot_s: float
    settle_s: float
    tail_s: float

    def side(self, slot: int) -> str:
        first_direct = (slot // 2) % 2 == 0
        return "direct" if (slot % 2 == 0) == first_direct else "system"

    def kept(self, slot: int, sent: float) -> bool:
        offset = sent - (self.start + slot * self.slot_s)
        return self.settle_s <= offset < self.slot_s - self.tail_s


def run_slots(direct: Callable[[int], None], system: Callable[[int], None], threads: int, plan: SlotPlan,
              between: Callable[[], None], timeout_s: float = PHASE_TIMEOUT_S) -> dict[str, list[list[float]]]:
    """Closed loop over ``plan``: ``threads`` threads each send one call after another,
    direct or system as the slot at the moment of sending says, from ``plan.start`` to
    the end of the last slot. Returns the kept latencies (ms) per side, one list per
    round. ``between()`` runs on this thread after each system slot ends (our event
    sink's flush: its writes then fall in the next slot's settling time, which is never
    kept). Raises ``LoadError`` when a call outlives ``timeout_s``; re-raises the first
    error a call raised."""
    kept: dict[str, list[list[float]]] = {"direct": [[] for _ in range(plan.rounds)],
                                          "system": [[] for _ in range(plan.rounds)]}
    slots = 2 * plan.rounds
    errors: list[BaseException] = []

    def loop(thread: int) -> None:
        i = 0
        try:
            while not errors:
                sent = time.monotonic()
                if sent < plan.start:
                    time.sleep(plan.start - sent)
                    continue
                slot = int((sent - plan.start) // plan.slot_s)
                if slot >= slots:
                    return
                side = plan.side(slot)
                (direct if side == "direct" else system)(thread * 1_000_000 + i)
                i += 1
                if plan.kept(slot, sent):
                    kept[side][slot // 2].append((time.monotonic() - sent) * 1000.0)  # atomic under the GIL
        except BaseException as exc:  # noqa: BLE001 - handed to the caller below
            errors.append(exc)

    workers = [threading.Thread(target=loop, args=(k,), name=f"load-{k}", daemon=True) for k in range(threads)]
    for worker in workers:
        worker.start()
    for slot in range(slots):
        wait_s = plan.start + (slot + 1) * plan.slot_s - time.monotonic()
        if wait_s > 0:
            time.sleep(wait_s)
        if plan.side(slot) == "system" and not errors:
            between()
    end = plan.start + slots * plan.slot_s + timeout_s
    for worker in workers:
        worker.join(max(0.0, end - time.monotonic()))
        if worker.is_alive():
            raise LoadError(f"a call outlived the last slot by more than {timeout_s:.0f} s")
    if errors:
        raise errors[0]
    return kept


def _worker_main(make: Callable[[], tuple[Callable[[int], None], Callable[[int], None], Callable[[], None]]],
                 barrier: Any, shared: Any, out: Any, index: int, plan: SlotPlan, threads: int, warmup: int) -> None:
    start, settle, p90s = shared
    try:
        direct, system, after_phase = make()
        # A few calls alone first: connections, caches and the breaker's local state are
        # built before the load (cold, under full load, Redis calls time out and the
        # breaker fails open for a while, which no steady state does).
        run_phase(direct, 5, 1)
        run_phase(system, 5, 1)
        barrier.wait(PHASE_TIMEOUT_S)  # every worker warms up at once: its latencies are at full load
        warm = [run_phase(direct, warmup, threads), run_phase(system, warmup, threads)]
        after_phase()
        p90s[index] = max(percentile(ms, 0.9) for ms in warm)
        barrier.wait(PHASE_TIMEOUT_S)  # the barrier's action sets the shared start time and settling time
        longer = settle.value - plan.settle_s
        timetable = replace(plan, start=start.value, slot_s=plan.slot_s + longer, settle_s=settle.value)
        kept = run_slots(direct, system, threads, timetable, after_phase)
        out.put(("ok", index, (kept["direct"], kept["system"])))
    except BaseException as exc:  # noqa: BLE001 - any death is reported to the parent, never a hang
        barrier.abort()  # the others stop waiting at once (BrokenBarrierError)
        out.put(("error", index, f"{type(exc).__name__}: {exc}\n{traceback.format_exc()[-1500:]}"))


def measure(name: str, make: Callable[[], tuple[Callable[[int], None], Callable[[int], None], Callable[[], None]]], *,
            rounds: int, concurrency: int, workers: int, slot_s: float = 0.6, settle_s: float = 0.2,
            tail_s: float = 0.1, warmup: int = 100) -> dict[str, Any]:
    """``concurrency`` requests in flight over ``workers`` forked processes; each builds
    its callers with ``make()`` -> (direct, system, after_phase). ``rounds`` ABBA rounds of
    a direct and a system slot of ``slot_s`` seconds on one timetable for every process
    (``SlotPlan``, module docstring). Returns ``summarise``'s dict plus the slot timings
    and ``dropped_rounds`` (rounds where a side kept no call: a stall longer than the kept
    part of a slot). Raises ``LoadError`` when a worker dies, raises or stalls, or more
    than a tenth of the rounds are dropped (nothing waits for ever: barriers, calls and
    the result queue have timeouts)."""
    if not 0 <= settle_s < slot_s - tail_s:
        raise ValueError(f"slot of {slot_s} s leaves nothing after settle {settle_s} s and tail {tail_s} s")
    ctx = multiprocessing.get_context("fork")
    start = ctx.Value("d", 0.0)
    settle = ctx.Value("d", settle_s)
    p90s = ctx.Array("d", workers)  # ms, each worker's slower side in the warm-up at full load

    def set_start() -> None:
        # Run by one worker when the last one arrives: a common start just ahead, so
        # every process sends into the same slot at the same time. A slot settles for at
        # least the p90 latency of the slower side at full load (LiteLLM's is ~1 s): the
        # other side's requests must be gone before a request is kept; the slot grows by
        # as much, so the kept part stays ``slot_s - settle_s - tail_s`` long.
        settle.value = max(settle_s, max(p90s[:]) / 1000.0)
        start.value = time.monotonic() + 0.2

    barrier = ctx.Barrier(workers, action=set_start)
    out = ctx.Queue()
    threads = max(1, concurrency // workers)
    plan = SlotPlan(0.0, rounds, slot_s, settle_s, tail_s)
    procs = [ctx.Process(target=_worker_main, args=(make, barrier, (start, settle, p90s), out, i, plan, threads, warmup), daemon=True)
             for i in range(workers)]
    for proc in procs:
        proc.start()
    direct_rounds: list[list[float]] = [[] for _ in range(rounds)]
    system_rounds: list[list[float]] = [[] for _ in range(rounds)]
    deadline = time.monotonic() + 6 * PHASE_TIMEOUT_S + 2 * rounds * slot_s
    got = 0
    try:
        while got < workers:
            try:
                status, index, payload = out.get(timeout=5.0)
            except queue.Empty:
                dead = [i for i, p in enumerate(procs) if p.exitcode not in (None, 0)]
                if dead:
                    raise LoadError(f"{name}: worker {dead[0]} died (exit code {procs[dead[0]].exitcode})") from None
                if time.monotonic() > deadline + 2 * rounds * (settle.value - settle_s):  # slots may have grown
                    raise LoadError(f"{name}: workers gave no result in time") from None
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
    # A round where every thread of a side spent the kept part of its slot in one call (a
    # stall of the whole machine) has nothing to compare: it is dropped and counted.
    paired = [(d, s) for d, s in zip(direct_rounds, system_rounds, strict=True) if d and s]
    dropped = rounds - len(paired)
    if dropped > rounds // 10:
        raise LoadError(f"{name}: {dropped} of {rounds} rounds kept no call of a side (stalls longer than a slot)")
    result = summarise(name, [d for d, _ in paired], [s for _, s in paired])
    result["dropped_rounds"] = dropped
    result.update(slot_s=slot_s + settle.value - settle_s, settle_s=settle.value, tail_s=tail_s)
    return result


def sequential(direct: Callable[[int], None], system: Callable[[int], None], *, rounds: int, n: int,
               cpu: Callable[[], float] | None = None) -> dict[str, Any]:
    """One request at a time: ``rounds`` alternating blocks of ``n`` direct then ``n``
    system calls. Returns ``summarise``'s dict plus, when ``cpu()`` (seconds, the system's
    own CPU clock) is given, ``system_cpu_ms`` per system request measured over the
    system blocks (``side_by_side`` with one system)."""
    return side_by_side(direct, {"sequential": (system, cpu)}, rounds=rounds, n=n)["sequential"]


def side_by_side(direct: Callable[[int], None],
                 systems: dict[str, tuple[Callable[[int], None], Callable[[], float] | None]], *, rounds: int,
                 n: int) -> dict[str, dict[str, Any]]:
    """One request at a time, several systems in the same rounds: each round runs ``n``
    direct calls, then ``n`` calls of each system (name -> ``(call, cpu)``), the systems'
    order rotated every round, so a drift of the machine (another program, the CPU's
    clock) lands on every system alike instead of on whichever ran in a worse minute.
    Returns, per system, ``summarise``'s dict (its blocks against the direct block of the
    same round) plus, when its ``cpu()`` (seconds, that system's own CPU clock) is given,
    ``system_cpu_ms`` per request over its blocks."""
    names = list(systems)
    direct_rounds: list[list[float]] = []
    system_rounds: dict[str, list[list[float]]] = {name: [] for name in names}
    spent = dict.fromkeys(names, 0.0)
    for r in range(rounds):
        direct_rounds.append(run_phase(direct, n, 1))
        for name in names[r % len(names):] + names[:r % len(names)]:
            call, cpu = systems[name]
            before = cpu() if cpu is not None else 0.0
            system_rounds[name].append(run_phase(call, n, 1))
            if cpu is not None:
                spent[name] += cpu() - before
    results = {}
    for name in names:
        result = summarise(name, direct_rounds, system_rounds[name])
        if systems[name][1] is not None:
            result["system_cpu_ms"] = spent[name] * 1000.0 / (rounds * n)
        results[name] = result
    return results
