"""Request and attempt events made up for tests and benches (never used by the app).

``request_add`` stores one request with its attempts as the gateway's event writer would;
``events_bulk_insert`` fills the tables with ``n`` requests in one SQL statement per table
(``generate_series``), for the reliability bench's million events.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db import connection

from routing.failures import FailureClass
from routing.models import AttemptEvent, RequestEvent
from routing.terms import AttemptStatus, BreakerState, RequestOutcome

# The failure class a fixture attempt of each failing status carries.
_FIXTURE_CLASS: dict[str, str] = {AttemptStatus.REJECTED: FailureClass.INVALID_RESPONSE, AttemptStatus.FAILED: FailureClass.TRANSIENT}


def request_add(at: datetime, *, contract: str, attempts: Sequence[tuple[str, str]], outcome: str = RequestOutcome.ACCEPTED,
                error_code: str = "", latency_ms: float = 800.0, cost_usd: float = 0.001) -> RequestEvent:
    """One request at ``at`` with ``attempts`` as (route, status) in order; the final
    route is the accepted attempt's. Each attempt costs ``cost_usd``."""
    op = uuid.uuid4().hex
    final = next((r for r, s in attempts if s == AttemptStatus.ACCEPTED), "")
    req = RequestEvent.objects.create(
        operation_id=op, contract=contract, outcome=outcome, error_code=error_code, final_route=final,
        attempt_count=len(attempts), latency_ms=latency_ms, cost_usd=cost_usd * len(attempts), started_at=at,
        failure_class=FailureClass.TRANSIENT if error_code else "",
    )
    primary = attempts[0][0] if attempts else ""
    for i, (route, status) in enumerate(attempts):
        reason = "primary" if i == 0 else (f"same-route retry after connect on {route}" if route == primary
                                           else f"fallback after invalid_response (validation) on {primary}")
        AttemptEvent.objects.create(
            request=req, attempt_id=uuid.uuid4().hex, index=i, route=route, status=status,
            failure_class=_FIXTURE_CLASS.get(status, ""),
            http_status=200 if status in (AttemptStatus.ACCEPTED, AttemptStatus.REJECTED) else 502, latency_ms=latency_ms / max(1, len(attempts)),
            cost_usd=cost_usd, fallback_reason=reason, validation="passed" if status == AttemptStatus.ACCEPTED else "output $: bad",
            breaker_state=BreakerState.CLOSED, started_at=at + timedelta(milliseconds=i),
        )
    return req


def events_bulk_insert(n: int, *, until: datetime, span: timedelta, contracts: int = 5, routes: int = 10) -> None:
    """Insert ``n`` requests spread evenly over ``span`` before ``until``: every tenth
    needs a fallback after a rejected answer, one in fifty runs out of its deadline."""
    q = connection.ops.quote_name
    req, att = q(RequestEvent._meta.db_table), q(AttemptEvent._meta.db_table)
    params: dict[str, Any] = {"n": n, "until": until, "span_s": span.total_seconds(), "contracts": contracts, "routes": routes}
    with connection.cursor() as cur:
        cur.execute(f"""
            INSERT INTO {req} (operation_id, contract, outcome, failure_class, error_code, message, final_route,
                               attempt_count, latency_ms, cost_usd, prompt, output, started_at)
            SELECT 'bench-' || g, 'contract-' || (g %% %(contracts)s) || '@1',
                   CASE WHEN g %% 50 = 0 THEN 'failed' ELSE 'accepted' END,
                   CASE WHEN g %% 50 = 0 THEN 'transient' ELSE '' END,
                   CASE WHEN g %% 50 = 0 THEN 'deadline_exhausted' ELSE '' END, '',
                   CASE WHEN g %% 50 = 0 THEN '' ELSE 'route-' || ((g + (g %% 10 = 0)::int) %% %(routes)s) END,
                   CASE WHEN g %% 10 = 0 THEN 2 ELSE 1 END, 300 + (g %% 2000), 0.0001, '', '',
                   %(until)s::timestamptz - make_interval(secs => (g::float8 / %(n)s) * %(span_s)s)
            FROM generate_series(1, %(n)s) AS g""", params)  # noqa: S608 - our own table names
        cur.execute(f"""
            INSERT INTO {att} (operation_id, attempt_id, index, route, status, failure_class, failure_reason, message,
                               http_status, latency_ms, ttft_ms, tokens_in, tokens_out, cost_usd, fallback_reason,
                               validation, breaker_state, breaker_opened, hedge, started_at)
            SELECT 'bench-' || g, 'bench-' || g || '-' || i, i, 'route-' || ((g + i) %% %(routes)s),
                   CASE WHEN g %% 10 = 0 AND i = 0 THEN 'rejected' WHEN g %% 50 = 0 THEN 'failed' ELSE 'accepted' END,
                   '', '', '', 200, 300, 100, 50, 20, 0.00005,
                   CASE WHEN i = 0 THEN 'primary' ELSE 'fallback after invalid_response (validation)' END,
                   'passed', 'closed', '', false,
                   %(until)s::timestamptz - make_interval(secs => (g::float8 / %(n)s) * %(span_s)s)
            FROM generate_series(1, %(n)s) AS g CROSS JOIN LATERAL generate_series(0, CASE WHEN g %% 10 = 0 THEN 1 ELSE 0 END) AS i
            """, params)  # noqa: S608 - our own table names
