"""The reliability report: the routing design's own measures, per contract and final route.

Measures (``routing/README.md``: what the failure classes, fallbacks and validation are
for) over 1 h, 24 h and 7 d:

- fallback rate: requests that needed another route (a fallback or a hedge) / requests;
- attempts per completed request: attempts of accepted requests / accepted requests;
- deadline-exhaustion rate: requests failed with ``deadline_exhausted`` / requests;
- validation-rejection rate: answers rejected by validation / answers received
  (accepted + rejected attempts);
- HTTP success rate: attempts that got an answer / attempts (cancelled hedges left out);
- ambiguous outcomes: attempts classed ``ambiguous``, and requests recorded ``unknown``;
- cost per accepted response (USD): the cost of every attempt of accepted requests /
  accepted requests; latency per final route (mean, and the p95 bucket's upper edge);
- the primary route's attempts against the fallbacks' (acceptance, latency, cost).

Masking: when on one route both the HTTP success rate and the validation-rejection rate
rose from the previous window of the same length, transport availability is hiding
contract failures (the design's warning); ``masking_notify`` tells admins once per
route and window.

Bounded work: closed hours come from the ``RequestHour``/``AttemptHour`` rollups
(``rollup_refresh`` sums each hour once, with one INSERT ... SELECT per table); only the
hour still open is read from the events (the ``started_at`` index).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from canary.formatting import percent
from canary.models import Notification
from canary.services.notifications import notification_create
from observability.models import LATENCY_EDGES_MS, AttemptHour, RequestHour, RollupState
from routing.models import AttemptEvent, RequestEvent

WINDOWS: tuple[tuple[str, timedelta], ...] = (("1h", timedelta(hours=1)), ("24h", timedelta(hours=24)),
                                              ("7d", timedelta(days=7)))
# Events are written up to a second after the request (a batch a second): an hour is
# rolled up only once this much later, so no late row is left out of its hour.
SETTLE = timedelta(minutes=2)
# How far back a first rollup goes: the longest window and the one before it.
KEEP = timedelta(days=14, hours=1)
# "Rose": by at least this much (absolute share), each over at least MIN_ANSWERS answers.
MASKING_MIN_RISE = 0.02
MASKING_MIN_ANSWERS = 20
NOTIFY_KIND = "reliability_masking"

_BUCKET_SQL = ", ".join(f"COUNT(*) FILTER (WHERE r.outcome = 'accepted' AND r.latency_ms > {low} AND r.latency_ms <= {edge})"
                        for low, edge in zip((-1, *LATENCY_EDGES_MS), LATENCY_EDGES_MS, strict=False))

_REQUESTS_SELECT = f"""
SELECT {{bucket}} AS hour, r.contract, r.final_route,
  COUNT(*), COUNT(*) FILTER (WHERE r.outcome = 'accepted'), COUNT(*) FILTER (WHERE r.outcome = 'failed'),
  COUNT(*) FILTER (WHERE r.outcome = 'unknown'),
  COUNT(*) FILTER (WHERE r.attempt_count > 1 AND EXISTS (SELECT 1 FROM {{attempts}} a WHERE a.operation_id = r.operation_id AND a."index" > 0
                                   AND (a.hedge OR a.fallback_reason LIKE 'fallback%%'))),
  COUNT(*) FILTER (WHERE r.error_code = 'deadline_exhausted'),
  COALESCE(SUM(r.attempt_count) FILTER (WHERE r.outcome = 'accepted'), 0),
  COALESCE(SUM(r.cost_usd), 0), COALESCE(SUM(r.cost_usd) FILTER (WHERE r.outcome = 'accepted'), 0),
  COALESCE(SUM(r.latency_ms) FILTER (WHERE r.outcome = 'accepted'), 0),
  {{json_array}}({_BUCKET_SQL}, COUNT(*) FILTER (WHERE r.outcome = 'accepted' AND r.latency_ms > {LATENCY_EDGES_MS[-1]}))
