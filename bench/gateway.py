"""Bench: the gateway's added latency per request, ours vs LiteLLM's Router, one run.

Issue "Reliable routing gateway", speed: against a simulator endpoint with no added
latency, at 50 concurrent requests, measure (system - direct call) at the median and the
p99, for our gateway (the in-process client ``chat_completion_create``: contract lookup,
capability selection, the Redis circuit breaker, validation, events queued for the
writer thread) and for LiteLLM's ``Router`` on the same simulator in the same run.
Target: our added median <= 2 ms and <= half of LiteLLM's.

Method. Each system is compared with a direct call made from the same interpreter, with
the same request (a streamed chat completion pinned to one endpoint, read to the end of
the body as the OpenAI SDK does, so the connection is reused). The 50 requests in flight
are spread over worker processes (5 x 10 threads by default, like gunicorn workers: one
Python process is GIL-bound long before 50 streams saturate anything else). Short direct
and system phases alternate in rounds, all workers in step (a barrier). The added
latency is taken *within* each round (system p50 minus direct p50 of the same round, and
the same for p99) and reported as the median over rounds with the interquartile range of
those per-round differences, and the 95 % confidence interval of that median (order
statistics): a load spike from another program moves one round, not the estimate. The
"direct p50/p99" and "system p50/p99" columns pool every round, for scale.

The gateway's events are written by a thread a batch a second, after the phase's
requests; each system phase ends by waiting for that write, so that it never lands in
the next direct phase. The latency table therefore leaves most of the event-writing CPU
out; the CPU line below counts it.

Why it swings, and the second measure. At 50 in flight on 2 cores the simulator, the
clients and Redis saturate the CPU (direct p50 is ~90 ms for a reply the simulator makes
in ~3 ms), so latency is roughly in-flight x CPU per request / cores: every 0.04 ms of
CPU the gateway adds per request shows as ~1 ms of added latency, and whatever else runs
on the machine moves both. So the run ends with the CPU per request of direct calls and
of gateway calls in this process (``time.process_time``, every thread: the event writer
and the watchdog count), one request at a time in alternating blocks: no queueing, stable
on a busy machine. ``--cpu-only`` runs only that (``--profile FILE`` adds a cProfile).

LiteLLM is not a project dependency: it runs in a throwaway virtualenv (``--litellm-venv``,
default /tmp/litellm-venv), created on first use with
``python3 -m venv /tmp/litellm-venv && /tmp/litellm-venv/bin/pip install litellm``.
Pass ``--no-litellm`` to skip it.

Run: ``.venv/bin/python bench/gateway.py`` (needs Redis on REDIS_URL; uses a throwaway
SQLite file for contracts, routes and events).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import multiprocessing
import os
import statistics
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from _setup import django_on

django_on(migrate=False)  # a throwaway SQLite file, migrated once the arguments are parsed

import httpx  # noqa: E402
import redis  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

from fake_openrouter.process import free_port, start_simulator  # noqa: E402

MODEL = "acme/bench-1"
TAG = "swift/fp8"
FLEET = {
    "seed": 1,
    "models": [{
        "id": MODEL,
        "context_length": 131072,
        "endpoints": [{
            "provider": "Swift", "tag": TAG, "quantization": "fp8",
            "supported_parameters": ["max_tokens", "temperature", "stream"],
            "pricing": {"prompt": "0.0000001", "completion": "0.0000002"},
            # No added latency: first token at once, tokens as fast as the loop writes.
            "faults": {"ttft_ms": 0, "tokens_per_s": 1000000},
        }],
    }],
}
MESSAGES = [{"role": "user", "content": "Say hello to the traveller."}]
MAX_TOKENS = 40


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def run_phase(call: Callable[[int], None], n: int, concurrency: int) -> list[float]:
    """Run ``n`` calls on ``concurrency`` threads; per-call latencies in ms."""

    def timed(i: int) -> float:
        start = time.perf_counter()
        call(i)
        return (time.perf_counter() - start) * 1000.0

    with ThreadPoolExecutor(concurrency) as pool:
        return list(pool.map(timed, range(n)))


def direct_caller(base_url: str) -> Callable[[int], None]:
    """The same streamed, pinned request the gateway sends, straight to the simulator."""
    client = httpx.Client(transport=httpx.HTTPTransport(retries=0, limits=httpx.Limits(max_connections=256, max_keepalive_connections=256)))
    body = json.dumps({"model": MODEL, "messages": MESSAGES, "max_tokens": MAX_TOKENS, "stream": True,
                       "provider": {"only": [TAG], "allow_fallbacks": False}}).encode()
    url = base_url + "/chat/completions"

    def call(_: int) -> None:
        with client.stream("POST", url, content=body, headers={"Content-Type": "application/json"}) as response:
            # Read to the end of the body, past [DONE], as the OpenAI SDK does: the
            # connection then goes back to the pool. Stopping at [DONE] closes it, and the
            # next call pays a new TCP connection on both sides (a slower baseline).
            for _line in response.iter_lines():
                pass
        if response.status_code != 200:
            raise RuntimeError(f"direct call failed: HTTP {response.status_code}")

    return call


def setup_routing() -> None:
    """One route on the simulator's endpoint and one text contract, in the bench database."""
    from routing.models import Route
    from routing.services import contract_version_create

    Route.objects.create(name="swift", model_id=MODEL, provider_tag=TAG, modalities=["text"], context_length=131072,
                         price_prompt_usd="0.0000001", price_completion_usd="0.0000002")
    contract_version_create({"name": "bench-chat", "workload": "text", "deadline_s": 10, "max_attempts": 2,
                             "max_fallbacks": 1, "finish_reasons": ["stop", "length"]})


