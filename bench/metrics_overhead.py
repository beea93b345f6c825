"""What the instrumentation costs, side by side in one run.

1. Gateway CPU per request with and without metrics: one gateway over real HTTP to the
   simulator, one request at a time, in alternating blocks; the "with" blocks hand each
   result to ``ObservedSink`` (metrics recorded), the "without" blocks straight to the
   same event sink. CPU is ``time.process_time`` of this process (every thread: the event
   writer's too). Target: at most 2 % added.
2. A ``/metrics`` scrape with 150 endpoints x 6 checks x 5 verdicts of probe verdict
   series (4,500) plus the gateway's series for 150 routes: the time to render the
   exposition of the scrape registry, median of repeated scrapes. Target: under 50 ms.

``python bench/metrics_overhead.py`` (PostgreSQL and Redis on 127.0.0.1; it uses a fresh
database ``reverie_ops_bench_metrics``).
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path

from _setup import django_on, fresh_postgres

django_on(fresh_postgres("reverie_ops_bench_metrics"), migrate=True)

from django.conf import settings  # noqa: E402
from django.utils import timezone  # noqa: E402
from gateway import FLEET, gateway_caller, setup_routing  # noqa: E402

from canary.models import Endpoint, ProbeResult, Provider, Round  # noqa: E402
from fake_openrouter.process import free_port, start_simulator  # noqa: E402
from observability.gateway import ObservedSink, record, unwrapped  # noqa: E402
from observability.registry import web_exposition  # noqa: E402
from routing.gateway.result import GatewayResult  # noqa: E402
from routing.models import Route  # noqa: E402


def cpu_side_by_side(n: int, block: int, warmup: int) -> dict:
    from routing.services.wiring import gateway_get

    call = gateway_caller(create=False)
    gw = gateway_get()
    observed = gw.sink
    assert isinstance(observed, ObservedSink)
    plain = unwrapped(observed)
    for i in range(warmup):
        call(i)
    spent = {"without": 0.0, "with": 0.0}
    done = 0
    gc.collect()
    while done < n:
        size = min(block, n - done)
        for side, sink in (("without", plain), ("with", observed)):
            gw.sink = sink
            start = time.process_time()
            for i in range(size):
                call(i)
            plain.flush()
            spent[side] += time.process_time() - start
        done += size
    # The same cost measured directly, free of the harness's noise: ``record`` on a real
    # result (a request, its attempt), many times.
    captured: list[GatewayResult] = []
    gw.sink = ListSink(captured)
    call(0)
    gw.sink = observed
    reps = 20_000
    start = time.process_time()
    for _ in range(reps):
        record(captured[0])
    record_us = (time.process_time() - start) * 1e6 / reps
    without, with_ = spent["without"] * 1000 / n, spent["with"] * 1000 / n
    return {"n": n, "without_ms": without, "with_ms": with_, "added_pct": (with_ - without) / without * 100,
            "record_us": record_us, "record_pct": record_us / 10 / without}


class ListSink:
    def __init__(self, into: list[GatewayResult]) -> None:
        self.into = into

    def emit(self, result: GatewayResult) -> None:
        self.into.append(result)


def scrape_setup(endpoints: int, checks: int, verdicts: int) -> None:
    now = timezone.now()
    provider = Provider.objects.create(slug="bench", name="Bench", first_seen=now, last_seen=now)
    rnd = Round.objects.create(model_id="bench/model-1", language="en", started_at=now - timedelta(minutes=2),
                               finished_at=now, status=Round.Status.COMPLETED)
    kinds = [f"check_{c}" for c in range(checks)]
    verdict_names = ["pass", "fail", "inconclusive", "transport_error", "not_applicable"][:verdicts]
    eps = Endpoint.objects.bulk_create([
        Endpoint(provider=provider, model_id="bench/model-1", tag=f"bench-{i}/fp8", provider_name="Bench",
                 first_seen=now, last_seen=now) for i in range(endpoints)])
    ProbeResult.objects.bulk_create([
        ProbeResult(round=rnd, endpoint=ep, kind=kind, sample=s, verdict=v, raw_verdict=v, created_at=now)
        for ep in eps for kind in kinds for s, v in enumerate(verdict_names)])
    Route.objects.bulk_create([
        Route(name=f"bench-route-{i}", model_id="bench/model-1", provider_tag=f"bench-{i}/fp8", modalities=["text"],
              context_length=8192) for i in range(endpoints)])


def scrape_ms(repeats: int) -> tuple[float, float, float, int, int]:
    """One scrape's rendering: median wall ms, fastest wall ms, median CPU ms (this
    process: on a shared machine the stable measure), size in bytes, probe-verdict series."""
    walls, cpus = [], []
    body = web_exposition()  # warm: the first scrape opens the database and Redis connections
    for _ in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        body = web_exposition()
        walls.append((time.perf_counter() - start) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    series = sum(1 for line in body.decode().splitlines() if line.startswith("reverie_canary_probe_verdicts{"))
    return statistics.median(walls), min(walls), statistics.median(cpus), len(body), series


def scrape_line(repeats: int) -> str:
    wall, fastest, cpu, size, series = scrape_ms(repeats)
    return (f"/metrics scrape with {series} probe verdict series (150 endpoints x 6 checks x 5 verdicts) and 150 routes' "
            f"breaker series, {repeats} scrapes: wall median {wall:.1f} ms (fastest {fastest:.1f} ms), "
            f"CPU median {cpu:.1f} ms, {size / 1024:.0f} KiB (target < 50 ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=1000, help="requests per side")
    parser.add_argument("--block", type=int, default=50)
    parser.add_argument("--scrapes", type=int, default=20)
    parser.add_argument("--scrape-only", action="store_true", help="only the /metrics scrape")
    args = parser.parse_args()
    if args.scrape_only:
        scrape_setup(150, 6, 5)
        print(scrape_line(args.scrapes))
        return

    settings.ROUTING_BREAKER_PREFIX = f"bench:breaker:{uuid.uuid4().hex}"
    fleet_path = Path(tempfile.mkdtemp()) / "fleet.json"
    fleet_path.write_text(json.dumps(FLEET))
    port = free_port()
    sim = start_simulator(fleet_path, port)
    settings.OPENROUTER_BASE_URL = f"http://127.0.0.1:{port}/api/v1"
    settings.OPENROUTER_API_KEY = "sk-or-v1-bench"
    try:
        setup_routing()
        cpu = cpu_side_by_side(args.requests, args.block, warmup=100)
    finally:
        sim.terminate()
        sim.wait(timeout=10)
    scrape_setup(150, 6, 5)
    print(f"Gateway CPU per request ({cpu['n']} per side, alternating blocks of {args.block}): "
          f"without metrics {cpu['without_ms']:.3f} ms, with metrics {cpu['with_ms']:.3f} ms, "
          f"added {cpu['added_pct']:+.2f} % (target <= 2 %); record() alone: {cpu['record_us']:.1f} us per request "
          f"= {cpu['record_pct']:.2f} % of the gateway's CPU without metrics")
    print(scrape_line(args.scrapes))


if __name__ == "__main__":
    main()
