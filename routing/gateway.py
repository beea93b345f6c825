"""The gateway: one request in, one accepted answer or one clear failure out.

``Gateway.complete(contract, body)`` runs the chain of attempts:

1. check the request ourselves (a malformed request fails fast with zero upstream
   requests, field case 4);
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
7. hand one ``GatewayResult`` (the request and every attempt) to the event sink.

Everything with a side outside this module is injected: routes, breaker store, HTTP
upstream, monotonic clock, wall clock (epoch seconds, for breakers shared by processes),
sleep, random source, ignore list and event sink. Pure of Django.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Protocol

from openrouter.transport import AttemptHandle
from routing.backoff import wait_before_retry_s
from routing.breaker import BreakerStore, Permit
from routing.commit import Checks, hold_over, prefix_checks, reply_checks
from routing.contracts import Contract
from routing.deadline import AttemptTimes, Deadline
from routing.failures import Failure, FailureClass, Signal, classify, validation_failure
from routing.request_check import caller_max_tokens, caused_by_request
from routing.selection import (
    DEFAULT_MIN_STRUCTURED_HONOURED,
    RequestNeeds,
    RouteProfile,
    candidates,
    estimate_needs,
)
from routing.stream import Answer
from routing.upstream import AttemptOutcome, LiveAttempt, Upstream
from routing.validation import ValidationResult, validate_answer

# OpenRouter's provider-preference keys (docs/sources/openrouter-api.md, "Provider routing"). The gateway
# sets only/order/ignore/allow_fallbacks itself: it pins each route's endpoint.
PROVIDER_KEYS = frozenset({
    "require_parameters", "data_collection", "zdr", "enforce_distillable_text",
    "quantizations", "sort", "max_price", "preferred_min_throughput", "preferred_max_latency",
})
_GATEWAY_PROVIDER_KEYS = frozenset({"only", "order", "ignore", "allow_fallbacks"})
_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
# Request keys the gateway owns or rewrites.
_OWNED = frozenset({"model", "models", "stream", "stream_options", "provider", "route"})


# Encoders built once: ``json.dumps`` with any option builds a new encoder per call.
_compact_json = json.JSONEncoder(separators=(",", ":")).encode
_canonical_json = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode


def _new_id() -> str:
    """A random version-4 UUID as 32 hex digits, what ``uuid.uuid4().hex`` returns,
    without building a ``UUID`` object (its validation was ~2 us per id, two per request)."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    return raw.hex()


class RequestInvalid(ValueError):
    """The client's request is malformed: answer 400 with this message, send nothing."""


class EventSink(Protocol):
    def emit(self, result: GatewayResult) -> None: ...


@dataclass
class AttemptRecord:
    """One attempt, as stored in the attempt event (issue point 11).

    ``status``: "accepted", "failed", "rejected" (answer failed validation) or
    "cancelled" (hedge loser). ``fallback_reason`` says why this attempt happened.
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
    status: str = "failed"
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

    ``outcome``: "accepted", "failed", or "unknown" (an ambiguous failure of a workload
    with side effects: it may have happened; not replayed). ``error_code`` when not
    accepted: ``deadline_exhausted``, ``attempt_budget_exhausted``,
    ``all_routes_suppressed``, ``no_eligible_route``, ``permanent_failure``,
    ``fallbacks_exhausted``, ``outcome_unknown``. ``retry_after_s`` is set when every
    route is suppressed (the earliest time one comes back).
    """

    operation_id: str
    contract: str
    outcome: str
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
    # Set while a streamed answer passed its commit point and is still flowing (outcome
    # "streaming"): the final result comes from ``Committed.result`` when it ends.
    committed: Committed | None = None

    @property
    def ok(self) -> bool:
        return self.outcome == "accepted"

    @property
    def cost_usd(self) -> float:
        return sum(a.cost_usd for a in self.attempts)


@dataclass
class _Try:
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


