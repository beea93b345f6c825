"""Celery tasks: thin wrappers that take ids and call one service."""

from __future__ import annotations

from celery import shared_task


@shared_task(bind=True, acks_late=True, max_retries=None)
def notification_send_task(self, notification_id: int) -> str:  # type: ignore[no-untyped-def]
    """Deliver one notification; retried with exponential backoff (2, 4, 8 … s, at most
    ``NOTIFY_MAX_RETRIES`` times) and recorded on the row either way."""
    from canary.services_notify import notification_send

    retry_in = notification_send(notification_id)
    if retry_in is not None:
        raise self.retry(countdown=retry_in)
    return "done"
