"""Pytest plugin (``-p tests.environment`` in pyproject.toml): the suite's environment.

Loaded before pytest-django reads the settings, so it can give them what production
requires and a test run does not have: a secret key (random per run; DEBUG stays off, as
in production) and plain HTTP (no HTTPS redirect, no Secure-only cookies for the test
client, the live server and Chromium). Child processes the tests start inherit both.
A variable already set in the environment wins.
"""

from __future__ import annotations

import os
import secrets

os.environ.setdefault("DJANGO_SECRET_KEY", "test-run-" + secrets.token_urlsafe(48))
os.environ.setdefault("DJANGO_HTTPS", "false")

# Each pytest-xdist worker (and the Celery workers, web servers and commands its tests
# start, which inherit this) keeps its broker keys under a prefix of its own: tests on
# different xdist workers each start Celery workers, and on one shared queue a worker of
# one test would take another test's tasks and run them against the wrong database. Set,
# not defaulted: the workers inherit the environment of the xdist controller process.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ["CELERY_BROKER_KEY_PREFIX"] = f"test:{os.environ['PYTEST_XDIST_WORKER']}:"
    # Likewise the gateways its tests start write the live scorecard under a prefix of
    # their own, so a test that checks what a run left in Redis sees no other worker's keys.
    os.environ["CANARY_LIVE_PREFIX"] = f"test:{os.environ['PYTEST_XDIST_WORKER']}:live"
    # And the Celery workers they start share the providers' rate, and the gateways the
    # routes' breakers, under one.
    os.environ["CANARY_RATE_LIMIT_PREFIX"] = f"test:{os.environ['PYTEST_XDIST_WORKER']}:gcra"
    os.environ["ROUTING_BREAKER_PREFIX"] = f"test:{os.environ['PYTEST_XDIST_WORKER']}:routing:breaker"