FROM {{requests}} r
WHERE r.started_at >= %s AND r.started_at < %s
GROUP BY 1, 2, 3
"""  # noqa: S608 - table names are our own constants

_ATTEMPTS_SELECT = """
SELECT {bucket} AS hour, r.contract, a.route,
  CASE WHEN a."index" = 0 OR a.route = (SELECT p.route FROM {attempts} p WHERE p.operation_id = a.operation_id
                                        AND p."index" = 0) THEN 'primary' ELSE 'fallback' END,
  COUNT(*), COUNT(*) FILTER (WHERE a.status = 'accepted'), COUNT(*) FILTER (WHERE a.status = 'rejected'),
  COUNT(*) FILTER (WHERE a.status = 'failed'), COUNT(*) FILTER (WHERE a.status = 'cancelled'),
  COUNT(*) FILTER (WHERE a.failure_class = 'ambiguous'),
  COALESCE(SUM(a.latency_ms) FILTER (WHERE a.status = 'accepted'), 0), COALESCE(SUM(a.cost_usd), 0)
FROM {requests} r JOIN {attempts} a ON a.operation_id = r.operation_id
WHERE r.started_at >= %s AND r.started_at < %s
GROUP BY 1, 2, 3, 4
"""  # noqa: S608 - table names are our own constants

# Rollup column names (counts of each outcome), spelled like the outcomes they count.
_REQUEST_COLS = ("hour", "contract", "final_route", "requests", "accepted", "failed", "unknown",  # vocabulary: columns
                 "with_fallback", "deadline_exhausted", "attempts_accepted",  # vocabulary: columns
                 "cost_usd", "cost_accepted_usd", "latency_ms_accepted", "latency_buckets")
_ATTEMPT_COLS = ("hour", "contract", "route", "role", "attempts",
                 "accepted", "rejected", "failed", "cancelled", "ambiguous",  # vocabulary: columns
                 "latency_ms_accepted", "cost_usd")


def _sql(template: str, *, hourly: bool) -> str:
    """``template`` for this database (PostgreSQL in production; SQLite for the demo)."""
    q = connection.ops.quote_name
    postgres = connection.vendor == "postgresql"
    if not hourly:
        bucket = "NULL"
    elif postgres:
        bucket = "date_trunc('hour', r.started_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'"
    else:
        bucket = "strftime('%%Y-%%m-%%d %%H:00:00', r.started_at)"
    return template.format(bucket=bucket, requests=q(RequestEvent._meta.db_table), attempts=q(AttemptEvent._meta.db_table),
                           json_array="jsonb_build_array" if postgres else "json_array")


def _when(at: datetime) -> Any:
    return connection.ops.adapt_datetimefield_value(at)


def _hour_floor(at: datetime) -> datetime:
    return at.replace(minute=0, second=0, microsecond=0)


def rollup_refresh(now: datetime) -> datetime:
    """Sum every closed, settled hour not rolled up yet into the rollups (once each: the
    state row is locked and moved in the same transaction). Returns the new
    ``rolled_until`` (an hour boundary, UTC)."""
    until = _hour_floor(now - SETTLE)
    with transaction.atomic():
        state, _ = RollupState.objects.select_for_update().get_or_create(
            name="reliability", defaults={"rolled_until": _hour_floor(now - KEEP)})
        start = state.rolled_until
        if start >= until:
            return start
        q = connection.ops.quote_name
        with connection.cursor() as cur:
            cur.execute(f"INSERT INTO {q(RequestHour._meta.db_table)} ({', '.join(_REQUEST_COLS)}) "  # noqa: S608
                        + _sql(_REQUESTS_SELECT, hourly=True), [_when(start), _when(until)])
            cur.execute(f"INSERT INTO {q(AttemptHour._meta.db_table)} ({', '.join(_ATTEMPT_COLS)}) "  # noqa: S608
                        + _sql(_ATTEMPTS_SELECT, hourly=True), [_when(start), _when(until)])
        state.rolled_until = until
        state.save(update_fields=["rolled_until"])
    return until


@dataclass
class Totals:
    """Summed counts of one group in one window (see the module docstring for rates)."""

    requests: int = 0
    accepted: int = 0
    failed: int = 0
    unknown: int = 0
    with_fallback: int = 0
    deadline_exhausted: int = 0
    attempts_accepted: int = 0
    cost_usd: float = 0.0
    cost_accepted_usd: float = 0.0
    latency_ms_accepted: float = 0.0
    latency_buckets: list[int] = field(default_factory=lambda: [0] * (len(LATENCY_EDGES_MS) + 1))
    attempts: int = 0
    attempts_answered: int = 0
    attempts_rejected: int = 0
    attempts_cancelled: int = 0
    attempts_ambiguous: int = 0

    def add_request_row(self, row: tuple[Any, ...]) -> None:
        (self.requests, self.accepted, self.failed, self.unknown, self.with_fallback, self.deadline_exhausted,
         self.attempts_accepted) = (a + int(b) for a, b in zip(
            (self.requests, self.accepted, self.failed, self.unknown, self.with_fallback, self.deadline_exhausted,
             self.attempts_accepted), row[3:10], strict=True))
        self.cost_usd += float(row[10])
        self.cost_accepted_usd += float(row[11])
        self.latency_ms_accepted += float(row[12])
        self.latency_buckets = [a + int(b) for a, b in zip(self.latency_buckets, row[13], strict=True)]

    def add_attempt_row(self, row: tuple[Any, ...]) -> None:
        attempts, accepted, rejected, _failed, cancelled, ambiguous = (int(v) for v in row[4:10])
        self.attempts += attempts
        self.attempts_answered += accepted + rejected
        self.attempts_rejected += rejected
        self.attempts_cancelled += cancelled
        self.attempts_ambiguous += ambiguous

    @staticmethod
    def _share(a: float, b: float) -> float | None:
        return a / b if b else None

    @property
    def fallback_rate(self) -> float | None:
        return self._share(self.with_fallback, self.requests)

    @property
    def attempts_per_completed(self) -> float | None:
        return self._share(self.attempts_accepted, self.accepted)

    @property
    def deadline_rate(self) -> float | None:
        return self._share(self.deadline_exhausted, self.requests)

    @property
    def rejection_rate(self) -> float | None:
        return self._share(self.attempts_rejected, self.attempts_answered)

    @property
    def http_success_rate(self) -> float | None:
        return self._share(self.attempts_answered, self.attempts - self.attempts_cancelled)

    @property
    def cost_per_accepted_usd(self) -> float | None:
        return self._share(self.cost_accepted_usd, self.accepted)

    @property
    def mean_latency_ms(self) -> float | None:
        return self._share(self.latency_ms_accepted, self.accepted)

    @property
    def p95_latency_ms(self) -> float | None:
        """Upper edge (ms) of the bucket holding the 95th percentile; None above the last."""
        total = sum(self.latency_buckets)
        if not total:
            return None
        seen = 0
        for edge, n in zip((*LATENCY_EDGES_MS, None), self.latency_buckets, strict=True):
            seen += n
            if seen >= 0.95 * total:
                return float(edge) if edge is not None else None
        return None


@dataclass
class RoleTotals:
    """Attempts in one role (primary or fallback) of one contract in one window."""

    attempts: int = 0
    accepted: int = 0
    rejected: int = 0
    latency_ms_accepted: float = 0.0
    cost_usd: float = 0.0

    @property
    def acceptance_rate(self) -> float | None:
        return self.accepted / self.attempts if self.attempts else None

    @property
    def mean_latency_ms(self) -> float | None:
        return self.latency_ms_accepted / self.accepted if self.accepted else None

    @property
    def cost_per_accepted_usd(self) -> float | None:
        return self.cost_usd / self.accepted if self.accepted else None


@dataclass
class Masking:
    """Both rates rose on ``route`` in ``window`` (shares 0..1, previous -> current)."""

    route: str
    window: str
    since: datetime
    http_before: float
    http_now: float
    rejection_before: float
    rejection_now: float


@dataclass
class WindowReport:
    name: str
    since: datetime
    total: Totals
    by_contract: dict[str, Totals]
    by_route: dict[str, Totals]
    by_contract_route: dict[tuple[str, str], Totals]
    roles: dict[str, dict[str, RoleTotals]]
    masking: list[Masking]


@dataclass
class _Rows:
    requests: list[tuple[Any, ...]]
    attempts: list[tuple[Any, ...]]


def _rollup_sums(since: datetime, until: datetime) -> _Rows:
    """The rollup hours of [since, until) summed per group in SQL: one row per group,
    whatever the number of hours."""
    q = connection.ops.quote_name
    if connection.vendor == "postgresql":
        bucket = "(latency_buckets->>{i})::bigint"
    else:
        bucket = "json_extract(latency_buckets, '$[{i}]')"
    buckets = ", ".join(f"COALESCE(SUM({bucket.format(i=i)}), 0)" for i in range(len(LATENCY_EDGES_MS) + 1))
    params = [_when(since), _when(until)]
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT contract, final_route, SUM(requests), SUM(accepted), SUM(failed), SUM(unknown), SUM(with_fallback), "  # noqa: S608
            f"SUM(deadline_exhausted), SUM(attempts_accepted), SUM(cost_usd), SUM(cost_accepted_usd), "
            f"SUM(latency_ms_accepted), {buckets} FROM {q(RequestHour._meta.db_table)} "
            f"WHERE hour >= %s AND hour < %s GROUP BY 1, 2", params)
        requests = [(None, *row[:12], list(row[12:])) for row in cur.fetchall()]
        cur.execute(
            f"SELECT contract, route, role, SUM(attempts), SUM(accepted), SUM(rejected), SUM(failed), SUM(cancelled), "  # noqa: S608
            f"SUM(ambiguous), SUM(latency_ms_accepted), SUM(cost_usd) FROM {q(AttemptHour._meta.db_table)} "
            f"WHERE hour >= %s AND hour < %s GROUP BY 1, 2, 3", params)
        attempts = [(None, *row) for row in cur.fetchall()]
    return _Rows(requests, attempts)


def _raw_sums(since: datetime, until: datetime) -> _Rows:
    """The events of [since, until) summed per group (the hour not rolled up yet)."""
    with connection.cursor() as cur:
        cur.execute(_sql(_REQUESTS_SELECT, hourly=False), [_when(since), _when(until)])
        requests = [(*row[:13], json.loads(row[13]) if isinstance(row[13], str) else row[13]) for row in cur.fetchall()]
        cur.execute(_sql(_ATTEMPTS_SELECT, hourly=False), [_when(since), _when(until)])
        attempts = cur.fetchall()
    return _Rows(requests, attempts)


def hourly_rows(since: datetime, until: datetime, rolled_until: datetime) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Request and attempt rows of [since, until) per hour (``_REQUEST_COLS`` and
    ``_ATTEMPT_COLS`` with ``hour`` a datetime, or a text "YYYY-MM-DD HH:00:00" on SQLite):
    the rollup rows before ``rolled_until``, the events after it grouped per hour. For the
    reliability page's time series (``observability.series``)."""
    cut = max(since, min(rolled_until, until))
    requests = [(row[0], *row[1:13], list(row[13] or []))
                for row in RequestHour.objects.filter(hour__gte=since, hour__lt=cut).values_list(*_REQUEST_COLS)]
    attempts = list(AttemptHour.objects.filter(hour__gte=since, hour__lt=cut).values_list(*_ATTEMPT_COLS))
    if cut < until:
        with connection.cursor() as cur:
            cur.execute(_sql(_REQUESTS_SELECT, hourly=True), [_when(cut), _when(until)])
            requests += [(*row[:13], json.loads(row[13]) if isinstance(row[13], str) else row[13]) for row in cur.fetchall()]
            cur.execute(_sql(_ATTEMPTS_SELECT, hourly=True), [_when(cut), _when(until)])
            attempts += cur.fetchall()
    return requests, attempts


