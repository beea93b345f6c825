"""Celery tasks of the gateway (scheduled by an admin in django-celery-beat)."""

from __future__ import annotations

from celery import shared_task

from routing.services import ledger_sweep_now, route_measurements_refresh


@shared_task(ignore_result=True)
def route_measurements_refresh_task() -> int:
    """Refresh every route's health, latency and structured-output honour rate."""
    return route_measurements_refresh()


@shared_task(ignore_result=True)
def ledger_sweep_task() -> dict[str, int]:
    """Prune settled idempotency keys past their keeping time and mark the claims of dead
    processes unknown (``routing.services.ledger_sweep``)."""
    return ledger_sweep_now()
