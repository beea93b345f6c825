"""Bench: the probe client's CPU per stream with its reads batched after the first token
(``openrouter.aiochat.READ_BATCH_S``) against reading as bytes come, side by side.

Streams the scale bench's fleet (15 endpoints, about 30 chunks a reply) through one
``LoopOpenRouterClient`` per setting, ``--streams`` streams 80 at a time from task threads
as a Celery worker does, alternating the settings ``--pairs`` times in one run (the
machine's speed drifts): prints this process's CPU per stream for each batch and the
ratio of the means, batched / unbatched. No database; the simulator runs apart.

Usage: ``bench/wire_batching.py [--streams N] [--pairs N] [--batch-ms MS]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

from _setup import scale_fleet, simulator

from openrouter.aiochat import READ_BATCH_S, LoopOpenRouterClient

MODEL = "bench/model-0"
MESSAGES = [{"role": "user", "content": "Escreva três frases sobre o mar, em português."}]


def cpu_per_stream_ms(client: LoopOpenRouterClient, tags: list[str], streams: int) -> tuple[float, int]:
    """This process's CPU per stream (ms) over ``streams`` streams, and how many completed."""

    def one(i: int):  # type: ignore[no-untyped-def]
        return client.chat_pinned(MODEL, tags[i % len(tags)], MESSAGES, max_tokens=200, temperature=0.0, stream=True,
                                  ttft_limit_s=10.0, total_timeout_s=30.0, seed=i)

    before = time.process_time()
    with ThreadPoolExecutor(80) as pool:
        calls = list(pool.map(one, range(streams)))
    return (time.process_time() - before) / streams * 1000, sum(c.outcome == "completed" for c in calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=400, help="streams per measurement (default 400)")
    parser.add_argument("--pairs", type=int, default=3, help="alternations of the two settings (default 3)")
    parser.add_argument("--batch-ms", type=float, default=READ_BATCH_S * 1000, help="the batched setting (ms)")
    args = parser.parse_args()
    for flag, value in (("--streams", args.streams), ("--pairs", args.pairs)):
        if value < 1:
            parser.error(f"{flag} must be at least 1, got {value}")
    if not 0 < args.batch_ms <= 1000:
        parser.error(f"--batch-ms must be above 0 and at most 1000, got {args.batch_ms:g}")
    sim, base = simulator(scale_fleet([MODEL]))
    try:
        settings = {"as bytes come": 0.0, f"batched every {args.batch_ms:g} ms": args.batch_ms / 1000}
        clients = {name: LoopOpenRouterClient(base_url=base, api_key="sk-bench", read_batch_s=s) for name, s in settings.items()}
        tags = [e.tag for e in next(iter(clients.values())).list_endpoints(MODEL)]
        for client in clients.values():  # warm-up: connections, lazy imports
            cpu_per_stream_ms(client, tags, 40)
        measured: dict[str, list[float]] = {name: [] for name in clients}
        for _ in range(args.pairs):
            for name, client in clients.items():
                ms, done = cpu_per_stream_ms(client, tags, args.streams)
                measured[name].append(ms)
                print(f"{name}: {ms:.2f} ms of CPU per stream ({done} of {args.streams} completed)")
        means = {name: statistics.mean(v) for name, v in measured.items()}
        unbatched, batched = means.values()
        print(f"mean CPU per stream: {', '.join(f'{n} {m:.2f} ms' for n, m in means.items())}; "
              f"ratio batched / as bytes come: {batched / unbatched:.2f}")
    finally:
        sim.terminate()
        sim.wait(15)


if __name__ == "__main__":
    main()
