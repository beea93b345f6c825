"""Bench: the authenticated ignore-list API against a trivial JSON view, side by side.

Issue "Route quarantine", speed: served by gunicorn on loopback and loaded by a concurrent
client, the ignore list's throughput must be at least 0.9 times that of a trivial JSON view
(``/api/v1/health``) on the same server in the same run, for 200 and for 304 answers.
The three targets are loaded in interleaved rounds so machine noise hits all of them.
Prints throughput ratios and p99 latencies. Needs PostgreSQL on loopback.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from datetime import timedelta

from _setup import django_on, fresh_postgres, gunicorn_start

DB_URL = fresh_postgres("reverie_bench_api")
django_on(DB_URL)

import httpx  # noqa: E402
from django.utils import timezone  # noqa: E402

from canary.services.quarantine import exclusion_add  # noqa: E402
from core.tokens import service_token_issue  # noqa: E402

MODEL = "meta-llama/llama-3.3-70b-instruct"
CONCURRENCY = 32
REQUESTS = 1500
ROUNDS = 3


async def load(url: str, headers: dict[str, str], expect: int) -> tuple[float, list[float]]:
    """``REQUESTS`` GETs with ``CONCURRENCY`` in flight; returns (requests/s, latencies ms)."""
    latencies: list[float] = []
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(REQUESTS):
        queue.put_nowait(i)
    limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
    async with httpx.AsyncClient(limits=limits, timeout=10) as client:

        async def worker() -> None:
            while not queue.empty():
                queue.get_nowait()
                t = time.perf_counter()
                r = await client.get(url, headers=headers)
                latencies.append((time.perf_counter() - t) * 1000)
                if r.status_code != expect:
                    raise RuntimeError(f"{url}: HTTP {r.status_code}, expected {expect}")

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
        return REQUESTS / (time.perf_counter() - start), latencies


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98]


def main() -> None:
    now = timezone.now()
    exclusion_add(MODEL, "reviewed", "dynamo", actor="bench", reason="runs its own content filter", now=now)
    exclusion_add(MODEL, "incident", "fjord/fp8", actor="bench", reason="429 storm", now=now, expires_at=now + timedelta(days=1))
    _, token = service_token_issue("bench")
    env = {**os.environ, "DATABASE_URL": DB_URL, "DJANGO_ALLOWED_HOSTS": "127.0.0.1"}
    server = gunicorn_start(env, workers=2, threads=8, ready_path="/api/v1/health", ready_status=200)
    base = server.base
    try:
        auth = {"Authorization": f"Bearer {token}"}
        ignore = f"{base}/api/v1/routing/ignore?model={MODEL}"
        etag = httpx.get(ignore, headers=auth).headers["ETag"]
        targets = {
            "trivial": (f"{base}/api/v1/health", {}, 200),
            "ignore_200": (ignore, auth, 200),
            "ignore_304": (ignore, {**auth, "If-None-Match": etag}, 304),
        }
        results: dict[str, list[tuple[float, list[float]]]] = {k: [] for k in targets}
        asyncio.run(load(*targets["trivial"]))  # warm-up
        for _ in range(ROUNDS):
            for name, (url, headers, expect) in targets.items():
                results[name].append(asyncio.run(load(url, headers, expect)))
        rps = {k: statistics.median(r for r, _ in v) for k, v in results.items()}
        lat = {k: p99([x for _, xs in v for x in xs]) for k, v in results.items()}
        print(f"{CONCURRENCY} concurrent, {REQUESTS} requests x {ROUNDS} interleaved rounds per target, gunicorn 2 workers x 8 threads")
        for name in targets:
            print(f"  {name:<11} {rps[name]:8.0f} req/s   p99 {lat[name]:6.1f} ms")
        print(f"ratio ignore 200 / trivial: {rps['ignore_200'] / rps['trivial']:.3f} (target >= 0.9)")
        print(f"ratio ignore 304 / trivial: {rps['ignore_304'] / rps['trivial']:.3f} (target >= 0.9)")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
