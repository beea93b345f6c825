"""The OpenAI-compatible shapes the gateway answers with. Pure.

Success: a ``chat.completion`` body with the accepted answer (surrounding whitespace of
the text stripped, nothing else touched) and headers naming the final route and the
attempt count. Failure: one error shape naming the failure class and listing every
attempt, with ``Retry-After`` when every route is suppressed.
"""

from __future__ import annotations

import json
import logging
import math
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from core.shown import shown
from routing.failures import FailureClass
from routing.gateway.live import sse_stream
from routing.gateway.result import GatewayResult
from routing.terms import ErrorCode

log = logging.getLogger("routing.gateway")

HEADER_ROUTE = "X-Routing-Route"
HEADER_ATTEMPTS = "X-Routing-Attempts"
HEADER_OPERATION = "X-Routing-Operation-Id"
HEADER_CONTRACT = "X-Routing-Contract"  # request: "name@version"
HEADER_LANGUAGE = "X-Expected-Language"  # request: ISO 639-1 code the reply must be in
# One retry owner: the OpenAI SDK (and clients built on it) retries 408, 409, 429 and 5xx
# unless the response says ``x-should-retry: false``. Every error the gateway answers has
# already had the gateway's own retries and fallbacks (or would repeat a refused request):
# a client retry would repeat that work, so the gateway says so on every error.
HEADER_SHOULD_RETRY = "x-should-retry"

_STATUS: dict[str, int] = {
    ErrorCode.DEADLINE_EXHAUSTED: 504,
    ErrorCode.ALL_ROUTES_SUPPRESSED: 503,
    ErrorCode.NO_ELIGIBLE_ROUTE: 422,
    ErrorCode.REQUEST_UNSERVABLE: 422,
    ErrorCode.OUTCOME_UNKNOWN: 502,
}


@dataclass
class GatewayReply:
    """What the API sends and what the in-process client returns: HTTP ``status``, JSON
    ``body``, ``headers``; ``result`` is the gateway's full result (None for a replay or
    a request refused before the gateway ran); ``replayed`` for an idempotent replay;
    ``stream`` the event stream of an answer past its commit point (``routing.gateway.live``)."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    result: GatewayResult | None = None
    replayed: bool = False
    stream: Iterator[bytes] | None = None

    @property
    def ok(self) -> bool:
        return self.status == 200

    @property
    def content(self) -> str | None:
        """The accepted answer's text (None on failure or for tool calls only)."""
        choices = self.body.get("choices") or [{}]
        content = choices[0].get("message", {}).get("content")
        return content if isinstance(content, str) else None


def error_reply(status: int, code: str, message: str, *, failure_class: str = FailureClass.PERMANENT, **extra: Any) -> GatewayReply:
    """A refusal before or outside the gateway run (bad header, bad JSON, auth, unknown
    contract, a reused idempotency key...). Like a failed run it carries an
    ``operation_id`` (body and ``X-Routing-Operation-Id``), a fresh one per refusal, and is
    logged with it, so a caller can quote one id for any failure. ``x-should-retry: false``:
    a client retry would repeat the gateway's own work (the gateway owns retries)."""
    operation_id = uuid.uuid4().hex
    # A refused value is quoted, never repeated whole (a 100 KB field came back entire).
    message = shown(message)
    extra = {k: shown(v, 200) if isinstance(v, str) else v for k, v in extra.items()}
    body = {"error": {"type": "routing_error", "code": code, "failure_class": failure_class, "message": message,
                      "operation_id": operation_id, **extra}}
    log.info("gateway refused operation %s: %d %s: %s", operation_id, status, code, message)
    return GatewayReply(status, body, {HEADER_OPERATION: operation_id, HEADER_SHOULD_RETRY: "false"})


def reply_for(result: GatewayResult) -> GatewayReply:
    """The reply for a finished gateway run (or one streaming past its commit point)."""
    headers = {HEADER_ATTEMPTS: str(len(result.attempts)), HEADER_OPERATION: result.operation_id}
    committed = result.committed
    if committed is not None:
        headers[HEADER_ROUTE] = committed.route.name
        return GatewayReply(200, {}, headers, result, stream=sse_stream(committed))
    if result.ok and result.answer is not None and result.route is not None:
        answer = result.answer
        headers[HEADER_ROUTE] = result.route.name
        message: dict[str, Any] = {"role": "assistant", "content": answer.content.strip() if answer.content is not None else None}
        if answer.tool_calls:
            message["tool_calls"] = [
                {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
                for call in answer.tool_calls
            ]
        body = {
            "id": f"rvo-{result.operation_id}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": result.route.model_id,
            "provider": answer.provider,
            "choices": [{"index": 0, "message": message, "finish_reason": answer.finish_reason}],
            "usage": answer.usage,
        }
        return GatewayReply(200, body, headers, result)
    headers[HEADER_SHOULD_RETRY] = "false"
    last_route = result.attempts[-1].route if result.attempts else ""
    if last_route:
        headers[HEADER_ROUTE] = last_route
    status = _STATUS.get(result.error_code, 502)
    if result.error_code == ErrorCode.PERMANENT_FAILURE and result.attempts and result.attempts[-1].http_status == 400:
        status = 400  # the upstream called the request malformed: the client must fix it
    if result.retry_after_s is not None:
        headers["Retry-After"] = str(max(1, math.ceil(result.retry_after_s)))
    body = {
        "error": {
            "type": "routing_error",
            "code": result.error_code,
            "failure_class": result.failure_class,
            "message": result.message,
            **(result.fault or {}),
            "operation_id": result.operation_id,
            "contract": result.contract,
            "attempts": [a.as_dict() for a in result.attempts],
            "rejected_routes": result.rejected_routes,
        }
    }
    return GatewayReply(status, body, headers, result)


def sse_body(reply: GatewayReply) -> bytes:
    """An accepted answer as an SSE stream for clients that asked for ``stream: true``.

    The answer is validated whole before the first byte is sent (validate before accept,
    issue point 7), so the stream carries it in one content chunk, then the finish chunk
    with usage, then ``[DONE]``; a failed attempt is never visible to the client.
    """
    body = reply.body
    choice = body["choices"][0]
    base = {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"], "model": body["model"]}
    delta = {k: v for k, v in choice["message"].items() if v is not None}
    frames = [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}], "usage": body.get("usage")},
    ]
    out = b"".join(b"data: " + json.dumps(f, ensure_ascii=False).encode() + b"\n\n" for f in frames)
    return out + b"data: [DONE]\n\n"
