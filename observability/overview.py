"""The gateway's part of the admin's home page: open circuit breakers and the last hour's
validation-rejection rate."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Any

from observability.breakers import breaker_rows
from observability.reliability import reliability_totals
from routing.models import Route
from routing.services.wiring import breaker_store
from routing.terms import BreakerState

# The breakers the home page names (the circuit-breakers page lists them all).
OPEN_LISTED = 8
RATE_WINDOW = timedelta(hours=1)


def gateway_overview(now: datetime) -> dict[str, Any]:
    """``{"open": [BreakerRow] (open first, at most OPEN_LISTED), "open_count",
    "half_open_count", "breaker_error": "" or why Redis could not be read,
    "rejection_rate", "http_success_rate" (shares 0..1 or None without answers),
    "answers" (answers received in the window), "window": "1 h"}``.

    One query for the routes, one Redis pipeline for their breakers, and the rollup and
    indexed event reads of ``reliability_totals`` over the last hour.
    """
    routes = list(Route.objects.order_by("name").values_list("name", flat=True))
    error = ""
    rows: list[Any] = []
    try:
        rows = breaker_rows(breaker_store(), routes, int(time.time() * 1000)) if routes else []
    except Exception as exc:  # noqa: BLE001 - the home page must render without Redis
        error = f"breaker store unavailable ({type(exc).__name__})"
    not_closed = sorted((r for r in rows if r.state != BreakerState.CLOSED), key=lambda r: (r.state != BreakerState.OPEN, r.route))
    totals = reliability_totals(now, RATE_WINDOW)
    return {
        "open": not_closed[:OPEN_LISTED],  # vocabulary: the page's list of open breakers
        "open_count": sum(1 for r in rows if r.state == BreakerState.OPEN),
        "half_open_count": sum(1 for r in rows if r.state == BreakerState.HALF_OPEN),
        "breaker_error": error,
        "rejection_rate": totals.rejection_rate,
        "http_success_rate": totals.http_success_rate,
        "answers": totals.attempts_answered,
        "window": "1 h",
    }
