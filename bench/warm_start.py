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

``--baseline DIR``: another checkout of the project (``git worktree add DIR main``) whose
server is started in turn with this one's, configuration by configuration, so a change
and what it changes are measured in the same minutes of a shared machine.
``--tls``: nginx terminates TLS in front of the simulator (``bench/_setup.py``
``tls_front``, a throwaway CA the servers trust through ``SSL_CERT_FILE``), so a new
upstream connection costs a TLS handshake as OpenRouter's does (on loopback: its CPU, no
round trips); nginx's access log then tells, per start, how many of the first streams
went out on a connection of their own (``new conn``) rather than one already open.
``--after-all-warm`` (a diagnosis, not the issue's figure): the first streams wait until
every worker logged its warm-up, which tells the first request's own cost from the CPU a
sibling worker still warming up takes from it.
Usage: ``python bench/warm_start.py [--starts 5] [--baseline DIR] [--configs warm,preload] [--tls]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from _setup import ROOT, Server, TlsFront, django_on, fresh_postgres, gunicorn_start, tls_front

CONFIGS = {"cold": "cold (no warm-up)", "warm": "warm, per worker", "preload": "warm, preload_app"}
parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
parser.add_argument("--starts", type=int, default=3, help="starts per configuration (and tree), interleaved")
parser.add_argument("--baseline", type=Path, help="another checkout of the project, started in turn with this one")
parser.add_argument("--configs", default=",".join(CONFIGS), help=f"comma-separated, of {', '.join(CONFIGS)}")
parser.add_argument("--database", default="reverie_bench_warm_start", help="PostgreSQL database (dropped and created)")
parser.add_argument("--after-all-warm", action="store_true",
                    help="a diagnosis: send the first streams only once every worker logged its warm-up, so a sibling "
                         "still warming up does not compete with them (the issue's figure is without it)")
parser.add_argument("--tls", action="store_true", help="nginx terminating TLS in front of the simulator")
ARGS = parser.parse_args()
DB_URL = fresh_postgres(ARGS.database)
django_on(DB_URL)

import httpx  # noqa: E402

from core.tokens import service_token_issue  # noqa: E402
from fake_openrouter.process import free_port, start_simulator  # noqa: E402
from routing.models import Route  # noqa: E402
from routing.services.contracts import contract_version_create  # noqa: E402

MODEL, TAG = "acme/bench-1", "swift/fp8"
FLEET = {"seed": 1, "models": [{"id": MODEL, "context_length": 131072, "endpoints": [{
    "provider": "Swift", "tag": TAG, "quantization": "fp8", "supported_parameters": ["max_tokens", "temperature", "stream"],
    "pricing": {"prompt": "0.0000001", "completion": "0.0000002"}, "faults": {"ttft_ms": 200, "tokens_per_s": 400}}]}]}
WORKERS = 2
WARM = 12
STARTS = {
    "cold": {"REVERIE_WARM_START": "0", "REVERIE_PRELOAD_APP": "0"},
    "warm": {"REVERIE_WARM_START": "1", "REVERIE_PRELOAD_APP": "0"},
    "preload": {"REVERIE_WARM_START": "1", "REVERIE_PRELOAD_APP": "1"},
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


@dataclass
class Start:
    """One start's figures: seconds until ready; each worker's first stream and the
    median and p90 of the warm pairs (ms to first content); each worker's memory (MiB)."""

    ready_s: float
    first: list[float]
    warm: float
    warm_p90: float
    memory: list[dict[str, float]]
    # How many of the first streams opened an upstream connection (None: no TLS front to tell).
    first_new: int | None = None

    @property
    def gap(self) -> float:
        """The slower first stream minus the warm median (ms)."""
        return max(self.first) - self.warm


def all_warm(server: Server, workers: int, timeout_s: float = 120.0) -> None:
    """Wait until ``workers`` processes logged their gateway's warm-up (``warm: pid=N ...
    gateway=...ms``, ``routing.warm``); RuntimeError after ``timeout_s``."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        pids = {m.group(1) for m in re.finditer(r"warm: pid=(\d+) .*gateway=", server.tail(10**6))}
        if len(pids) >= workers:
            return
        time.sleep(0.05)
    raise RuntimeError(f"not every worker warmed up in {timeout_s:.0f} s: {server.tail()}")


def new_connections(front: TlsFront | None, seen: int, streams: int) -> int | None:
    """How many of the first ``streams`` chat requests the front relayed after its first
    ``seen`` requests came on a connection they opened (its first request)."""
    if front is None:
        return None
    chats = [count for _, count, method, uri in front.requests()[seen:] if method == "POST" and uri.endswith("/chat/completions")]
    return sum(1 for count in chats[:streams] if count == 1)


def one_start(root: Path, env: dict[str, str], token: str, log_dir: Path, front: TlsFront | None) -> Start:
    """One start of ``root``'s web app in ``env``: the first streams, the warm pairs, the
    memory of each worker."""
    seen = len(front.requests()) if front is not None else 0
    started = time.perf_counter()
    server: Server = gunicorn_start(
        env, workers=WORKERS, threads=8, root=root, log=log_dir / f"gunicorn-{time.monotonic_ns()}.log",
        args=["-c", "observability/gunicorn_conf.py", "--timeout", "120", "--log-level", "info"],
        ready_path="/api/v1/health", ready_status=200, timeout_s=120)
    try:
        ready_s = time.perf_counter() - started
        if ARGS.after_all_warm:
            all_warm(server, WORKERS)
        with ThreadPoolExecutor(WORKERS) as pool:
            first = list(pool.map(lambda _: first_content_ms(server.base, token), range(WORKERS)))
        # Warm streams measured as the first ones were, two at once (the slower one), so
        # both figures carry the same contention.
        warm = []
        for _ in range(WARM):
            with ThreadPoolExecutor(WORKERS) as pool:
                warm.append(max(pool.map(lambda _: first_content_ms(server.base, token), range(WORKERS))))
        memory = [memory_mib(pid) for pid in workers_of(server.proc.pid)]
        return Start(ready_s, first, statistics.median(warm), statistics.quantiles(warm, n=10)[8], memory,
                     new_connections(front, seen, WORKERS))
    finally:
        server.stop()


def summary(name: str, runs: list[Start]) -> None:
    mem = [m for r in runs for m in r.memory]
    print(f"  {name:<30} ready {statistics.median(r.ready_s for r in runs):5.1f} s   "
          f"first {statistics.median(max(r.first) for r in runs):7.0f}   warm {statistics.median(r.warm for r in runs):5.0f}   "
          f"first - warm {statistics.median(r.gap for r in runs):6.0f} (runs: {', '.join(f'{r.gap:.0f}' for r in runs)}; "
          f"warm pairs' own p90 - median: {statistics.median(r.warm_p90 - r.warm for r in runs):.0f})")
    if all(r.first_new is not None for r in runs):
        print(f"  {'':<30} first streams on a new upstream connection: {sum(r.first_new or 0 for r in runs)} "
              f"of {WORKERS * len(runs)}")
    print(f"  {'':<30} per worker: RSS {statistics.median(m['rss'] for m in mem):5.0f} MiB   "
          f"PSS {statistics.median(m['pss'] for m in mem):5.0f} MiB   USS {statistics.median(m['uss'] for m in mem):5.0f} MiB")


def main() -> None:
    configs = [c.strip() for c in ARGS.configs.split(",") if c.strip()]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        raise SystemExit(f"--configs: unknown {unknown}; choose among {', '.join(CONFIGS)}")
    trees = {"this": ROOT}
    if ARGS.baseline is not None:
        if not (ARGS.baseline / "reverie_ops" / "wsgi.py").exists():
            raise SystemExit(f"--baseline: {ARGS.baseline} is not a checkout of this project (no reverie_ops/wsgi.py)")
        trees = {"baseline": ARGS.baseline.resolve(), "this": ROOT}
    log_dir = Path(tempfile.mkdtemp())
    fleet = log_dir / "fleet.json"
    fleet.write_text(json.dumps(FLEET))
    sim_port = free_port()
    sim = start_simulator(fleet, sim_port)
    front = tls_front(sim_port) if ARGS.tls else None
    Route.objects.create(name="swift", model_id=MODEL, provider_tag=TAG, modalities=["text"], context_length=131072,
                         price_prompt_usd="0.0000001", price_completion_usd="0.0000002")
    contract_version_create({"name": "bench-warm", "workload": "text", "deadline_s": 30, "max_attempts": 2,
                             "max_fallbacks": 1, "finish_reasons": ["stop", "length"], "expected_language": "en"})
    _, token = service_token_issue("bench")
    base_env = {**os.environ, "DATABASE_URL": DB_URL, "OPENROUTER_BASE_URL": f"http://127.0.0.1:{sim_port}/api/v1",
                "OPENROUTER_API_KEY": "sk-or-v1-bench", "LOG_LEVEL": "INFO"}
    if front is not None:
        base_env.update(OPENROUTER_BASE_URL=f"{front.base}/api/v1", SSL_CERT_FILE=str(front.ca_file))
    results: dict[tuple[str, str], list[Start]] = {(t, c): [] for c in configs for t in trees}
    try:
        for start in range(ARGS.starts):
            for config in configs:
                for tree, root in trees.items():
                    run = one_start(root, {**base_env, **STARTS[config]}, token, log_dir, front)
                    results[(tree, config)].append(run)
                    print(f"start {start + 1}, {tree:<8} {CONFIGS[config]:<18} first - warm {run.gap:6.0f} ms"
                          + (f", new conn {run.first_new}" if run.first_new is not None else ""), file=sys.stderr, flush=True)
    finally:
        sim.terminate()
        if front is not None:
            front.stop()
    print(f"{WORKERS} gthread workers, {ARGS.starts} starts each (interleaved), upstream over "
          f"{'TLS (nginx)' if front else 'plain HTTP'}; time to first content, ms "
          f"(first = slower of the first {WORKERS} streams after ready, warm = median of {WARM} such pairs after them)")
    for (tree, config), runs in results.items():
        summary(CONFIGS[config] if len(trees) == 1 else f"{tree}: {CONFIGS[config]}", runs)
    print(f"logs: {log_dir}")


if __name__ == "__main__":
    main()
