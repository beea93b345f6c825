"""The top-level fields a gateway request may carry; any other is refused, naming it.

Unknown fields were forwarded to every route as sent: a misspelt parameter
(``temprature``) was silently ignored by one provider and refused by another (a
provider's 400 the breaker saw), and a field no route knows reached them all. OpenAI's
chat API refuses an unknown argument with a 400 naming it; so does the gateway. The list:
OpenAI API reference, "Create chat completion" (request body), and OpenRouter's API
docs, "Parameters" and "Provider routing" (docs/sources/openrouter-api.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from routing.request_check import BodyInvalid

OPENAI_FIELDS = frozenset({
    "messages", "model", "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs",
    "max_completion_tokens", "max_tokens", "metadata", "modalities", "n", "parallel_tool_calls", "prediction",
    "presence_penalty", "prompt_cache_key", "reasoning_effort", "response_format", "safety_identifier", "seed",
    "service_tier", "stop", "store", "stream", "stream_options", "temperature", "tool_choice", "tools",
    "top_logprobs", "top_p", "user", "verbosity", "web_search_options",
})
OPENROUTER_FIELDS = frozenset({
    "models", "provider", "route", "transforms", "plugins", "reasoning", "usage", "top_k", "min_p", "top_a",
    "repetition_penalty", "debug",
})
KNOWN_FIELDS = OPENAI_FIELDS | OPENROUTER_FIELDS


def request_fields_check(body: Mapping[str, Any]) -> None:
    """Raise ``BodyInvalid`` naming the first top-level key of ``body`` that is not in
    ``KNOWN_FIELDS`` (keys in sorted order); return None when every key is known."""
    unknown = sorted(k for k in body if k not in KNOWN_FIELDS)
    if unknown:
        more = f" (and {len(unknown) - 1} more unknown)" if len(unknown) > 1 else ""
        raise BodyInvalid(unknown[0], f"unknown request field{more}; an OpenAI or OpenRouter chat completion field is expected")
