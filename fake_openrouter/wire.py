"""OpenRouter's wire shapes: response bodies, SSE frames, usage and error envelopes.

Shapes follow docs/sources/openrouter-api.md, "Chat completions and streaming" and "Errors" and the captures: the older chunk key order
(id, provider, model, object, created, choices) with ``logprobs: null`` in each choice,
numeric ``error.code``, a top-level ``user_id`` on provider errors, usage with ``cost``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from decimal import Decimal
from http import HTTPStatus
from typing import Any

import orjson

from fake_openrouter.fleet import Pricing

# An OpenRouter user id has 27 characters after "user_"; this one is obviously synthetic.
USER_ID = "user_" + "simulated".ljust(27, "0")
COMMENT = b": OPENROUTER PROCESSING\n\n"
DONE = b"data: [DONE]\n\n"
# The non-streaming keep-alive unit seen in the captures: newline, nine spaces, newline.
PADDING_UNIT = b"\n" + b" " * 9 + b"\n"


@dataclass(frozen=True)
class ResponseMeta:
    """Fields shared by every chunk of one response; ``created`` is unix seconds."""

    id: str
    provider: str
    model: str
    created: int


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` as the simulator counts them: characters / 4, at least 1 ("" is 0)."""
    if not text:
        return 0
    return max(1, math.ceil(len(text) / 4))


def sse_data(obj: dict[str, Any]) -> bytes:
    """One SSE data frame."""
    return b"data: " + json_bytes(obj) + b"\n\n"


