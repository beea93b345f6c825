"""A real Celery worker process on the real Redis broker, against the test database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def test_database_url() -> str:
    """The URL of the test database pytest-django created, for child processes."""
    s = connection.settings_dict
    user = s.get("USER") or "postgres"
    return f"postgres://{user}@{s.get('HOST') or '127.0.0.1'}:{s.get('PORT') or 5432}/{s['NAME']}"


class Worker:
    """A ``celery worker`` child process; ``kill()`` sends SIGKILL (a crash)."""

    def __init__(self, proc: subprocess.Popen[bytes], log: Path) -> None:
        self.proc = proc
        self.log = log

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)


# The broker's own keys (kombu's queues, bindings and unacked set, under this xdist
# worker's CELERY_BROKER_KEY_PREFIX) and the canary's rate counters: what a Celery test
# leaves behind. Other keys of the database (another xdist worker's broker, breakers of
# tests running beside this one) are not ours to drop.
BROKER_KEYS = ("canary", "celery", "unacked*", "_kombu.*")
RATE_KEYS = ("canary:rl:*",)
READY_TIMEOUT_S = 90.0


@pytest.fixture
def broker_clean() -> None:
    """Empty this worker's broker keys so no message of an earlier test is delivered."""
    prefix = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("global_keyprefix", "")
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    patterns = [prefix + p for p in BROKER_KEYS] + list(RATE_KEYS)
    keys = [k for pattern in patterns for k in client.scan_iter(match=pattern, count=1000)]
    if keys:
        client.delete(*keys)


@pytest.fixture
def start_worker(transactional_db, tmp_path, broker_clean) -> Iterator[Callable[..., Worker]]:  # type: ignore[no-untyped-def]
    workers: list[Worker] = []

    def _start(name: str = "w1", **env: str) -> Worker:
        log = tmp_path / f"worker-{name}-{len(workers)}.log"
        child_env = {
            **os.environ,
            "DATABASE_URL": test_database_url(),
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            "REDIS_URL": settings.REDIS_URL,
            "OPENROUTER_BASE_URL": settings.OPENROUTER_BASE_URL,
            "CANARY_RATE_LIMIT_REDIS": "true",
            "CELERY_UNACKED_RESTORE_INTERVAL_S": "1",
            "CELERY_UNACKED_RESTORE_THROTTLE": "1",
            **env,
        }
        proc = subprocess.Popen(  # noqa: S603
            [sys.executable, "-m", "celery", "-A", "reverie_ops", "worker", "-P", "threads", "-c", "16",
             "-Q", "canary", "-n", f"{name}@%h", "-l", "info", "--without-gossip", "--without-mingle"],
            cwd=ROOT, env=child_env, stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True,
        )
        worker = Worker(proc, log)
        workers.append(worker)
        # A wait, not a check: on a loaded machine a worker's start (Django, the language
        # models) has taken over 30 s; a healthy one is ready in a few seconds.
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if b"ready." in log.read_bytes():
                return worker
            if proc.poll() is not None:
                raise RuntimeError(f"worker exited: {log.read_text()[-3000:]}")
            time.sleep(0.2)
        raise RuntimeError(f"worker not ready in {READY_TIMEOUT_S:.0f} s: {log.read_text()[-3000:]}")

    yield _start
    for worker in workers:
        worker.stop()


def wait_for(predicate: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