def gateway_caller(create: bool = True) -> Callable[[int], None]:
    """The in-process client, as a backend calls it (contract lookup included)."""
    from routing.services import chat_completion_create, gateway_get

    if create:
        setup_routing()
    gateway_get()  # build the client, Redis pool and event writer before timing

    def call(i: int) -> None:
        reply = chat_completion_create("bench-chat", 1, {"messages": MESSAGES, "max_tokens": MAX_TOKENS})
        if not reply.ok:
            raise RuntimeError(f"gateway call failed: {reply.body}")

    return call


def cpu_per_request(base_url: str, *, n: int = 500, block: int = 50, warmup: int = 100,
                    profile: Path | None = None) -> dict:
    """This process's CPU ms per request (``time.process_time``: every thread of this
    process, so the event writer and the watchdog count, the simulator and Redis do not),
    for ``n`` direct calls and ``n`` gateway calls, one at a time in alternating blocks of
    ``block``, after ``warmup`` of each. No concurrency, so no queueing: stable on a busy
    machine. Returns the totals per request and the quartiles of the per-block
    differences (their spread is the harness's own noise). ``profile``: write a cProfile
    (CPU-time clock) of the gateway blocks there."""
    from routing.services import gateway_get

    direct = direct_caller(base_url)
    system = gateway_caller(create=False)
    sink: Any = gateway_get().sink
    for i in range(warmup):
        direct(i)
        system(i)
    if hasattr(sink, "flush"):
        sink.flush()

    # Alternating blocks, so that drift (CPU frequency, other programs' cache pressure)
    # hits both sides alike.
    prof = cProfile.Profile(time.process_time) if profile is not None else None
    spent = {"direct": 0.0, "gateway": 0.0}
    added: list[float] = []
    done = 0
    gc.collect()
    while done < n:
        size = min(block, n - done)
        this = {}
        for side, call in (("direct", direct), ("gateway", system)):
            start = time.process_time()
            if prof is not None and side == "gateway":
                prof.enable()
            for i in range(size):
                call(i)
            if side == "gateway" and hasattr(sink, "flush"):
                sink.flush()  # the writer thread's CPU for these events belongs to them
            if prof is not None and side == "gateway":
                prof.disable()
            this[side] = time.process_time() - start
            spent[side] += this[side]
        added.append((this["gateway"] - this["direct"]) * 1000.0 / size)
        done += size
    if prof is not None and profile is not None:
        prof.dump_stats(str(profile))
    direct_cpu, system_cpu = spent["direct"] * 1000.0 / n, spent["gateway"] * 1000.0 / n
    return {"requests": n, "block": block, "direct_cpu_ms": direct_cpu, "gateway_cpu_ms": system_cpu,
            "added_cpu_ms": system_cpu - direct_cpu, "added_blocks_ms": quartiles(added)}


