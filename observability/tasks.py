"""Celery tasks of observability: the masking check on a schedule."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from observability.reliability import masking_check


@shared_task
def masking_check_task() -> int:
    """Run the masking check now (``observability.reliability.masking_check``): admins
    hear of a route whose HTTP success and validation rejections rise together even
    when nobody opens the reliability page. Returns the notifications created."""
    return masking_check(timezone.now())