def check_request(body: Any, contract: Contract) -> None:
    """Reject what no route should ever see (field case 4). Raises ``RequestInvalid``
    with a message naming the field; returns None when the request is well formed."""
    if not isinstance(body, dict):
        raise RequestInvalid("the request body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestInvalid("messages: a non-empty list of messages is required")
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise RequestInvalid(f"messages[{i}]: expected an object")
        if message.get("role") not in _ROLES:
            raise RequestInvalid(f"messages[{i}].role: expected one of {sorted(_ROLES)}, got {message.get('role')!r}")
        content = message.get("content")
        if not (isinstance(content, str | list) or (content is None and message.get("role") in ("assistant", "tool"))):
            raise RequestInvalid(f"messages[{i}].content: expected a string or a list of parts")
    provider = body.get("provider")
    if provider is not None:
        if not isinstance(provider, dict):
            raise RequestInvalid("provider: expected an object")
        owned = sorted(set(provider) & _GATEWAY_PROVIDER_KEYS)
        if owned:
            raise RequestInvalid(f"provider.{owned[0]}: chosen by the gateway (each route pins its endpoint); remove it")
        unknown = sorted(set(provider) - PROVIDER_KEYS)
        if unknown:
            raise RequestInvalid(f"provider: unknown field(s) {unknown}; allowed: {sorted(PROVIDER_KEYS)}")
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise RequestInvalid("stream: expected true or false")
    for key in ("max_tokens", "max_completion_tokens"):
        value = body.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise RequestInvalid(f"{key}: expected a positive integer, got {value!r}")
    n = body.get("n")
    if n not in (None, 1):
        raise RequestInvalid("n: only 1 is supported (one answer is validated and accepted)")
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise RequestInvalid("tools: expected a list")
        for i, tool in enumerate(tools):
            name = tool.get("function", {}).get("name") if isinstance(tool, dict) and isinstance(tool.get("function"), dict) else None
            if name not in contract.tools:
                raise RequestInvalid(f"tools[{i}]: tool {name!r} is not registered in contract {contract.key}; registered: {sorted(contract.tools)}")


def _upstream_body(contract: Contract, body: Mapping[str, Any]) -> dict[str, Any]:
    """The request every route receives, before the route's model and pin are added.

    The contract, not the client, decides structured output and tools: every route is
    held to the same original schema (issue point 7).
    """
    out = {k: v for k, v in body.items() if k not in _OWNED}
    out["stream"] = True
    if out.get("max_tokens") is None and out.get("max_completion_tokens") is None and contract.max_output_tokens:
        out["max_tokens"] = contract.max_output_tokens
    if contract.output_mode == "json_schema":
        name = "".join(c if c.isalnum() or c in "_-" else "_" for c in contract.name)[:64]
        out["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": name, "strict": True, "schema": dict(contract.output_schema or {})},
        }
    elif contract.output_mode == "json_object":
        out["response_format"] = {"type": "json_object"}
    if contract.tools and "tools" not in out:
        out["tools"] = [
            {"type": "function", "function": {"name": name, "parameters": dict(schema)}}
            for name, schema in contract.tools.items()
        ]
    return out


def _route_body(route: RouteProfile, base: Mapping[str, Any], client_provider: Mapping[str, Any] | None, contract: Contract) -> bytes:
    body = dict(base)
    body["model"] = route.model_id
    if route.provider_tag:
        provider = dict(client_provider or {})
        # Pin the endpoint and forbid OpenRouter's own fallback: the gateway owns it.
        provider["only"] = [route.provider_tag]
        provider["allow_fallbacks"] = False
        if contract.output_mode != "none" or contract.tools:
            provider["require_parameters"] = True
        body["provider"] = provider
    return _compact_json(body).encode()


