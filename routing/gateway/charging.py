"""Whose an attempt's failure is: the route's, charged to its breaker, or the request's
own, which opens no breaker (``routing.attribution``, routing/README.md, "Attribution").

``RouteCharges`` keeps one request's side of it: the breaker record's detail of a
failure, the decision whether the request's own parameters may have caused it, and the
failures kept back until a peer route passes the same request. ``RequestRun`` builds one
per request. Pure of Django.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from routing.attribution import Deferred, RequestParams, check_name, parameterised_by
from routing.breaker import BreakerStore, FailureDetail
from routing.failures import Failure
from routing.gateway.result import AttemptRecord
from routing.stream import Answer


class RouteCharges:
    """One request's breaker charges. ``breakers``: the routes' breaker store (None: no
    breakers); ``now_ms``: the clock (epoch ms); ``op``: the request's operation id;
    ``params``: its parameters as attribution reads them; ``lock``: the run's lock (hedged
    attempts settle from several threads)."""

    # How far back a route's record must show the same check failing for a request's
    # parameterised failure to count against it without a peer's pass (ms).
    RECORD_HORIZON_MS = 600_000

    def __init__(self, breakers: BreakerStore | None, now_ms: Callable[[], int], op: str, params: RequestParams,
                 lock: threading.Lock) -> None:
        self.breakers = breakers
        self.now_ms = now_ms
        self.op = op
        self.params = params
        self.lock = lock
        self.deferred = Deferred()

    def detail(self, failure: Failure, record: AttemptRecord) -> FailureDetail:
        """The failure as the route's breaker record keeps it (class, check or status,
        operation id, time)."""
        return FailureDetail(failure.cls.value, check_name(failure, record.checks), failure.http_status or record.http_status,
                             self.op, self.now_ms(), failure.message[:200])

    def request_may_cause(self, route: str, failure: Failure, record: AttemptRecord, answer: Answer | None,
                          detail: FailureDetail, *, charged: bool) -> bool:
        """True when this request's own parameters could explain ``failure`` (of the
        attempt on ``route`` recorded in ``record``, its ``answer`` if any) and the route's
        record does not already show the same check failing: the attempt is then the
        request's (``request_caused``, its causes noted on the record). A failure that
        would be ``charged`` is kept back and charged only if a peer passes the same
        request (``settle``); one already neutral (a truncation under the caller's
        max_tokens, a client error) stays so."""
        causes = parameterised_by(failure, self.params, checks=record.checks,
                                  finish_reason=answer.finish_reason if answer is not None else None,
                                  has_tool_calls=bool(answer is not None and answer.tool_calls))
        if not causes:
            return False
        if charged and self.breakers is not None and self.breakers.shows(
                route, detail.check, since_ms=self.now_ms() - self.RECORD_HORIZON_MS):
            return False
        if charged:
            with self.lock:
                self.deferred.add(route, failure.cls.value, {"detail": detail, "record": record})
        record.request_caused = True
        record.request_causes = causes
        record.validation = "; ".join(filter(None, (
            record.validation, f"attribution: the request's ({', '.join(causes)})"
                               + (" unless another route passes it" if charged else ""))))
        return True

    def settle(self, *, peer_passed: bool) -> None:
        """Charge the kept-back failures to their routes when a peer passed the same
        request; otherwise they stay neutral (already recorded so)."""
        with self.lock:
            due = self.deferred.settle(peer_passed)
        if self.breakers is None:
            return
        for route, cls, kept in due:
            opened = self.breakers.record(route, self.now_ms(), cls, detail=kept["detail"])
            record: AttemptRecord = kept["record"]
            record.request_caused = False
            if opened and not record.frozen:
                record.breaker_opened = opened
