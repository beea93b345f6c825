"""Bench: what the first gateway request of a fresh server process pays on its own path,
without gunicorn: the time to first content of a process's first streamed request against
its next ones, in a process warmed as a gunicorn worker is.

Each start is a new interpreter that loads ``reverie_ops.wsgi`` (which warms it), as a
worker does; with ``preload`` it then forks and the child warms its gateway
(``warm_process(judges=False)``, gunicorn's ``post_worker_init``), as a preloaded worker
does. It then sends ``REQUESTS`` streamed requests one after the other, each from a new
thread (a gthread worker's pool), through the WSGI application, and prints each one's ms
to its first content chunk. No sibling worker competes and no HTTP server is in the
way, so "first minus the median of the next ones" is the request path's own first-time
cost (``bench/warm_start.py`` measures the same under a real gunicorn, with its noise).

``--baseline DIR``: another checkout (``git worktree add DIR main``), started in turn with
this one. ``--tls``: nginx terminates TLS in front of the simulator (``bench/_setup.py``
``tls_front``), so a request that opens an upstream connection pays a TLS handshake too. Needs PostgreSQL and Redis on loopback (REDIS_URL).
Usage: ``python bench/first_request.py [--starts 5] [--baseline DIR] [--tls]``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

REQUESTS = 4
MODEL, TAG = "acme/bench-1", "swift/fp8"
FLEET = {"seed": 1, "models": [{"id": MODEL, "context_length": 131072, "endpoints": [{
    "provider": "Swift", "tag": TAG, "quantization": "fp8", "supported_parameters": ["max_tokens", "temperature", "stream"],
    "pricing": {"prompt": "0.0000001", "completion": "0.0000002"}, "faults": {"ttft_ms": 200, "tokens_per_s": 400}}]}]}
BODY = json.dumps({"messages": [{"role": "user", "content": "Greet the traveller at the inn."}], "max_tokens": 120,
                   "stream": True}).encode()


def child() -> None:
    """In the tree under test (cwd): load and warm the application, then time the requests;
    prints one JSON list of ms."""
    sys.path.insert(0, os.getcwd())
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reverie_ops.settings")
    from reverie_ops.wsgi import application

    if os.environ.get("REVERIE_PRELOAD_APP") == "1":
        pid = os.fork()
        if pid:
            _, status = os.waitpid(pid, 0)
            sys.exit(os.waitstatus_to_exitcode(status))
        from routing.warm import warm_process

        warm_process(judges=False)
    took: list[float] = []
    for _ in range(REQUESTS):
        thread = threading.Thread(target=lambda: took.append(first_content_ms(application)))
        thread.start()
        thread.join()
    print(json.dumps(took), flush=True)


def first_content_ms(application) -> float:  # type: ignore[no-untyped-def]
    """One streamed gateway request through ``application``: ms to its first content."""
    environ = {"REQUEST_METHOD": "POST", "PATH_INFO": "/v1/chat/completions", "SCRIPT_NAME": "", "QUERY_STRING": "",
               "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1",
               "REMOTE_ADDR": "127.0.0.1", "HTTP_HOST": "127.0.0.1",
               "HTTP_AUTHORIZATION": f"Bearer {os.environ['BENCH_TOKEN']}", "HTTP_X_ROUTING_CONTRACT": "bench-warm@1",
               "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(BODY)), "wsgi.input": io.BytesIO(BODY),
               "wsgi.url_scheme": "http", "wsgi.errors": sys.stderr, "wsgi.multithread": True,
               "wsgi.multiprocess": True, "wsgi.run_once": False, "wsgi.version": (1, 0)}
    status: list[str] = []
    start = time.perf_counter()
    response = application(environ, lambda line, headers, exc_info=None: status.append(line))
    took = None
    try:
        for chunk in response:
            if took is None and b'"content"' in chunk:
                took = (time.perf_counter() - start) * 1000.0
    finally:
        response.close()
    if took is None:
        raise RuntimeError(f"no content ({status})")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--starts", type=int, default=5, help="starts per configuration and tree, interleaved")
    parser.add_argument("--baseline", type=Path, help="another checkout of the project, started in turn with this one")
    parser.add_argument("--database", default="reverie_bench_first_request", help="PostgreSQL database (dropped and created)")
    parser.add_argument("--tls", action="store_true", help="nginx terminating TLS in front of the simulator")
    args = parser.parse_args()
    # Imported here, not at the top: the child must import the tree under test only, and
    # _setup puts this tree first on sys.path.
    from _setup import ROOT, django_on, fresh_postgres, simulator, tls_front

    db_url = fresh_postgres(args.database)
    django_on(db_url)
    from core.tokens import service_token_issue
    from routing.models import Route
    from routing.services.contracts import contract_version_create

    sim, sim_url = simulator(FLEET)
    front = tls_front(int(sim_url.rsplit(":", 1)[1].split("/", 1)[0])) if args.tls else None
    Route.objects.create(name="swift", model_id=MODEL, provider_tag=TAG, modalities=["text"], context_length=131072,
                         price_prompt_usd="0.0000001", price_completion_usd="0.0000002")
    contract_version_create({"name": "bench-warm", "workload": "text", "deadline_s": 30, "max_attempts": 2,
                             "max_fallbacks": 1, "finish_reasons": ["stop", "length"], "expected_language": "en"})
    _, token = service_token_issue("bench")
    trees = {"this": ROOT} if args.baseline is None else {"baseline": args.baseline.resolve(), "this": ROOT}
    env = {**os.environ, "DATABASE_URL": db_url, "OPENROUTER_BASE_URL": sim_url, "OPENROUTER_API_KEY": "sk-or-v1-bench",
           "BENCH_TOKEN": token, "REVERIE_WARM_START": "1"}
    if front is not None:
        env.update(OPENROUTER_BASE_URL=f"{front.base}/api/v1", SSL_CERT_FILE=str(front.ca_file))
    results: dict[tuple[str, str], list[list[float]]] = {(t, c): [] for c in ("warm", "preload") for t in trees}
    try:
        for start in range(args.starts):
            for tree, config in results:
                done = subprocess.run(  # noqa: S603 - our interpreter and this file
                    [sys.executable, str(Path(__file__).resolve()), "--child"], cwd=trees[tree], capture_output=True,
                    text=True, timeout=600, env={**env, "REVERIE_PRELOAD_APP": "1" if config == "preload" else "0"})
                if done.returncode != 0:
                    raise RuntimeError(f"{tree} {config}: {done.stderr[-2000:]}")
                took = json.loads(done.stdout.strip().splitlines()[-1])
                results[(tree, config)].append(took)
                print(f"start {start + 1}, {tree:<8} {config:<7} " + " ".join(f"{t:6.1f}" for t in took),
                      file=sys.stderr, flush=True)
    finally:
        sim.terminate()
        if front is not None:
            front.stop()
    print(f"upstream over {'TLS (nginx)' if front else 'plain HTTP'}; ms to first content of a fresh process's requests 1..{REQUESTS} (one at a time, each from a new "
          f"thread); first - rest = the first minus the median of the others, per start")
    for (tree, config), runs in results.items():
        gaps = [r[0] - statistics.median(r[1:]) for r in runs]
        print(f"  {tree:<8} {config:<7} first {statistics.median(r[0] for r in runs):6.1f}   rest "
              f"{statistics.median(statistics.median(r[1:]) for r in runs):6.1f}   first - rest "
              f"{statistics.median(gaps):5.1f} (runs: {', '.join(f'{g:.0f}' for g in gaps)})")


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        child()
    else:
        main()