def _cost_usd(route: RouteProfile, usage: Mapping[str, Any] | None, needs: RequestNeeds, billed: bool) -> tuple[int, int, float]:
    """(tokens in, tokens out, USD): the upstream's reported cost when present, else the
    list price; a failure with no output is free unless ``billed`` (output was made)."""
    if usage:
        prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
        tin = prompt if isinstance(prompt, int) else needs.input_tokens
        tout = completion if isinstance(completion, int) else 0
        cost = usage.get("cost")
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            return tin, tout, float(cost)
        return tin, tout, tin * route.price_prompt_usd + tout * route.price_completion_usd
    if billed:
        return needs.input_tokens, 0, needs.input_tokens * route.price_prompt_usd
    return 0, 0, 0.0


class Gateway:
    """Orchestrates attempts for contracts over routes (see the module docstring).

    ``routes()``: the current route profiles; ``breakers``: the shared breaker store (None
    disables breakers, for pure tests); ``upstream``: the HTTP path; ``clock``: monotonic
    seconds; ``wall``: epoch seconds (breaker times shared across processes); ``sleep``;
    ``rng``: backoff jitter; ``ignored(model_id)``: lower-cased tags/slugs on the ignore
    list; ``sink``: receives every ``GatewayResult``; ``pool``: threads for hedges.
    """

    def __init__(
        self,
        *,
        routes: Callable[[], Sequence[RouteProfile]],
        upstream: Upstream,
        breakers: BreakerStore | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        ignored: Callable[[str], frozenset[str]] | None = None,
        sink: EventSink | None = None,
        min_structured_honoured: float = DEFAULT_MIN_STRUCTURED_HONOURED,
        pool: ThreadPoolExecutor | None = None,
    ) -> None:
        self.routes = routes
        self.upstream = upstream
        self.breakers = breakers
        self.clock = clock
        self.wall = wall
        self.sleep = sleep
        self.rng = rng or random.Random()
        self.ignored = ignored
        self.sink = sink
        self.min_structured_honoured = min_structured_honoured
        self._pool = pool
        self._pool_lock = threading.Lock()

    # ------------------------------------------------------------------ entry point

    def complete(self, contract: Contract, body: Mapping[str, Any], *, operation_id: str | None = None,
                 stream: bool = False, language: str | None = None) -> GatewayResult:
        """Serve one chat request under ``contract``.

        Returns a ``GatewayResult`` (accepted, failed or unknown); raises
        ``RequestInvalid`` only for a malformed request (before any upstream request).

        ``stream``: the client asked for a stream. Under a ``prefix`` commit point (and
        without side effects: a committed stream cannot be replayed from the ledger) the
        result may be ``"streaming"``: the held prefix passed the pre-commit checks
        and ``result.committed`` passes the rest on; its final result is emitted when the
        stream ends. ``language`` (ISO 639-1) is the language the prefix must be in
        (default: the contract's ``expected_language``).
        """
        deadline = Deadline(contract.deadline_s, self.clock)
        started_wall = self.wall()
        check_request(body, contract)
        op = operation_id or _new_id()
        messages = body["messages"]
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens") or contract.max_output_tokens
        needs = estimate_needs(messages, max_tokens=max_tokens, tools=body.get("tools"))
        model = self.model_check(contract, body.get("model"), needs)
        base = _upstream_body(contract, body)
        client_provider = body.get("provider")
        run = _Run(self, contract, deadline, needs, base, client_provider, op, started_wall)
        run.model = model
        run.live = stream and contract.stream_commit.prefix and not contract.side_effects
        run.language = language or contract.expected_language
        run.request_text = _canonical_json(messages)
        run.client_max_tokens = caller_max_tokens(body)
        result = run.execute()
        result.request_text = run.request_text
        if self.sink is not None and result.committed is None:
            self.sink.emit(result)
        return result

    def model_check(self, contract: Contract, model: Any, needs: RequestNeeds) -> str | None:
        """The request's ``model``: omitted (or empty), every capable route stays a
        candidate (None); else it must be the model id of a route that can serve
        ``contract`` (case-insensitive), and only that model's routes are candidates.
        Raises ``RequestInvalid`` naming the models the contract serves (none capable:
        None, and the run answers that no route satisfies the contract)."""
        if model is None or model == "":
            return None
        if not isinstance(model, str):
            raise RequestInvalid(f"model: expected a model id string, got {model!r}")
        capable, _ = candidates(list(self.routes()), contract, needs, budget_left_usd=contract.max_cost_usd,
                                ignored=frozenset(), min_structured_honoured=self.min_structured_honoured)
        served = sorted({r.model_id for r in capable})
        if not served:
            return None  # no route at all: the run answers no_eligible_route (422)
        wanted = model.strip().casefold()
        for model_id in served:
            if model_id.casefold() == wanted:
                return model_id
        raise RequestInvalid(f"model: {model!r} is not served under contract {contract.key}; "
                             f"it serves {served} (or omit model to let the gateway choose)")

    def pool(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=64, thread_name_prefix="routing-hedge")
            return self._pool

    def ignored_for(self, model_id: str) -> frozenset[str]:
        return self.ignored(model_id) if self.ignored is not None else frozenset()


