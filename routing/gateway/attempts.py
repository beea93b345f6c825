"""One request's run: its state, and each attempt run, classified, validated and recorded.

``RequestRun`` holds what the chain (``routing.gateway.chain``) reads and writes: the
routes tried and rejected, every attempt's ``AttemptRecord``, the budget spent. Its
``attempt`` makes one upstream request; a streamed one is held to its commit point
(``hold``) and, once committed, finished by ``settle`` when the stream ends. Thread-safe
where hedges need it (the run's lock). Pure of Django.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from openrouter.transport import AttemptHandle
from routing.attribution import PROVIDER_CHECK, RequestParams, failed_checks, request_fault
from routing.breaker import BreakerStore, FailureDetail, Permit
from routing.contracts import Contract
from routing.deadline import AttemptTimes, Deadline
from routing.failures import (
    Failure,
    FailureClass,
    Signal,
    classify,
    empty_reply_failure,
    validation_failure,
)
from routing.gateway.charging import RouteCharges
from routing.gateway.commit import (
    Checks,
    answer_checks,
    commit_now,
    hold_over,
    prefix_checks,
    reply_checks,
)
from routing.gateway.live_feed import demote
from routing.gateway.result import AttemptRecord, EventSink, GatewayResult
from routing.gateway.upstream import AttemptOutcome, LiveAttempt, Upstream
from routing.provider_prefs import constraints_of
from routing.request_check import caused_by_request
from routing.request_shape import attempt_cost, new_id, route_body
from routing.selection import RequestNeeds, RouteProfile, candidates, fitting, passed_over
from routing.stream import Answer
from routing.terms import (
    REQUEST_LANGUAGE_SOURCES,
    AttemptStatus,
    BreakerOutcome,
    BreakerState,
    CheckStage,
    CutReason,
    ErrorCode,
    FailureReason,
    LanguageSource,
    OutputMode,
    RequestOutcome,
    SignalKind,
)
from routing.validation import ValidationResult, validate_answer


class GatewayParts(Protocol):
    """What a run uses of its gateway (``routing.gateway.door.Gateway``): the injected parts."""

    routes: Callable[[], Sequence[RouteProfile]]
    upstream: Upstream
    breakers: BreakerStore | None
    clock: Callable[[], float]
    wall: Callable[[], float]
    sleep: Callable[[float], None]
    rng: random.Random
    ignored: Callable[[str], frozenset[str]] | None
    sink: EventSink | None
    min_structured_honoured: float

    def pool(self) -> ThreadPoolExecutor: ...

    def ignored_for(self, model_id: str) -> frozenset[str]: ...

    def demoted_for(self, model_id: str) -> frozenset[str]: ...


@dataclass
class Attempt:
    """An attempt's full result inside the gateway."""

    record: AttemptRecord
    failure: Failure | None
    answer: Answer | None = None
    validation: ValidationResult | None = None
    route: RouteProfile | None = None  # the profile the attempt used
    # A streamed attempt past its commit point: the open stream, its reader, its permit.
    live: LiveAttempt | None = None
    reader: Iterator[None] | None = None
    permit: Permit | None = None