def rolled_until_now(now: datetime) -> datetime:
    """How far the rollups go (without refreshing them)."""
    return (RollupState.objects.filter(name="reliability").values_list("rolled_until", flat=True).first()
            or _hour_floor(now - KEEP))


class _Reader:
    """Rows of a time range: rollup sums where rolled up, events after; each distinct
    range is read once per report (the 24 h and 7 d windows share their open hour)."""

    def __init__(self, rolled_until: datetime) -> None:
        self.rolled_until = rolled_until
        self._memo: dict[tuple[str, datetime, datetime], _Rows] = {}

    def _read(self, kind: str, since: datetime, until: datetime) -> _Rows:
        key = (kind, since, until)
        if key not in self._memo:
            self._memo[key] = (_rollup_sums if kind == "rollup" else _raw_sums)(since, until)
        return self._memo[key]

    def rows(self, since: datetime, until: datetime) -> _Rows:
        # A rollup row is a whole hour: a range starting inside an hour reads that hour's
        # part from the events, then whole rolled-up hours, then the events after them.
        first_hour = _hour_floor(since)
        if first_hour < since:
            first_hour += timedelta(hours=1)
        rolled_from = min(first_hour, until)
        rolled_to = max(rolled_from, min(self.rolled_until, _hour_floor(until)))
        parts = []
        if since < rolled_from:
            parts.append(self._read("raw", since, rolled_from))
        if rolled_from < rolled_to:
            parts.append(self._read("rollup", rolled_from, rolled_to))
        if rolled_to < until:
            parts.append(self._read("raw", rolled_to, until))
        return _Rows([r for p in parts for r in p.requests], [a for p in parts for a in p.attempts])


