"""The chain of attempts behind one request: ``AttemptChain.execute``.

``routing.gateway.door.Gateway.complete`` builds the chain for a request and runs it:

1. check the request ourselves (a malformed request fails fast with zero upstream
   requests, field case 4): ``routing.request_check``, before the chain is built;
2. filter routes by capability and rank them (``selection.py``), skipping routes whose
   circuit breaker is open or whose half-open trial slots are taken (``breaker.py``);
3. before each attempt: remaining = deadline - now, required = connect + generation +
   validation allowances; no attempt when remaining < required; per-attempt limits cut
   to fit (``deadline.py``);
4. classify each failure (``failures.py``) and decide: an early connect failure earns one
   same-route retry after a full-jitter wait (or the provider's Retry-After when it fits);
   transient, incompatible and invalid answers fall back to the next capable route;
   permanent client/account errors stop; an ambiguous failure stops for a workload with
   side effects (its outcome is unknown and it is not replayed, field case 7);
5. validate every answer before accepting it, the primary's too (``validation.py``);
6. one attempt budget for the whole chain, hedges included (issue point 5);
7. hand one ``GatewayResult`` (the request and every attempt) to the event sink: the
   gateway does once the chain returns, ``RequestRun.settle`` when a committed stream ends.

Steps 2-6 live here; the run's state and each single attempt (send, hold to the commit
point, classify, validate, record) are ``routing.gateway.attempts.RequestRun``'s, which the
chain holds (``AttemptChain.run``). Pure of Django.
"""

from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, Future, wait

from openrouter.transport import AttemptHandle
from routing.backoff import wait_before_retry_s
from routing.breaker import Permit
from routing.deadline import AttemptTimes
from routing.failures import Failure, FailureClass
from routing.gateway.attempts import Attempt, RequestRun
from routing.gateway.result import Committed, GatewayResult
from routing.selection import RouteProfile, no_route_message, suppressed_message
from routing.terms import Blame, CutReason, ErrorCode, RequestOutcome


