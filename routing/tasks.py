"""Celery tasks of the gateway, both on the beat schedule (``reverie_ops.schedule``)."""

from __future__ import annotations

from celery import shared_task

from routing.services.ledger import ledger_sweep_now
from routing.services.routes import route_measurements_refresh


@shared_task(ignore_result=True)
def route_measurements_refresh_task() -> int:
    """Refresh every route's health, latency and structured-output honour rate (every
    ``reverie_ops.schedule.ROUTE_MEASUREMENTS_EVERY_S``); returns the routes refreshed."""
    return route_measurements_refresh()


@shared_task(ignore_result=True)
def ledger_sweep_task() -> dict[str, int]:
    """Prune settled idempotency keys past their keeping time and mark the claims of dead
    processes unknown (``routing.services.ledger_sweep``)."""
    return ledger_sweep_now()