class _Run:
    """The state of one request's chain of attempts."""

    def __init__(
        self,
        gw: Gateway,
        contract: Contract,
        deadline: Deadline,
        needs: RequestNeeds,
        base: dict[str, Any],
        client_provider: Any,
        op: str,
        started_wall: float,
    ) -> None:
        self.gw = gw
        self.contract = contract
        self.deadline = deadline
        self.needs = needs
        self.base = base
        self.client_provider = client_provider
        self.op = op
        self.started_wall = started_wall
        self.tries: list[_Try] = []
        self.tried: set[str] = set()
        self.rejected: dict[str, str] = {}
        self.lock = threading.Lock()
        self.live = False
        self.model: str | None = None
        self.language: str | None = None
        self.request_text = ""
        self.client_max_tokens: int | None = None

    # ------------------------------------------------------------------ helpers

    def now_ms(self) -> int:
        return int(self.gw.wall() * 1000)

    def spent_usd(self) -> float:
        return sum(t.record.cost_usd for t in self.tries)

    def finish(self, outcome: str, *, code: str = "", cls: str = "", message: str = "",
               accepted: _Try | None = None, retry_after_s: float | None = None,
               route: RouteProfile | None = None) -> GatewayResult:
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
            error_code=code,
            message=message,
            retry_after_s=retry_after_s,
            rejected_routes=dict(self.rejected),
        )

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
        return ranked

    def claim(self, routes: Sequence[RouteProfile]) -> tuple[RouteProfile | None, Permit | None, list[int]]:
        """The first route whose breaker lets a call through now, with its permit; also the
        expiries (epoch ms) of the routes it skipped."""
        skipped: list[int] = []
        for route in routes:
            if self.gw.breakers is None:
                return route, Permit(True, "closed", has_state=False), skipped
            permit = self.gw.breakers.acquire(route.name, self.now_ms())
            if permit.allowed:
                return route, permit, skipped
            self.rejected[route.name] = f"circuit breaker {permit.state} ({permit.blocked_by})"
            skipped.append(permit.until_ms)
        return None, None, skipped

    # ------------------------------------------------------------------ the chain

    def execute(self) -> GatewayResult:
        c = self.contract
        ranked = self.eligible()
        if not ranked:
            return self.finish("failed", code="no_eligible_route", cls=FailureClass.INCOMPATIBLE,
                               message=f"no route satisfies contract {c.key}: {self.rejected}")
        route, permit, skipped = self.claim(ranked)
        if route is None or permit is None:
            return self.all_suppressed(skipped)
        reason = "primary"
        same_route_retries = 0
        fallbacks = 0
        last: Failure | None = None
        while True:
            if len(self.tries) >= c.attempt_budget:
                return self.fail_after(last, "attempt_budget_exhausted",
                                       f"attempt budget of {c.attempt_budget} used up")
            times = self.deadline.attempt_times(c.allowances, attempt_cap_s=c.attempt_timeout_s, first_token_s=c.first_token_s)
            if times is None:
                return self.finish(
                    "failed", code="deadline_exhausted", cls=FailureClass.TRANSIENT,
                    message=(f"{self.deadline.remaining_s():.2f} s left of the {c.deadline_s:g} s deadline, "
                             f"below the {c.allowances.required_s:g} s an attempt requires"),
                )
            # A streamed attempt is not hedged: two streams cannot both reach the client, and
            # a slow start already falls back invisibly before the commit point.
            if c.hedge and not self.live and fallbacks < c.max_fallbacks and c.attempt_budget - len(self.tries) >= 2:
                winner, failure, hedged = self.hedged(route, permit, reason, times)
                fallbacks += hedged
            else:
                winner, failure = self.single(route, permit, reason, times)
            if winner is not None:
                if winner.live is not None:
                    streaming = self.finish("streaming", route=winner.route)
                    streaming.committed = Committed(self, winner)
                    return streaming
                return self.finish("accepted", accepted=winner, route=winner.route)
            assert failure is not None
            last = failure
            if failure.cls == FailureClass.PERMANENT and failure.blame != "route":
                return self.finish("failed", code="permanent_failure", cls=failure.cls,
                                   message=f"{failure.reason}: {failure.message}")
            if failure.cls == FailureClass.AMBIGUOUS and c.side_effects:
                # Field case 7: it may have happened; replaying could do it twice.
                return self.finish("unknown", code="outcome_unknown", cls=failure.cls,
                                   message=f"{failure.message}; the workload has side effects, so it is not replayed")
            if failure.early_connect and same_route_retries < 1 and route.name not in self._hedged_routes():
                wait = wait_before_retry_s(
                    same_route_retries, base_s=c.backoff_base_s, cap_s=c.backoff_cap_s,
                    retry_after_s=failure.retry_after_s, remaining_s=self.deadline.remaining_s(),
                    required_s=c.allowances.required_s, rng=self.gw.rng,
                )
                if wait is not None and len(self.tries) < c.attempt_budget:
                    self.gw.sleep(wait)
                    same_route_retries += 1
                    again = self.gw.breakers.acquire(route.name, self.now_ms()) if self.gw.breakers else permit
                    if again is not None and again.allowed:
                        permit = again
                        reason = f"same-route retry after {failure.reason} (waited {wait * 1000:.0f} ms)"
                        continue
            if len(self.tries) >= c.attempt_budget:
                return self.fail_after(failure, "attempt_budget_exhausted",
                                       f"attempt budget of {c.attempt_budget} used up; last: {failure.cls} ({failure.reason})")
            if fallbacks >= c.max_fallbacks:
                return self.fail_after(failure, "fallbacks_exhausted",
                                       f"{failure.cls} ({failure.reason}) and no fallback left ({c.max_fallbacks} allowed)")
            previous = route
            route, permit, skipped = self.claim(self.eligible())
            if route is None or permit is None:
                if skipped:
                    return self.all_suppressed(skipped, failure)
                return self.fail_after(failure, "fallbacks_exhausted",
                                       f"{failure.cls} ({failure.reason}) on {previous.name} and no other capable route")
            fallbacks += 1
            reason = f"fallback after {failure.cls} ({failure.reason}) on {previous.name}"

    def _hedged_routes(self) -> set[str]:
        return {t.record.route for t in self.tries if t.record.hedge}

    def fail_after(self, failure: Failure | None, code: str, message: str) -> GatewayResult:
        cls = failure.cls if failure else FailureClass.TRANSIENT
        return self.finish("failed", code=code, cls=cls, message=message)

    def all_suppressed(self, expiries: list[int], failure: Failure | None = None) -> GatewayResult:
        wait_s = max(0.0, (min(expiries) - self.now_ms()) / 1000.0) if expiries else None
        return self.finish(
            "failed", code="all_routes_suppressed", cls=failure.cls if failure else FailureClass.TRANSIENT,
            message=f"every capable route is suppressed by its circuit breaker: {self.rejected}",
            retry_after_s=wait_s,
        )

    # ------------------------------------------------------------------ attempts

    def single(self, route: RouteProfile, permit: Permit, reason: str, times: AttemptTimes) -> tuple[_Try | None, Failure | None]:
        t = self.attempt(route, permit, reason, times, hedge=False, handle=None)
        return (t, None) if t.failure is None else (None, t.failure)

    def attempt(self, route: RouteProfile, permit: Permit, reason: str, times: AttemptTimes,
                *, hedge: bool, handle: AttemptHandle | None) -> _Try:
        """Run, classify, validate and record one attempt (thread-safe for hedges)."""
        gw, c = self.gw, self.contract
        with self.lock:
            self.tried.add(route.name)
            record = AttemptRecord(
                attempt_id=_new_id(), index=len(self.tries), route=route.name,
                fallback_reason=reason, breaker_state=permit.state, started_at=gw.wall(), hedge=hedge,
            )
            t = _Try(record, None, route=route)
            self.tries.append(t)
        body = _route_body(route, self.base, self.client_provider, c)
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
            outcome = AttemptOutcome(None, Signal("invalid_body", message=f"the reply could not be read: {exc!r}"[:300]),
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
            failure = Failure(FailureClass.INVALID_RESPONSE, "prefix_rejected", held.failed[:500])
            record.status = "rejected"
        elif outcome.answer is not None and self.live and not self.judge_whole(outcome.answer, record).ok:
            # The whole answer arrived within the hold: the prefix checks judged all of it.
            t.answer = outcome.answer
            failure = Failure(FailureClass.INVALID_RESPONSE, "prefix_rejected", record.message or "prefix rejected")
            record.status = "rejected"
        elif outcome.answer is not None:
            t.answer = outcome.answer
            t.validation = validate_answer(c, outcome.answer)
            record.validation = t.validation.summary
            if not t.validation.ok:
                failure = validation_failure(t.validation.problems)
                record.status = "rejected"
        else:
            assert outcome.signal is not None
            failure = classify(outcome.signal)
            record.status = "cancelled" if outcome.cancelled else "failed"
            record.validation = "not reached"
        # A hedge loser reached the provider and was cut mid-work: count its input as
        # billed (issue point 10: both costs counted).
        billed = (outcome.answer is not None or outcome.cancelled or held is not None
                  or (outcome.signal is not None and outcome.signal.output_seen))
        record.tokens_in, record.tokens_out, record.cost_usd = _cost_usd(route, outcome.usage, self.needs, billed)
        if failure is None:
            record.status = "accepted"
        else:
            t.failure = failure
            record.failure_class = failure.cls.value
            record.failure_reason = failure.reason
            record.message = failure.message[:500]
        if gw.breakers is not None and not outcome.cancelled:
            # A failure the request itself caused (its own max_tokens cut the answer)
            # would happen on any route: it says nothing about this one.
            charged = failure is not None and failure.counts_against_route and not caused_by_request(
                t.answer.finish_reason if t.answer is not None else None, self.client_max_tokens)
            verdict = "success" if failure is None else (failure.cls.value if charged else "neutral")
            record.breaker_opened = gw.breakers.record(
                route.name, self.now_ms(), verdict, permit=permit,
                retry_after_s=failure.retry_after_s if failure is not None and failure.cls == FailureClass.TRANSIENT else None,
            )
        elif gw.breakers is not None and permit.trial_classes:
            gw.breakers.record(route.name, self.now_ms(), "neutral", permit=permit)
        return t

    def judge_whole(self, answer: Answer, record: AttemptRecord) -> Checks:
        """The pre-commit checks on an answer that ended before its commit point."""
        checks = prefix_checks(answer.content or "", self.language)
        record.checks = {f"prefix.{k}": v for k, v in checks.verdicts.items()}
        record.message = checks.failed[:500]
        return checks

    def hold(self, live: LiveAttempt, t: _Try) -> tuple[Checks | None, AttemptOutcome | None]:
        """Read a stream until its commit point (``routing.commit.hold_over``), then judge
        the held prefix. Returns (checks, None) when it commits (``t`` keeps the open
        stream), (failed checks, outcome) when the prefix is rejected (the stream is cut),
        (None, outcome) when the stream ended or failed before the commit point."""
        clock = self.gw.clock
        commit = self.contract.stream_commit
        stream = live.stream
        record = t.record
        first_at: float | None = None
        reader = live.chunks()
        for _ in reader:
            if not stream.output_seen or stream.finished:
                continue
            now = clock()
            if first_at is None:
                first_at = now
            if not hold_over(commit, content_chars=stream.content_chars, first_content_at_s=first_at, now_s=now):
                continue
            checks = prefix_checks(stream.content_so_far, self.language)
            record.checks = {f"prefix.{k}": v for k, v in checks.verdicts.items()}
            record.validation = checks.summary("prefix")
            if not checks.ok:
                live.cut("rejected")
                for _ in reader:
                    pass
                live.close()
                outcome = live.outcome
                assert outcome is not None
                return checks, outcome
            record.status = "committed"
            record.ttft_ms = live.ttft_ms
            record.http_status = live.response.status_code
            t.live, t.reader = live, reader
            return checks, None
        live.close()
        assert live.outcome is not None
        return None, live.outcome

    def settle(self, t: _Try, *, client_gone: bool = False, sent: int = 0) -> GatewayResult:
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
        code = ""
        if client_gone or outcome is None:
            record.status = "cancelled"
            record.failure_reason = "client_disconnected"
            record.message = "the client disconnected mid-stream; the upstream request was cancelled"
        elif outcome.answer is not None:
            t.answer = outcome.answer
            t.validation = validate_answer(c, outcome.answer)
            post = reply_checks(outcome.answer.content or "", self.language)
            record.checks.update({f"post.{k}": v for k, v in post.verdicts.items()})
            record.validation = "; ".join(filter(None, (record.validation, post.summary("post"),
                                                        f"validation: {t.validation.summary}")))
            problems = [*t.validation.problems, *([post.failed] if post.failed else [])]
            if problems:
                failure = validation_failure(problems)
                record.status = "rejected"
                code = "rejected_after_commit"
            else:
                record.status = "accepted"
        else:
            assert outcome.signal is not None
            failure = classify(outcome.signal)
            record.status = "failed"
            code = "failed_after_commit"
        if failure is not None:
            record.failure_class = failure.cls.value
            record.failure_reason = failure.reason
            record.message = failure.message[:500]
        record.validation = "; ".join(filter(None, (
            record.validation, f"chunks: {live.stream.content_events} received, {sent} sent")))
        usage = outcome.usage if outcome is not None else live.stream.usage
        record.tokens_in, record.tokens_out, record.cost_usd = _cost_usd(route, usage, self.needs, True)
        permit = t.permit
        if gw.breakers is not None and permit is not None:
            # A client that leaves says nothing about the route: neutral, never a failure.
            verdict = "neutral" if record.status == "cancelled" else (
                "success" if failure is None else (failure.cls.value if failure.counts_against_route else "neutral"))
            record.breaker_opened = gw.breakers.record(route.name, self.now_ms(), verdict, permit=permit)
        if record.status == "cancelled":
            result = self.finish("cancelled", code="client_disconnected", message=record.message, route=route)
        elif failure is None:
            result = self.finish("accepted", accepted=t, route=route)
        else:
            result = self.finish("failed", code=code, cls=failure.cls,
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
                if record.status == "failed" and not record.failure_class and not record.validation:
                    record.status = "cancelled"
                    record.latency_ms = (now - record.started_at) * 1000.0
                    record.validation = "not reached"
                    route = t.route
                    if route is not None:
                        record.tokens_in = self.needs.input_tokens
                        record.cost_usd = self.needs.input_tokens * route.price_prompt_usd
                    record.frozen = True

    def hedged(self, route: RouteProfile, permit: Permit, reason: str, times: AttemptTimes) -> tuple[_Try | None, Failure | None, int]:
        """Issue point 10: start ``route``; if no answer within ``hedge_delay_s``, start the
        next capable route too; the first accepted answer wins, the other is cancelled
        (its cost still counted). Returns (winner, last failure, hedges launched)."""
        c = self.contract
        pool = self.gw.pool()
        handles: dict[Future[_Try], AttemptHandle] = {}
        first_handle = AttemptHandle()
        first = pool.submit(self.attempt, route, permit, reason, times, hedge=False, handle=first_handle)
        handles[first] = first_handle
        done, _ = wait([first], timeout=c.hedge_delay_s)
        launched = 0
        if not done:
            second_times = self.deadline.attempt_times(c.allowances, attempt_cap_s=c.attempt_timeout_s, first_token_s=c.first_token_s)
            other, other_permit, _ = self.claim(self.eligible())
            if other is not None and other_permit is not None and second_times is not None:
                h = AttemptHandle()
                fut = pool.submit(self.attempt, other, other_permit,
                                  f"hedge after {c.hedge_delay_s:g} s without an answer from {route.name}",
                                  second_times, hedge=True, handle=h)
                handles[fut] = h
                launched = 1
        pending: set[Future[_Try]] = set(handles)
        last: Failure | None = None
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                t = fut.result()
                if t.failure is None:
                    for other_fut in pending:
                        handles[other_fut].cut("cancelled")
                    # A loser with a stream ends at once (its socket is shut down); one
                    # still waiting for headers has no socket yet: do not wait for it.
                    _, stuck = wait(pending, timeout=0.2)
                    if stuck:
                        self.freeze_unfinished()
                    return t, None, launched
                last = t.failure
        return None, last, launched


class Committed:
    """A streamed answer past its commit point (``GatewayResult.committed``).

    ``deltas()`` yields the content deltas as the upstream sent them (``{"content": ...}``
    and/or ``{"tool_calls": [...]}``): the held ones first, then each as it arrives. When
    the stream ends, ``result`` is the request's final ``GatewayResult`` (accepted,
    ``failed_after_commit``/``rejected_after_commit``, or ``cancelled``), already emitted
    to the event sink. Closing the generator early (the client left) cuts the upstream
    request and records the request as cancelled.
    """

    def __init__(self, run: _Run, t: _Try) -> None:
        self._run = run
        self._t = t
        self.result: GatewayResult | None = None
        self.sent = 0

    @property
    def route(self) -> RouteProfile:
        assert self._t.route is not None
        return self._t.route

    @property
    def operation_id(self) -> str:
        return self._run.op

    @property
    def attempts(self) -> int:
        return len(self._run.tries)

    def deltas(self) -> Iterator[dict[str, Any]]:
        live, reader = self._t.live, self._t.reader
        assert live is not None and reader is not None
        pending = live.stream.events
        assert pending is not None
        try:
            while True:
                if pending:
                    batch = list(pending)
                    pending.clear()
                    for event in batch:
                        self.sent += 1
                        yield event
                if next(reader, _END) is _END:
                    break
            if pending:
                batch = list(pending)
                pending.clear()
                for event in batch:
                    self.sent += 1
                    yield event
        except GeneratorExit:
            self.cancel()
            raise
        finally:
            live.close()
        if self.result is None:
            self.result = self._run.settle(self._t, sent=self.sent)

    def cancel(self) -> None:
        """The client is gone: cut the upstream request, record the request cancelled."""
        if self.result is not None:
            return
        live = self._t.live
        assert live is not None
        live.cut("client_gone")
        live.close()
        self.result = self._run.settle(self._t, client_gone=True, sent=self.sent)


_END = object()
