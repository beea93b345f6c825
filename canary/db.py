"""Database connection hygiene for long network waits."""

from __future__ import annotations

from django.db import connection


def connection_release() -> None:
    """Hand this thread's database connection back to the pool before a long wait on the
    network (a probe: seconds), so a worker's many task threads share a small pool.

    Only with PostgreSQL's connection pool on (``DATABASE_POOL``) and outside a
    transaction; otherwise a no-op, because closing an unpooled connection would cost a
    new PostgreSQL backend on the next query.
    """
    if connection.settings_dict.get("OPTIONS", {}).get("pool") and not connection.in_atomic_block:
        connection.close()