class AttemptChain:
    """One request's chain of attempts: primary, same-route retry, fallbacks, hedges,
    over ``run`` (the request's state and its single attempts: ``RequestRun``, built
    whole by the gateway's door before the chain starts)."""

    def __init__(self, run: RequestRun) -> None:
        self.run = run

    # ------------------------------------------------------------------ the chain

    def execute(self) -> GatewayResult:
        """Run the chain: the request's ``GatewayResult`` ("accepted", "failed", "unknown",
        or "streaming" with ``committed`` set). Emits nothing: the caller does."""
        c = self.run.contract
        ranked = self.run.eligible()
        if not ranked:
            return self.run.finish(RequestOutcome.FAILED, code=ErrorCode.NO_ELIGIBLE_ROUTE, cls=FailureClass.INCOMPATIBLE,
                               message=no_route_message(c.key, self.run.rejected, self.run.needs))
        route, permit, skipped = self.run.claim(ranked)
        if route is None or permit is None:
            return self.all_suppressed(skipped)
        reason = "primary"
        same_route_retries = 0
        fallbacks = 0
        last: Failure | None = None
        while True:
            if len(self.run.tries) >= c.attempt_budget:
                return self.fail_after(last, ErrorCode.ATTEMPT_BUDGET_EXHAUSTED,
                                       f"attempt budget of {c.attempt_budget} used up")
            times = self.run.deadline.attempt_times(c.allowances, attempt_cap_s=c.attempt_timeout_s, first_token_s=c.first_token_s)
            if times is None:
                return self.run.finish(
                    RequestOutcome.FAILED, code=ErrorCode.DEADLINE_EXHAUSTED, cls=FailureClass.TRANSIENT,
                    message=(f"{self.run.deadline.remaining_s():.2f} s left of the {c.deadline_s:g} s deadline, "
                             f"below the {c.allowances.required_s:g} s an attempt requires"),
                )
            # A streamed attempt is not hedged: two streams cannot both reach the client, and
            # a slow start already falls back invisibly before the commit point.
            if c.hedge and not self.run.live and fallbacks < c.max_fallbacks and c.attempt_budget - len(self.run.tries) >= 2:
                winner, failure, hedged = self.hedged(route, permit, reason, times)
                fallbacks += hedged
            else:
                winner, failure = self.run.single(route, permit, reason, times)
            if winner is not None:
                if winner.live is not None:
                    streaming = self.run.finish(RequestOutcome.STREAMING, route=winner.route)
                    streaming.committed = self.committed(winner)
                    return streaming
                return self.run.finish(RequestOutcome.ACCEPTED, accepted=winner, route=winner.route)
            assert failure is not None
            last = failure
            if failure.cls == FailureClass.PERMANENT and failure.blame != Blame.ROUTE:
                return self.run.finish(RequestOutcome.FAILED, code=ErrorCode.PERMANENT_FAILURE, cls=failure.cls,
                                   message=f"{failure.reason}: {failure.message}")
            if failure.cls == FailureClass.AMBIGUOUS and c.side_effects:
                # Field case 7: it may have happened; replaying could do it twice.
                return self.run.finish(RequestOutcome.UNKNOWN, code=ErrorCode.OUTCOME_UNKNOWN, cls=failure.cls,
                                   message=f"{failure.message}; the workload has side effects, so it is not replayed")
            if failure.early_connect and same_route_retries < 1 and route.name not in self._hedged_routes():
                wait = wait_before_retry_s(
                    same_route_retries, base_s=c.backoff_base_s, cap_s=c.backoff_cap_s,
                    retry_after_s=failure.retry_after_s, remaining_s=self.run.deadline.remaining_s(),
                    required_s=c.allowances.required_s, rng=self.run.gw.rng,
                )
                if wait is not None and len(self.run.tries) < c.attempt_budget:
                    self.run.gw.sleep(wait)
                    same_route_retries += 1
                    again = self.run.gw.breakers.acquire(route.name, self.run.now_ms()) if self.run.gw.breakers else permit
                    if again is not None and again.allowed:
                        permit = again
                        reason = f"same-route retry after {failure.reason} (waited {wait * 1000:.0f} ms)"
                        continue
            if len(self.run.tries) >= c.attempt_budget:
                return self.fail_after(failure, ErrorCode.ATTEMPT_BUDGET_EXHAUSTED,
                                       f"attempt budget of {c.attempt_budget} used up; last: {failure.cls} ({failure.reason})")
            if fallbacks >= c.max_fallbacks:
                return self.fail_after(failure, ErrorCode.FALLBACKS_EXHAUSTED,
                                       f"{failure.cls} ({failure.reason}) and no fallback left ({c.max_fallbacks} allowed)")
            previous = route
            route, permit, skipped = self.run.claim(self.run.eligible())
            if route is None or permit is None:
                if skipped:
                    return self.all_suppressed(skipped, failure)
                return self.fail_after(failure, ErrorCode.FALLBACKS_EXHAUSTED,
                                       f"{failure.cls} ({failure.reason}) on {previous.name} and no other capable route")
            fallbacks += 1
            reason = f"fallback after {failure.cls} ({failure.reason}) on {previous.name}"

    def _hedged_routes(self) -> set[str]:
        return {t.record.route for t in self.run.tries if t.record.hedge}

    def fail_after(self, failure: Failure | None, code: ErrorCode, message: str) -> GatewayResult:
        cls = failure.cls if failure else FailureClass.TRANSIENT
        return self.run.finish(RequestOutcome.FAILED, code=code, cls=cls, message=message)

    def all_suppressed(self, expiries: list[int], failure: Failure | None = None) -> GatewayResult:
        wait_s = max(0.0, (min(expiries) - self.run.now_ms()) / 1000.0) if expiries else None
        return self.run.finish(
            RequestOutcome.FAILED, code=ErrorCode.ALL_ROUTES_SUPPRESSED, cls=failure.cls if failure else FailureClass.TRANSIENT,
            message=suppressed_message(self.run.rejected, self.run.suppressed, self.run.tried),
            retry_after_s=wait_s,
        )

    def committed(self, t: Attempt) -> Committed:
        """The rest of a stream past its commit point; ``settle`` finishes ``t`` when it ends."""
        assert t.route is not None and t.live is not None and t.reader is not None

        def settle(client_gone: bool, sent: int) -> GatewayResult:
            return self.run.settle(t, client_gone=client_gone, sent=sent)

        return Committed(operation_id=self.run.op, route=t.route, attempts=len(self.run.tries),
                         live=t.live, reader=t.reader, settle=settle)

    # ------------------------------------------------------------------ hedging

    def hedged(self, route: RouteProfile, permit: Permit, reason: str, times: AttemptTimes) -> tuple[Attempt | None, Failure | None, int]:
        """Issue point 10: start ``route``; if no answer within ``hedge_delay_s``, start the
        next capable route too; the first accepted answer wins, the other is cancelled
        (its cost still counted). Returns (winner, last failure, hedges launched)."""
        c = self.run.contract
        pool = self.run.gw.pool()
        handles: dict[Future[Attempt], AttemptHandle] = {}
        first_handle = AttemptHandle()
        first = pool.submit(self.run.attempt, route, permit, reason, times, hedge=False, handle=first_handle)
        handles[first] = first_handle
        done, _ = wait([first], timeout=c.hedge_delay_s)
        launched = 0
        if not done:
            second_times = self.run.deadline.attempt_times(c.allowances, attempt_cap_s=c.attempt_timeout_s, first_token_s=c.first_token_s)
            other, other_permit, _ = self.run.claim(self.run.eligible())
            if other is not None and other_permit is not None and second_times is not None:
                h = AttemptHandle()
                fut = pool.submit(self.run.attempt, other, other_permit,
                                  f"hedge after {c.hedge_delay_s:g} s without an answer from {route.name}",
                                  second_times, hedge=True, handle=h)
                handles[fut] = h
                launched = 1
        pending: set[Future[Attempt]] = set(handles)
        last: Failure | None = None
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                t = fut.result()
                if t.failure is None:
                    for other_fut in pending:
                        handles[other_fut].cut(CutReason.CANCELLED)
                    # A loser with a stream ends at once (its socket is shut down); one
                    # still waiting for headers has no socket yet: do not wait for it.
                    _, stuck = wait(pending, timeout=0.2)
                    if stuck:
                        self.run.freeze_unfinished()
                    return t, None, launched
                last = t.failure
        return None, last, launched