def _window_start(now: datetime, length: timedelta, rolled_until: datetime) -> datetime:
    """Windows longer than an hour start on an hour boundary (so they read whole rollup
    rows); the last hour is read from the events exactly."""
    since = now - length
    return _hour_floor(since) if length > timedelta(hours=1) and since < rolled_until else since


def _summed(rows: _Rows) -> tuple[Totals, dict[str, Totals], dict[str, Totals], dict[tuple[str, str], Totals],
                                   dict[str, dict[str, RoleTotals]]]:
    total = Totals()
    by_contract: dict[str, Totals] = defaultdict(Totals)
    by_route: dict[str, Totals] = defaultdict(Totals)
    by_pair: dict[tuple[str, str], Totals] = defaultdict(Totals)
    roles: dict[str, dict[str, RoleTotals]] = defaultdict(lambda: {"primary": RoleTotals(), "fallback": RoleTotals()})
    for row in rows.requests:
        for t in (total, by_contract[row[1]], by_route[row[2] or "(none)"], by_pair[(row[1], row[2] or "(none)")]):
            t.add_request_row(row)
    for row in rows.attempts:
        for t in (total, by_contract[row[1]], by_route[row[2]]):
            t.add_attempt_row(row)
        role = roles[row[1]][row[3]]
        role.attempts += int(row[4])
        role.accepted += int(row[5])
        role.rejected += int(row[6])
        role.latency_ms_accepted += float(row[10])
        role.cost_usd += float(row[11])
    return total, dict(by_contract), dict(by_route), dict(by_pair), dict(roles)


