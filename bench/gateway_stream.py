"""Bench: time to the first content chunk of a stream through the gateway vs straight from
the simulator, at 1 and at 50 streams in flight, for a prefix-mode contract; one run.

Targets (issue "The gateway in the live chat path"): added time to first token (p50) at
most the prefix hold plus 5 ms; content chunks delivered through the gateway equal
content chunks produced upstream; the gateway's memory per open stream bounded, and
reported.

Method. The simulator (a child process) hosts one endpoint with a 50 ms first token and
200 tokens a second, so a reply streams for about half a second and its first 64
characters take longer than the hold (100 ms): the hold ends by time. The gateway is
the web app under gunicorn with gthread workers (2 x 32 threads, as deployed), on a
throwaway SQLite file, with its breakers in Redis (REDIS_URL) under a bench prefix. A
client thread opens a stream and times the first ``data:`` event carrying content;
"direct" sends the same request, pinned, to the simulator. Phases alternate direct and
gateway, in rounds; the added TTFT is each round's (gateway p50 - direct p50), reported
as the median over rounds with its spread. Chunks: every gateway attempt event records
the content chunks it received upstream and those it sent; the bench sums both. Memory:
the gunicorn workers' resident set (``/proc/PID/status`` VmRSS) idle after a warm-up
phase at 50 in flight, and while 50 streams are open (sampled mid-phase), divided by 50.

Every wait has a timeout (HTTP calls 30 s, phases 120 s, process starts 60 s).

Run: ``.venv/bin/python bench/gateway_stream.py`` (Redis on REDIS_URL).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

from _setup import Server, django_on, gunicorn_start

DB_FILE = Path(tempfile.mkdtemp()) / "bench-stream.sqlite3"
django_on(f"sqlite:///{DB_FILE}")

import httpx  # noqa: E402

from fake_openrouter.process import free_port, start_simulator  # noqa: E402

MODEL = "acme/stream-1"
TAG = "brook/fp8"
HOLD_MS = 100.0
FLEET = {
    "seed": 3,
    "models": [{"id": MODEL, "context_length": 131072, "endpoints": [{
        "provider": "Brook", "tag": TAG, "quantization": "fp8",
        "supported_parameters": ["max_tokens", "temperature", "stream"],
        "pricing": {"prompt": "0.0000001", "completion": "0.0000002"},
        "faults": {"ttft_ms": 50, "tokens_per_s": 200},
    }]}],
}
CONTRACT = {"name": "bench-roleplay", "workload": "text", "deadline_s": 20, "first_token_s": 4, "idle_s": 5,
            "max_attempts": 2, "max_fallbacks": 1, "finish_reasons": ["stop", "length"],
            "stream_commit": {"mode": "prefix", "hold_chars": 64, "hold_ms": HOLD_MS}}
TIMEOUT = httpx.Timeout(30.0)


def first_content(client: httpx.Client, url: str, body: dict, headers: dict) -> tuple[float, int]:
    """(ms to the first content event, content events) of one streamed request."""
    start = time.perf_counter()
    first: float | None = None
    chunks = 0
    with client.stream("POST", url, json=body, headers=headers) as response:
        if response.status_code != 200:
            raise RuntimeError(f"HTTP {response.status_code}: {response.read()[:300]!r}")
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            obj = json.loads(line[6:])
            choices = obj.get("choices") or []
            if choices and (choices[0].get("delta") or {}).get("content"):
                chunks += 1
                if first is None:
                    first = (time.perf_counter() - start) * 1000.0
    if first is None:
        raise RuntimeError("no content in the stream")
    return first, chunks


def phase(call, n: int, concurrency: int, during=None) -> list[float]:  # type: ignore[no-untyped-def]
    """``n`` calls on ``concurrency`` threads; their TTFTs (ms). ``during()`` runs once
    while the calls are in flight."""
    with ThreadPoolExecutor(concurrency) as pool:
        futures = [pool.submit(call, i) for i in range(n)]
        if during is not None:
            time.sleep(0.25)
            during()
        done, pending = wait(futures, timeout=120)
        if pending:
            raise RuntimeError(f"{len(pending)} streams did not finish within 120 s")
        return [f.result()[0] for f in futures]


def rss_kib(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        status = Path(f"/proc/{pid}/status").read_text()
        total += int(re.search(r"VmRSS:\s+(\d+)", status).group(1))  # type: ignore[union-attr]
    return total


def worker_pids(master: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(master)], capture_output=True, text=True, timeout=10)
    return [int(p) for p in out.stdout.split()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--per-phase", type=int, default=50, help="streams per phase at 50 in flight")
    args = parser.parse_args()

    from core.tokens import service_token_issue
    from routing.models import AttemptEvent, Route
    from routing.services.contracts import contract_version_create

    fleet_path = Path(tempfile.mkdtemp()) / "fleet.json"
    fleet_path.write_text(json.dumps(FLEET))
    sim_port = free_port()
    sim = start_simulator(fleet_path, sim_port)
    sim_url = f"http://127.0.0.1:{sim_port}/api/v1"
    Route.objects.create(name="brook", model_id=MODEL, provider_tag=TAG, modalities=["text"], context_length=131072,
                         price_prompt_usd="0.0000001", price_completion_usd="0.0000002")
    contract_version_create(dict(CONTRACT))
    _, token = service_token_issue(f"bench-{uuid.uuid4().hex[:6]}")
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{DB_FILE}", "OPENROUTER_BASE_URL": sim_url,
           "OPENROUTER_API_KEY": "sk-bench", "ROUTING_BREAKER_PREFIX": f"bench:breaker:{uuid.uuid4().hex}"}
    web: Server | None = None
    try:
        web = gunicorn_start(env, workers=2, threads=32)
        gateway_url = f"{web.base}/v1/chat/completions"
        client = httpx.Client(timeout=TIMEOUT, limits=httpx.Limits(max_connections=128, max_keepalive_connections=128))
        messages = [{"role": "user", "content": "Greet the traveller at the inn door."}]
        gw_headers = {"Authorization": f"Bearer {token}", "X-Routing-Contract": "bench-roleplay@1"}
        gw_body = {"model": MODEL, "messages": messages, "max_tokens": 200, "stream": True}
        sim_body = {**gw_body, "provider": {"only": [TAG], "allow_fallbacks": False}}

        def direct(_: int) -> tuple[float, int]:
            return first_content(client, f"{sim_url}/chat/completions", sim_body, {"Authorization": "Bearer sk-bench"})

        def gateway(_: int) -> tuple[float, int]:
            return first_content(client, gateway_url, gw_body, gw_headers)

        for _ in range(3):  # warm both paths (connections, caches)
            direct(0)
            gateway(0)
        # One phase at 50 in flight first, so that the idle figure already holds what 50
        # threads keep once they exist (stacks, allocator arenas, pooled connections).
        phase(gateway, 50, 50)
        time.sleep(1.5)
        pids = worker_pids(web.proc.pid)
        idle_kib = rss_kib(pids)
        open_kib: list[int] = []
        results: dict[int, dict[str, list[float]]] = {}
        for concurrency, n in ((1, 10), (50, args.per_phase)):
            added, d_all, g_all = [], [], []
            for _ in range(args.rounds):
                d = phase(direct, n, concurrency)
                g = phase(gateway, n, concurrency,
                          during=(lambda: open_kib.append(rss_kib(pids))) if concurrency == 50 else None)
                added.append(statistics.median(g) - statistics.median(d))
                d_all += d
                g_all += g
            results[concurrency] = {"added": added, "direct": d_all, "gateway": g_all}
        time.sleep(2.5)  # the event writer: a batch a second
        received = sent = 0
        for text in AttemptEvent.objects.filter(route="brook").values_list("validation", flat=True):
            found = re.search(r"chunks: (\d+) received, (\d+) sent", text)
            if found:
                received += int(found.group(1))
                sent += int(found.group(2))
        streams = AttemptEvent.objects.filter(route="brook", status="accepted").count()
        upstream_ttft = sorted(t for t in AttemptEvent.objects.filter(route="brook", status="accepted")
                               .values_list("ttft_ms", flat=True) if t is not None)
    finally:
        if web is not None:
            web.stop()
        sim.terminate()
        sim.wait(timeout=10)

    print(f"Prefix-mode contract: hold {CONTRACT['stream_commit']['hold_chars']} chars or {HOLD_MS:g} ms; "
          f"upstream first token 50 ms, 200 tokens/s; {args.rounds} rounds per level")
    print(f"{'in flight':>9} | {'direct TTFT p50':>15} | {'gateway TTFT p50':>16} | {'added p50 (median of rounds)':>28} "
          f"| {'spread of rounds':>17} | target <= {HOLD_MS + 5:g} ms")
    for concurrency, r in results.items():
        added = sorted(r["added"])
        verdict = "met" if statistics.median(added) <= HOLD_MS + 5 else "NOT met"
        print(f"{concurrency:>9} | {statistics.median(r['direct']):>12.1f} ms | {statistics.median(r['gateway']):>13.1f} ms | "
              f"{statistics.median(added):>25.1f} ms | {added[0]:>6.1f}..{added[-1]:<6.1f} ms | {verdict}")
    if upstream_ttft:
        print(f"The gateway's own upstream TTFT (attempt events, all levels): p50 "
              f"{statistics.median(upstream_ttft):.1f} ms; the rest of the added time is the hold and the send")
    print(f"Chunks: {received} received upstream, {sent} delivered, over {streams} accepted gateway streams "
          f"({'equal' if received == sent else 'NOT equal'})")
    per_stream = (max(open_kib) - idle_kib) / 50 if open_kib else float("nan")
    print(f"Gateway memory (2 gunicorn workers): idle {idle_kib / 1024:.1f} MiB, with 50 streams open "
          f"{max(open_kib) / 1024 if open_kib else float('nan'):.1f} MiB: {per_stream:.0f} KiB per open stream")


if __name__ == "__main__":
    main()
