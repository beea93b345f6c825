"""Bench: live evidence joins the quarantine. Time from a host going bad to its
suspension, with the gateway's live verdicts asking for confirmation rounds; and healthy
hosts suspended under healthy traffic and a transport storm.

Method. Every part runs as deployed, each its own process: the simulator on a fleet file
(six healthy hosts of one model, 200 ms to the first token), the web app under gunicorn
gthread (the gateway), one Celery worker (threads) and one Celery beat (the live sweep
every 5 s, the rounds sweep), on a fresh PostgreSQL database and Redis (REDIS_URL) under
a prefix of this run; the model in enforce mode. A client sends streamed roleplay
requests at ``--rps`` (5 a second) under a prefix-commit contract and reads every reply.

1. **bad**: after ``--warm-s`` of healthy traffic, one host (the cheapest, so the
   gateway's first choice) starts prefixing junk: the fleet file changes at a known
   instant. The bench waits for its suspension (at most ``--bad-max-s``) and prints
   ``time from bad to suspended: N s``, the replies that host served meanwhile, how many
   reached a client with the defect (the commit point should keep that at 0) and the
   requests sent while a healthy host was demoted (good replies lost to demotion, an
   upper bound).
2. **healthy**: the healthy fleet again (fresh state), ``--phase-s`` seconds.
3. **storm**: every host answers 429 (10 %), resets (5 %) and mid-stream errors (5 %),
   ``--phase-s`` seconds. Prints ``healthy suspended: K`` over phases 2 and 3.

Every wait has a timeout (HTTP 30 s, process starts 60 s, the bad phase ``--bad-max-s``).

Run: ``DATABASE_URL=postgres://... REDIS_URL=redis://... .venv/bin/python bench/live_evidence.py``
(the database named by ``--db`` is dropped and created on the PostgreSQL of 127.0.0.1).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from _setup import ROOT, Server, django_on, fresh_postgres, gunicorn_start

MODEL = "acme/roleplay-1"
HOSTS = ["atlas", "harbor", "indigo", "kestrel", "orchid", "quill"]
BAD = "atlas"
JUNK = [";", ",", ")"]
PARAMS = ["max_tokens", "temperature", "stream", "response_format", "structured_outputs"]
CONTRACT = {"name": "bench-live", "workload": "text", "deadline_s": 20, "first_token_s": 5, "idle_s": 5,
            "max_attempts": 3, "max_fallbacks": 2, "finish_reasons": ["stop", "length"],
            "stream_commit": {"mode": "prefix", "hold_chars": 64, "hold_ms": 250}}
PROMPTS = ["Greet the traveller at the inn door.", "Describe the tavern as the bard walks in.",
           "The innkeeper asks the ranger where she came from.", "Narrate the storm over the harbour."]


def fleet(faults: dict[str, dict[str, Any]] | None = None, storm: bool = False) -> dict[str, Any]:
    """The bench's fleet: six healthy hosts, ``faults`` per host, or a transport storm on all."""
    storm_faults = {"http_error": {"rate": 0.1, "status": 429, "retry_after_s": 1}, "reset": {"rate": 0.05},
                    "midstream_error": {"rate": 0.05}}
    return {"seed": 31, "models": [{"id": MODEL, "context_length": 131072, "endpoints": [
        {"provider": h.capitalize(), "tag": f"{h}/fp8", "quantization": "fp8", "supported_parameters": PARAMS,
         "pricing": {"prompt": f"{0.0000001 + i * 1e-8:.8f}", "completion": "0.0000002"},
         "faults": {"ttft_ms": 200, "tokens_per_s": 150, **(storm_faults if storm else {}),
                    **((faults or {}).get(h, {}))}}
        for i, h in enumerate(HOSTS)]}]}


