"""Gateway events: one request event and one attempt event per attempt, written by
``DbEventSink`` (synchronously) or ``BackgroundEventSink`` (a writer thread, so the request
path never waits on PostgreSQL). Both hand every batch of results to their listeners
first (``BatchListener``: the evidence-only checks, then the live scorecard's feed), so
work that only records what happened runs after the answer went out, not on the
request's path. ROUTING_EVENT_CONTENT ("hash" or "redact") says what an event keeps of a
prompt or answer. Every string is made storable first
(``routing.event_text``): one bad character costs no other caller its events."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, connection, transaction

from core.text import storable
from routing.event_text import text_digest
from routing.gateway.result import GatewayResult
from routing.models import AttemptEvent, RequestEvent

log = logging.getLogger(__name__)

# Sees each batch of finished results before it is written, in the writer's thread
# (``routing.gateway.commit.judge_evidence``, ``routing.gateway.live_feed.ScorecardFeed``).
BatchListener = Callable[[Sequence[GatewayResult]], None]


def _tell(listeners: Sequence[BatchListener], items: Sequence[GatewayResult]) -> None:
    """Hand ``items`` to each listener; one that raises is logged and the rest go on (the
    events are still written)."""
    for listener in listeners:
        try:
            listener(items)
        except Exception:  # noqa: BLE001 - a listener never costs the events
            log.exception("an event listener failed on a batch of %d results", len(items))


def _content_field(text: str | None, *, redact: bool) -> str:
    """What an event stores of a prompt or answer: its SHA-256, or only its length."""
    if not text:
        return ""
    if redact:
        return f"[redacted {len(text)} chars]"
    return text_digest(text)


_REQUEST_COLUMNS = ("operation_id", "contract", "outcome", "failure_class", "error_code", "message", "final_route",
                    "attempt_count", "latency_ms", "cost_usd", "prompt", "output", "started_at")
_ATTEMPT_COLUMNS = ("operation_id", "attempt_id", "index", "route", "status", "failure_class", "failure_reason",
                    "message", "http_status", "latency_ms", "ttft_ms", "tokens_in", "tokens_out", "cost_usd",
                    "fallback_reason", "validation", "breaker_state", "breaker_opened", "hedge", "checks", "started_at")

_Rows = tuple[tuple[Any, ...], list[tuple[Any, ...]]]


def _insert_sql(table: str, columns: tuple[str, ...]) -> str:
    # Table and column names are our own constants, quoted; values go as parameters.
    quote = connection.ops.quote_name
    return f"INSERT INTO {quote(table)} ({', '.join(quote(c) for c in columns)}) VALUES ({', '.join(['%s'] * len(columns))})"  # noqa: S608


def _clean(row: tuple[Any, ...]) -> tuple[Any, ...]:
    # ``isascii`` is a flag read in CPython: an ASCII string holds no surrogate, so only
    # a NUL can make it unstorable; anything else goes through ``storable``.
    return tuple([v if v.__class__ is not str or (v.isascii() and "\x00" not in v) else storable(v) for v in row])


def _event_rows(r: GatewayResult, *, redact: bool) -> _Rows:
    """The request row and attempt rows of one result, every string storable."""
    ops = connection.ops

    def when(epoch_s: float) -> Any:
        return ops.adapt_datetimefield_value(datetime.fromtimestamp(epoch_s, tz=UTC))

    def checks(value: dict[str, str]) -> Any:
        return ops.adapt_json_value(value, None)

    def usd(value: float) -> Any:
        return ops.adapt_decimalfield_value(Decimal(str(round(value, 8))), 14, 8)

    request = _clean((
        r.operation_id, r.contract, r.outcome, r.failure_class, r.error_code, r.message[:2000],
        r.route.name if r.route else "", len(r.attempts), r.latency_ms, usd(r.cost_usd),
        _content_field(r.request_text, redact=redact), _content_field(r.answer.content if r.answer else None, redact=redact),
        when(r.started_at),
    ))
    attempts = [
        _clean((r.operation_id, a.attempt_id, a.index, a.route, a.status, a.failure_class, a.failure_reason[:60], a.message,
                a.http_status, a.latency_ms, a.ttft_ms, a.tokens_in, a.tokens_out, usd(a.cost_usd), a.fallback_reason[:300],
                a.validation, a.breaker_state, a.breaker_opened, a.hedge, checks(a.checks), when(a.started_at)))
        for a in r.attempts
    ]
    return request, attempts


def _copy_sql(table: str, columns: tuple[str, ...]) -> str:
    quote = connection.ops.quote_name
    return f"COPY {quote(table)} ({', '.join(quote(c) for c in columns)}) FROM STDIN"


def _insert_events(rows: list[_Rows]) -> None:
    """Both tables' rows in one transaction: ``COPY`` on PostgreSQL, ``executemany``
    elsewhere (SQLite, for the benches). Raises Django's database errors."""
    attempts = [a for _, batch in rows for a in batch]
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            cursor.executemany(_insert_sql(RequestEvent._meta.db_table, _REQUEST_COLUMNS), [req for req, _ in rows])
            if attempts:
                cursor.executemany(_insert_sql(AttemptEvent._meta.db_table, _ATTEMPT_COLUMNS), attempts)
            return
        # COPY, not executemany: psycopg's executemany encodes and sends one statement
        # per row, about 0.12 ms of this process's CPU per request (a request and an
        # attempt row); COPY streams the rows in one statement for a third of that.
        # The raw psycopg cursor raises psycopg's errors: Django's wrapper maps them, so
        # ``events_write`` tells a lost connection from a refused row as before.
        raw = cursor.cursor
        with connection.wrap_database_errors:
            with raw.copy(_copy_sql(RequestEvent._meta.db_table, _REQUEST_COLUMNS)) as copy:
                for request, _ in rows:
                    copy.write_row(request)
            if attempts:
                with raw.copy(_copy_sql(AttemptEvent._meta.db_table, _ATTEMPT_COLUMNS)) as copy:
                    for attempt in attempts:
                        copy.write_row(attempt)


