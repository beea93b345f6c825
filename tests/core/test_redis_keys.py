"""Leaving Redis as it was found (real Redis): the demo's prefix and the suite's snapshot."""

from __future__ import annotations

import os
import uuid
from io import StringIO

import pytest
import redis

from core.redis_keys import keys_added_delete, keys_snapshot, keys_under_delete
from reverie_ops.management.commands.demo import Command, demo_key_prefix


@pytest.fixture
def client():
    c = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    tag = f"test:redis-keys:{uuid.uuid4().hex}:"
    yield c, tag
    keys = list(c.scan_iter(match=f"{tag}*"))
    if keys:
        c.delete(*keys)


def test_a_prefix_is_removed_and_nothing_else(client):
    c, tag = client
    c.set(f"{tag}demo:routing:breaker:a", 1)
    c.hset(f"{tag}demo:routing:breaker:b", "x", 1)
    c.set(f"{tag}other", 1)
    assert keys_under_delete(c, f"{tag}demo:") == 2
    assert c.exists(f"{tag}other") == 1 and c.exists(f"{tag}demo:routing:breaker:a") == 0
    # Glob characters in a prefix are literal: "*" must not widen it to everything.
    c.set(f"{tag}x*y", 1)
    assert keys_under_delete(c, f"{tag}x*") == 1 and c.exists(f"{tag}other") == 1
    with pytest.raises(ValueError, match="whole database"):
        keys_under_delete(c, "")


def test_keys_added_after_a_snapshot_are_deleted_and_the_ones_before_stay(client):
    c, tag = client
    c.set(f"{tag}before", 1)
    before = keys_snapshot(c)
    c.set(f"{tag}after-1", 1)
    c.set(f"{tag}after-2", 1)
    # Only this test's keys: other xdist workers share the database.
    assert keys_added_delete(c, before, match=f"{tag}*") == 2
    assert c.exists(f"{tag}before") == 1
    assert c.exists(f"{tag}after-1") + c.exists(f"{tag}after-2") == 0


def test_the_demo_removes_its_prefix_on_exit(client, settings):
    c, tag = client
    settings.ROUTING_REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    assert demo_key_prefix().startswith("demo:") and demo_key_prefix() != demo_key_prefix()
    command = Command(stdout=StringIO(), stderr=StringIO())
    command._prefix = f"{tag}demo:"
    c.hset(f"{tag}demo:routing:breaker:route-a", "transient:state", "open")
    command._redis_leave()
    assert c.exists(f"{tag}demo:routing:breaker:route-a") == 0
    assert "Removed the demo's 1 Redis key(s)" in command.stdout.getvalue()
