"""The masking check runs on the beat schedule: admins are notified once even when nobody
opens the reliability page (a real worker on the real broker, against the test database)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone
from django_celery_beat.models import PeriodicTask
from django_celery_beat.schedulers import DatabaseScheduler

from canary.models import Notification
from observability.fixtures import request_add
from observability.reliability import NOTIFY_KIND
from observability.tasks import masking_check_task
from reverie_ops.celery import app as celery_app
from reverie_ops.schedule import MASKING_EXPIRES_S, observability_beat_schedule
from tests.celery.conftest import wait_for

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]


def _masking_traffic() -> None:
    """The previous hour 70 % HTTP success and no rejection; the last hour every attempt
    answered and one answer in five rejected: both rates rose on route alpha."""
    now = timezone.now()
    for i in range(30):
        request_add(now - timedelta(minutes=90), contract="chat@1", attempts=[("alpha", "failed" if i < 9 else "accepted")],
                    outcome="failed" if i < 9 else "accepted")
    for i in range(30):
        request_add(now - timedelta(minutes=20), contract="chat@1",
                    attempts=[("alpha", "rejected"), ("beta", "accepted")] if i < 6 else [("alpha", "accepted")])


def test_the_masking_check_is_scheduled_with_an_expiry():
    entry = settings.CELERY_BEAT_SCHEDULE["reliability-masking-check"]
    assert entry["task"] == "observability.tasks.masking_check_task"
    assert entry["options"]["expires"] == MASKING_EXPIRES_S < entry["schedule"]
    assert masking_check_task.name == entry["task"]


def test_a_beat_tick_runs_the_masking_check_and_admins_are_notified_once(start_worker):
    _masking_traffic()
    worker = start_worker()
    celery_app.conf.beat_schedule = observability_beat_schedule()
    DatabaseScheduler(app=celery_app).close()
    PeriodicTask.objects.filter(name="reliability-masking-check").update(last_run_at=timezone.now() - timedelta(hours=1))
    scheduler = DatabaseScheduler(app=celery_app)
    for _ in range(2):  # the first due entry goes out on the first tick
        scheduler.tick()
    scheduler.close()
    try:
        wait_for(lambda: Notification.objects.filter(kind=NOTIFY_KIND).exists(), 30, "the masking notification")
    except AssertionError:
        raise AssertionError(worker.log.read_text()[-3000:]) from None
    assert b"observability.tasks.masking_check_task" in worker.log.read_bytes()
    [note] = Notification.objects.filter(kind=NOTIFY_KIND)
    assert note.title.startswith("alpha: HTTP success and validation rejections rising together")
    # The next check finds the same masking and says nothing new.
    assert masking_check_task.apply().get() == 0
    assert Notification.objects.filter(kind=NOTIFY_KIND).count() == 1