def events_write(results: list[GatewayResult]) -> int:
    """Write request and attempt rows for finished gateway runs; returns how many
    results were stored.

    One transaction for the batch. When the batch fails for a reason inside its data
    (a value the database refuses), each result is written in a transaction of its own,
    so one bad result costs only its own events: it is logged with its operation id and
    dropped. A lost connection (``OperationalError``/``InterfaceError``) is raised: the
    caller retries the whole batch on a new connection.

    Plain rows (tuples) and ``COPY`` rather than ORM ``bulk_create``: the writer shares
    the process (and its GIL) with the request path, and model instances per row cost
    more CPU than the insert itself (the bench's 2 ms budget).
    """
    if not results:
        return 0
    redact = settings.ROUTING_EVENT_CONTENT == "redact"  # read once per batch, not per field
    rows: list[_Rows] = []
    for r in results:
        try:
            rows.append(_event_rows(r, redact=redact))
        except Exception:  # noqa: BLE001 - one result's bad value must not cost the batch
            log.exception("dropped the routing events of operation %s: they cannot be stored", r.operation_id)
    if not rows:
        return 0
    try:
        _insert_events(rows)
        return len(rows)
    except (OperationalError, InterfaceError):
        raise
    except DatabaseError:
        log.warning("a batch of %d routing events failed; writing them one by one", len(rows), exc_info=True)
    stored = 0
    for one in rows:
        try:
            _insert_events([one])
            stored += 1
        except (OperationalError, InterfaceError):
            raise
        except DatabaseError:
            log.exception("dropped the routing events of operation %s: the database refused them", one[0][0])
    return stored


class DbEventSink:
    """Tells ``listeners`` and writes each result's rows before ``emit`` returns (tests;
    low-volume tools)."""

    def __init__(self, *, listeners: Sequence[BatchListener] = ()) -> None:
        self.listeners = tuple(listeners)

    def emit(self, result: GatewayResult) -> None:
        _tell(self.listeners, [result])
        events_write([result])