def masking_find(name: str, since: datetime, current: dict[str, Totals], previous: dict[str, Totals]) -> list[Masking]:
    """Routes whose HTTP success rate and validation-rejection rate both rose by at least
    ``MASKING_MIN_RISE`` from ``previous`` to ``current`` (each with at least
    ``MASKING_MIN_ANSWERS`` answers). Pure."""
    found = []
    for route, now_t in sorted(current.items()):
        before = previous.get(route)
        if before is None or now_t.attempts_answered < MASKING_MIN_ANSWERS or before.attempts_answered < MASKING_MIN_ANSWERS:
            continue
        h0, h1, r0, r1 = before.http_success_rate, now_t.http_success_rate, before.rejection_rate, now_t.rejection_rate
        if None in (h0, h1, r0, r1):
            continue
        assert h0 is not None and h1 is not None and r0 is not None and r1 is not None
        if h1 - h0 >= MASKING_MIN_RISE and r1 - r0 >= MASKING_MIN_RISE:
            found.append(Masking(route, name, since, h0, h1, r0, r1))
    return found


def reliability_report(now: datetime, *, refresh: bool = True) -> list[WindowReport]:
    """The report for each window of ``WINDOWS`` (rolls up closed hours first unless
    ``refresh`` is False)."""
    rolled_until = rollup_refresh(now) if refresh else (
        RollupState.objects.filter(name="reliability").values_list("rolled_until", flat=True).first()
        or _hour_floor(now - KEEP))
    reports = []
    reader = _Reader(rolled_until)
    for name, length in WINDOWS:
        since = _window_start(now, length, rolled_until)
        total, by_contract, by_route, by_pair, roles = _summed(reader.rows(since, now))
        before_since = _window_start(since, length, rolled_until) if length > timedelta(hours=1) else since - length
        _, _, before_route, _, _ = _summed(reader.rows(before_since, since))
        reports.append(WindowReport(name, since, total, by_contract, by_route, by_pair, roles,
                                    masking_find(name, since, by_route, before_route)))
    return reports


