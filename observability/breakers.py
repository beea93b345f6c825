"""Circuit breaker state for people and for Prometheus, read from the breaker store.

``breaker_rows(store, routes, now_ms)`` reads every route's hash in one Redis pipeline
(routes are the ``Route`` table, a known set) and returns one ``BreakerRow`` per route and
failure class that has state; a route with no hash is closed for every class.
``BreakerCollector`` exposes the same rows at scrape time as
``reverie_gateway_breaker_state`` (0 closed, 1 half-open, 2 open) and
``reverie_gateway_breaker_window_failures``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from observability.exposition import Family
from routing.breaker import BreakerStore

log = logging.getLogger(__name__)

STATE_VALUES = {"closed": 0, "half_open": 1, "open": 2}


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


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _int(fields: dict[str, str], key: str) -> int:
    try:
        return int(float(fields.get(key, "0") or 0))
    except ValueError:
        return 0


def rows_from_fields(route: str, fields: dict[str, str], now_ms: int, *, open_s: float, max_trials: int) -> list[BreakerRow]:
    """Parse one route's breaker hash (``BreakerStore.snapshot`` shape) into rows."""
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
        if state == "open" and until is not None and until <= now_ms:
            state = "half_open"
        if state == "open":
            next_trial = until
        elif state == "half_open":
            next_trial = lease if trials >= max_trials else now_ms
        window = fields.get(f"{cls}:window", "")
        rows.append(BreakerRow(
            route=route, failure_class=cls, state=state, window_failures=window.count("1"), window_calls=len(window),
            consecutive=_int(fields, f"{cls}:fails"), opened_at_ms=opened if state != "closed" or opened else None,
            open_until_ms=until, next_trial_ms=next_trial, trials=trials,
        ))
    retry_after = _int(fields, "retry_after_until")
    if retry_after > now_ms:
        rows.append(BreakerRow(route=route, failure_class="retry_after", state="open", window_failures=0, window_calls=0,
                               consecutive=0, opened_at_ms=None, open_until_ms=retry_after, next_trial_ms=retry_after,
                               trials=0))
    return rows


def breaker_rows(store: BreakerStore, routes: Sequence[str], now_ms: int) -> list[BreakerRow]:
    """Every route's breaker rows (one pipelined HGETALL per route). Raises
    ``redis.RedisError`` when Redis is unreachable."""
    pipe = store.client.pipeline(transaction=False)
    for route in routes:
        pipe.hgetall(store._key(route))
    replies: list[Any] = pipe.execute()
    rows: list[BreakerRow] = []
    for route, raw in zip(routes, replies, strict=True):
        fields = {_text(k): _text(v) for k, v in (raw or {}).items()}
        rows += rows_from_fields(route, fields, now_ms, open_s=store.config.open_s, max_trials=store.config.half_open_trials)
    return rows


class BreakerCollector:
    """Scrape-time breaker gauges; ``store()`` and ``routes()`` are read per scrape."""

    FAILURE_CLASSES = ("transient", "invalid_response", "ambiguous", "permanent")

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
        try:
            routes = list(self.routes())
            rows = breaker_rows(self.store(), routes, int(self.wall() * 1000))
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
        up.add((), 1)
        return [state, failures, up]
