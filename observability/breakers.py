"""Circuit breaker state for people and for Prometheus, read from the breaker store.

``breaker_rows(store, routes, now_ms)`` reads every route's hash in one Redis pipeline
(routes are the ``Route`` table, a known set) and returns one ``BreakerRow`` per route and
failure class that has state; a route with no hash is closed for every class.
``BreakerCollector`` exposes the same rows at scrape time as
``reverie_gateway_breaker_state`` (0 closed, 1 half-open, 2 open),
``reverie_gateway_breaker_window_failures`` and, per route,
``reverie_gateway_breaker_open_seconds_total`` (time the route's breakers held it open,
overlapping classes counted once; it restarts from 0 when the route's idle state expires
or an admin resets it, which Prometheus reads as a counter reset).

A breaker says why: each row carries the failure that opened it (``reason``) and the
class's last charged failures (class, check or status, operation id, time), from the
breaker store's record (``routing.breaker.FailureDetail``); ``breaker_json`` is the same
for on-call tools (``GET /api/v1/routing/breakers``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from observability.exposition import Family
from routing.breaker import LAST_FAILURES_KEPT, BreakerStore, FailureDetail
from routing.failures import FailureClass
from routing.terms import BreakerState

log = logging.getLogger(__name__)

STATE_VALUES: dict[str, int] = {BreakerState.CLOSED: 0, BreakerState.HALF_OPEN: 1, BreakerState.OPEN: 2}


@dataclass(frozen=True)
class BreakerRow:
    """One route's breaker for one failure class.

    ``state``: closed, open or half_open (an open breaker whose time is up is shown as
    half_open: the next call will be its trial). ``window_failures``/``window_calls``:
    the failures among the calls counted in its window; ``consecutive``: failures in a
    row. Times are epoch ms (``None`` when not applicable): ``opened_at_ms`` when it
    last opened, ``next_trial_ms`` when the next half-open trial may start (now for a
    half-open breaker with a free slot). ``trials``: trial calls in flight.
    """

    route: str
    failure_class: str
    state: str
    window_failures: int
    window_calls: int
    consecutive: int
    opened_at_ms: int | None
    open_until_ms: int | None
    next_trial_ms: int | None
    trials: int
    reason: FailureDetail | None = None
    last_failures: tuple[FailureDetail, ...] = ()

    def as_json(self) -> dict[str, Any]:
        """The row for on-call tools: state, reason, since and until (ISO 8601 UTC, or
        None), and the last failures."""
        return {
            "route": self.route, "failure_class": self.failure_class, "state": self.state,
            "reason": _detail_json(self.reason) if self.reason else None,
            "since": _iso(self.opened_at_ms) if self.state != BreakerState.CLOSED else None,
            "until": _iso(self.open_until_ms) if self.state == BreakerState.OPEN else None,
            "next_trial": _iso(self.next_trial_ms),
            "window_failures": self.window_failures, "window_calls": self.window_calls,
            "consecutive": self.consecutive, "trials": self.trials,
            "last_failures": [_detail_json(d) for d in self.last_failures],
        }


def _iso(ms: int | None) -> str | None:
    if not ms:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"


def _detail_json(d: FailureDetail) -> dict[str, Any]:
    return {"class": d.failure_class, "check": d.check, "status": d.status, "operation_id": d.operation_id,
            "at": _iso(d.at_ms), "message": d.message}


def open_seconds(fields: dict[str, str], now_ms: int) -> float:
    """Seconds the route's breakers have held it open until ``now_ms`` (the store's
    ``open_total_ms`` less the part of the current opening still to come)."""
    total = _int(fields, "open_total_ms")
    ahead = max(0, _int(fields, "open_covered_until") - now_ms)
    return max(0, total - ahead) / 1000.0


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _int(fields: dict[str, str], key: str) -> int:
    try:
        return int(float(fields.get(key, "0") or 0))
    except ValueError:
        return 0


def rows_from_fields(route: str, fields: dict[str, str], now_ms: int, *, open_s: float, max_trials: int,
                     last: Sequence[FailureDetail] = ()) -> list[BreakerRow]:
    """Parse one route's breaker hash (``BreakerStore.snapshot`` shape) into rows;
    ``last``: the route's last charged failures, newest first (``BreakerStore.last_failures``)."""
    rows = []
    for key in sorted(fields):
        if not key.endswith(":state"):
            continue
        cls = key[: -len(":state")]
        state = fields[key]
        until = _int(fields, f"{cls}:until") or None
        opened = _int(fields, f"{cls}:opened") or (int(until - open_s * 1000) if until else None)
        lease = _int(fields, f"{cls}:lease")
        trials = _int(fields, f"{cls}:trials") if lease > now_ms else 0
        next_trial: int | None = None
        if state == BreakerState.OPEN and until is not None and until <= now_ms:
            state = BreakerState.HALF_OPEN
        if state == BreakerState.OPEN:
            next_trial = until
        elif state == BreakerState.HALF_OPEN:
            next_trial = lease if trials >= max_trials else now_ms
        window = fields.get(f"{cls}:window", "")
        rows.append(BreakerRow(
            route=route, failure_class=cls, state=state, window_failures=window.count("1"), window_calls=len(window),
            consecutive=_int(fields, f"{cls}:fails"), opened_at_ms=opened if state != BreakerState.CLOSED or opened else None,
            open_until_ms=until, next_trial_ms=next_trial, trials=trials,
            reason=FailureDetail.from_json(fields.get(f"{cls}:reason")),
            last_failures=tuple(d for d in last if d.failure_class == cls),
        ))
    retry_after = _int(fields, "retry_after_until")
    if retry_after > now_ms:
        rows.append(BreakerRow(route=route, failure_class="retry_after", state=BreakerState.OPEN, window_failures=0, window_calls=0,
                               consecutive=0, opened_at_ms=None, open_until_ms=retry_after, next_trial_ms=retry_after,
                               trials=0))
    return rows