class RequestRun:
    """The state of one request's chain of attempts, and its attempts (see the module
    docstring), built whole from the request: ``model`` the one the caller named (or
    None), ``live`` whether it streams to a prefix commit point, ``language`` (ISO 639-1 or
    None) and where it came from, ``request_text`` the canonical messages, the caller's
    own ``max_tokens`` and ``body`` (its parameters, for attribution)."""

    def __init__(
        self,
        gw: GatewayParts,
        contract: Contract,
        deadline: Deadline,
        needs: RequestNeeds,
        base: dict[str, Any],
        client_provider: Any,
        op: str,
        started_wall: float,
        *,
        model: str | None,
        live: bool,
        language: str | None,
        language_source: LanguageSource,
        request_text: str,
        client_max_tokens: int | None,
        body: dict[str, Any],
    ) -> None:
        self.gw = gw
        self.contract = contract
        self.deadline = deadline
        self.needs = needs
        self.base = base
        self.client_provider = client_provider
        self.op = op
        self.started_wall = started_wall
        self.tries: list[Attempt] = []
        self.tried: set[str] = set()
        self.rejected: dict[str, str] = {}
        self.suppressed: set[str] = set()  # passed over for their breakers
        self.lock = threading.Lock()
        # A streamed request held to a prefix commit point (``hold``).
        self.live = live
        self.model = model
        self.language = language
        self.language_source = language_source
        self.request_text = request_text
        self.client_max_tokens = client_max_tokens
        # The request's own parameters (``routing.attribution``).
        self.body = body
        # The expected language is the request's when its header or its conversation named
        # it (``routing.conversation_language``), not the contract.
        request_language = bool(language) and (language_source in REQUEST_LANGUAGE_SOURCES
                                               or language != contract.expected_language)
        self.charges = RouteCharges(gw.breakers, self.now_ms, op, RequestParams.of(body, request_language=request_language),
                                    self.lock)
        # The client's provider preferences the gateway checks itself (checked at the
        # door), and the routes they ruled out: route name -> the field.
        self.constraints = constraints_of(client_provider if isinstance(client_provider, dict) else None)
        self.misfits: dict[str, str] = {}

    # ------------------------------------------------------------------ helpers

    def now_ms(self) -> int:
        return int(self.gw.wall() * 1000)

    def spent_usd(self) -> float:
        return sum(t.record.cost_usd for t in self.tries)

    def finish(self, outcome: RequestOutcome, *, code: ErrorCode | None = None, cls: str = "", message: str = "",
               accepted: Attempt | None = None, retry_after_s: float | None = None,
               route: RouteProfile | None = None) -> GatewayResult:
        fault: dict[str, Any] | None = None
        if outcome != RequestOutcome.STREAMING:
            self.charges.settle(peer_passed=outcome == RequestOutcome.ACCEPTED)
        if outcome == RequestOutcome.FAILED and code in self.UNSERVABLE_FROM:
            fault = self.request_fault(code)
            if fault is not None:
                where = fault.get("field") or fault.get("header")
                message = (f"the request cannot be served as asked: {where} ({fault['check']}); "
                           f"change it and send again. {message}")
                code, cls = ErrorCode.REQUEST_UNSERVABLE, cls or FailureClass.INVALID_RESPONSE
        if self.misfits and code != ErrorCode.NO_ELIGIBLE_ROUTE:  # recorded even when another route served
            message = passed_over(message, {name: self.rejected[name] for name in self.misfits})
        return GatewayResult(
            operation_id=self.op,
            contract=self.contract.key,
            outcome=outcome,
            attempts=[t.record for t in self.tries],
            started_at=self.started_wall,
            latency_ms=self.deadline.elapsed_s() * 1000.0,
            answer=accepted.answer if accepted else None,
            value=accepted.validation.value if accepted and accepted.validation else None,
            route=route,
            failure_class=cls,
            error_code=code or "",
            message=message,
            retry_after_s=retry_after_s,
            rejected_routes=dict(self.rejected),
            language=self.language,
            fault=fault,
        )

    # The failures a request's own parameters can turn into ``request_unservable``: not a
    # deadline, a suppression or an unknown outcome, which say something of the service.
    # A permanent failure blamed on the client keeps its 400 (the upstream called the
    # request malformed).
    UNSERVABLE_FROM = frozenset({ErrorCode.ATTEMPT_BUDGET_EXHAUSTED, ErrorCode.FALLBACKS_EXHAUSTED,
                                 ErrorCode.NO_ELIGIBLE_ROUTE})

    def request_fault(self, code: ErrorCode) -> dict[str, Any] | None:
        """The parameter to change when the request itself made it fail
        (``routing.attribution.request_fault``): every attempt that ran failed for the
        request's sake, or, before any attempt, its provider preferences ruled out every
        route the contract allows. None otherwise."""
        ran = [t for t in self.tries if t.record.status != AttemptStatus.CANCELLED]
        if not ran:
            if code != ErrorCode.NO_ELIGIBLE_ROUTE or not self.misfits:
                return None
            field = next(iter(self.misfits.values()))
            return {"field": field, "parameter": field, "parameters": sorted(set(self.misfits.values())),
                    "check": PROVIDER_CHECK}
        # A failure whose route's record already showed the same check was charged: the
        # route's, so it keeps the request from being only its own.
        return request_fault([t.record.request_causes if t.record.request_caused else () for t in ran],
                             [(failed_checks(t.record.checks) or [t.record.failure_reason])[0] for t in ran],
                             self.body, self.language_source)

    def eligible(self) -> list[RouteProfile]:
        """Capable routes not tried yet, best first (capabilities re-checked against the
        budget left: an expensive fallback is dropped once the chain has spent money)."""
        budget = None if self.contract.max_cost_usd is None else self.contract.max_cost_usd - self.spent_usd()
        routes = [r for r in self.gw.routes() if r.name not in self.tried
                  and (self.model is None or r.model_id == self.model)]
        ignored: frozenset[str] = frozenset()
        models = {r.model_id for r in routes}
        if self.gw.ignored is not None:
            ignored = frozenset().union(*(self.gw.ignored_for(m) for m in models)) if models else frozenset()
        ranked, rejected = candidates(
            routes, self.contract, self.needs, budget_left_usd=budget, ignored=ignored,
            min_structured_honoured=self.gw.min_structured_honoured,
        )
        self.rejected.update(rejected)
        if self.constraints.any:
            ranked, misfits = fitting(ranked, self.constraints)
            self.misfits.update({name: field for name, (field, _) in misfits.items()})
            self.rejected.update({name: why for name, (_, why) in misfits.items()})
        # Live suspects come after their peers (docs/live-evidence.md, "Soft demotion").
        demoted = frozenset().union(*(self.gw.demoted_for(m) for m in models)) if models else frozenset()
        return demote(ranked, demoted)

    def claim(self, routes: Sequence[RouteProfile]) -> tuple[RouteProfile | None, Permit | None, list[int]]:
        """The first route whose breaker lets a call through now, with its permit; also the
        expiries (epoch ms) of the routes it skipped."""
        skipped: list[int] = []
        for route in routes:
            if self.gw.breakers is None:
                return route, Permit(True, BreakerState.CLOSED, has_state=False), skipped
            permit = self.gw.breakers.acquire(route.name, self.now_ms())
            if permit.allowed:
                return route, permit, skipped
            self.rejected[route.name] = f"circuit breaker {permit.state} ({permit.blocked_by})"
            self.suppressed.add(route.name)
            skipped.append(permit.until_ms)
        return None, None, skipped

    # ------------------------------------------------------------------ attempts

    def single(self, route: RouteProfile, permit: Permit, reason: str, times: AttemptTimes) -> tuple[Attempt | None, Failure | None]:
        t = self.attempt(route, permit, reason, times, hedge=False, handle=None)
        return (t, None) if t.failure is None else (None, t.failure)

    def attempt(self, route: RouteProfile, permit: Permit, reason: str, times: AttemptTimes,
                *, hedge: bool, handle: AttemptHandle | None) -> Attempt:
        """Run, classify, validate and record one attempt (thread-safe for hedges)."""
        gw, c = self.gw, self.contract
        with self.lock:
            self.tried.add(route.name)
            record = AttemptRecord(
                attempt_id=new_id(), index=len(self.tries), route=route.name,
                fallback_reason=reason, breaker_state=permit.state, started_at=gw.wall(), hedge=hedge,
            )
            t = Attempt(record, None, route=route)
            self.tries.append(t)
        body = route_body(route, self.base, self.client_provider, c)
        held: Checks | None = None
        sent = gw.clock()
        outcome: AttemptOutcome
        try:
            if self.live:
                opened = gw.upstream.open(route, body, times, idle_s=c.idle_s, handle=handle, record=True)
                if isinstance(opened, LiveAttempt):
                    held, ended = self.hold(opened, t)
                    if ended is None:
                        t.permit = permit
                        return t  # committed: ``settle`` finishes the record when the stream ends
                    outcome = ended
                else:
                    outcome = opened
            else:
                outcome = gw.upstream.attempt(route, body, times, idle_s=c.idle_s, handle=handle)
        except Exception as exc:  # noqa: BLE001 - a reply that crashes its reader is an invalid reply
            # Not raised past the chain: the fallback serves, the breaker counts it, and
            # an idempotency key is settled by the chain's outcome instead of a crash.
            outcome = AttemptOutcome(None, Signal(SignalKind.INVALID_BODY, message=f"the reply could not be read: {exc!r}"[:300]),
                                     None, (gw.clock() - sent) * 1000.0, None)
        with self.lock:
            if record.frozen:
                t.failure = classify(outcome.signal) if outcome.signal is not None else None
                return t
        record.latency_ms = outcome.latency_ms
        record.ttft_ms = outcome.ttft_ms
        record.http_status = outcome.http_status
        failure: Failure | None = None
        if held is not None and not held.ok:
            # The held prefix failed a canary judge: nothing reached the client.
            failure = Failure(FailureClass.INVALID_RESPONSE, FailureReason.PREFIX_REJECTED, held.failed[:500])
            record.status = AttemptStatus.REJECTED
        elif outcome.answer is not None and (empty := empty_reply_failure(
                outcome.answer.content, bool(outcome.answer.tool_calls), outcome.usage)) is not None:
            t.answer = outcome.answer
            failure = empty
            record.status = AttemptStatus.REJECTED
            record.validation = "empty reply"
        elif outcome.answer is not None and self.live and not self.judge_whole(outcome.answer, record).ok:
            # The whole answer arrived within the hold: the prefix checks judged all of it.
            t.answer = outcome.answer
            failure = Failure(FailureClass.INVALID_RESPONSE, FailureReason.PREFIX_REJECTED, record.message or "prefix rejected")
            record.status = AttemptStatus.REJECTED
        elif outcome.answer is not None:
            t.answer = outcome.answer
            t.validation = validate_answer(c, outcome.answer)
            record.validation = t.validation.summary
            problems = list(t.validation.problems)
            if not self.live and c.output_mode == OutputMode.NONE and outcome.answer.content:
                # Not streamed, or buffered: the whole answer is the commit point, and it
                # passes the checks a stream's prefix and end would before it is accepted.
                content = answer_checks(outcome.answer.content, self.language)
                record.checks.update({f"{CheckStage.ANSWER}.{k}": v for k, v in content.verdicts.items()})
                record.evidence_due = (CheckStage.ANSWER, outcome.answer.content)
                record.validation = "; ".join(filter(None, (record.validation, content.summary(CheckStage.ANSWER),
                                                            self.language_said())))
                problems += [content.failed] if content.failed else []
            if problems:
                cut = caused_by_request(outcome.answer.finish_reason, self.client_max_tokens)
                failure = validation_failure(problems, caller_max_tokens=self.client_max_tokens if cut else None)
                record.status = AttemptStatus.REJECTED
        else:
            assert outcome.signal is not None
            failure = classify(outcome.signal)
            record.status = AttemptStatus.CANCELLED if outcome.cancelled else AttemptStatus.FAILED
            record.validation = "not reached"
        record.validation = "; ".join(filter(None, (record.validation, outcome.notes)))
        # A hedge loser reached the provider and was cut mid-work: count its input as
        # billed (issue point 10: both costs counted).
        billed = (outcome.answer is not None or outcome.cancelled or held is not None
                  or (outcome.signal is not None and outcome.signal.output_seen))
        record.tokens_in, record.tokens_out, record.cost_usd = attempt_cost(route, outcome.usage, self.needs, billed)
        if failure is None:
            record.status = AttemptStatus.ACCEPTED
        else:
            t.failure = failure
            record.failure_class = failure.cls.value
            record.failure_reason = failure.reason
            record.message = failure.message[:500]
        charged = False
        detail: FailureDetail | None = None
        if failure is not None and not outcome.cancelled:
            # A failure the request itself caused (its own max_tokens cut the answer)
            # would happen on any route: it says nothing about this one.
            charged = failure.counts_against_route and not caused_by_request(
                t.answer.finish_reason if t.answer is not None else None, self.client_max_tokens)
            detail = self.charges.detail(failure, record)
            if self.charges.request_may_cause(route.name, failure, record, t.answer, detail, charged=charged):
                charged = False
        if gw.breakers is not None and not outcome.cancelled:
            verdict = BreakerOutcome.SUCCESS if failure is None else (failure.cls if charged else BreakerOutcome.NEUTRAL)
            record.breaker_opened = gw.breakers.record(
                route.name, self.now_ms(), verdict, permit=permit,
                retry_after_s=failure.retry_after_s if failure is not None and failure.cls == FailureClass.TRANSIENT else None,
                detail=detail if charged else None,
            )
        elif gw.breakers is not None and permit.trial_classes:
            gw.breakers.record(route.name, self.now_ms(), BreakerOutcome.NEUTRAL, permit=permit)
        return t

    def language_said(self) -> str:
        """``"language: pt (assistant_turns)"``: the expected language and where it came
        from; ``"language: none known, checked for mixing only"`` without one."""
        if not self.language:
            return "language: none known, checked for mixing only"
        return f"language: {self.language} ({self.language_source})"

    def judge_whole(self, answer: Answer, record: AttemptRecord) -> Checks:
        """The checks of an answer that ended before its commit point: nothing was sent,
        so it is judged whole (``answer_checks``) before it is accepted."""
        checks = answer_checks(answer.content or "", self.language)
        record.checks = {f"{CheckStage.ANSWER}.{k}": v for k, v in checks.verdicts.items()}
        record.evidence_due = (CheckStage.ANSWER, answer.content or "")
        record.message = checks.failed[:500]
        return checks

    def hold(self, live: LiveAttempt, t: Attempt) -> tuple[Checks | None, AttemptOutcome | None]:
        """Read a stream until its commit point (``routing.gateway.commit.hold_over``), then judge
        the held prefix. Returns (checks, None) when it commits (``t`` keeps the open
        stream), (failed checks, outcome) when the prefix is rejected (the stream is cut),
        (None, outcome) when the stream ended or failed before the commit point, a failure
        already received included (``LiveAttempt.held_broken``: checked at the commit)."""
        clock = self.gw.clock
        commit = self.contract.stream_commit
        stream = live.stream
        record = t.record
        first_at: float | None = None
        judged = 0  # content characters the checks last read
        reader = live.chunks()
        for _ in reader:
            if not stream.output_seen or stream.finished:
                continue
            now = clock()
            if first_at is None:
                first_at = now
            over = hold_over(commit, content_chars=stream.content_chars, first_content_at_s=first_at, now_s=now)
            # Under an early commit the checks read every new piece of the prefix, so the
            # stream commits the moment they have decided; else only the full hold.
            if not over and not (commit.early and stream.content_chars > judged):
                continue
            judged = stream.content_chars
            checks = prefix_checks(stream.content_so_far, self.language)
            if not commit_now(commit, checks, hold_is_over=over):
                continue
            record.checks = {f"{CheckStage.PREFIX}.{k}": v for k, v in checks.verdicts.items()}
            held_ms = (now - first_at) * 1000.0
            record.validation = (f"{checks.summary(CheckStage.PREFIX)} (after {judged} chars, {held_ms:.0f} ms; "
                                 f"{self.language_said()})")
            if not checks.ok:
                live.cut(CutReason.REJECTED)
                for _ in reader:
                    pass
                live.close()
                outcome = live.outcome
                assert outcome is not None
                return checks, outcome
            if (broken := live.held_broken()) is not None:  # a failure already received: never committed
                reader.close()
                live.close()
                return None, broken
            record.status = AttemptStatus.COMMITTED
            record.ttft_ms = live.ttft_ms
            record.http_status = live.response.status_code
            t.live, t.reader = live, reader
            return checks, None
        live.close()
        assert live.outcome is not None
        return None, live.outcome

    def settle(self, t: Attempt, *, client_gone: bool = False, sent: int = 0) -> GatewayResult:
        """Finish a committed stream's attempt and request once the stream ended (or the
        client left): post-stream checks and validation, cost, the route's breaker, the
        event. The bytes are gone; the route's health and breaker still learn. ``sent``:
        the content chunks passed on (recorded beside those received)."""
        gw, c = self.gw, self.contract
        live, record, route = t.live, t.record, t.route
        assert live is not None and route is not None
        outcome = live.outcome
        record.latency_ms = live.elapsed_ms()
        failure: Failure | None = None
        code: ErrorCode | None = None
        if client_gone or outcome is None:
            record.status = AttemptStatus.CANCELLED
            record.failure_reason = FailureReason.CLIENT_DISCONNECTED
            record.message = "the client disconnected mid-stream; the upstream request was cancelled"
        elif outcome.answer is not None:
            t.answer = outcome.answer
            t.validation = validate_answer(c, outcome.answer)
            post = reply_checks(outcome.answer.content or "", self.language)
            record.checks.update({f"{CheckStage.POST}.{k}": v for k, v in post.verdicts.items()})
            record.evidence_due = (CheckStage.POST, outcome.answer.content or "")
            record.validation = "; ".join(filter(None, (record.validation, post.summary(CheckStage.POST),
                                                        f"validation: {t.validation.summary}")))
            problems = [*t.validation.problems, *([post.failed] if post.failed else [])]
            if problems:
                failure = validation_failure(problems)
                record.status = AttemptStatus.REJECTED
                code = ErrorCode.REJECTED_AFTER_COMMIT
            else:
                record.status = AttemptStatus.ACCEPTED
        else:
            assert outcome.signal is not None
            failure = classify(outcome.signal)
            record.status = AttemptStatus.FAILED
            code = ErrorCode.FAILED_AFTER_COMMIT
        if failure is not None:
            record.failure_class = failure.cls.value
            record.failure_reason = failure.reason
            record.message = failure.message[:500]
        record.validation = "; ".join(filter(None, (
            record.validation, f"chunks: {live.stream.content_events} received, {sent} sent", live.notes())))
        usage = outcome.usage if outcome is not None else live.stream.usage
        record.tokens_in, record.tokens_out, record.cost_usd = attempt_cost(route, usage, self.needs, True)
        permit = t.permit
        if gw.breakers is not None and permit is not None:
            # A client that leaves says nothing about the route: neutral, never a failure.
            charged = failure is not None and failure.counts_against_route and record.status != AttemptStatus.CANCELLED
            detail = self.charges.detail(failure, record) if failure is not None else None
            if failure is not None and detail is not None and self.charges.request_may_cause(
                    route.name, failure, record, t.answer, detail, charged=charged):
                charged = False
            verdict = BreakerOutcome.NEUTRAL if record.status == AttemptStatus.CANCELLED else (
                BreakerOutcome.SUCCESS if failure is None else (failure.cls if charged else BreakerOutcome.NEUTRAL))
            record.breaker_opened = gw.breakers.record(route.name, self.now_ms(), verdict, permit=permit,
                                                       detail=detail if charged else None)
        if record.status == AttemptStatus.CANCELLED:
            result = self.finish(RequestOutcome.CANCELLED, code=ErrorCode.CLIENT_DISCONNECTED, message=record.message, route=route)
        elif failure is None:
            result = self.finish(RequestOutcome.ACCEPTED, accepted=t, route=route)
        else:
            result = self.finish(RequestOutcome.FAILED, code=code, cls=failure.cls,
                                 message=f"after the commit point: {failure.reason}: {failure.message}", route=route)
            result.answer = t.answer
        result.request_text = self.request_text
        if gw.sink is not None:
            gw.sink.emit(result)
        return result

    def freeze_unfinished(self) -> None:
        """Record still-running hedge losers as cancelled now, with their cost estimate."""
        now = self.gw.wall()
        with self.lock:
            for t in self.tries:
                record = t.record
                if record.status == AttemptStatus.FAILED and not record.failure_class and not record.validation:
                    record.status = AttemptStatus.CANCELLED
                    record.latency_ms = (now - record.started_at) * 1000.0
                    record.validation = "not reached"
                    route = t.route
                    if route is not None:
                        record.tokens_in = self.needs.input_tokens
                        record.cost_usd = self.needs.input_tokens * (route.price_prompt_usd or 0.0)
                    record.frozen = True