class BackgroundEventSink:
    """Collects results; one daemon thread writes them in batches (up to ``batch``
    results per transaction), ``interval_s`` seconds after the first result of a batch
    arrived. Keeps the database off the request path (the bench's 2 ms budget). A crash
    loses at most the last interval's events; ``flush`` writes everything emitted at once
    and waits until it is written.

    One second, not less: a batch costs about 0.3-0.5 ms of CPU whatever its size
    (transaction and commit), and at 100 requests a second per process a 0.2 s batch
    held 20 results, so the fixed cost alone was 20 us per request.

    ``emit`` is a deque append (atomic under the GIL) and wakes the writer only when it
    is idle, so the writer wakes once per batch, not once per request: a ``queue.Queue``
    woke it for every result, and those thread switches cost more CPU per request than
    the rest of the gateway's own work.

    ``listeners`` see each batch in the writer thread before it is written.
    """

    _RENEW_S = 300.0

    def __init__(self, *, batch: int = 200, interval_s: float = 1.0, listeners: Sequence[BatchListener] = ()) -> None:
        self.batch = batch
        self.listeners = tuple(listeners)
        self.interval_s = interval_s
        self._pending: deque[GatewayResult] = deque()
        self._wake = threading.Event()
        # Set by ``flush`` and ``close``: write what is pending now, without waiting out
        # the gathering interval.
        self._hurry = threading.Event()
        self._busy = False
        self._written = threading.Condition()
        self._closing = False
        self._renew_at = 0.0
        self._thread = threading.Thread(target=self._run, name="routing-events", daemon=True)
        self._thread.start()

    def emit(self, result: GatewayResult) -> None:
        self._pending.append(result)
        if not self._wake.is_set():
            self._wake.set()

    def flush(self, timeout_s: float = 5.0) -> None:
        """Write every emitted result now (the writer stops gathering) and wait, at most
        ``timeout_s`` seconds, until they are written."""
        end = time.monotonic() + timeout_s
        self._hurry.set()
        self._wake.set()
        with self._written:
            while self._pending or self._busy:
                left = end - time.monotonic()
                if left <= 0:
                    return
                # Woken by the writer after each drain (no polling: the bench counts
                # this process's CPU while it waits).
                self._written.wait(min(left, 0.5))

    def close(self, timeout_s: float = 5.0) -> None:
        """Write what is pending, then end the writer thread and close its database
        connection (waits at most ``timeout_s`` seconds). Results emitted later are lost."""
        self._closing = True
        self._hurry.set()
        self._wake.set()
        self._thread.join(timeout_s)

    def _run(self) -> None:
        while True:
            self._wake.wait()
            if not self._closing:
                self._hurry.wait(self.interval_s)  # let a batch gather, unless a flush is waiting
            # Busy before the event is cleared and the deque drained: ``flush`` never
            # sees "nothing pending, not busy" while results are in hand. A result
            # emitted after the clear sets the event again (next batch); one emitted
            # before it is drained now.
            self._busy = True
            self._wake.clear()
            self._hurry.clear()  # a flush after this point sets it again: the next round is prompt
            try:
                while self._pending:
                    items: list[GatewayResult] = []
                    while self._pending and len(items) < self.batch:
                        items.append(self._pending.popleft())
                    self._write(items)
            finally:
                with self._written:
                    self._busy = False
                    self._written.notify_all()
            if self._closing:
                connection.close()
                return

    def _write(self, items: list[GatewayResult]) -> None:
        """One batch in one transaction, on this thread's connection, kept between batches.

        Not ``close_old_connections`` per batch: with ``CONN_MAX_AGE = 0`` (the default) it
        closes the connection every time, and the reconnect cost more CPU than writing a
        batch. A connection that fails is dropped and the batch tried once more on a new
        one (the database restarted); a connection is renewed at least every
        ``_RENEW_S`` seconds anyway.
        """
        _tell(self.listeners, items)
        now = time.monotonic()
        if now >= self._renew_at:
            connection.close()
            self._renew_at = now + self._RENEW_S
        for last_try in (False, True):
            try:
                events_write(items)
                return
            except Exception:  # noqa: BLE001 - losing events must not stop the writer
                connection.close()
                if last_try:
                    log.exception("could not write %d routing events", len(items))
