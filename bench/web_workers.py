"""Bench: gunicorn sync workers against gthread workers, side by side, for the gateway.

The compose web service serves the gateway, whose requests wait on providers for most of
their time. A sync worker holds its process for the whole wait; a gthread worker serves
other requests meanwhile. Both servers run the same app on loopback in one run, loaded by
the same 50 concurrent clients sending ``POST /v1/chat/completions`` to a simulator
endpoint with a 200 ms first token, in interleaved rounds so machine noise hits both.
Prints requests/s and p99 of each and their ratio. Needs PostgreSQL and Redis on loopback.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _setup import Server, django_on, fresh_postgres, gunicorn_start

DB_URL = fresh_postgres("reverie_bench_workers")
django_on(DB_URL)

import httpx  # noqa: E402

from core.tokens import service_token_issue  # noqa: E402
from fake_openrouter.process import free_port, start_simulator  # noqa: E402
from routing.models import Route  # noqa: E402
from routing.services.contracts import contract_version_create  # noqa: E402

MODEL, TAG = "acme/bench-1", "swift/fp8"
FLEET = {"seed": 1, "models": [{"id": MODEL, "context_length": 131072, "endpoints": [{
    "provider": "Swift", "tag": TAG, "quantization": "fp8", "supported_parameters": ["max_tokens", "temperature", "stream"],
    "pricing": {"prompt": "0.0000001", "completion": "0.0000002"}, "faults": {"ttft_ms": 200, "tokens_per_s": 1000000}}]}]}
CLIENTS = 50
REQUESTS = 200
ROUNDS = 2
# 3 workers each: (threads, extra gunicorn flags). The last -k wins over gunicorn_start's
# own; sync with one thread (gunicorn runs gthread whenever threads > 1).
SERVERS: dict[str, tuple[int, list[str]]] = {
    "sync (3 workers)": (1, ["-k", "sync"]),
    "gthread (3 x 32 threads)": (32, []),
}


def load(base: str, token: str) -> tuple[float, list[float]]:
    """``REQUESTS`` chat completions from ``CLIENTS`` threads: (requests/s, latencies s)."""
    body = json.dumps({"messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 20})
    headers = {"Authorization": f"Bearer {token}", "X-Routing-Contract": "bench-chat@1", "Content-Type": "application/json"}
    client = httpx.Client(timeout=120, limits=httpx.Limits(max_connections=CLIENTS))

    def one(_: int) -> float:
        start = time.perf_counter()
        response = client.post(base + "/v1/chat/completions", content=body, headers=headers)
        if response.status_code != 200:
            raise RuntimeError(f"HTTP {response.status_code}: {response.text[:200]}")
        return time.perf_counter() - start

    start = time.perf_counter()
    with ThreadPoolExecutor(CLIENTS) as pool:
        latencies = list(pool.map(one, range(REQUESTS)))
    return REQUESTS / (time.perf_counter() - start), latencies


def main() -> None:
    fleet = Path(tempfile.mkdtemp()) / "fleet.json"
    fleet.write_text(json.dumps(FLEET))
    sim_port = free_port()
    sim = start_simulator(fleet, sim_port)
    Route.objects.create(name="swift", model_id=MODEL, provider_tag=TAG, modalities=["text"], context_length=131072,
                         price_prompt_usd="0.0000001", price_completion_usd="0.0000002")
    contract_version_create({"name": "bench-chat", "workload": "text", "deadline_s": 30, "max_attempts": 2,
                             "max_fallbacks": 1, "finish_reasons": ["stop", "length"]})
    _, token = service_token_issue("bench")
    env = {**os.environ, "DATABASE_URL": DB_URL, "OPENROUTER_BASE_URL": f"http://127.0.0.1:{sim_port}/api/v1",
           "OPENROUTER_API_KEY": "sk-or-v1-bench", "DATABASE_POOL_MAX_SIZE": "32"}
    servers: list[Server] = []
    bases = {}
    try:
        for name, (threads, args) in SERVERS.items():
            servers.append(gunicorn_start(env, workers=3, threads=threads, args=["--timeout", "120", *args],
                                          ready_path="/api/v1/health"))
            bases[name] = servers[-1].base
        for base in bases.values():
            load(base, token)  # warm-up: connections, caches
        results: dict[str, list[tuple[float, list[float]]]] = {name: [] for name in bases}
        for _ in range(ROUNDS):
            for name, base in bases.items():
                results[name].append(load(base, token))
        print(f"{CLIENTS} clients, {REQUESTS} requests x {ROUNDS} interleaved rounds, first token 200 ms")
        rps = {}
        for name, runs in results.items():
            rps[name] = statistics.median(r for r, _ in runs)
            p99 = statistics.quantiles([x for _, xs in runs for x in xs], n=100)[98]
            print(f"  {name:<26} {rps[name]:7.1f} req/s   p99 {p99:6.2f} s")
        sync, threaded = rps.values()
        print(f"ratio gthread / sync: {threaded / sync:.2f}")
    finally:
        for server in servers:
            server.stop()
        sim.terminate()


if __name__ == "__main__":
    main()