def breaker_rows(store: BreakerStore, routes: Sequence[str], now_ms: int) -> list[BreakerRow]:
    """Every route's breaker rows (one pipelined HGETALL per route). Raises
    ``redis.RedisError`` when Redis is unreachable."""
    return breaker_board(store, routes, now_ms)[0]


def breaker_board(store: BreakerStore, routes: Sequence[str], now_ms: int) -> tuple[list[BreakerRow], dict[str, float]]:
    """``(breaker_rows, {route: seconds held open})`` in one pipeline (a HGETALL and an
    LRANGE per route). Raises ``redis.RedisError`` when Redis is unreachable."""
    pipe = store.client.pipeline(transaction=False)
    for route in routes:
        pipe.hgetall(store._key(route))
        pipe.lrange(store._last_key(route), 0, LAST_FAILURES_KEPT - 1)
    replies: list[Any] = pipe.execute()
    rows: list[BreakerRow] = []
    seconds: dict[str, float] = {}
    for i, route in enumerate(routes):
        raw, last_raw = replies[2 * i], replies[2 * i + 1]
        fields = {_text(k): _text(v) for k, v in (raw or {}).items()}
        last = [d for d in (FailureDetail.from_json(item) for item in last_raw or []) if d is not None]
        rows += rows_from_fields(route, fields, now_ms, open_s=store.config.open_s,
                                 max_trials=store.config.half_open_trials, last=last)
        seconds[route] = open_seconds(fields, now_ms)
    return rows, seconds


def breaker_json(store: BreakerStore, routes: Sequence[str], now_ms: int) -> dict[str, Any]:
    """The breakers for on-call tools: ``{"at", "breakers": [row.as_json()],
    "open_seconds": {route: s}}``; routes without state are closed and not listed."""
    rows, seconds = breaker_board(store, routes, now_ms)
    return {"at": _iso(now_ms), "breakers": [r.as_json() for r in rows],
            "open_seconds": {route: round(s, 3) for route, s in seconds.items()}}


class BreakerCollector:
    """Scrape-time breaker gauges; ``store()`` and ``routes()`` are read per scrape."""

    FAILURE_CLASSES: tuple[str, ...] = (FailureClass.TRANSIENT, FailureClass.INVALID_RESPONSE, FailureClass.AMBIGUOUS, FailureClass.PERMANENT)

    def __init__(self, store: Callable[[], BreakerStore], routes: Callable[[], Sequence[str]],
                 wall: Callable[[], float] = time.time) -> None:
        self.store = store
        self.routes = routes
        self.wall = wall

    def collect(self) -> list[Family]:
        """The breaker families; only ``reverie_gateway_breaker_store_up`` 0 when Redis
        or the routes cannot be read."""
        state = Family("reverie_gateway_breaker_state",
                       "gauge", "Circuit breaker state per route and failure class: 0 closed, 1 half-open, 2 open",
                       ("route", "failure_class"))
        failures = Family("reverie_gateway_breaker_window_failures", "gauge",
                          "Failures counted in the breaker's window per route and failure class",
                          ("route", "failure_class"))
        up = Family("reverie_gateway_breaker_store_up", "gauge", "1 when the breaker store could be read")
        open_time = Family("reverie_gateway_breaker_open_seconds", "counter",
                           "Seconds the route's circuit breakers held it open (classes overlapping counted once)",
                           ("route",))
        try:
            routes = list(self.routes())
            rows, seconds = breaker_board(self.store(), routes, int(self.wall() * 1000))
        except Exception as exc:  # noqa: BLE001 - a scrape must answer without Redis
            log.error("breaker state unavailable: %s", exc)
            up.add((), 0)
            return [up]
        seen = {(r.route, r.failure_class): r for r in rows}
        for route in routes:
            for cls in self.FAILURE_CLASSES:
                row = seen.pop((route, cls), None)
                state.add((route, cls), STATE_VALUES.get(row.state, 0) if row else 0)
                failures.add((route, cls), row.window_failures if row else 0)
        for (route, cls), row in sorted(seen.items()):  # retry_after and any other class with state
            state.add((route, cls), STATE_VALUES.get(row.state, 0))
            failures.add((route, cls), row.window_failures)
        for route in routes:
            open_time.add((route,), seconds.get(route, 0.0))
        up.add((), 1)
        return [state, failures, open_time, up]
