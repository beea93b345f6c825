"""A committed stream as the OpenAI-compatible event stream the client reads. Pure of Django.

After the commit point every content delta goes out as one ``chat.completion.chunk`` as
soon as it arrives (the first one carries ``role``), so chunks delivered equal content
chunks produced upstream. The end is one of:

- the finish chunk (``finish_reason`` and ``usage``), then ``data: [DONE]``;
- after a failure past the commit point (mid-stream error, idle timeout, the deadline):
  an OpenAI-style error event ``{"error": {"message", "type", "code", ...}}``, then
  ``[DONE]`` (the HTTP status is long sent; only the stream can say it failed).

Closing the iterator early (the client disconnected) cancels the upstream request
(``routing.gateway_result.Committed``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from routing.gateway_result import Committed

DONE = b"data: [DONE]\n\n"
_encode = json.JSONEncoder(ensure_ascii=False).encode


def _frame(obj: dict[str, Any]) -> bytes:
    return b"data: " + _encode(obj).encode() + b"\n\n"


def sse_stream(committed: Committed) -> Iterator[bytes]:
    """The client's event stream for ``committed`` (bytes per event)."""
    base = {"id": f"rvo-{committed.operation_id}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": committed.route.model_id}
    first = True
    for delta in committed.deltas():
        if first:
            delta = {"role": "assistant", **delta}
            first = False
        yield _frame({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    result = committed.result
    assert result is not None
    if result.answer is None or result.error_code == "failed_after_commit":
        yield _frame({"error": {
            "message": result.message or "the stream failed after its commit point",
            "type": "routing_error",
            "code": result.error_code or "failed_after_commit",
            "failure_class": result.failure_class or None,
            "operation_id": result.operation_id,
        }})
        yield DONE
        return
    answer = result.answer
    yield _frame({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": answer.finish_reason}],
                  "usage": answer.usage})
    yield DONE
