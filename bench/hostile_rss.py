"""Gateway memory under a hostile upstream: RSS growth while it reads a 200 MB SSE
stream and a single 200 MB line (target: at most 50 MB growth), with the default reply
and line caps (``OPENROUTER_MAX_REPLY_BYTES`` 16 MB, ``OPENROUTER_MAX_LINE_BYTES`` 1 MB).

Usage: ``.venv/bin/python bench/hostile_rss.py [--mb 200]``. The hostile server
(``tests/chaos/hostile.py``) runs in a child process, so only the gateway's own memory
is counted; a thread samples this process's RSS every 10 ms. Prints, per mode, the
attempt's failure class, the bytes the server managed to send, the CPU seconds and the
peak RSS growth over the baseline taken after one healthy request.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from routing.contracts import contract_from_dict  # noqa: E402
from routing.gateway.door import Gateway  # noqa: E402
from routing.gateway.upstream import Upstream  # noqa: E402
from routing.selection import RouteProfile  # noqa: E402
from tests.chaos.hostile import Hostile  # noqa: E402

CONTRACT = {"name": "chat", "version": 1, "workload": "text", "deadline_s": 60, "max_attempts": 2, "max_fallbacks": 1,
            "finish_reasons": ["stop"], "connect_s": 0.5, "generation_s": 5.0, "validation_s": 0.1}
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def serve(size: int, conn: multiprocessing.connection.Connection) -> None:
    server = Hostile(size=size)
    conn.send(server.base_url)
    conn.recv()  # until the parent is done
    server.close()


def route(mode: str, price: float) -> RouteProfile:
    return RouteProfile(name=mode, model_id="acme/chat-1", provider_tag=f"{mode}/x", context_length=131072,
                        output_modes=frozenset(), tools=False, price_prompt_usd=price, price_completion_usd=price)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=200)
    args = parser.parse_args()
    parent, child = multiprocessing.Pipe()
    proc = multiprocessing.get_context("fork").Process(target=serve, args=(args.mb << 20, child), daemon=True)
    proc.start()
    base_url = parent.recv()
    upstream = Upstream(default_base_url=base_url, api_key="sk-bench")
    contract = contract_from_dict(CONTRACT)
    healthy = Gateway(routes=lambda: [route("good", 1e-7)], upstream=upstream)
    healthy.complete(contract, {"messages": [{"role": "user", "content": "hi"}]})
    for mode in ("huge_stream", "huge_line"):
        gw = Gateway(routes=lambda mode=mode: [route(mode, 1e-9), route("good", 1e-7)], upstream=upstream)
        baseline = peak = rss_bytes()
        done = threading.Event()

        def sample(done: threading.Event = done) -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, rss_bytes())
                time.sleep(0.01)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        cpu = time.process_time()
        result = gw.complete(contract, {"messages": [{"role": "user", "content": "hi"}]})
        cpu = time.process_time() - cpu
        done.set()
        sampler.join()
        first = result.attempts[0]
        print(f"{mode:12s} {args.mb} MB offered: attempt 1 {first.failure_class} ({first.failure_reason}), "
              f"served by {result.route.name if result.route else None}; cpu {cpu:.2f} s; "
              f"RSS growth {(peak - baseline) / 2**20:.1f} MB (target <= 50)")
    upstream.close()
    parent.send("done")
    proc.join(5)


if __name__ == "__main__":
    main()
