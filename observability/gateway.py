"""Gateway metrics and traces derived from the ``GatewayResult`` handed to the event sink.

The gateway builds one ``GatewayResult`` (the request and each ``AttemptRecord``) per
request and gives it to its event sink; ``ObservedSink`` wraps that sink and calls
``record(result)`` first. Hooking there, rather than inside the attempt loop or the
streaming code, keeps the instrumentation correct whatever the loop and the streaming
path become: it reads only what the events table stores.

``record`` costs a few microseconds per request: label children are cached per label
tuple (``labels()`` validates its arguments on every call), and nothing touches the
database or the network.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from prometheus_client.metrics import MetricWrapperBase

from observability import metrics as m
from observability import tracing
from routing.failures import FailureClass
from routing.gateway.result import EventSink, GatewayResult
from routing.selection import RouteProfile
from routing.terms import AttemptStatus, ErrorCode, RequestOutcome

log = logging.getLogger(__name__)

_OPERATION = "chat"  # gen_ai.operation.name for chat completions (OpenTelemetry GenAI)

_children: dict[tuple[int, tuple[str, ...]], Any] = {}


def _child(metric: MetricWrapperBase, *labels: str) -> Any:
    """``metric.labels(*labels)``, cached: the label sets are bounded (module docstring)."""
    key = (id(metric), labels)
    child = _children.get(key)
    if child is None:
        child = _children[key] = metric.labels(*labels)
    return child


def validation_check(problem: str) -> str:
    """The kind of check a validation problem (``routing.validation`` sentence) failed,
    from a bounded set: ``finish_reason``, ``min_output``, ``tool_call``, ``json``,
    ``schema``, a semantic check's name (``name: ...``) or ``other``."""
    text = problem.strip()
    if text.startswith(("no finish reason", "finish_reason", "truncated")):
        return "finish_reason"
    if text.startswith("output is "):
        return "min_output"
    if text.startswith("tool_calls["):
        return "tool_call"
    if text.startswith("structured output is"):
        return "json"
    if text.startswith("output "):
        return "schema"
    if text.startswith("check crashed"):
        return "semantic"
    head, sep, _ = text.partition(":")
    if sep and head.isidentifier() and len(head) <= 40:
        return head
    return "other"


def record(result: GatewayResult) -> None:
    """Count one finished request and its attempts (all metrics ``reverie_gateway_*`` and
    the GenAI histograms). Never raises: a metrics bug must not fail a chat."""
    try:
        _record(result)
    except Exception:  # noqa: BLE001 - instrumentation must never break the request path
        log.exception("gateway metrics not recorded for %s", result.operation_id)


def _record(result: GatewayResult) -> None:
    contract = result.contract
    final = result.route.name if result.route is not None else ""
    _child(m.GATEWAY_REQUESTS, contract, result.outcome, final).inc()
    if result.outcome != RequestOutcome.ACCEPTED:
        _child(m.GATEWAY_ERRORS, contract, result.error_code or "unknown").inc()  # vocabulary: the label of a missing value
        if result.error_code == ErrorCode.DEADLINE_EXHAUSTED:
            _child(m.GATEWAY_DEADLINE_EXHAUSTIONS, contract).inc()
    _child(m.OPERATION_DURATION, _OPERATION, final, result.outcome).observe(result.latency_ms / 1000.0)
    previous = None
    for a in result.attempts:
        _child(m.GATEWAY_ATTEMPTS, a.route, a.status, a.failure_class).inc()
        if a.hedge:
            _child(m.GATEWAY_FALLBACKS, contract, "hedge").inc()
        elif previous is not None:
            if a.route == previous.route:
                _child(m.GATEWAY_RETRIES, a.route).inc()
            else:
                _child(m.GATEWAY_FALLBACKS, contract, previous.failure_class or "unknown").inc()  # vocabulary: the label of a missing value
        if a.status == AttemptStatus.REJECTED:
            _child(m.GATEWAY_VALIDATION_REJECTIONS, a.route, validation_check(a.validation)).inc()
        if a.failure_class == FailureClass.AMBIGUOUS:
            _child(m.GATEWAY_AMBIGUOUS, contract, a.route).inc()
        if a.cost_usd:
            _child(m.GATEWAY_COST, contract, a.route).inc(a.cost_usd)
        if a.tokens_in:
            _child(m.GATEWAY_TOKENS, a.route, "input").inc(a.tokens_in)
            _child(m.TOKEN_USAGE, _OPERATION, "input", a.route).observe(a.tokens_in)
        if a.tokens_out:
            _child(m.GATEWAY_TOKENS, a.route, "output").inc(a.tokens_out)
            _child(m.TOKEN_USAGE, _OPERATION, "output", a.route).observe(a.tokens_out)
        if a.ttft_ms is not None and a.status in (AttemptStatus.ACCEPTED, AttemptStatus.REJECTED):
            _child(m.TIME_TO_FIRST_TOKEN, _OPERATION, a.route).observe(a.ttft_ms / 1000.0)
        previous = a


class ObservedSink:
    """An ``EventSink`` that records metrics (and a trace, when tracing is on) for each
    result, then hands it to ``inner``. ``routes()`` gives the current route profiles, for
    the ``gen_ai.request.model`` span attribute of each attempt (optional)."""

    def __init__(self, inner: EventSink | None, *, routes: Callable[[], Sequence[RouteProfile]] | None = None) -> None:
        self.inner = inner
        self.routes = routes

    def route_model(self, route: str) -> str:
        for profile in self.routes() if self.routes is not None else ():
            if profile.name == route:
                return profile.model_id
        return ""

    def emit(self, result: GatewayResult) -> None:
        record(result)
        if tracing.enabled():
            try:
                tracing.gateway_spans(result, route_model=self.route_model)
            except Exception:  # noqa: BLE001 - a trace bug must never fail a chat
                log.exception("gateway trace not recorded for %s", result.operation_id)
        if self.inner is not None:
            self.inner.emit(result)

    def __getattr__(self, name: str) -> Any:
        # ``flush``/``close`` of the wrapped sink (BackgroundEventSink) stay reachable.
        return getattr(self.inner, name)


def observed(sink: EventSink | None, *, routes: Callable[[], Sequence[RouteProfile]] | None = None) -> ObservedSink:
    """Wrap the gateway's event sink so every result is measured (see ``ObservedSink``)."""
    return ObservedSink(sink, routes=routes)


def sink_wrap(sink: EventSink, routes: Callable[[], Sequence[RouteProfile]]) -> EventSink:
    """The wrapper ``routing.services.wiring.sink_wrapper_register`` takes: ``observed``."""
    return ObservedSink(sink, routes=routes)


def unwrapped(sink: Any) -> Any:
    """The sink inside an ``ObservedSink`` (the sink itself otherwise)."""
    return sink.inner if isinstance(sink, ObservedSink) else sink
