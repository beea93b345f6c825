"""Bench: the gateway's added latency and CPU per request, ours vs LiteLLM, one run.

Against a simulator endpoint with no added latency, the same streamed chat completion
(pinned to one endpoint, read to the end of the body as the OpenAI SDK does) is sent
directly and through each system, at 50 requests in flight and then one at a time:

- **Reverie gateway, in-process** (``chat_completion_create``: contract lookup, edge
  check, capability selection, the Redis circuit breaker, validation, metrics, events
  queued for the writer thread);
- **LiteLLM Router, in-process**, in its own interpreter (``bench/_litellm_router.py``);
- **Reverie gateway over HTTP** under gunicorn gthread as deployed, and **LiteLLM's
  proxy** as its users run it (``bench/_peers.py``): one worker process per core each,
  the client processes sending to them. At 50 in flight one after the other; one at a
  time side by side, in the same rounds (``_load.side_by_side``), so the CPU ratio and
  the added latency are read in the same minutes for both.

Targets, as users feel them (issue "one OpenRouter wire on a well-kept client"): the
gateway under gunicorn adds at most 3 ms one request at a time (Portkey 2.4 ms, LiteLLM
4.3 ms in a published sequential run), and its server spends at least 8x less CPU per
streamed request than LiteLLM's proxy. The in-process rows and CPU line are for reading
the gateway's own cost; they carry no target.

Method (``bench/_load.py``, whose docstring gives the reasons). The 50 requests in
flight are spread over client processes (5 x 10 threads by default) that run one closed
loop on one timetable: every thread sends one request after another, direct or through
the system as the current time slot says (``--slot-s``, 0.6 s). A round is two adjacent
slots in ABBA order (direct first in even rounds, the system first in odd ones); only
requests sent after a slot's first 0.2 s and before its last 0.1 s are kept, so each
kept request ran among 50 of its own side, never in a ramp-up or a drain. The added
latency is taken within each round (system p50 minus direct p50 of the same round) and
reported as the median over rounds (``--rounds``, 100) with its interquartile range and
the 95 % confidence interval of that median (order statistics): a load spike from
another program moves one round, not the estimate. Every barrier, call and result wait
has a timeout; a client process that dies or raises ends the bench with its message (a
LiteLLM row that fails that way is named in the output instead, and the other rows stand).

Why latency swings, and the CPU measures. At 50 in flight on 2 cores the clients, the
system, the simulator and Redis saturate the CPU, so latency is roughly in-flight x CPU
per request / cores: every 0.04 ms of CPU a system adds per request shows as ~1 ms of
added latency. So each row also gives its CPU per request, one request at a time: for
the in-process rows what the system adds to a direct call in the same process
(``time.process_time``, every thread: our event writer and watchdog count); for the
server rows the server's whole process tree per request (``/proc``), read after each
block has settled (our event writer writes a batch a second). Throughput per core is
1000 / that CPU. The run ends with our in-process CPU line (``--cpu-only`` runs only
that; ``--profile FILE`` adds a cProfile).

LiteLLM 1.110.2 is a dev dependency (requirements-dev.txt): the Router row uses it. Its
proxy server needs extras the project does not carry; it runs from a throwaway
virtualenv (``--litellm-proxy-venv``; the bench prints how to make it when missing).
``--no-litellm`` skips both LiteLLM rows, ``--no-http`` the server rows.

Run: ``.venv/bin/python bench/gateway.py`` (needs Redis on REDIS_URL; uses a throwaway
SQLite file for contracts, routes, tokens and events). ``--postgres NAME`` runs on a fresh
PostgreSQL database instead, as deployed: the event writer's CPU differs by database (with
SQLite the engine itself runs in this process; with PostgreSQL the client-side encoding of
every row does), so a CPU figure names the database it was measured on.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _load import (
    PHASE_TIMEOUT_S,
    LoadError,
    measure,
    quartiles,
    run_phase,
    sequential,
    side_by_side,
    tree_cpu_s,
)
from _peers import proxy_venv_help, start_litellm_proxy, start_ours, stream_caller
from _setup import ROOT, django_on, fresh_postgres
from _setup import stop_process as stop


def _postgres_name() -> str | None:
    """``--postgres NAME`` read before Django is set up (``main`` parses it again, for --help)."""
    early = argparse.ArgumentParser(add_help=False)
    early.add_argument("--postgres")
    return early.parse_known_args()[0].postgres


_PG = _postgres_name()
# A throwaway SQLite file by default, or a fresh PostgreSQL database; migrated once the
# arguments are parsed.
django_on(fresh_postgres(_PG) if _PG else None, migrate=False)

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
STREAM_CHUNKS = 29  # events the simulator sends for this reply: role, 26 content, finish, usage (and [DONE])


def direct_caller(base_url: str) -> Callable[[int], None]:
    """The same streamed, pinned request the gateway sends, straight to the simulator,
    read to the end of the body (past [DONE]: the connection goes back to the pool;
    stopping at [DONE] would cost a new TCP connection per call, a slower baseline)."""
    return stream_caller(base_url + "/chat/completions", {
        "model": MODEL, "messages": MESSAGES, "max_tokens": MAX_TOKENS, "stream": True,
        "provider": {"only": [TAG], "allow_fallbacks": False}}, {})


def setup_routing() -> None:
    """One route on the simulator's endpoint and one text contract, in the bench database."""
    from routing.models import Route
    from routing.services.contracts import contract_version_create

    Route.objects.create(name="swift", model_id=MODEL, provider_tag=TAG, modalities=["text"], context_length=131072,
                         price_prompt_usd="0.0000001", price_completion_usd="0.0000002")
    contract_version_create({"name": "bench-chat", "workload": "text", "deadline_s": 10, "max_attempts": 2,
                             "max_fallbacks": 1, "finish_reasons": ["stop", "length"]})


