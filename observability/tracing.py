"""Optional OpenTelemetry traces: on only when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set.

- one span per gateway request (``chat {contract}``) with a child span per attempt,
  carrying the OpenTelemetry GenAI attributes (``gen_ai.operation.name``,
  ``gen_ai.system``, ``gen_ai.request.model``, ``gen_ai.usage.input_tokens``,
  ``gen_ai.usage.output_tokens``, ``gen_ai.response.finish_reasons``) and ours
  (``reverie.contract``, ``reverie.route``, ``reverie.failure_class``,
  ``reverie.validation``, ``reverie.attempt.status``, ``reverie.fallback_reason``);
- one span per canary round (``canary round {model}``) with a child span per endpoint's
  probes (``reverie.endpoint``, verdict counts).

Spans are built after the fact from the rows the gateway and the canary already produce
(``GatewayResult``, the round's ``ProbeResult`` rows), with their recorded start and end
times: the request path and the probes carry no tracing code of their own, so a rewrite
of either keeps its traces. The exporter is the OTLP/HTTP one; the standard ``OTEL_*``
variables (service name, headers, sampler) apply as the SDK documents them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanProcessor
from opentelemetry.trace import Status, StatusCode

from routing.gateway.result import GatewayResult
from routing.terms import AttemptStatus

_SYSTEM = "openrouter"  # gen_ai.system: every route speaks OpenRouter's (OpenAI's) chat API


@dataclass
class _State:
    provider: TracerProvider | None = None


_state = _State()


def enabled() -> bool:
    """True when a tracer provider is installed (``configure``)."""
    return _state.provider is not None


def configure(exporter: SpanExporter | None = None, *, processor: SpanProcessor | None = None,
              service_name: str = "reverie-ops") -> TracerProvider:
    """Install a tracer provider exporting through ``processor`` (or a batch processor
    around ``exporter``, default the OTLP/HTTP exporter). Returns the provider."""
    provider = TracerProvider(resource=Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", service_name)}))
    if processor is None:
        if exporter is None:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            exporter = OTLPSpanExporter()
        processor = BatchSpanProcessor(exporter)
    provider.add_span_processor(processor)
    _state.provider = provider
    return provider


def configure_from_env() -> None:
    """``configure()`` when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set, else nothing."""
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") and _state.provider is None:
        configure()


def disable() -> None:
    """Stop tracing (flushes and shuts the provider down)."""
    provider, _state.provider = _state.provider, None
    if provider is not None:
        provider.shutdown()


def _tracer() -> trace.Tracer:
    assert _state.provider is not None
    return _state.provider.get_tracer("reverie_ops.observability")


def _ns(epoch_s: float) -> int:
    return int(epoch_s * 1e9)


def gateway_spans(result: GatewayResult, *, route_model: Callable[[str], str] | None = None) -> None:
    """Emit the request span and one child per attempt for ``result`` (times from the
    result: ``started_at`` epoch s, ``latency_ms``)."""
    if _state.provider is None:
        return
    tracer = _tracer()
    final = result.route
    request_model = final.model_id if final is not None else (route_model(result.attempts[0].route) if route_model and result.attempts else "")
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.system": _SYSTEM,
        "reverie.contract": result.contract,
        "reverie.outcome": result.outcome,
        "reverie.operation_id": result.operation_id,
        "reverie.attempts": len(result.attempts),
        "reverie.cost_usd": result.cost_usd,
    }
    if request_model:
        attrs["gen_ai.request.model"] = request_model
    if final is not None:
        attrs["reverie.route"] = final.name
    if result.failure_class:
        attrs["reverie.failure_class"] = str(result.failure_class)
    if result.error_code:
        attrs["error.type"] = result.error_code
    if result.answer is not None:
        attrs["gen_ai.response.finish_reasons"] = [result.answer.finish_reason or ""]
        if result.answer.model:
            attrs["gen_ai.response.model"] = result.answer.model
    attrs["gen_ai.usage.input_tokens"] = sum(a.tokens_in for a in result.attempts)
    attrs["gen_ai.usage.output_tokens"] = sum(a.tokens_out for a in result.attempts)
    start = _ns(result.started_at)
    parent = tracer.start_span(f"chat {result.contract}", start_time=start, attributes=attrs,
                               kind=trace.SpanKind.SERVER)
    ctx = trace.set_span_in_context(parent)
    for a in result.attempts:
        model = route_model(a.route) if route_model else ""
        child_attrs: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": _SYSTEM,
            "gen_ai.usage.input_tokens": a.tokens_in,
            "gen_ai.usage.output_tokens": a.tokens_out,
            "reverie.contract": result.contract,
            "reverie.route": a.route,
            "reverie.attempt.index": a.index,
            "reverie.attempt.status": a.status,
            "reverie.fallback_reason": a.fallback_reason,
            "reverie.validation": a.validation or "",
            "reverie.breaker_state": a.breaker_state,
            "reverie.hedge": a.hedge,
            "reverie.cost_usd": a.cost_usd,
        }
        if model:
            child_attrs["gen_ai.request.model"] = model
        if a.failure_class:
            child_attrs["reverie.failure_class"] = a.failure_class
            child_attrs["error.type"] = a.failure_reason or a.failure_class
        if a.http_status is not None:
            child_attrs["http.response.status_code"] = a.http_status
        if a.ttft_ms is not None:
            child_attrs["reverie.ttft_ms"] = a.ttft_ms
        if a.status == AttemptStatus.ACCEPTED and result.answer is not None:
            child_attrs["gen_ai.response.finish_reasons"] = [result.answer.finish_reason or ""]
        span = tracer.start_span(f"chat {a.route}", context=ctx, start_time=_ns(a.started_at),
                                 attributes=child_attrs, kind=trace.SpanKind.CLIENT)
        if a.status in (AttemptStatus.FAILED, AttemptStatus.REJECTED):
            span.set_status(Status(StatusCode.ERROR, a.failure_reason or a.status))
        span.end(end_time=_ns(a.started_at + a.latency_ms / 1000.0))
    if not result.ok:
        parent.set_status(Status(StatusCode.ERROR, result.error_code or result.outcome))
    parent.end(end_time=start + int(result.latency_ms * 1e6))


@dataclass(frozen=True)
class EndpointProbes:
    """One endpoint's probes in a round: tag, first start and last end (epoch s), and
    verdict counts by verdict; ``failed_checks`` the check names that failed."""

    tag: str
    started_at: float
    ended_at: float
    verdicts: dict[str, int]
    failed_checks: tuple[str, ...]
    cost_usd: float


def round_spans(*, round_id: int, model_id: str, status: str, started_at: float, ended_at: float,
                cost_usd: float, weak_probes: Iterable[str], endpoints: Iterable[EndpointProbes]) -> None:
    """Emit a canary round's span with one child per endpoint's probes (times epoch s)."""
    if _state.provider is None:
        return
    tracer = _tracer()
    parent = tracer.start_span(
        f"canary round {model_id}", start_time=_ns(started_at), kind=trace.SpanKind.INTERNAL,
        attributes={"reverie.round_id": round_id, "gen_ai.request.model": model_id, "reverie.round.status": status,
                    "reverie.cost_usd": cost_usd, "reverie.weak_probes": sorted(weak_probes)},
    )
    ctx = trace.set_span_in_context(parent)
    for ep in endpoints:
        span = tracer.start_span(
            f"probes {ep.tag}", context=ctx, start_time=_ns(ep.started_at),
            attributes={"reverie.endpoint": ep.tag, "gen_ai.request.model": model_id, "reverie.cost_usd": ep.cost_usd,
                        "reverie.failed_checks": list(ep.failed_checks),
                        **{f"reverie.verdicts.{k}": v for k, v in ep.verdicts.items()}},
        )
        if ep.failed_checks:
            span.set_status(Status(StatusCode.ERROR, ", ".join(ep.failed_checks)))
        span.end(end_time=_ns(max(ep.ended_at, ep.started_at)))
    if status != "completed":
        parent.set_status(Status(StatusCode.ERROR, status))
    parent.end(end_time=_ns(max(ended_at, started_at)))


def force_flush() -> None:
    if _state.provider is not None:
        _state.provider.force_flush()