def cpu_line(cpu: dict) -> str:
    """One line: CPU ms per request, direct and gateway, and the added CPU with the
    interquartile range of its per-block values."""
    q1, _, q3 = cpu["added_blocks_ms"]
    return (f"CPU per request in this process, one request at a time ({cpu['requests']} each, "
            f"blocks of {cpu['block']}): direct {cpu['direct_cpu_ms']:.3f} ms, gateway {cpu['gateway_cpu_ms']:.3f} ms, "
            f"added {cpu['added_cpu_ms']:.3f} ms [IQR over blocks {q1:.3f}, {q3:.3f}]")


def _worker(role: str, base_url: str, barrier: Any, out: Any, n: int, rounds: int, threads: int) -> None:
    """One worker process (like one gunicorn worker): ``threads`` concurrent requests.
    Sends back its latencies (ms) per round: ([direct per round], [system per round])."""
    from django.db import connections

    connections.close_all()  # never share the parent's database connection after fork
    direct = direct_caller(base_url)
    system = gateway_caller(create=False) if role == "gateway" else direct
    sink: Any = None
    if role == "gateway":
        from routing.services import gateway_get

        sink = gateway_get().sink

    def flush() -> None:
        if hasattr(sink, "flush"):
            sink.flush()

    run_phase(direct, 100, threads)
    run_phase(system, 100, threads)
    flush()
    direct_ms: list[list[float]] = []
    system_ms: list[list[float]] = []
    for _ in range(rounds):
        barrier.wait()  # every worker is in the same phase at the same time
        direct_ms.append(run_phase(direct, n, threads))
        barrier.wait()
        system_ms.append(run_phase(system, n, threads))
        # Events the writer thread still holds (it writes a batch a second) are written
        # now, between phases: their CPU must never land in the next direct phase. So
        # the latency table leaves out most event writing; the CPU line counts it.
        flush()
    barrier.wait()
    out.put((direct_ms, system_ms))


