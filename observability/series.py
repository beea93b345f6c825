"""Time series of the on-call pages: per route and hour, the HTTP success rate, the
validation-rejection rate, the fallback rate and the p95 latency (the measures of
``observability.reliability``, hour by hour), and each route's circuit-breaker state over
time from the gateway's attempt events and the breaker store's state now.

Shapes are what the vendored Chart.js draws (``canary/static/canary/dashboards.js``:
``routes`` and ``breakers`` charts); times are epoch ms, rates 0..1, latencies ms.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from observability.breakers import BreakerRow
from observability.reliability import (
    Masking,
    Totals,
    hourly_rows,
    reliability_page,
    rolled_until_now,
)
from routing.models import AttemptEvent
from routing.terms import BreakerState

SERIES_SPAN = timedelta(hours=24)
BREAKER_LEVEL: dict[str, int] = {BreakerState.CLOSED: 0, BreakerState.HALF_OPEN: 1, BreakerState.OPEN: 2}
# Rates from fewer answers than this in an hour are left out (a gap), not drawn as 0% or 100%.
MIN_PER_HOUR = 1


def _hour_of(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return datetime.fromisoformat(str(value)).replace(tzinfo=UTC)


def _ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)


def route_series(
    requests: Iterable[tuple[Any, ...]], attempts: Iterable[tuple[Any, ...]], hours: Sequence[datetime],
    masking: Iterable[Masking] = (),
) -> dict[str, Any]:
    """Per-route hourly series from hourly rows (``observability.reliability.hourly_rows``).

    Returns ``{"success": chart, "rejection": chart, "fallback": chart, "p95": chart}``,
    each chart ``{"hours": [epoch ms], "unit": "percent" | "ms", "routes": [{"route",
    "values": [value | None per hour]}], "marks": [{"x", "label"}]}``. Success and
    rejection are per route tried (attempts), fallback and p95 per final route
    (requests); the masking findings are marks on the success and rejection charts at
    the last hour. Pure."""
    by_request: dict[tuple[str, datetime], Totals] = defaultdict(Totals)
    by_attempt: dict[tuple[str, datetime], Totals] = defaultdict(Totals)
    for row in requests:
        if row[2]:
            by_request[(row[2], _hour_of(row[0]))].add_request_row(row)
    for row in attempts:
        by_attempt[(row[2], _hour_of(row[0]))].add_attempt_row(row)
    xs = [_ms(h) for h in hours]

    def chart(groups: dict[tuple[str, datetime], Totals], value: Any, unit: str) -> dict[str, Any]:
        routes = sorted({route for route, _ in groups})
        return {"hours": xs, "unit": unit, "marks": [],
                "routes": [{"route": route, "values": [value(groups[(route, h)]) if (route, h) in groups else None for h in hours]}
                           for route in routes]}

    def answered(t: Totals, rate: float | None) -> float | None:
        return None if rate is None or t.attempts_answered < MIN_PER_HOUR else round(rate, 4)

    out = {
        "success": chart(by_attempt, lambda t: None if t.http_success_rate is None else round(t.http_success_rate, 4), "percent"),  # vocabulary: a chart's name
        "rejection": chart(by_attempt, lambda t: answered(t, t.rejection_rate), "percent"),
        "fallback": chart(by_request, lambda t: None if t.fallback_rate is None else round(t.fallback_rate, 4), "percent"),
        "p95": chart(by_request, lambda t: t.p95_latency_ms, "ms"),
    }
    last = xs[-1] if xs else 0
    for m in masking:
        label = (f"masking warning: {m.route} over {m.window}: HTTP success {m.http_before:.0%} → {m.http_now:.0%} while "
                 f"validation rejections {m.rejection_before:.0%} → {m.rejection_now:.0%}")
        for name in ("success", "rejection"):  # vocabulary: a chart's name
            out[name]["marks"].append({"x": last, "label": label})
    return out


def reliability_series(now: datetime, masking: Iterable[Masking] = (), span: timedelta = SERIES_SPAN) -> dict[str, Any]:
    """``route_series`` of the ``span`` before ``now``, hour by hour (the open hour
    included). Two queries on the rollups and two on the events of the open hours."""
    last_hour = now.replace(minute=0, second=0, microsecond=0)
    first_hour = last_hour - span + timedelta(hours=1)
    hours = [first_hour + timedelta(hours=i) for i in range(int(span / timedelta(hours=1)))]
    requests, attempts = hourly_rows(first_hour, now, rolled_until_now(now))
    return route_series(requests, attempts, hours, masking)


def breaker_timeline(
    events: Iterable[tuple[datetime, str, str, str]], current: Iterable[BreakerRow], since: datetime, now: datetime,
) -> dict[str, Any]:
    """Each route's breaker state over [since, now] as stepped points.

    ``events``: ``(started_at, route, breaker_state, breaker_opened)`` of the gateway's
    attempts in time order (the state each attempt saw; ``breaker_opened``: the failure
    class whose breaker that attempt opened). ``current``: the store's rows now
    (``observability.breakers.breaker_rows``; the worst state per route counts, and an
    ``opened_at`` in the window is a step to open). Returns ``{"since", "until" (epoch
    ms), "routes": [{"route", "points": [{"x", "y": 0 closed | 1 half-open | 2 open,
    "why"}]}]}``, routes sorted; a route that was closed throughout and is closed now is
    left out. Pure."""
    points: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for at, route, state, opened in events:
        points[route].append({"x": _ms(at), "y": BREAKER_LEVEL.get(state, 0), "why": ""})
        if opened:
            points[route].append({"x": _ms(at) + 1, "y": 2, "why": f"opened by {opened} failures"})
    worst: dict[str, BreakerRow] = {}
    for row in current:
        known = worst.get(row.route)
        if known is None or BREAKER_LEVEL.get(row.state, 0) > BREAKER_LEVEL.get(known.state, 0):
            worst[row.route] = row
    start_ms, end_ms = _ms(since), _ms(now)
    for route, row in worst.items():
        if row.opened_at_ms and start_ms <= row.opened_at_ms <= end_ms:
            points[route].append({"x": row.opened_at_ms, "y": 2, "why": f"opened ({row.failure_class})"})
        why = f"{row.failure_class}, open until {datetime.fromtimestamp(row.open_until_ms / 1000, UTC):%Y-%m-%d %H:%M} UTC" \
            if row.state == BreakerState.OPEN and row.open_until_ms else row.failure_class
        points[route].append({"x": end_ms, "y": BREAKER_LEVEL.get(row.state, 0), "why": f"now: {why}"})
    routes = []
    for route in sorted(points):
        steps = sorted(points[route], key=lambda p: p["x"])
        if not any(p["y"] for p in steps):
            continue
        if steps[-1]["x"] < end_ms:
            steps.append({"x": end_ms, "y": steps[-1]["y"], "why": "now"})
        routes.append({"route": route, "points": steps})
    return {"since": start_ms, "until": end_ms, "routes": routes}


def breaker_events(since: datetime, routes: Sequence[str] | None = None) -> list[tuple[datetime, str, str, str]]:
    """The gateway attempts' breaker facts since ``since``, in time order: ``(started_at,
    route, breaker_state, breaker_opened)``. One query on the events."""
    rows = AttemptEvent.objects.filter(started_at__gte=since)
    if routes is not None:
        rows = rows.filter(route__in=list(routes))
    return list(rows.order_by("started_at", "pk").values_list("started_at", "route", "breaker_state", "breaker_opened"))


def reliability_page_charts(now: datetime) -> dict[str, Any]:
    """The reliability page (``observability.reliability.reliability_page``) with its time
    series under ``series`` (``reliability_series``, masking findings marked)."""
    page = reliability_page(now)
    return {**page, "series": reliability_series(now, page["findings"])}


def breaker_page_timeline(rows: Sequence[BreakerRow], now: datetime, span: timedelta = SERIES_SPAN) -> dict[str, Any]:
    """``breaker_timeline`` of the ``span`` before ``now`` from the attempt events and the
    store's ``rows`` now."""
    since = now - span
    return breaker_timeline(breaker_events(since), rows, since, now)