def gateway_caller(create: bool = True) -> Callable[[int], None]:
    """The in-process client, as a backend calls it (contract lookup included)."""
    from routing.services.chat import chat_completion_create
    from routing.services.wiring import gateway_get

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
    from routing.services.wiring import gateway_get

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
    direct_cpu, system_cpu = (spent[k] * 1000.0 / n for k in ("direct", "gateway"))
    return {"requests": n, "block": block, "direct_cpu_ms": direct_cpu, "gateway_cpu_ms": system_cpu,
            "added_cpu_ms": system_cpu - direct_cpu, "added_blocks_ms": quartiles(added)}


def cpu_line(cpu: dict) -> str:
    """One line: CPU ms per request, direct and gateway, and the added CPU with the
    interquartile range of its per-block values."""
    q1, _, q3 = cpu["added_blocks_ms"]
    return (f"CPU per request in this process, one request at a time ({cpu['requests']} each, "
            f"blocks of {cpu['block']}): direct {cpu['direct_cpu_ms']:.3f} ms, gateway {cpu['gateway_cpu_ms']:.3f} ms, "
            f"added {cpu['added_cpu_ms']:.3f} ms [IQR over blocks {q1:.3f}, {q3:.3f}] (both read the stream through "
            "httpx, the direct call as the OpenAI SDK does; no target)")


def inprocess_row(base_url: str, a: argparse.Namespace) -> dict[str, Any]:
    """Our gateway in-process (``chat_completion_create``) at ``a.concurrency`` in flight,
    then one at a time. Each worker builds its gateway after the fork (this process has
    none yet: forking one with its threads would be unsafe)."""
    from django.db import connections

    def make() -> tuple[Callable[[int], None], Callable[[int], None], Callable[[], None]]:
        from routing.services.wiring import gateway_get

        connections.close_all()  # never share the parent's database connection after fork
        system = gateway_caller(create=False)
        sink: Any = gateway_get().sink
        # Events the writer thread still holds (a batch a second) are written between
        # phases: their CPU must never land in the next direct phase. The latency table
        # therefore leaves most event writing out; the CPU line counts it.
        return direct_caller(base_url), system, (lambda: sink.flush() if hasattr(sink, "flush") else None)

    # Closed here too, before the fork, with the PostgreSQL pool (--postgres): the children
    # inherited its open sockets and their queries crossed on them.
    connections.close_all()
    for conn in connections.all():
        if hasattr(conn, "close_pool"):
            conn.close_pool()
    row = measure("Reverie gateway, in-process", make, rounds=a.rounds, concurrency=a.concurrency, workers=a.workers,
                  slot_s=a.slot_s)
    row["kind"] = "inprocess"
    return row