def measure(name: str, base_url: str, *, n: int, rounds: int, concurrency: int, workers: int) -> dict:
    """``concurrency`` requests in flight in total, spread over ``workers`` processes."""
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(workers)
    out = ctx.Queue()
    threads = concurrency // workers
    procs = [ctx.Process(target=_worker, args=("gateway", base_url, barrier, out, n // workers, rounds, threads))
             for _ in range(workers)]
    for proc in procs:
        proc.start()
    direct_rounds: list[list[float]] = [[] for _ in range(rounds)]
    system_rounds: list[list[float]] = [[] for _ in range(rounds)]
    for _ in procs:
        d, sys_ms = out.get(timeout=1800)
        for i in range(rounds):  # round i of every worker ran at the same time
            direct_rounds[i] += d[i]
            system_rounds[i] += sys_ms[i]
    for proc in procs:
        proc.join(timeout=30)
    return summarise(name, direct_rounds, system_rounds)


def quartiles(values: list[float]) -> tuple[float, float, float]:
    """(25th percentile, median, 75th percentile)."""
    if len(values) < 2:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


def median_ci(values: list[float], level: float = 0.95) -> tuple[float, float]:
    """Distribution-free confidence interval of the median of ``values`` (order
    statistics: the k-th smallest and k-th largest, k from the binomial(n, 1/2) tail)."""
    from math import comb

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


def summarise(name: str, direct_rounds: list[list[float]], system_rounds: list[list[float]]) -> dict:
    """Latencies in ms, per round. The added latency is taken within each round (system
    p50 minus direct p50 of the same round, same for p99), then summarised over rounds by
    its median and interquartile range: a load spike from another program hits one
    round's direct and system phases alike, and a round it hits unevenly moves the
    quartiles, not the median."""
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


# The LiteLLM side runs in its own interpreter (its venv); it measures its own direct
# baseline with the same request, so both overheads are "system minus direct".
LITELLM_WORKER = r'''
import json, os, statistics, sys, time
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
from concurrent.futures import ThreadPoolExecutor
import httpx
import litellm
from litellm import Router
litellm.telemetry = False
litellm.suppress_debug_info = True
base_url, model, tag, max_tokens, n, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
concurrency = int(sys.argv[7]) // int(sys.argv[8])  # threads per worker process
messages = [{"role": "user", "content": "Say hello to the traveller."}]
provider = {"only": [tag], "allow_fallbacks": False}
router = Router(model_list=[{"model_name": "bench", "litellm_params": {
    "model": "openai/" + model, "api_base": base_url, "api_key": "sk-bench", "extra_body": {"provider": provider}}}],
    num_retries=0)
client = httpx.Client(transport=httpx.HTTPTransport(retries=0, limits=httpx.Limits(max_connections=256, max_keepalive_connections=256)))
body = json.dumps({"model": model, "messages": messages, "max_tokens": max_tokens, "stream": True, "provider": provider}).encode()
def direct(_):
    with client.stream("POST", base_url + "/chat/completions", content=body, headers={"Content-Type": "application/json"}) as r:
        for line in r.iter_lines():
            pass
def system(_):
    stream = router.completion(model="bench", messages=messages, max_tokens=max_tokens, stream=True)
    for _chunk in stream:
        pass
def phase(call, count):
    def timed(i):
        s = time.perf_counter(); call(i); return (time.perf_counter() - s) * 1000.0
    with ThreadPoolExecutor(concurrency) as pool:
        return list(pool.map(timed, range(count)))
import multiprocessing
workers = int(sys.argv[8])
def worker(barrier, out):
    phase(direct, 100); phase(system, 100)
    d, s = [], []
    for _ in range(rounds):
        barrier.wait(); d.append(phase(direct, n // workers))
        barrier.wait(); s.append(phase(system, n // workers))
    barrier.wait()
    out.put((d, s))
ctx = multiprocessing.get_context("fork")
barrier = ctx.Barrier(workers); out = ctx.Queue()
procs = [ctx.Process(target=worker, args=(barrier, out)) for _ in range(workers)]
for p in procs: p.start()
d, s = [[] for _ in range(rounds)], [[] for _ in range(rounds)]
for _ in procs:
    a, b = out.get()
    for i in range(rounds): d[i] += a[i]; s[i] += b[i]
for p in procs: p.join()
print(json.dumps({"direct": d, "system": s, "version": __import__("importlib.metadata").metadata.version("litellm")}))
'''


def litellm_measure(venv: Path, base_url: str, *, n: int, rounds: int, concurrency: int, workers: int) -> dict:
    python = venv / "bin" / "python"
    if not python.exists():
        raise SystemExit(
            f"LiteLLM venv not found at {venv}. Create it (not a project dependency):\n"
            f"  python3 -m venv {venv} && {venv}/bin/pip install litellm\n"
            "or run with --no-litellm."
        )
    done = subprocess.run(  # noqa: S603 - our own worker script in the given venv
        [str(python), "-c", LITELLM_WORKER, base_url, MODEL, TAG, str(MAX_TOKENS), str(n), str(rounds), str(concurrency), str(workers)],
        capture_output=True, text=True, check=False, timeout=1800,
    )
    if done.returncode != 0:
        raise SystemExit(f"LiteLLM worker failed:\n{done.stderr[-3000:]}")
    data = json.loads(done.stdout.strip().splitlines()[-1])
    result = summarise(f"LiteLLM Router {data['version']}", data["direct"], data["system"])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=200, help="requests per phase (all workers together)")
    parser.add_argument("--rounds", type=int, default=20,
                        help="alternating direct/system rounds (short phases: load spikes on a shared machine hit both)")
    parser.add_argument("--concurrency", type=int, default=50, help="requests in flight in total")
    parser.add_argument("--workers", type=int, default=5,
                        help="processes sharing the concurrency, like gunicorn workers (1 = one process)")
    parser.add_argument("--litellm-venv", type=Path, default=Path("/tmp/litellm-venv"))
    parser.add_argument("--no-litellm", action="store_true")
    parser.add_argument("--cpu-requests", type=int, default=500, help="sequential requests per side of the CPU harness")
    parser.add_argument("--cpu-only", action="store_true", help="only the in-process CPU harness (no concurrency)")
    parser.add_argument("--profile", type=Path, help="with --cpu-only: write a cProfile of the gateway phase here")
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    prefix = f"bench:breaker:{uuid.uuid4().hex}"
    settings.ROUTING_BREAKER_PREFIX = prefix
    fleet_path = Path(tempfile.mkdtemp()) / "fleet.json"
    fleet_path.write_text(json.dumps(FLEET))
    port = free_port()
    sim = start_simulator(fleet_path, port)
    base_url = f"http://127.0.0.1:{port}/api/v1"
    settings.OPENROUTER_BASE_URL = base_url
    settings.OPENROUTER_API_KEY = "sk-or-v1-bench"
    results = []
    try:
        setup_routing()
        if args.cpu_only:
            print(cpu_line(cpu_per_request(base_url, n=args.cpu_requests, profile=args.profile)))
            return
        results.append(measure("Reverie gateway", base_url, n=args.requests, rounds=args.rounds,
                               concurrency=args.concurrency, workers=args.workers))
        if not args.no_litellm:
            results.append(litellm_measure(args.litellm_venv, base_url, n=args.requests, rounds=args.rounds,
                                           concurrency=args.concurrency, workers=args.workers))
        # After the workers are gone: this process has no gateway yet (forking one with
        # its threads would be unsafe), and the simulator is idle again.
        cpu = cpu_per_request(base_url, n=args.cpu_requests)
    finally:
        sim.terminate()
        sim.wait(timeout=10)
        client = redis.Redis.from_url(settings.REDIS_URL)
        keys = list(client.scan_iter(f"{prefix}:*"))
        if keys:
            client.delete(*keys)

    print(f"\nAdded latency per request (system - direct), {args.concurrency} concurrent "
          f"({args.workers} processes x {args.concurrency // args.workers} threads), "
          f"{args.rounds} rounds x {args.requests} requests per system, simulator with no added latency, "
          f"{os.cpu_count()} CPUs shared with the simulator and Redis.")
    print("added = median over rounds of (system - direct) of the same round [interquartile range over rounds]; "
          "event writes happen between phases (their CPU is in the CPU line):")
    print(f"{'system':<28}{'direct p50':>12}{'system p50':>12}{'added p50':>11}{'[IQR]':>18}"
          f"{'direct p99':>12}{'system p99':>12}{'added p99':>11}{'[IQR]':>18}")
    for r in results:
        q1, med, q3 = r["added_median_ms"]
        p1, p99, p3 = r["added_p99_ms"]
        print(f"{r['name']:<28}{r['direct_median_ms']:>10.2f}ms{r['system_median_ms']:>10.2f}ms{med:>9.2f}ms"
              f"{f'[{q1:.2f}, {q3:.2f}]':>18}"
              f"{r['direct_p99_ms']:>10.2f}ms{r['system_p99_ms']:>10.2f}ms{p99:>9.2f}ms{f'[{p1:.2f}, {p3:.2f}]':>18}")
    print(cpu_line(cpu) + ", same run")
    ours = results[0]["added_median_ms"][1]
    low, high = results[0]["added_median_ci_ms"]
    print(f"95 % confidence interval of our added median over {results[0]['rounds']} rounds: {low:.2f} .. {high:.2f} ms")
    verdict = [f"ours {ours:.2f} ms {'<=' if ours <= 2.0 else '>'} 2 ms"]
    if len(results) > 1:
        theirs = results[1]["added_median_ms"][1]
        verdict.append(f"{'<=' if ours <= theirs / 2 else '>'} half of LiteLLM's ({theirs / 2:.2f} ms)")
    print("Target (added median <= 2 ms and <= half of LiteLLM's): " + ", ".join(verdict))


if __name__ == "__main__":
    main()
