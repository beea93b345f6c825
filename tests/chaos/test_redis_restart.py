"""The canary outlives its broker: a real Celery worker on a Redis server of the test's
own (never the shared one), restarted mid-round (SIGKILL, then SIGTERM between rounds);
the round in flight completes and the next round runs on the same worker process.
Real PostgreSQL, the simulator over HTTP. Issue "Hardening, round three", item 1."""

from __future__ import annotations

import time

import pytest

from canary.models import ProbeResult, Round
from canary.tasks import round_start_task, rounds_sweep_task
from reverie_ops.celery import app as celery_app
from tests.celery.conftest import wait_for
from tests.chaos.private_redis import PrivateRedis
from tests.verdicts.fleets import MODEL, endpoint, fleet

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]

BUDGET_S = 45


def send(broker_url: str, task, *args) -> None:  # type: ignore[no-untyped-def]
    """Send ``task`` through the private broker (the app's own options, its key prefix)."""
    with celery_app.connection_for_write(broker_url) as conn:
        task.apply_async(args, connection=conn)


def completed(rnd_id: int) -> bool:
    return Round.objects.filter(pk=rnd_id, status="completed").exists()


@pytest.mark.slow(150)
def test_a_redis_restart_mid_round_leaves_the_worker_running_and_the_next_round_runs(
    start_sim, use_sim, start_worker, private_redis: PrivateRedis
):
    slow = {"ttft_ms": [500, 2500]}
    use_sim(start_sim(fleet([endpoint(n, slow) for n in ("Atlas", "Harbor", "Indigo", "Lumen", "Nimbus", "Orchid")])))
    worker = start_worker(
        "r", CELERY_BROKER_URL=private_redis.url, REDIS_URL=private_redis.url,
        ROUTING_REDIS_URL=private_redis.url, CANARY_ROUND_BUDGET_S=str(BUDGET_S), CANARY_ENDPOINTS_PER_TASK="1",
    )
    send(private_redis.url, round_start_task, MODEL, "2026-12-03T10:00:00+00:00")
    wait_for(lambda: ProbeResult.objects.filter(sample=0).exists(), 60, "the first probe results")
    private_redis.restart(kill=True)

    def sweep_until_completed() -> bool:
        # Beat's part: a sweep every few seconds finalises a round past its budget.
        rnd = Round.objects.filter(model_id=MODEL).order_by("pk").last()
        if rnd is not None and completed(rnd.pk):
            return True
        try:
            send(private_redis.url, rounds_sweep_task)
        except Exception:  # noqa: BLE001 - the broker may still be coming back
            pass
        time.sleep(2)
        return False

    wait_for(sweep_until_completed, BUDGET_S + 60, "the round in flight to complete")
    assert worker.proc.poll() is None, worker.log.read_text()[-3000:]
    first = Round.objects.get(model_id=MODEL)

    private_redis.restart(kill=False)
    send(private_redis.url, round_start_task, MODEL, "2026-12-03T10:30:00+00:00")
    wait_for(lambda: Round.objects.filter(model_id=MODEL).count() == 2 and sweep_until_completed(),
             BUDGET_S + 60, "the next round to complete")
    assert worker.proc.poll() is None, worker.log.read_text()[-3000:]
    second = Round.objects.filter(model_id=MODEL).exclude(pk=first.pk).get()
    probes = ProbeResult.objects.filter(round=second, sample=0).count()
    print(f"rounds completed across two Redis restarts: 2; second round's sample-0 probes: {probes}")
    assert probes >= 6 * 4
