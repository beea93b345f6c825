"""The request as each route receives it and as the events record it. Pure of Django.

``upstream_body`` turns the client's checked body into what every route is sent (the
contract's output mode and tools, streaming on); ``route_body`` pins it to one route's
model and endpoint; ``attempt_cost`` prices an attempt; ``new_id`` names operations and
attempts; ``canonical_json`` is the request text stored beside the events.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from openrouter.values import usage_cost, usage_tokens
from routing.contracts import Contract
from routing.selection import RequestNeeds, RouteProfile
from routing.terms import OutputMode

# Request keys the gateway owns or rewrites.
_OWNED = frozenset({"model", "models", "stream", "stream_options", "provider", "route"})


# Encoders built once: ``json.dumps`` with any option builds a new encoder per call.
_compact_json = json.JSONEncoder(separators=(",", ":")).encode
canonical_json = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode


def new_id() -> str:
    """A random version-4 UUID as 32 hex digits, what ``uuid.uuid4().hex`` returns,
    without building a ``UUID`` object (its validation was ~2 us per id, two per request)."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    return raw.hex()


def upstream_body(contract: Contract, body: Mapping[str, Any]) -> dict[str, Any]:
    """The request every route receives, before the route's model and pin are added.

    The contract, not the client, decides structured output and tools: every route is
    held to the same original schema (issue point 7).
    """
    out = {k: v for k, v in body.items() if k not in _OWNED}
    out["stream"] = True
    if out.get("max_tokens") is None and out.get("max_completion_tokens") is None and contract.max_output_tokens:
        out["max_tokens"] = contract.max_output_tokens
    if contract.output_mode == OutputMode.JSON_SCHEMA:
        name = "".join(c if c.isalnum() or c in "_-" else "_" for c in contract.name)[:64]
        out["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": name, "strict": True, "schema": dict(contract.output_schema or {})},
        }
    elif contract.output_mode == OutputMode.JSON_OBJECT:
        out["response_format"] = {"type": "json_object"}
    if contract.tools and "tools" not in out:
        out["tools"] = [
            {"type": "function", "function": {"name": name, "parameters": dict(schema)}}
            for name, schema in contract.tools.items()
        ]
    return out


def route_body(route: RouteProfile, base: Mapping[str, Any], client_provider: Mapping[str, Any] | None, contract: Contract) -> bytes:
    """``base`` (from ``upstream_body``) for ``route``: its model id, and its endpoint
    pinned through the provider preferences (the client's own kept), as compact JSON."""
    body = dict(base)
    body["model"] = route.model_id
    if route.provider_tag:
        provider = dict(client_provider or {})
        # Pin the endpoint and forbid OpenRouter's own fallback: the gateway owns it.
        provider["only"] = [route.provider_tag]
        provider["allow_fallbacks"] = False
        if contract.output_mode != OutputMode.NONE or contract.tools:
            provider["require_parameters"] = True
        body["provider"] = provider
    return _compact_json(body).encode()


def attempt_cost(route: RouteProfile, usage: Mapping[str, Any] | None, needs: RequestNeeds, billed: bool) -> tuple[int, int, float]:
    """(tokens in, tokens out, USD): the upstream's reported cost when present, else the
    list price (an unknown one counts 0); a failure with no output is free unless
    ``billed`` (output was made)."""
    if usage:
        # A value that is no count (``usage_tokens``, ``usage_cost``) is an unknown one.
        prompt, completion = usage_tokens(usage.get("prompt_tokens")), usage_tokens(usage.get("completion_tokens"))
        tin = prompt if prompt is not None else needs.input_tokens
        tout = completion if completion is not None else 0
        cost = usage_cost(usage.get("cost"))
        if cost is not None:
            return tin, tout, cost
        return tin, tout, tin * (route.price_prompt_usd or 0.0) + tout * (route.price_completion_usd or 0.0)
    if billed:
        return needs.input_tokens, 0, needs.input_tokens * (route.price_prompt_usd or 0.0)
    return 0, 0, 0.0