def router_row(base_url: str, a: argparse.Namespace) -> dict[str, Any]:
    """LiteLLM's Router, in-process in its own interpreter (``bench/_litellm_router.py``)."""
    args = {"base_url": base_url, "model": MODEL, "tag": TAG, "max_tokens": MAX_TOKENS, "slot_s": a.slot_s,
            "rounds": a.peer_rounds, "concurrency": a.concurrency, "workers": a.workers, "seq_rounds": a.seq_rounds,
            "seq_n": a.seq_requests, "cpu_blocks": max(1, a.cpu_requests // 50)}
    try:
        done = subprocess.run(  # noqa: S603 - our own bench script, our interpreter
            [sys.executable, str(Path(__file__).with_name("_litellm_router.py")), json.dumps(args)],
            capture_output=True, text=True, check=False, timeout=PHASE_TIMEOUT_S * (2 * a.rounds + 8),
        )
    except subprocess.TimeoutExpired:
        raise LoadError("LiteLLM Router: its bench process gave no result in time; stopped") from None
    if done.returncode != 0:
        raise LoadError(f"LiteLLM Router: its bench process failed:\n{done.stderr[-3000:]}")
    data = json.loads(done.stdout.strip().splitlines()[-1])
    row = data["concurrent"]
    row["name"] = f"LiteLLM {data['version']} Router, in-process"
    row["sequential"] = data["sequential"]
    row["cpu_ms"] = data["system_cpu_ms"] - data["direct_cpu_ms"]
    row["kind"] = "router"
    return row


def server_row(kind: str, name: str, proc: subprocess.Popen[bytes], base_url: str, url: str, body: dict[str, Any],
               headers: dict[str, str], a: argparse.Namespace, *, rounds: int | None = None) -> dict[str, Any]:
    """An HTTP gateway already serving at ``url`` at ``a.concurrency`` streams in flight
    from forked client processes. The row keeps what ``one_at_a_time`` needs: the
    server's process (``proc``) and a caller of it (``call``)."""

    def make() -> tuple[Callable[[int], None], Callable[[int], None], Callable[[], None]]:
        return direct_caller(base_url), stream_caller(url, body, headers), lambda: None

    try:
        row = measure(name, make, rounds=rounds or a.rounds, concurrency=a.concurrency, workers=a.workers,
                      slot_s=a.slot_s)
    except LoadError as exc:
        if kind != "proxy":
            raise
        # LiteLLM's proxy stalls past a slot at 50 in flight in some runs: its CPU per
        # request (one at a time) is still measured, and the stall is reported.
        row = {"name": name, "stalled": str(exc)}
    row.update(kind=kind, proc=proc, call=stream_caller(url, body, headers))
    return row


def one_at_a_time(rows: list[dict[str, Any]], base_url: str, a: argparse.Namespace, *, settle_s: float) -> None:
    """The server rows one request at a time, side by side in the same rounds
    (``_load.side_by_side``), each with its server's own CPU per request (its whole
    process tree, ``/proc``). Each block waits ``settle_s`` before its CPU is read, so
    work a server defers (our event writer: a batch a second) is counted with its
    requests; what each server burns idle over those waits (timers, heartbeats: measured
    over one idle window first, all servers at once) is taken out again, so a settle wait
    never counts as serving. Fills each row's ``sequential``, ``idle_cpu_pct`` and
    ``cpu_ms``."""
    direct = direct_caller(base_url)
    run_phase(direct, 30, 1)
    for row in rows:
        run_phase(row["call"], 30, 1)

    def cpu_of(pid: int) -> Callable[[], float]:
        def server_cpu() -> float:
            time.sleep(settle_s)
            return tree_cpu_s(pid)
        return server_cpu

    time.sleep(settle_s)
    idle_from = {row["name"]: tree_cpu_s(row["proc"].pid) for row in rows}
    idle_s = 4 * settle_s
    time.sleep(idle_s)
    for row in rows:  # CPU seconds per second, idle
        row["idle_rate"] = (tree_cpu_s(row["proc"].pid) - idle_from[row["name"]]) / idle_s
    seqs = side_by_side(direct, {row["name"]: (row["call"], cpu_of(row["proc"].pid)) for row in rows},
                        rounds=a.seq_rounds, n=a.seq_requests)
    for row in rows:
        row["sequential"] = seqs[row["name"]]
        row["idle_cpu_pct"] = row["idle_rate"] * 100.0
        row["cpu_ms"] = seqs[row["name"]]["system_cpu_ms"] - row["idle_rate"] * settle_s * 1000.0 / a.seq_requests


def http_rows(base_url: str, a: argparse.Namespace, failures: list[str]) -> list[dict[str, Any]]:
    """Ours under gunicorn gthread (as deployed) and LiteLLM's proxy (as its users run
    it), each with ``a.server_workers`` worker processes: 50 in flight one after the
    other (the idle one costs nothing measurable: its idle CPU is in the table), then
    one at a time side by side (``one_at_a_time``). A proxy row that fails
    (``LoadError``) is named in ``failures``; the rows measured stand."""
    from core.tokens import service_token_issue

    rows: list[dict[str, Any]] = []
    _, token = service_token_issue(f"bench-{uuid.uuid4().hex[:8]}")
    env = {**os.environ, "OPENROUTER_BASE_URL": base_url, "OPENROUTER_API_KEY": "sk-or-v1-bench",
           "ROUTING_BREAKER_PREFIX": settings.ROUTING_BREAKER_PREFIX}
    body = {"messages": MESSAGES, "max_tokens": MAX_TOKENS, "stream": True}
    server = start_ours(ROOT, env, workers=a.server_workers)
    proc = None
    try:
        rows.append(server_row("gthread", f"Reverie gateway, gunicorn gthread {a.server_workers}w", server.proc, base_url,
                               f"{server.base}/v1/chat/completions", body,
                               {"Authorization": f"Bearer {token}", "X-Routing-Contract": "bench-chat@1"}, a))
        if not a.no_litellm_proxy:
            port = free_port()
            try:
                proc = start_litellm_proxy(a.litellm_proxy_venv, base_url, MODEL, TAG, port, workers=a.server_workers,
                                           master_key="sk-bench-master")
                rows.append(server_row("proxy", f"LiteLLM proxy, uvicorn {a.server_workers}w", proc, base_url,
                                       f"http://127.0.0.1:{port}/v1/chat/completions", {**body, "model": "bench"},
                                       {"Authorization": "Bearer sk-bench-master"}, a, rounds=a.peer_rounds))
            except LoadError as exc:
                failures.append(f"LiteLLM proxy not measured: {exc}")
        try:
            one_at_a_time(rows, base_url, a, settle_s=1.3)
        except LoadError as exc:
            if len(rows) == 1:
                raise
            # The proxy failed one at a time: ours is measured again alone.
            failures.append(f"LiteLLM proxy not measured one at a time: {exc}")
            rows = rows[:1]
            one_at_a_time(rows, base_url, a, settle_s=1.3)
    finally:
        server.stop()
        stop(proc)
    return rows


def report(rows: list[dict[str, Any]], cpu: dict[str, Any], a: argparse.Namespace, failures: list[str]) -> None:
    ours = rows[0]
    ours_kept = ours["requests"] // max(1, ours["rounds"])
    print(f"\nAdded latency per request (system - direct, the same streamed request), {a.concurrency} in flight "
          f"({a.workers} client processes x {a.concurrency // a.workers} threads), {a.rounds} ABBA rounds of a "
          f"{ours['slot_s']:.2f} s slot per side for ours (~{ours_kept} requests kept per side and round; "
          f"{a.peer_rounds} rounds for LiteLLM's, slots settling for their p90 latency); then one at a time ({a.seq_rounds} rounds x {a.seq_requests}); simulator with no added latency; "
          f"{os.cpu_count()} CPUs shared by the clients, the system, the simulator and Redis.")
    print("added = median over rounds of (system p50 - direct p50) of the same round [interquartile range over rounds]")
    head = (f"{'system':<42}{'direct p50':>11}{'system p50':>11}{'added p50':>10}{'[IQR]':>17}{'added p99':>10}"
            f"{'1-at-a-time added p50':>22}{'CPU ms/req':>11}{'req/s/core':>11}")
    print(head)
    for r in rows:
        seq = r.get("sequential")
        if "stalled" in r:
            seq_txt = f"{seq['added_median_ms'][1]:.2f} ms" if seq else "-"
            cpu_txt = f"{r['cpu_ms']:.3f}" if r.get("cpu_ms") else "-"
            per_core = f"{1000.0 / r['cpu_ms']:.0f}" if r.get("cpu_ms") else "-"
            print(f"{r['name']:<42}{'(50 in flight: stalled, see below)':>59}{seq_txt:>22}{cpu_txt:>11}{per_core:>11}")
            continue
        q1, med, q3 = r["added_median_ms"]
        seq_txt = f"{seq['added_median_ms'][1]:.2f} ms" if seq else "-"
        cpu_ms = r.get("cpu_ms")
        cpu_txt = f"{cpu_ms:.3f}" if cpu_ms is not None else "-"
        per_core = f"{1000.0 / cpu_ms:.0f}" if cpu_ms and cpu_ms > 0 else "-"
        print(f"{r['name']:<42}{r['direct_median_ms']:>9.2f}ms{r['system_median_ms']:>9.2f}ms{med:>8.2f}ms"
              f"{f'[{q1:.2f}, {q3:.2f}]':>17}{r['added_p99_ms'][1]:>8.2f}ms{seq_txt:>22}{cpu_txt:>11}{per_core:>11}")
    idle = ", ".join(f"{r['name'].split(',')[0]} {r['name'].split(',')[1].strip()} {r['idle_cpu_pct']:.1f} %"
                     for r in rows if "idle_cpu_pct" in r)
    print("CPU ms/req: in-process rows, the CPU the system adds to a direct call in the same process (one at a "
          "time); server rows, the server's whole process tree per request (receive, route, call upstream, send), "
          f"net of its idle CPU (of one core: {idle or 'none'}). req/s/core = 1000 / CPU ms per request.")
    print(cpu_line(cpu) + ", same run")
    for failure in failures:
        print(failure + " (the other rows stand)")
    for r in rows:
        if "stalled" in r:
            print(f"{r['name']}: not measured at {a.concurrency} in flight ({r['stalled']}); its one-at-a-time "
                  "figures and CPU per request are in the table")
    low, high = ours["added_median_ci_ms"]
    dropped = ", ".join(f"{r['name']} {r['dropped_rounds']}" for r in rows if r.get("dropped_rounds"))
    print(f"95 % confidence interval of our in-process added median over {ours['rounds']} rounds: {low:.2f} .. {high:.2f} ms"
          + (f" (rounds dropped, a side kept no call in a stall: {dropped})" if dropped else ""))
    kinds = {r["kind"]: r for r in rows}
    a_row, b_row = kinds.get("inprocess"), kinds.get("router")
    if a_row and b_row and b_row.get("cpu_ms"):
        ours_ms = max(cpu["added_cpu_ms"], 1e-3)
        print(f"In-process, CPU added to a direct call: ours {cpu['added_cpu_ms']:.2f} ms, the Router's "
              f"{b_row['cpu_ms']:.2f} ms ({b_row['cpu_ms'] / ours_ms:.1f}x; no target)")
    for r in rows:
        if r["kind"] not in ("router", "proxy") or not r.get("sequential") or not r.get("cpu_ms") or "stalled" in r:
            continue
        seq_added = r["sequential"]["added_median_ms"][1]
        # At N in flight on C cores that the whole bench shares, a CPU-bound request queues
        # behind the others: each ms of CPU per request shows as about N / C ms of latency.
        queueing = a.concurrency * r["cpu_ms"] / (os.cpu_count() or 1)
        print(f"{r['name']}: one at a time it adds {seq_added:.2f} ms; at {a.concurrency} in flight "
              f"{r['added_median_ms'][1]:.2f} ms. Its {r['cpu_ms']:.2f} ms of CPU per request, queued "
              f"{a.concurrency} deep on {os.cpu_count()} cores shared with the clients and the simulator, "
              f"predicts about {queueing:.0f} ms.")
    print("Published figures: LiteLLM's docs give 2-12 ms of proxy overhead, GoModel's benchmark about 30 ms p50 on "
          "2 vCPUs at high load. Both put the proxy on machines of its own with the load generator elsewhere; here the "
          "clients, the simulator and the proxy share 2 cores, so the one-at-a-time figure is the one to set beside "
          "the docs' range, and the 50-in-flight figure grows with CPU per request x in flight / cores (the line above).")
    peer = kinds.get("router") or kinds.get("proxy")
    if peer and peer.get("cpu_ms"):
        # A cProfile of the Router on this request: nearly all of its time is under its
        # stream wrapper, per chunk (LiteLLM's chunk builder and the OpenAI SDK's model
        # construction for every chunk), not in routing.
        print(f"Most of LiteLLM's CPU here is per streamed chunk (its stream wrapper and the OpenAI SDK's models, built "
              f"for each of this reply's ~{STREAM_CHUNKS} chunks: about {peer['cpu_ms'] / STREAM_CHUNKS:.1f} ms each); "
              "a figure measured on a short or non-streamed reply would leave most of that out.")
    served, peer_proxy = kinds.get("gthread"), kinds.get("proxy")
    if served and served.get("sequential"):
        seq_added = served["sequential"]["added_median_ms"][1]
        print(f"Target: the gateway under gunicorn adds <= 3 ms one request at a time: {seq_added:.2f} ms "
              f"({'met' if seq_added <= 3.0 else 'NOT met'})")
    if served and peer_proxy and served.get("cpu_ms") and peer_proxy.get("cpu_ms"):
        times = peer_proxy["cpu_ms"] / max(served["cpu_ms"], 1e-3)
        print(f"Target: server CPU per streamed request >= 8x less than LiteLLM's proxy: ours {served['cpu_ms']:.2f} ms, "
              f"the proxy's {peer_proxy['cpu_ms']:.2f} ms, {times:.2f}x ({'met' if times >= 8.0 else 'NOT met'})")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        epilog="Targets: the gateway under gunicorn adds <= 3 ms one request at a time, and its server spends "
               ">= 8x less CPU per streamed request than LiteLLM's proxy. Both servers are measured one at a time "
               "side by side, in the same rounds (bench/_load.py side_by_side). Needs Redis on REDIS_URL. The method and "
               "its reasons: the docstring at the top of bench/gateway.py.")
    parser.add_argument("--slot-s", type=float, default=0.6,
                        help="seconds per direct or system slot of a round (the first 0.2 s and last 0.1 s are not "
                             "kept; bench/_load.py)")
    parser.add_argument("--rounds", type=int, default=100,
                        help="ABBA rounds of a direct and a system phase (short phases: load spikes on a shared machine "
                             "hit both; more rounds narrow the confidence interval)")
    parser.add_argument("--peer-rounds", type=int, default=20,
                        help="rounds for the LiteLLM rows (their slots settle for ~1 s; they add ~1 s at 50 in flight)")
    parser.add_argument("--concurrency", type=int, default=50, help="requests in flight in total")
    parser.add_argument("--workers", type=int, default=5,
                        help="client processes sharing the concurrency, like gunicorn workers (1 = one process)")
    parser.add_argument("--seq-rounds", type=int, default=10, help="one-at-a-time rounds per row")
    parser.add_argument("--seq-requests", type=int, default=20, help="one-at-a-time requests per round and side")
    parser.add_argument("--server-workers", type=int, default=os.cpu_count() or 2,
                        help="worker processes of each HTTP server (ours and LiteLLM's proxy): one per core")
    parser.add_argument("--litellm-proxy-venv", type=Path, default=Path("/tmp/litellm-proxy-venv"),
                        help="the throwaway virtualenv LiteLLM's proxy runs from (made by hand: the bench prints how)")
    parser.add_argument("--no-litellm", action="store_true", help="no LiteLLM rows (Router and proxy)")
    parser.add_argument("--no-litellm-proxy", action="store_true", help="no LiteLLM proxy row")
    parser.add_argument("--no-http", action="store_true", help="no HTTP server rows (ours and LiteLLM's proxy)")
    parser.add_argument("--cpu-requests", type=int, default=500, help="sequential requests per side of the CPU harness")
    parser.add_argument("--cpu-only", action="store_true", help="only the in-process CPU harness (no concurrency)")
    parser.add_argument("--profile", type=Path, help="with --cpu-only: write a cProfile of the gateway phase here")
    parser.add_argument("--postgres", metavar="NAME",
                        help="a fresh PostgreSQL database NAME on 127.0.0.1 instead of the throwaway SQLite file (the event "
                             "writer's deployed path); an existing database of that name is DROPPED first")
    args = parser.parse_args()
    if args.no_litellm:
        args.no_litellm_proxy = True
    if not (args.no_litellm_proxy or args.no_http or args.cpu_only) and not (args.litellm_proxy_venv / "bin" / "litellm").exists():
        # Refused before the minutes of in-process rows, not after them.
        parser.error(proxy_venv_help(args.litellm_proxy_venv))
    if args.slot_s <= 0.4:
        parser.error("--slot-s must be over 0.4 (0.3 s of each slot is never kept)")
    for name in ("rounds", "peer_rounds", "concurrency", "workers", "seq_rounds", "seq_requests", "server_workers",
                 "cpu_requests"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")

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
    rows: list[dict[str, Any]] = []
    failures: list[str] = []
    try:
        setup_routing()
        if args.cpu_only:
            print(cpu_line(cpu_per_request(base_url, n=args.cpu_requests, profile=args.profile)))
            return
        rows.append(inprocess_row(base_url, args))
        if not args.no_litellm:
            try:
                rows.append(router_row(base_url, args))
            except LoadError as exc:
                failures.append(f"LiteLLM Router not measured: {exc}")
        if not args.no_http:
            rows.extend(http_rows(base_url, args, failures))
        # After the workers are gone: this process has no gateway yet (forking one with
        # its threads would be unsafe), and the simulator is idle again.
        cpu = cpu_per_request(base_url, n=args.cpu_requests)
        rows[0]["cpu_ms"] = cpu["added_cpu_ms"]
        rows[0]["sequential"] = sequential(direct_caller(base_url), gateway_caller(create=False),
                                           rounds=args.seq_rounds, n=args.seq_requests)
    except LoadError as exc:
        raise SystemExit(f"bench stopped: {exc}") from None
    finally:
        sim.terminate()
        sim.wait(timeout=10)
        client = redis.Redis.from_url(settings.REDIS_URL)
        keys = list(client.scan_iter(f"{prefix}:*"))
        if keys:
            client.delete(*keys)
    report(rows, cpu, args, failures)


if __name__ == "__main__":
    main()