def reliability_totals(now: datetime, length: timedelta) -> Totals:
    """All traffic's ``Totals`` over the ``length`` before ``now`` (the admin's home page:
    one window, no rollup refresh). Closed hours come from the rollups, the rest from the
    indexed events, as in ``reliability_report``."""
    rolled_until = (RollupState.objects.filter(name="reliability").values_list("rolled_until", flat=True).first()
                    or _hour_floor(now - KEEP))
    since = _window_start(now, length, rolled_until)
    total, _, _, _, _ = _summed(_Reader(rolled_until).rows(since, now))
    return total


def masking_check(now: datetime) -> int:
    """Look for masking in every window and notify admins of each new finding once, even
    when nobody opens the reliability page (the beat task ``masking_check_task``).
    Returns the number of notifications created."""
    reports = reliability_report(now)
    return masking_notify([m for r in reports for m in r.masking], now)


def masking_notify(findings: Iterable[Masking], now: datetime) -> int:
    """Notify admins of each finding once: one notification per route and window until
    that window has passed. Returns the number of notifications created."""
    created = 0
    lengths = dict(WINDOWS)
    for f in findings:
        title = f"{f.route}: HTTP success and validation rejections rising together ({f.window})"
        recent = now - lengths[f.window]
        if Notification.objects.filter(kind=NOTIFY_KIND, title=title, created_at__gte=recent).exists():
            continue
        body = (f"On route {f.route}, over the last {f.window} (since {f.since:%Y-%m-%d %H:%M} UTC), the HTTP success "
                f"rate rose from {percent(f.http_before)} to {percent(f.http_now)} while the validation-rejection rate rose from "
                f"{percent(f.rejection_before)} to {percent(f.rejection_now)}: transport availability is masking contract "
                "failures. See Observability > Reliability in the admin.")
        notification_create(NOTIFY_KIND, title, body)
        created += 1
    return created


def reliability_page(now: datetime | None = None) -> dict[str, Any]:
    """What the reliability page shows: the window reports, and the masking findings
    (admins notified once each)."""
    now = now or timezone.now()
    reports = reliability_report(now)
    findings = [m for r in reports for m in r.masking]
    masking_notify(findings, now)
    return {"reports": reports, "findings": findings, "now": now}
