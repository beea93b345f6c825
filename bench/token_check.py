"""Bench: what a service token's database check costs the request that makes it (the
first request per token per ``VERIFY_CACHE_S`` in each process), and what its last-use
write costs wherever it runs.

Interleaved, ``ROUNDS`` times on PostgreSQL over loopback with the deployed pool: the
check on a cache miss (``core.tokens.service_token_caller``: one read; the last use is
recorded in memory) and the write the end of the request makes (``last_use_flush``: one
UPDATE and its commit). Before the write left the request's path, the check paid both.
Milliseconds: median, p90, p99. Needs PostgreSQL on loopback.
Usage: ``python bench/token_check.py [--rounds 300]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

from _setup import django_on, fresh_postgres

parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
parser.add_argument("--rounds", type=int, default=300)
parser.add_argument("--database", default="reverie_bench_token_check", help="PostgreSQL database (dropped and created)")
ARGS = parser.parse_args()
django_on(fresh_postgres(ARGS.database))

from django.db import connection  # noqa: E402

from core.tokens import _forget_verified, last_use_flush, service_token_caller, service_token_issue  # noqa: E402


def spread(values: list[float]) -> str:
    cuts = statistics.quantiles(values, n=100)
    return f"median {statistics.median(values):5.2f}   p90 {cuts[89]:5.2f}   p99 {cuts[98]:6.2f}"


def main() -> None:
    _, token = service_token_issue("bench")
    bearer = f"Bearer {token}"
    service_token_caller(bearer)  # the pool's connection open, the statements' first run done
    last_use_flush()
    check: list[float] = []
    write: list[float] = []
    for _ in range(ARGS.rounds):
        _forget_verified()
        start = time.perf_counter()
        assert service_token_caller(bearer) == "bench"
        check.append((time.perf_counter() - start) * 1000.0)
        start = time.perf_counter()
        assert last_use_flush() == 1
        write.append((time.perf_counter() - start) * 1000.0)
        time.sleep(0.01)  # requests apart, not a tight loop
    connection.close()
    print(f"{ARGS.rounds} rounds, ms")
    print(f"  check on a cache miss (the request's path): {spread(check)}")
    print(f"  last-use write (after the response):        {spread(write)}")
    print(f"  both (the request's path before):           {spread([a + b for a, b in zip(check, write, strict=True)])}")


if __name__ == "__main__":
    main()
