"""What the gateway hands back: one request's result, the record of each attempt, and
for a stream past its commit point the rest of the answer still flowing.

``GatewayResult`` (with its ``AttemptRecord``s) is what the event sink receives and what
the API renders; ``Committed`` is the tail of a streamed answer that passed its commit
point (``GatewayResult.committed``). Pure of Django.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from routing.gateway.upstream import LiveAttempt
from routing.selection import RouteProfile
from routing.stream import Answer
from routing.terms import AttemptStatus, CutReason, RequestOutcome


class EventSink(Protocol):
    """Receives every finished request's ``GatewayResult`` (the request and attempt events)."""

    def emit(self, result: GatewayResult) -> None: ...


@dataclass
class AttemptRecord:
    """One attempt, as stored in the attempt event (issue point 11).

    ``status``: an ``AttemptStatus`` (``rejected``: the answer failed validation or a
    check; ``cancelled``: a hedge loser or a client gone). ``fallback_reason`` says why this attempt happened.
    ``breaker_state`` is the route's breaker state when the attempt was allowed;
    ``breaker_opened`` the failure class whose breaker this attempt opened.
    Costs in USD (reported by the upstream, else estimated from list prices).
    """

    attempt_id: str
    index: int
    route: str
    fallback_reason: str
    breaker_state: str
    started_at: float
    status: AttemptStatus = AttemptStatus.FAILED
    latency_ms: float = 0.0
    ttft_ms: float | None = None
    http_status: int | None = None
    failure_class: str = ""
    failure_reason: str = ""
    message: str = ""
    validation: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    hedge: bool = False
    breaker_opened: str = ""
    # Pre-commit (``prefix.<check>``) and post-stream (``post.<check>``) verdicts of a
    # streamed attempt: the canary's judges on live traffic.
    checks: dict[str, str] = field(default_factory=dict)
    # Set when the request finished without waiting for this (cancelled) attempt: its
    # thread must not change a record that may already be written as an event.
    frozen: bool = False
    # The request's own parameters explain this attempt's failure and no peer passed the
    # same request (``routing.attribution``): neutral for the route's breaker and for the
    # endpoint's live scorecard.
    request_caused: bool = False
    # The request parameters that explain this attempt's failure (``parameterised_by``:
    # "stop", "provider.quantizations" ...), kept whether or not a peer later passed.
    request_causes: tuple[str, ...] = ()
    # A whole reply waiting for its evidence-only checks (its stage, its text): judged by
    # the event writer (``routing.gateway.commit.judge_evidence``), then dropped; never stored.
    evidence_due: tuple[str, str] | None = None

    def as_dict(self) -> dict[str, Any]:
        """The public shape listed in error bodies."""
        return {
            "attempt_id": self.attempt_id, "route": self.route, "status": self.status,
            "failure_class": self.failure_class or None, "reason": self.failure_reason or None,
            "message": self.message or None, "http_status": self.http_status,
            "latency_ms": round(self.latency_ms, 1), "fallback_reason": self.fallback_reason,
            "validation": self.validation or None, "hedge": self.hedge,
            "checks": self.checks or None,
        }


@dataclass
class GatewayResult:
    """The outcome of one request.

    ``outcome``: a ``RequestOutcome`` (``unknown``: an ambiguous failure of a workload
    with side effects: it may have happened; not replayed). ``error_code`` when not
    accepted: an ``ErrorCode`` of a run (``deadline_exhausted``,
    ``attempt_budget_exhausted``, ``all_routes_suppressed``, ``no_eligible_route``,
    ``permanent_failure``, ``fallbacks_exhausted``, ``outcome_unknown``...). ``retry_after_s`` is set when every
    route is suppressed (the earliest time one comes back).
    """

    operation_id: str
    contract: str
    outcome: RequestOutcome
    attempts: list[AttemptRecord]
    started_at: float
    latency_ms: float
    answer: Answer | None = None
    value: Any = None
    route: RouteProfile | None = None
    failure_class: str = ""
    error_code: str = ""
    message: str = ""
    retry_after_s: float | None = None
    rejected_routes: dict[str, str] = field(default_factory=dict)
    request_text: str = ""
    # The language the reply had to be in (ISO 639-1), or None: the live scorecard
    # records the language a failure happened in.
    language: str | None = None
    # ``request_unservable``: where the caller changes what made it so (``{"field" or
    # "header", "parameter", "parameters", "check"}``, ``routing.attribution.request_fault``),
    # added to the error body.
    fault: dict[str, Any] | None = None
    # Set while a streamed answer passed its commit point and is still flowing (outcome
    # "streaming"): the final result comes from ``Committed.result`` when it ends.
    committed: Committed | None = None

    @property
    def ok(self) -> bool:
        return self.outcome == RequestOutcome.ACCEPTED

    @property
    def cost_usd(self) -> float:
        return sum(a.cost_usd for a in self.attempts)


class Committed:
    """A streamed answer past its commit point (``GatewayResult.committed``).

    ``deltas()`` yields the content deltas as the upstream sent them (``{"content": ...}``
    and/or ``{"tool_calls": [...]}``): the held ones first, then each as it arrives;
    ``batches()`` yields the same deltas grouped by the upstream read that carried them. When
    the stream ends, ``result`` is the request's final ``GatewayResult`` (accepted,
    ``failed_after_commit``/``rejected_after_commit``, or ``cancelled``), already emitted
    to the event sink. Closing the generator early (the client left) cuts the upstream
    request and records the request as cancelled.
    """

    def __init__(self, *, operation_id: str, route: RouteProfile, attempts: int, live: LiveAttempt,
                 reader: Iterator[None], settle: Callable[[bool, int], GatewayResult]) -> None:
        """``attempts``: how many the request made (it makes none after its commit point);
        ``live`` and ``reader``: the open stream and its reader, positioned at the commit
        point; ``settle(client_gone, sent)`` finishes the attempt and the request."""
        self.operation_id = operation_id
        self.route = route
        self.attempts = attempts
        self._live = live
        self._reader = reader
        self._settle = settle
        self.result: GatewayResult | None = None
        self.sent = 0

    def batches(self) -> Iterator[list[dict[str, Any]]]:
        """The content deltas in the batches they became available: the held ones
        together, then those decoded from each upstream read (one read often carries
        several events), each batch as soon as its read is folded. Never empty."""
        live, reader = self._live, self._reader
        pending = live.stream.events
        assert pending is not None
        try:
            finished = False
            # Events the reader has decoded go out before the next read, and once more
            # after the last one (the end of the body can carry the final events).
            while True:
                if pending:
                    batch = list(pending)
                    pending.clear()
                    self.sent += len(batch)
                    yield batch
                if finished:
                    break
                finished = next(reader, _END) is _END
        except GeneratorExit:
            self.cancel()
            raise
        finally:
            live.close()
        if self.result is None:
            self.result = self._settle(False, self.sent)

    def deltas(self) -> Iterator[dict[str, Any]]:
        """The content deltas one by one (``batches`` flattened)."""
        for batch in self.batches():
            yield from batch

    def cancel(self) -> None:
        """The client is gone: cut the upstream request, record the request cancelled."""
        if self.result is not None:
            return
        self._live.cut(CutReason.CLIENT_GONE)
        self._live.close()
        self.result = self._settle(True, self.sent)


_END = object()