class Traffic:
    """The client: ``rps`` streamed requests a second, each read to its end in a thread."""

    def __init__(self, url: str, headers: dict[str, str], rps: float) -> None:
        import httpx

        self.url, self.headers, self.rps = url, headers, rps
        self.client = httpx.Client(timeout=httpx.Timeout(30.0), limits=httpx.Limits(max_connections=64))
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.rows: list[dict[str, Any]] = []
        self.thread: threading.Thread | None = None

    def one(self, i: int) -> None:
        body = {"model": MODEL, "stream": True, "max_tokens": 160,
                "messages": [{"role": "user", "content": PROMPTS[i % len(PROMPTS)]}]}
        row: dict[str, Any] = {"t": time.time(), "status": None, "route": "", "text": ""}
        try:
            with self.client.stream("POST", self.url, json=body, headers=self.headers) as r:
                row["status"] = r.status_code
                row["route"] = r.headers.get("X-Routing-Route", "")
                parts = []
                for line in r.iter_lines():
                    if line.startswith("data: {"):
                        data = json.loads(line[6:])
                        for choice in data.get("choices", []):
                            parts.append(choice.get("delta", {}).get("content") or "")
                row["text"] = "".join(parts)
        except Exception as exc:  # noqa: BLE001 - a failed call is a row, not a crash
            row["error"] = repr(exc)[:200]
        with self.lock:
            self.rows.append(row)

    def run(self) -> None:
        i = 0
        start = time.monotonic()
        while not self.stop.is_set():
            threading.Thread(target=self.one, args=(i,), daemon=True).start()
            i += 1
            delay = start + i / self.rps - time.monotonic()
            if delay > 0:
                self.stop.wait(delay)

    def start(self) -> None:
        self.stop.clear()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def halt(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(5)
        time.sleep(3)  # let the last replies finish

    def since(self, t: float) -> list[dict[str, Any]]:
        with self.lock:
            return [r for r in self.rows if r["t"] >= t]


def suspended_tags() -> set[str]:
    from django.utils import timezone

    from canary.models import EndpointPolicyState

    return set(EndpointPolicyState.objects.filter(endpoint__model_id=MODEL, enforced=True,
                                                  suspended_until__gt=timezone.now())
               .values_list("endpoint__tag", flat=True))


def reset_state(card: Any) -> None:
    """A fresh quarantine for the next phase: no suspensions, streaks, suspects or windows."""
    from canary.models import EndpointPolicyState

    EndpointPolicyState.objects.filter(endpoint__model_id=MODEL).delete()
    keys = list(card.client.scan_iter(f"{card.prefix}:*"))
    if keys:
        card.client.delete(*keys)


def demoted_watch(card: Any, stop: threading.Event, log: list[tuple[float, frozenset[str]]]) -> None:
    while not stop.is_set():
        try:
            log.append((time.time(), card.demoted(MODEL)))
        except Exception:  # noqa: BLE001, S110 - a missed sample is a gap in the log only
            pass
        stop.wait(1.0)


def demoted_requests(rows: list[dict[str, Any]], log: list[tuple[float, frozenset[str]]], healthy: set[str]) -> int:
    """Requests sent while some healthy host was demoted (good replies lost to demotion, at most)."""
    count = 0
    for row in rows:
        before = [tags for t, tags in log if t <= row["t"]]
        if before and any(tag.split("/")[0] in healthy for tag in before[-1]):
            count += 1
    return count


def gateway_flush_wait() -> None:
    time.sleep(3)  # the web workers write attempt events in the background


def bad_attempts(since: float, until: float) -> dict[str, int]:
    """The bad host's attempts between the change and its suspension, by status."""
    from datetime import UTC, datetime

    from django.db.models import Count

    from routing.models import AttemptEvent

    rows = (AttemptEvent.objects.filter(route=BAD, started_at__gte=datetime.fromtimestamp(since, UTC),
                                        started_at__lte=datetime.fromtimestamp(until, UTC))
            .values_list("status").annotate(n=Count("id")))
    return dict(rows)


def milestones(since: float) -> str:
    """Seconds from the change to the live decisions and the suspension on the bad host."""
    from canary.models import Decision

    out = []
    for d in Decision.objects.filter(endpoint__tag=f"{BAD}/fp8").order_by("created_at", "id"):
        out.append(f"{d.action} +{d.created_at.timestamp() - since:.0f} s")
    return ", ".join(out) or "none"


def defective(text: str) -> bool:
    return any(text.lstrip().startswith(j) for j in JUNK)


def main() -> None:  # noqa: PLR0915 - one bench, told top to bottom
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rps", type=float, default=5.0)
    parser.add_argument("--warm-s", type=float, default=30.0)
    parser.add_argument("--bad-max-s", type=float, default=900.0)
    parser.add_argument("--phase-s", type=float, default=600.0, help="each healthy phase (healthy, storm)")
    parser.add_argument("--db", default="reverie_bench_live")
    args = parser.parse_args()

    run = uuid.uuid4().hex[:8]
    fleet_path = Path(tempfile.mkdtemp()) / "fleet.json"
    fleet_path.write_text(json.dumps(fleet()))
    from fake_openrouter.process import free_port, start_simulator

    sim_port = free_port()
    sim = start_simulator(fleet_path, sim_port)
    sim_url = f"http://127.0.0.1:{sim_port}/api/v1"
    db_url = fresh_postgres(args.db)
    env_extra = {
        "DATABASE_URL": db_url, "OPENROUTER_BASE_URL": sim_url, "OPENROUTER_API_KEY": "sk-bench",
        "ROUTING_BREAKER_PREFIX": f"bench:{run}:breaker", "CANARY_LIVE_PREFIX": f"bench:{run}:live",
        "CELERY_BROKER_KEY_PREFIX": f"bench:{run}:", "CANARY_MODELS": MODEL, "CANARY_MODEL": MODEL,
        "ROUTING_EVENTS_ASYNC": "true", "CANARY_LANGUAGES": "en",
    }
    os.environ.update(env_extra)
    django_on(db_url)

    from django.utils import timezone

    from canary.live.store import scorecard_get
    from canary.services.client import openrouter_client
    from canary.services.quarantine import mode_set
    from canary.services.rounds import endpoints_sync
    from core.tokens import service_token_issue
    from routing.models import Route
    from routing.services.contracts import contract_version_create

    now = timezone.now()
    endpoints_sync(MODEL, openrouter_client().list_endpoints(MODEL), now)
    mode_set(MODEL, "enforce", actor="bench", reason="live evidence bench", now=now)
    for i, h in enumerate(HOSTS):
        Route.objects.create(name=h, model_id=MODEL, provider_tag=f"{h}/fp8", modalities=["text"],
                             context_length=131072, price_prompt_usd=f"{0.0000001 + i * 1e-8:.8f}",
                             price_completion_usd="0.0000002")
    contract_version_create(dict(CONTRACT))
    _, token = service_token_issue(f"bench-{run}")
    card = scorecard_get()
    env = {**os.environ, **env_extra}
    procs: list[subprocess.Popen[bytes]] = []
    logs = Path(tempfile.mkdtemp())
    web: Server | None = None
    try:
        web = gunicorn_start(env, workers=2, threads=16, log=logs / "web.log", timeout_s=60)
        for name, cmd in (("worker", ["worker", "-P", "threads", "-c", "8", "-Q", "canary", "-l", "warning"]),
                          ("beat", ["beat", "-S", "celery.beat:PersistentScheduler", "-s",
                                    str(logs / "beat-schedule"), "-l", "warning"])):
            procs.append(subprocess.Popen(  # noqa: S603 - our interpreter, our arguments
                [sys.executable, "-m", "celery", "-A", "reverie_ops", *cmd], cwd=ROOT, env=env,
                stdout=subprocess.DEVNULL, stderr=(logs / f"{name}.log").open("wb")))
        url = f"{web.base}/v1/chat/completions"
        print(f"web app at {web.base}/ (its staff pages show the live evidence while the bench runs)")
        traffic = Traffic(url, {"Authorization": f"Bearer {token}", "X-Routing-Contract": "bench-live@1"}, args.rps)
        stop = threading.Event()
        demoted_log: list[tuple[float, frozenset[str]]] = []
        threading.Thread(target=demoted_watch, args=(card, stop, demoted_log), daemon=True).start()

        # -- 1. bad
        traffic.start()
        time.sleep(args.warm_s)
        fleet_path.write_text(json.dumps(fleet({BAD: {"leading_garbage": {"rate": 1.0, "fragments": JUNK}}})))
        bad_at = time.time()
        suspended_at = None
        while time.time() - bad_at < args.bad_max_s:
            if f"{BAD}/fp8" in suspended_tags():
                suspended_at = time.time()
                break
            time.sleep(1.0)
        traffic.halt()
        rows = traffic.since(bad_at)
        until = suspended_at or time.time()
        meanwhile = [r for r in rows if r["t"] <= until]
        served_bad = sum(1 for r in meanwhile if r["route"] == BAD)
        gateway_flush_wait()
        attempts = bad_attempts(bad_at, until)
        defects = sum(1 for r in rows if defective(r["text"]))
        healthy = set(HOSTS) - {BAD}
        lost = demoted_requests(traffic.since(0), demoted_log, healthy)
        ok = sum(1 for r in rows if r["status"] == 200 and not r.get("error"))
        print(f"bad phase: {len(rows)} requests after the fleet change, {ok} answered 200")
        if suspended_at is None:
            print(f"time from bad to suspended: not within {args.bad_max_s:.0f} s")
        else:
            print(f"time from bad to suspended: {suspended_at - bad_at:.0f} s")
        print(f"milestones after the change: {milestones(bad_at)}")
        print(f"replies the bad host served meanwhile: {sum(attempts.values())} attempts {attempts}, "
              f"{served_bad} of them the reply a client got; reached a client with the defect: {defects}; "
              f"good replies lost to demotion (requests while a healthy host was demoted): {lost}")

        # -- 2. healthy, 3. storm
        suspended_healthy: set[str] = set()
        for name, world in (("healthy", fleet()), ("storm", fleet(storm=True))) if args.phase_s > 0 else ():
            fleet_path.write_text(json.dumps(world))
            reset_state(card)
            demoted_log.clear()
            start = time.time()
            traffic.start()
            while time.time() - start < args.phase_s:
                suspended_healthy |= {f"{name}:{t}" for t in suspended_tags()}
                time.sleep(2.0)
            traffic.halt()
            rows = traffic.since(start)
            ok = sum(1 for r in rows if r["status"] == 200 and not r.get("error"))
            lost = demoted_requests(rows, demoted_log, set(HOSTS))
            suspects = sorted({t for _, tags in demoted_log for t in tags})
            print(f"{name} phase: {time.time() - start:.0f} s, {len(rows)} requests, {ok} answered 200, "
                  f"suspects demoted: {suspects or 'none'}, requests while one was: {lost}")
        stop.set()
        if args.phase_s <= 0:
            print("healthy phases: not run (--phase-s 0)")
        else:
            print(f"healthy suspended: {len(suspended_healthy)}{' ' + str(sorted(suspended_healthy)) if suspended_healthy else ''}")
        from canary.models import Decision, Round

        actions = ("live_suspect", "live_convicted", "live_cleared", "suspended")
        counts = {a: Decision.objects.filter(action=a).count() for a in actions}
        print(f"confirmation rounds: {Round.objects.filter(trigger='confirmation').count()}; decisions: {counts}")
    finally:
        if web is not None:
            web.stop()
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
        sim.terminate()
        keys = list(card.client.scan_iter(f"bench:{run}:*"))
        if keys:
            card.client.delete(*keys)
        print(f"(logs in {logs})")


if __name__ == "__main__":
    main()
