"""Bench: the first streamed reply after a gunicorn start against a warm one, and the
memory per worker, side by side for three starts of the same server:

- cold: no warm-up (``REVERIE_WARM_START=0``): the judges and the language detector are
  built on the first requests' path, as before;
- warm, per worker: each worker builds them before it accepts (``REVERIE_PRELOAD_APP=0``);
- warm, preload_app: the arbiter builds them once before it forks (the default).

Each start: gunicorn with the deployed settings file (``observability/gunicorn_conf.py``,
2 gthread workers), ready when ``/api/v1/health`` answers; then two streamed requests at
once on fresh connections (one per worker) under a contract that checks the language
(``expected_language: en``, so the prefix judge needs the detector); their time to first
content (the slower of the two) is the "first" figure; then ``WARM`` more pairs give the
warm median, measured the same way.
Memory per worker from ``/proc/<pid>/smaps_rollup`` after the requests: RSS, PSS
(shared pages split among the processes that map them) and USS (private to the worker).
Target: first within 50 ms of warm. Needs PostgreSQL and Redis on loopback (REDIS_URL).
Usage: ``python bench/warm_start.py [--starts 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _setup import ROOT, django_on, fresh_postgres

DB_URL = fresh_postgres("reverie_bench_warm_start")
django_on(DB_URL)

import httpx  # noqa: E402

from core.tokens import service_token_issue  # noqa: E402
from fake_openrouter.process import free_port, start_simulator  # noqa: E402
from routing.models import Route  # noqa: E402
from routing.services import contract_version_create  # noqa: E402

MODEL, TAG = "acme/bench-1", "swift/fp8"
FLEET = {"seed": 1, "models": [{"id": MODEL, "context_length": 131072, "endpoints": [{
    "provider": "Swift", "tag": TAG, "quantization": "fp8", "supported_parameters": ["max_tokens", "temperature", "stream"],
    "pricing": {"prompt": "0.0000001", "completion": "0.0000002"}, "faults": {"ttft_ms": 200, "tokens_per_s": 400}}]}]}
WORKERS = 2
WARM = 12
STARTS = {
    "cold (no warm-up)": {"REVERIE_WARM_START": "0", "REVERIE_PRELOAD_APP": "0"},
    "warm, per worker": {"REVERIE_WARM_START": "1", "REVERIE_PRELOAD_APP": "0"},
    "warm, preload_app": {"REVERIE_WARM_START": "1", "REVERIE_PRELOAD_APP": "1"},
}
BODY = json.dumps({"messages": [{"role": "user", "content": "Greet the traveller at the inn."}], "max_tokens": 120, "stream": True})


def first_content_ms(base: str, token: str) -> float:
    """Time from sending a streamed request on a fresh connection to its first content chunk (ms)."""
    headers = {"Authorization": f"Bearer {token}", "X-Routing-Contract": "bench-warm@1", "Content-Type": "application/json"}
    with httpx.Client(timeout=60) as client:
        start = time.perf_counter()
        with client.stream("POST", base + "/v1/chat/completions", content=BODY, headers=headers) as response:
            if response.status_code != 200:
                raise RuntimeError(f"HTTP {response.status_code}: {response.read()[:200]!r}")
            took = None
            for line in response.iter_lines():
                if took is None and line.startswith("data: {") and '"content"' in line:
                    took = (time.perf_counter() - start) * 1000.0
            if took is not None:
                return took
    raise RuntimeError("no content in the stream")


def workers_of(master: int) -> list[int]:
    text = Path(f"/proc/{master}/task/{master}/children").read_text()
    return [int(p) for p in text.split()]


def memory_mib(pid: int) -> dict[str, float]:
    """RSS, PSS and USS of ``pid`` in MiB (``/proc/<pid>/smaps_rollup``)."""
    fields: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        key, value = line.split(":", 1)
        fields[key] = float(value.split()[0]) / 1024.0
    return {"rss": fields["Rss"], "pss": fields["Pss"], "uss": fields["Private_Clean"] + fields["Private_Dirty"]}


def one_start(env: dict[str, str], token: str, log_dir: Path) -> dict[str, object]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = open(log_dir / f"gunicorn-{port}.log", "w")  # noqa: SIM115 - closed below
    server = subprocess.Popen(  # noqa: S603
        [sys.executable, "-m", "gunicorn", "-c", "observability/gunicorn_conf.py", "reverie_ops.wsgi", "-b", f"127.0.0.1:{port}",
         "-w", str(WORKERS), "--worker-class", "gthread", "--threads", "8", "--timeout", "120",
         "--control-socket", str(log_dir / f"gunicorn-{port}.ctl")],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        started = time.perf_counter()
        while True:
            try:
                if httpx.get(base + "/api/v1/health", timeout=30).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.05)
            if time.perf_counter() - started > 120:
                raise RuntimeError("gunicorn did not become ready in 120 s")
        ready_s = time.perf_counter() - started
        with ThreadPoolExecutor(WORKERS) as pool:
            first = list(pool.map(lambda _: first_content_ms(base, token), range(WORKERS)))
        # Warm streams measured as the first ones were, two at once (the slower one), so
        # both figures carry the same contention.
        warm = []
        for _ in range(WARM):
            with ThreadPoolExecutor(WORKERS) as pool:
                warm.append(max(pool.map(lambda _: first_content_ms(base, token), range(WORKERS))))
        memory = [memory_mib(pid) for pid in workers_of(server.pid)]
        return {"ready_s": ready_s, "first": first, "warm": statistics.median(warm),
                "warm_p90": statistics.quantiles(warm, n=10)[8], "memory": memory}
    finally:
        server.terminate()
        server.wait(30)
        log.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--starts", type=int, default=3, help="starts per configuration, interleaved")
    args = parser.parse_args()
    log_dir = Path(tempfile.mkdtemp())
    fleet = log_dir / "fleet.json"
    fleet.write_text(json.dumps(FLEET))
    sim_port = free_port()
    sim = start_simulator(fleet, sim_port)
    Route.objects.create(name="swift", model_id=MODEL, provider_tag=TAG, modalities=["text"], context_length=131072,
                         price_prompt_usd="0.0000001", price_completion_usd="0.0000002")
    contract_version_create({"name": "bench-warm", "workload": "text", "deadline_s": 30, "max_attempts": 2,
                             "max_fallbacks": 1, "finish_reasons": ["stop", "length"], "expected_language": "en"})
    _, token = service_token_issue("bench")
    base_env = {**os.environ, "DATABASE_URL": DB_URL, "OPENROUTER_BASE_URL": f"http://127.0.0.1:{sim_port}/api/v1",
                "OPENROUTER_API_KEY": "sk-or-v1-bench", "LOG_LEVEL": "INFO"}
    results: dict[str, list[dict[str, object]]] = {name: [] for name in STARTS}
    try:
        for _ in range(args.starts):
            for name, extra in STARTS.items():
                results[name].append(one_start({**base_env, **extra}, token, log_dir))
    finally:
        sim.terminate()
    print(f"{WORKERS} gthread workers, {args.starts} starts each (interleaved); time to first content, ms "
          f"(first = slower of the first {WORKERS} streams after ready, warm = median of {WARM} such pairs after them)")
    for name, runs in results.items():
        firsts = [max(r["first"]) for r in runs]  # type: ignore[arg-type]
        warms = [r["warm"] for r in runs]
        gaps = [f - w for f, w in zip(firsts, warms, strict=True)]  # type: ignore[operator]
        mem = [m for r in runs for m in r["memory"]]  # type: ignore[attr-defined]
        print(f"  {name:<20} ready {statistics.median(r['ready_s'] for r in runs):5.1f} s   "  # type: ignore[misc]
              f"first {statistics.median(firsts):7.0f}   warm {statistics.median(warms):5.0f}   "  # type: ignore[type-var]
              f"first - warm {statistics.median(gaps):6.0f} (runs: {', '.join(f'{g:.0f}' for g in gaps)}; "
              f"warm pairs' own p90 - median: {statistics.median(r['warm_p90'] - r['warm'] for r in runs):.0f})")  # type: ignore[operator]
        print(f"  {'':<20} per worker: RSS {statistics.median(m['rss'] for m in mem):5.0f} MiB   "
              f"PSS {statistics.median(m['pss'] for m in mem):5.0f} MiB   USS {statistics.median(m['uss'] for m in mem):5.0f} MiB")
    print(f"logs: {log_dir}")


if __name__ == "__main__":
    main()