class DeltaFrames:
    """The SSE frames of one response's content deltas, byte for byte
    ``sse_data(chunk(meta, [delta_choice(content)]))``, with the envelope around the
    content encoded once per response instead of once per delta (a reply streams about
    40 of them)."""

    __slots__ = ("_head", "_tail")

    def __init__(self, meta: ResponseMeta) -> None:
        marker = "\x00content\x00"
        whole = sse_data(chunk(meta, [delta_choice(marker)]))
        self._head, _, self._tail = whole.partition(json_bytes_value(marker))

    def frame(self, content: str) -> bytes:
        """The frame of one content delta."""
        return self._head + json_bytes_value(content) + self._tail

    def cut(self, content: str) -> bytes:
        """The frame of ``content`` cut inside its content string, its data line ended
        but not the event: a frame cut mid-JSON, which nothing after it can mend."""
        value = json_bytes_value(content)
        return self._head + value[: max(1, len(value) // 2)] + b"\n"


def json_bytes_value(value: Any) -> bytes:
    """One JSON value as ``json_bytes`` encodes it inside an object.

    A string (every content delta of a stream: about 30 per reply) goes through orjson,
    which writes the same bytes as ``json.dumps(ensure_ascii=False)`` for a string in a
    fifth of the time (tests/simulator/test_wire.py compares the two); a string orjson
    refuses (a lone surrogate) takes the stdlib path and fails there as before.
    """
    if type(value) is str:
        try:
            return orjson.dumps(value)
        except orjson.JSONEncodeError:
            pass
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def json_bytes(obj: dict[str, Any]) -> bytes:
    """A compact JSON body, UTF-8, non-ASCII kept as is (as OpenRouter sends it)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def error_body(
    code: int, message: str, metadata: dict[str, Any] | None = None, *, user_id: bool = True
) -> dict[str, Any]:
    """``{"error": {code, message, metadata?}, "user_id"?}`` (docs/sources/openrouter-api.md, "Errors")."""
    error: dict[str, Any] = {"code": code, "message": message}
    if metadata is not None:
        error["metadata"] = metadata
    body: dict[str, Any] = {"error": error}
    if user_id:
        body["user_id"] = USER_ID
    return body


def provider_error_body(status: int, provider: str, model_id: str) -> dict[str, Any]:
    """The "Provider returned error" envelope with the upstream's own body in ``raw``."""
    if status == 429:
        raw = (
            f"{model_id} is temporarily rate-limited upstream. Please retry shortly, "
            "or add your own key to accumulate your rate limits."
        )
    else:
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:
            phrase = "Upstream error"
        # Like OpenAI's and Anthropic's, the upstream body arrives as a JSON-encoded string.
        raw = json.dumps({"error": {"message": phrase, "type": "upstream_error", "code": status}})
    metadata = {"raw": raw, "provider_name": provider, "is_byok": False}
    return error_body(status, "Provider returned error", metadata)


def moderation_error_body(provider: str, model_id: str, flagged_input: str) -> dict[str, Any]:
    """A 403 moderation refusal: metadata {reasons, flagged_input, provider_name, model_slug}.

    ``flagged_input`` is cut to at most 100 characters, truncated in the middle.
    """
    if len(flagged_input) > 100:
        flagged_input = flagged_input[:48] + "..." + flagged_input[-49:]
    metadata = {
        "reasons": ["violence"],
        "flagged_input": flagged_input,
        "provider_name": provider,
        "model_slug": model_id,
    }
    message = (
        f'{model_id} requires moderation on {provider}. Your input was flagged for "violence". '
        "No credits were charged."
    )
    return error_body(403, message, metadata)


def usage_block(prompt_tokens: int, completion_tokens: int, pricing: Pricing) -> dict[str, Any]:
    """``usage`` with cost in USD = tokens x per-token price (non-BYOK, 2026 shape)."""
    prompt_cost = Decimal(prompt_tokens) * pricing.prompt
    completion_cost = Decimal(completion_tokens) * pricing.completion
    cost = float(prompt_cost + completion_cost)
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "cost": cost,
        "is_byok": False,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "cost_details": {
            "upstream_inference_cost": cost,
            "upstream_inference_prompt_cost": float(prompt_cost),
            "upstream_inference_completions_cost": float(completion_cost),
        },
        "completion_tokens_details": {"reasoning_tokens": 0, "image_tokens": 0},
    }


def delta_choice(
    content: str, finish_reason: str | None = None, native_finish_reason: str | None = None
) -> dict[str, Any]:
    """A streaming choice; every delta repeats ``role`` as OpenRouter's chunks do."""
    return {
        "index": 0,
        "delta": {"role": "assistant", "content": content},
        "finish_reason": finish_reason,
        "native_finish_reason": native_finish_reason,
        "logprobs": None,
    }


def tool_call_choices(calls: list[tuple[str, str, str]]) -> list[list[dict[str, Any]]]:
    """Streaming choices for tool calls, OpenAI's way: per call (id, name, arguments) one
    delta with its id, type and name and empty arguments, then its arguments in pieces of
    about 16 characters, each delta carrying the call's ``index``."""
    out: list[list[dict[str, Any]]] = []
    for index, (call_id, name, arguments) in enumerate(calls):
        head = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        out.append([_tool_delta([head])])
        for start in range(0, len(arguments), 16):
            piece = {"index": index, "function": {"arguments": arguments[start : start + 16]}}
            out.append([_tool_delta([piece])])
    return out


def _tool_delta(calls: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "index": 0,
        "delta": {"role": "assistant", "content": None, "tool_calls": calls},
        "finish_reason": None,
        "native_finish_reason": None,
        "logprobs": None,
    }


def chunk(
    meta: ResponseMeta,
    choices: list[dict[str, Any]],
    *,
    usage: dict[str, Any] | None = None,
    error: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``chat.completion.chunk`` object."""
    obj: dict[str, Any] = {"id": meta.id, "provider": meta.provider, "model": meta.model}
    if error is not None:
        obj["error"] = error
    obj.update({"object": "chat.completion.chunk", "created": meta.created, "choices": choices})
    if usage is not None:
        obj["usage"] = usage
    return obj


def completion(
    meta: ResponseMeta,
    content: str,
    finish_reason: str,
    native_finish_reason: str | None,
    usage: dict[str, Any],
    *,
    error: dict[str, Any] | None = None,
    tool_calls: list[tuple[str, str, str]] | None = None,
) -> dict[str, Any]:
    """A non-streaming ``chat.completion``; ``error`` goes into the choice (HTTP 200 case);
    ``tool_calls`` (id, name, arguments) make the message's ``tool_calls`` (content null)."""
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None, "reasoning": None}
    if tool_calls:
        message["content"] = None
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in tool_calls
        ]
    choice: dict[str, Any] = {
        "logprobs": None,
        "finish_reason": finish_reason,
        "native_finish_reason": native_finish_reason,
        "index": 0,
        "message": message,
    }
    if error is not None:
        choice["error"] = error
    return {
        "id": meta.id,
        "provider": meta.provider,
        "model": meta.model,
        "object": "chat.completion",
        "created": meta.created,
        "choices": [choice],
        "system_fingerprint": None,
        "usage": usage,
    }
