"""Scheduled, distributed rounds with a real Redis broker, a real Celery worker process and
PostgreSQL (issue "Scheduled, distributed canary rounds on Celery")."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from django_celery_beat.models import PeriodicTask
from django_celery_beat.schedulers import DatabaseScheduler

from canary.models import (
    Decision,
    Endpoint,
    EndpointRound,
    Notification,
    ProbeResult,
    Provider,
    Round,
)
from canary.probes import PROBE_KINDS
from canary.tasks import round_start_task
from reverie_ops.celery import app as celery_app
from reverie_ops.schedule import canary_beat_schedule
from tests.celery.conftest import wait_for
from tests.verdicts.fleets import MODEL, endpoint, fleet

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]

OTHER = "vendor/second-model"


def two_model_fleet() -> dict:
    first = fleet([endpoint("Atlas"), endpoint("Harbor"), endpoint("Indigo")])
    second = fleet([endpoint("Nimbus"), endpoint("Orchid")])["models"][0]
    second["id"] = OTHER
    first["models"].append(second)
    return first


def completed(model_id: str) -> bool:
    return Round.objects.filter(model_id=model_id, trigger="schedule", status="completed").exists()


def test_a_beat_tick_dispatches_one_round_per_model_and_they_complete(start_sim, use_sim, start_worker, settings):
    use_sim(start_sim(two_model_fleet()))
    start_worker()
    celery_app.conf.beat_schedule = canary_beat_schedule([MODEL, OTHER])
    DatabaseScheduler(app=celery_app).close()  # copies the schedule into PeriodicTask rows
    assert PeriodicTask.objects.filter(name__startswith="canary-round:").count() == 2
    PeriodicTask.objects.filter(name__startswith="canary-round:").update(last_run_at=timezone.now() - timedelta(hours=1))
    scheduler = DatabaseScheduler(app=celery_app)
    # Each tick sends the next due entry: two models, two ticks (a third finds none due).
    for _ in range(3):
        scheduler.tick()
    scheduler.close()
    wait_for(lambda: completed(MODEL) and completed(OTHER), 90, "both scheduled rounds to complete")
    for model_id, n_endpoints in ((MODEL, 3), (OTHER, 2)):
        rnd = Round.objects.get(model_id=model_id, trigger="schedule")
        assert rnd.slot is not None
        assert ProbeResult.objects.filter(round=rnd, sample=0, kind__in=PROBE_KINDS).count() == n_endpoints * 4
        assert set(EndpointRound.objects.filter(round=rnd).values_list("outcome", flat=True)) == {"clean"}


def test_an_admin_can_pause_a_models_rounds(start_worker):
    celery_app.conf.beat_schedule = canary_beat_schedule([MODEL, OTHER])
    DatabaseScheduler(app=celery_app).close()
    PeriodicTask.objects.filter(name=f"canary-round:{OTHER}").update(enabled=False)
    # A restart of beat re-reads the schedule from code but keeps the pause.
    scheduler = DatabaseScheduler(app=celery_app)
    assert f"canary-round:{OTHER}" not in scheduler.schedule
    assert f"canary-round:{MODEL}" in scheduler.schedule
    scheduler.close()
    assert PeriodicTask.objects.get(name=f"canary-round:{OTHER}").enabled is False


def test_a_duplicate_trigger_for_the_same_slot_is_a_no_op(start_sim, use_sim, start_worker):
    use_sim(start_sim(fleet([endpoint("Atlas"), endpoint("Harbor")])))
    start_worker()
    at = "2026-11-29T10:05:00+00:00"
    round_start_task.delay(MODEL, at)
    wait_for(lambda: completed(MODEL), 60, "the scheduled round")
    second = round_start_task.apply(args=(MODEL, "2026-11-29T10:20:00+00:00")).get()
    assert second["status"] == "duplicate"
    assert "already holds the 2026-11-29 10:00 slot" in second["message"]
    assert Round.objects.filter(model_id=MODEL, trigger="schedule").count() == 1


@pytest.mark.slow(35)
def test_a_worker_killed_mid_round_loses_nothing_and_suspends_nobody(start_sim, use_sim, start_worker):
    slow = {"ttft_ms": [300, 4000]}
    use_sim(start_sim(fleet([endpoint(n, slow) for n in ("Atlas", "Harbor", "Indigo", "Lumen", "Nimbus", "Orchid")])))
    env = {"CANARY_ROUND_BUDGET_S": "25", "CELERY_VISIBILITY_TIMEOUT_S": "3"}
    first = start_worker("a", **env)
    from canary.services.quarantine import model_config_get

    config = model_config_get(MODEL)
    config.mode = "enforce"
    config.save()
    round_start_task.delay(MODEL)
    wait_for(lambda: ProbeResult.objects.filter(sample=0).count() >= 2, 30, "the first results")
    first.kill()
    reported_before_kill = ProbeResult.objects.filter(sample=0).count()
    assert reported_before_kill < 6 * 4
    start_worker("b", **env)
    wait_for(lambda: completed(MODEL), 120, "the round to finalize after the kill")
    rnd = Round.objects.get(model_id=MODEL, trigger="schedule")
    for ep in Endpoint.objects.filter(model_id=MODEL):
        kinds = list(ProbeResult.objects.filter(round=rnd, endpoint=ep, sample=0, kind__in=PROBE_KINDS).values_list("kind", flat=True))
        assert sorted(kinds) == sorted(PROBE_KINDS), (ep.tag, kinds)
    assert not EndpointRound.objects.filter(round=rnd, outcome="fail").exists()
    assert not Decision.objects.filter(action="suspended").exists()


def test_a_failing_notification_is_retried_and_recorded_and_the_round_is_unaffected(start_sim, use_sim, start_worker):
    from fake_openrouter.process import free_port

    use_sim(start_sim(fleet([endpoint("Atlas"), endpoint("Harbor"), endpoint("Indigo")])))
    now = timezone.now()
    provider = Provider.objects.create(slug="atlas", name="Atlas", first_seen=now, last_seen=now)
    # A healthy host declared a refusal control: it passes, so the probe is weak and an
    # admin is notified, through a destination that refuses connections.
    Endpoint.objects.create(
        model_id=MODEL, tag="atlas/fp8", provider=provider, provider_name="Atlas",
        positive_control_kinds=["refusal"], first_seen=now, last_seen=now,
    )
    start_worker(NOTIFY_APPRISE_URLS=f"json://127.0.0.1:{free_port()}/", NOTIFY_MAX_RETRIES="2")
    round_start_task.delay(MODEL)
    wait_for(lambda: completed(MODEL), 60, "the round")
    rnd = Round.objects.get(model_id=MODEL, trigger="schedule")
    assert "refusal" in rnd.weak_probes
    wait_for(lambda: Notification.objects.filter(kind="weak_probe", state="failed").exists(), 60, "the retries to run out")
    note = Notification.objects.get(kind="weak_probe")
    assert note.attempts == 3
    assert note.last_error
    assert rnd.status == "completed" and EndpointRound.objects.filter(round=rnd).count() == 3
