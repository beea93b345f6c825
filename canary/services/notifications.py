"""Notification services: create rows, enqueue after commit, deliver with retries.

A notification can never block or fail a round: creation is a row insert, delivery happens
in a Celery task after commit, and a broker that is down leaves the row ``pending``.
"""

from __future__ import annotations

import logging

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from canary.models import Decision, Notification
from canary.notify import DeliveryError, deliver

log = logging.getLogger(__name__)

# Enqueued by name: the task module sits above the services and imports them, so the
# services never import it back.
SEND_TASK = "canary.tasks.notification_send_task"


def notification_create(kind: str, title: str, body: str, *, model_id: str = "", decision: Decision | None = None) -> Notification:
    """Store a notification and enqueue its delivery once the transaction commits.

    With no apprise URL configured the row is stored as ``skipped`` (still visible to
    admins); a broker error is logged and the row stays ``pending``.
    """
    urls = list(settings.NOTIFY_APPRISE_URLS)
    note = Notification.objects.create(
        kind=kind,
        model_id=model_id,
        decision=decision,
        title=title[:300],
        body=body,
        state=Notification.States.PENDING if urls else Notification.States.SKIPPED,
        created_at=timezone.now(),
    )
    if urls:
        transaction.on_commit(lambda: _enqueue(note.pk))
    return note


def _enqueue(notification_id: int) -> None:
    try:
        current_app.send_task(SEND_TASK, args=(notification_id,))
    except Exception:  # noqa: BLE001 - a broker outage must not fail the caller's round
        log.exception("could not enqueue notification %s; it stays pending", notification_id)


def notification_send(notification_id: int) -> float | None:
    """Try to deliver one notification; return the retry delay in s, or None when done.

    Records every attempt: ``attempts``, ``last_error``, ``state`` (sent, or failed after
    ``NOTIFY_MAX_RETRIES`` retries). Backoff doubles from 2 s.
    """
    note = Notification.objects.get(pk=notification_id)
    if note.state in (Notification.States.SENT, Notification.States.SKIPPED):
        return None
    note.attempts += 1
    try:
        deliver(settings.NOTIFY_APPRISE_URLS, note.title, note.body)
    except DeliveryError as exc:
        note.last_error = str(exc)
        if note.attempts > settings.NOTIFY_MAX_RETRIES:
            note.state = Notification.States.FAILED
            note.save(update_fields=["attempts", "last_error", "state"])
            return None
        note.save(update_fields=["attempts", "last_error"])
        return float(2**note.attempts)
    note.state = Notification.States.SENT
    note.sent_at = timezone.now()
    note.last_error = ""
    note.save(update_fields=["attempts", "last_error", "state", "sent_at"])
    return None
