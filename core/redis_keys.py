"""Leave a Redis database as it was found: delete the keys under a prefix (the demo's),
or the keys added since a snapshot (the test suite's). SCAN, never KEYS: a shared
database is not blocked while it is walked (https://redis.io/docs/latest/commands/scan/)."""

from __future__ import annotations

from collections.abc import Iterable

import redis

BATCH = 500


def _delete(client: redis.Redis, keys: Iterable[bytes]) -> int:
    deleted, batch = 0, []
    for key in keys:
        batch.append(key)
        if len(batch) >= BATCH:
            deleted += int(client.delete(*batch))
            batch = []
    if batch:
        deleted += int(client.delete(*batch))
    return deleted


def keys_under_delete(client: redis.Redis, prefix: str) -> int:
    """Delete every key starting with ``prefix`` (glob characters in it are escaped);
    returns how many were deleted. Raises ``redis.RedisError`` when Redis is unreachable;
    ValueError for an empty prefix (that would be the whole database)."""
    if not prefix:
        raise ValueError("an empty prefix would delete the whole database")
    pattern = "".join(f"\\{c}" if c in "*?[]\\" else c for c in prefix) + "*"
    return _delete(client, list(client.scan_iter(match=pattern, count=BATCH)))


def keys_snapshot(client: redis.Redis) -> frozenset[bytes]:
    """The names of every key in the database now. Raises ``redis.RedisError``."""
    return frozenset(client.scan_iter(count=BATCH))


def keys_added_delete(client: redis.Redis, before: frozenset[bytes], match: str = "*") -> int:
    """Delete the keys matching ``match`` (a SCAN glob) that are not in ``before`` (a
    ``keys_snapshot``); keys that were there are left, changed or not. Returns how many
    were deleted. Raises ``redis.RedisError``."""
    return _delete(client, [key for key in client.scan_iter(match=match, count=BATCH) if key not in before])
