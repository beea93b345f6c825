"""Listing payloads, pure: GET /models, /models/{author}/{slug}/endpoints, /providers, /key.

Shapes follow docs/sources/openrouter-api.md, "Listing endpoints" and the endpoint captures; prices are per-token strings exactly
as the fleet wrote them. Latency percentiles are in milliseconds (as the 2026 capture shows)
and, as on OpenRouter, null for unauthenticated callers.
"""

from __future__ import annotations

import hashlib
from typing import Any

from fake_openrouter.fleet import DEFAULT_TOKENS_PER_S, DEFAULT_TTFT_MS, Endpoint, Fleet, Model

_ARCHITECTURE = {
    "tokenizer": "Other",
    "instruct_type": None,
    "modality": "text->text",
    "input_modalities": ["text"],
    "output_modalities": ["text"],
}


def _architecture(model: Model) -> dict[str, Any]:
    inputs = list(model.input_modalities)
    return {**_ARCHITECTURE, "modality": f"{'+'.join(inputs)}->text", "input_modalities": inputs}


def model_name(model_id: str) -> str:
    """A display name: "meta-llama/llama-3.3-70b-instruct" -> "Meta Llama: Llama 3.3 70b Instruct"."""
    author, _, slug = model_id.partition("/")
    pretty = " ".join(part.capitalize() for part in slug.split("-"))
    return f"{' '.join(p.capitalize() for p in author.split('-'))}: {pretty}"


def model_created(model_id: str) -> int:
    """A stable fictional creation time (unix s) in 2025, derived from the id."""
    offset = int(hashlib.sha256(model_id.encode()).hexdigest()[:6], 16) % (365 * 86400)
    return 1735689600 + offset


def models_payload(fleet: Fleet) -> dict[str, Any]:
    """``{"data": [Model...]}``; a model's parameters are the union over its endpoints and
    its pricing that of its cheapest endpoint."""
    return {"data": [_model_entry(model) for model in fleet.models]}


def _model_entry(model: Model) -> dict[str, Any]:
    parameters: list[str] = []
    for endpoint in model.endpoints:
        parameters.extend(p for p in endpoint.supported_parameters if p not in parameters)
    cheapest = min(
        model.endpoints, key=lambda e: e.pricing.prompt + e.pricing.completion, default=None
    )
    pricing = dict(cheapest.pricing.texts) if cheapest else {"prompt": "0", "completion": "0"}
    return {
        "id": model.id,
        "canonical_slug": model.id,
        "hugging_face_id": None,
        "name": model_name(model.id),
        "created": model_created(model.id),
        "description": f"{model_name(model.id)}, served by simulated providers.",
        "context_length": model.context_length,
        "architecture": _architecture(model),
        "pricing": pricing,
        "top_provider": {
            "context_length": model.context_length,
            "max_completion_tokens": None,
            "is_moderated": False,
        },
        "per_request_limits": None,
        "supported_parameters": parameters,
        "default_parameters": {},
        "supported_voices": None,
        "links": {"details": f"/api/v1/models/{model.id}/endpoints"},
    }


def endpoints_payload(model: Model, *, authenticated: bool) -> dict[str, Any]:
    """``{"data": {id, name, created, description, architecture, endpoints: [...]}}``."""
    return {
        "data": {
            "id": model.id,
            "name": model_name(model.id),
            "created": model_created(model.id),
            "description": f"{model_name(model.id)}, served by simulated providers.",
            "architecture": _architecture(model),
            "endpoints": [_endpoint_entry(model, e, authenticated) for e in model.endpoints],
        }
    }


def _endpoint_entry(model: Model, endpoint: Endpoint, authenticated: bool) -> dict[str, Any]:
    pricing: dict[str, Any] = dict(endpoint.pricing.texts)
    pricing["discount"] = 0
    uptime = _uptime(endpoint)
    return {
        "name": f"{endpoint.provider} | {model.id}",
        "model_id": model.id,
        "model_name": model_name(model.id),
        "context_length": endpoint.context_length,
        "pricing": pricing,
        "provider_name": endpoint.provider,
        "tag": endpoint.tag,
        "quantization": endpoint.quantization,
        "max_completion_tokens": None,
        "max_prompt_tokens": None,
        "supported_parameters": list(endpoint.supported_parameters),
        "status": 0,
        "uptime_last_30m": uptime,
        "uptime_last_5m": uptime,
        "uptime_last_1d": uptime,
        "supports_implicit_caching": False,
        "latency_last_30m": _latency(endpoint) if authenticated else None,
        "throughput_last_30m": _throughput(endpoint) if authenticated else None,
    }


def _uptime(endpoint: Endpoint) -> float:
    """Percent of requests answered without a 5xx/timeout; 429s are excluded, as on OpenRouter."""
    faults = endpoint.faults
    if faults.down:
        return 0.0
    ok = 1.0
    if faults.http_error is not None and faults.http_error.status >= 500:
        ok *= 1 - faults.http_error.rate
    if faults.timeout is not None:
        ok *= 1 - faults.timeout.rate
    return round(100 * ok, 2)


def _latency(endpoint: Endpoint) -> dict[str, float]:
    low, high = endpoint.faults.ttft_ms or DEFAULT_TTFT_MS
    span = high - low
    return {"p50": low + span * 0.5, "p75": low + span * 0.75, "p90": low + span * 0.9, "p99": high}


def _throughput(endpoint: Endpoint) -> dict[str, float]:
    rate = endpoint.faults.tokens_per_s or DEFAULT_TOKENS_PER_S
    return {"p50": rate, "p75": rate * 1.05, "p90": rate * 1.1, "p99": rate * 1.2}


def providers_payload(fleet: Fleet) -> dict[str, Any]:
    """``{"data": [{name, slug, ...}]}``, one row per provider slug (first display name wins)."""
    rows: dict[str, dict[str, Any]] = {}
    for model in fleet.models:
        for endpoint in model.endpoints:
            slug = endpoint.slug.lower()
            rows.setdefault(
                slug,
                {
                    "name": endpoint.provider,
                    "slug": slug,
                    "privacy_policy_url": None,
                    "terms_of_service_url": None,
                    "status_page_url": None,
                    "headquarters": None,
                    "datacenters": [],
                },
            )
    return {"data": list(rows.values())}


def key_payload(usage_usd: float) -> dict[str, Any]:
    """``GET /key``: an unlimited key whose usage is what this simulator has billed (USD)."""
    return {
        "data": {
            "label": "sk-or-v1-sim...",
            "limit": None,
            "limit_reset": None,
            "limit_remaining": None,
            "include_byok_in_limit": False,
            "usage": usage_usd,
            "usage_daily": usage_usd,
            "usage_weekly": usage_usd,
            "usage_monthly": usage_usd,
            "byok_usage": 0,
            "is_free_tier": False,
            "rate_limit": {"requests": -1, "interval": "10s"},
        }
    }
