"""Fleets built in code for the verdict-quality numbers (issue "Verdicts you can trust")."""

from __future__ import annotations

import copy
from typing import Any

MODEL = "meta-llama/llama-3.3-70b-instruct"
PARAMS = ["max_tokens", "temperature", "top_p", "stop", "seed", "stream", "response_format", "structured_outputs"]
NAMES = [
    "Atlas", "Borealis", "Cinder", "Dynamo", "Ember", "Fjord", "Gale", "Harbor",
    "Indigo", "Juniper", "Kestrel", "Lumen", "Meridian", "Nimbus", "Orchid",
]


def endpoint(name: str, faults: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "provider": name,
        "tag": f"{name.lower()}/fp8",
        "quantization": "fp8",
        "supported_parameters": list(PARAMS),
        "pricing": {"prompt": "0.0000002", "completion": "0.0000004"},
        "faults": faults or {},
        **extra,
    }


def fleet(endpoints: list[dict[str, Any]], seed: int = 7) -> dict[str, Any]:
    return {"seed": seed, "models": [{"id": MODEL, "context_length": 131072, "endpoints": copy.deepcopy(endpoints)}]}


def healthy_fleet(n: int = 15, seed: int = 7) -> dict[str, Any]:
    """``n`` healthy hosts, some with the real wire's quirks switched on."""
    eps = [endpoint(name) for name in NAMES[:n]]
    quirks = [
        {"usage_chunk": "repeat_finish", "comments_between": True},
        {"usage_chunk": "extra_choice", "padding": 3},
        {"error_chunk": "observed", "padding": 1},
    ]
    for i, wire in enumerate(quirks):
        if i < len(eps):
            eps[i]["wire"] = wire
    return fleet(eps, seed)


# Every fault kind of fleet-format.md at rate 1.0, and the outcome it must give.
FAULTS: dict[str, tuple[dict[str, Any], str]] = {
    "leading_garbage": ({"leading_garbage": {"rate": 1.0, "fragments": [",", "ingu", ")"]}}, "fail"),
    "language_drift": ({"language_drift": {"rate": 1.0, "into": "es", "share": 0.5}}, "fail"),
    "mojibake": ({"mojibake": {"rate": 1.0}}, "fail"),
    "refusal_text": ({"refusal": {"rate": 1.0, "style": "text"}}, "fail"),
    "refusal_empty": ({"refusal": {"rate": 1.0, "style": "empty"}}, "fail"),
    "refusal_content_filter": ({"refusal": {"rate": 1.0, "style": "content_filter"}}, "fail"),
    "refusal_truncated": ({"refusal": {"rate": 1.0, "style": "truncated"}}, "fail"),
    "refusal_http_403": ({"refusal": {"rate": 1.0, "style": "http_403"}}, "fail"),
    "structured_fenced": ({"structured_output": "fenced"}, "fail"),
    "structured_invalid_json": ({"structured_output": "invalid_json"}, "fail"),
    "structured_missing_field": ({"structured_output": "missing_field"}, "fail"),
    "structured_wrong_type": ({"structured_output": "wrong_type"}, "fail"),
    "structured_prose": ({"structured_output": "prose"}, "fail"),
    "truncate": ({"truncate": {"rate": 1.0}}, "fail"),
    "repetition": ({"repetition": {"rate": 1.0}}, "fail"),
    "template_leak": ({"template_leak": {"rate": 1.0}}, "fail"),
    "bpe_glyphs": ({"bpe_glyphs": {"rate": 1.0}}, "fail"),
    "ttft_ms": ({"ttft_ms": 4000}, "fail"),
    "http_error_429": ({"http_error": {"rate": 1.0, "status": 429, "retry_after_s": 2}}, "frozen"),
    "http_error_502": ({"http_error": {"rate": 1.0, "status": 502}}, "frozen"),
    "timeout": ({"timeout": {"rate": 1.0}}, "frozen"),
    "reset": ({"reset": {"rate": 1.0}}, "frozen"),
    "midstream_error": ({"midstream_error": {"rate": 1.0}}, "frozen"),
    "down": ({"down": True}, "frozen"),
}


def fault_fleet(faults: dict[str, Any], seed: int = 7) -> dict[str, Any]:
    """Four healthy hosts and Borealis with ``faults``."""
    eps = [endpoint(name) for name in ("Atlas", "Harbor", "Indigo", "Orchid")]
    eps.insert(1, endpoint("Borealis", faults))
    return fleet(eps, seed)
