"""A finaliser frozen (SIGSTOP) while it holds its round's row lock: other finalisers
give up after their lock timeout instead of piling up behind it, the next round is
created and runs meanwhile, and once PostgreSQL ends the frozen session (its
idle-in-transaction limit) the next trigger closes the stuck round. Real PostgreSQL, a
real Celery worker on the real Redis broker, the simulator over HTTP; the frozen process
is one the test started. Issue "Hardening, round three", item 4."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from canary.models import Round
from canary.tasks import round_start_task, rounds_sweep_task
from tests.celery import conftest as celery_conftest
from tests.celery.conftest import ROOT, wait_for
from tests.verdicts.fleets import MODEL, endpoint, fleet

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]

IDLE_LIMIT_S = 15  # the frozen finaliser's session ends after this long idle in its transaction
LOCK_LIMIT_S = 2  # how long another finaliser waits for the round's lock
SWEEP_EVERY_S = 2.0  # the beat's sweep, faster than its 10 s to crowd the lock


def waiting_sessions() -> int:
    """Sessions of the test database waiting on a lock now."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
        return int(cursor.fetchone()[0])


@pytest.mark.slow(120)
def test_a_frozen_finaliser_piles_up_no_sessions_and_the_next_round_runs(start_sim, use_sim, start_worker, tmp_path):
    use_sim(start_sim(fleet([endpoint(n) for n in ("Atlas", "Harbor", "Indigo")])))
    limits = {"CANARY_FINALISER_LOCK_TIMEOUT_S": str(LOCK_LIMIT_S), "DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_S": str(IDLE_LIMIT_S)}
    start_worker("f", **limits)
    now = timezone.now()
    stuck = Round.objects.create(model_id=MODEL, language="en", started_at=now - timedelta(minutes=40),
                                 slot=now - timedelta(minutes=40), trigger=Round.Triggers.SCHEDULE,
                                 deadline_at=now - timedelta(minutes=37))
    log = (tmp_path / "finaliser.log").open("w+b")
    child = subprocess.Popen(  # noqa: S603
        [sys.executable, "-m", "tests.chaos.finaliser_child", str(stuck.pk)], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
        env={**os.environ, "DATABASE_URL": celery_conftest.test_database_url(), "DATABASE_ROLE": "worker", "DATABASE_POOL": "false", **limits},
    )
    try:
        wait_for(lambda: b"holding" in (tmp_path / "finaliser.log").read_bytes() or child.poll() is not None, 60,
                 "the finaliser to hold the round's lock")
        assert child.poll() is None, (tmp_path / "finaliser.log").read_text()
        os.kill(child.pid, signal.SIGSTOP)
        frozen_at = time.monotonic()
        round_start_task.delay(MODEL)  # the next slot's trigger, while the finaliser is frozen
        most_waiting, next_sweep = 0, 0.0
        while time.monotonic() - frozen_at < IDLE_LIMIT_S - 2:
            if time.monotonic() >= next_sweep:
                rounds_sweep_task.delay()
                next_sweep = time.monotonic() + SWEEP_EVERY_S
            most_waiting = max(most_waiting, waiting_sessions())
            time.sleep(0.2)
        stuck.refresh_from_db()
        assert stuck.status == Round.Status.RUNNING  # still held by the frozen finaliser
        nxt = Round.objects.exclude(pk=stuck.pk).filter(model_id=MODEL).first()
        assert nxt is not None, "the next round was not created while the finaliser was frozen"
        wait_for(lambda: Round.objects.filter(pk=nxt.pk, status=Round.Status.COMPLETED).exists(), 60, "the next round to complete")
        # PostgreSQL ends the frozen session; the next trigger (here the sweep) closes the round.
        wait_for(lambda: bool(rounds_sweep_task.delay()) and Round.objects.filter(pk=stuck.pk, status=Round.Status.COMPLETED).exists(),
                 IDLE_LIMIT_S + 30, "the stuck round to be closed")
        print(f"most sessions waiting on a lock with a frozen finaliser: {most_waiting} "
              f"(sweeps every {SWEEP_EVERY_S:g} s, lock timeout {LOCK_LIMIT_S} s); stuck round closed "
              f"{time.monotonic() - frozen_at:.0f} s after the freeze")
        assert most_waiting <= LOCK_LIMIT_S / SWEEP_EVERY_S + 2
    finally:
        child.kill()
        child.wait(10)
