"""A committed stream as the OpenAI-compatible event stream the client reads. Pure of Django.

After the commit point every content delta goes out as one ``chat.completion.chunk`` as
soon as it arrives (the first one carries ``role``), so chunks delivered equal content
chunks produced upstream. The chunks decoded from one upstream read (the held ones at
the commit point, or the several events one network read often carries) go out in one
write: nothing waits for a later read, and the server writes (one send each) per reply
drop from one per event to one per read. The end is one of:

- the finish chunk (``finish_reason`` and ``usage``), then ``data: [DONE]``;
- after a failure past the commit point (mid-stream error, idle timeout, the deadline, a
  reply its post-stream checks reject):
  an OpenAI-style error event ``{"error": {"message", "type", "code", ...}}``, then
  ``[DONE]`` (the HTTP status is long sent; only the stream can say it failed).

Closing the iterator early (the client disconnected) cancels the upstream request
(``routing.gateway.result.Committed``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from json.encoder import encode_basestring
from typing import Any

from routing.gateway.result import Committed
from routing.terms import ErrorCode

DONE = b"data: [DONE]\n\n"
_encode = json.JSONEncoder(ensure_ascii=False).encode
# A string no delta is: where a chunk's delta goes in its template (``_chunk_template``).
_MARK = "\x00delta\x00"


def _frame(obj: dict[str, Any]) -> bytes:
    return b"data: " + _encode(obj).encode() + b"\n\n"


def _chunk_template(base: dict[str, Any]) -> tuple[bytes, bytes]:
    """The bytes of a content chunk's frame before and after its delta's JSON: the
    envelope is the same for every chunk of a stream, so it is encoded once."""
    text = _encode({**base, "choices": [{"index": 0, "delta": _MARK, "finish_reason": None}]})
    # The delta is the envelope's last value: the last mark is the delta's.
    head, _, tail = text.rpartition(_encode(_MARK))
    return ("data: " + head).encode(), (tail + "\n\n").encode()


def _delta_json(delta: dict[str, Any]) -> str:
    """``_encode(delta)``, without the generic encoder for the common text delta."""
    if len(delta) == 1:
        content = delta.get("content")
        if type(content) is str:
            return '{"content": ' + encode_basestring(content) + "}"
    return _encode(delta)


def _batch(head: bytes, tail: bytes, deltas: list[dict[str, Any]]) -> Iterator[bytes]:
    """The frames of ``deltas`` in one piece; when one cannot be encoded (a lone
    surrogate), the frames before it still go out before the error."""
    frames: list[bytes] = []
    try:
        for delta in deltas:
            frames.append(head + _delta_json(delta).encode() + tail)
    except UnicodeEncodeError:
        if frames:
            yield b"".join(frames)
        raise
    yield b"".join(frames) if len(frames) > 1 else frames[0]


def sse_stream(committed: Committed) -> Iterator[bytes]:
    """The client's event stream for ``committed``: the bytes of the chunks decoded from
    one upstream read at a time, then the end (the last chunk and ``[DONE]`` together)."""
    base = {"id": f"rvo-{committed.operation_id}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": committed.route.model_id}
    head, tail = _chunk_template(base)
    first = True
    for deltas in committed.batches():
        if first:
            deltas = [{"role": "assistant", **deltas[0]}, *deltas[1:]]
            first = False
        yield from _batch(head, tail, deltas)
    result = committed.result
    assert result is not None
    # Any end but an accepted answer is an error event (a reply rejected by its post-stream
    # checks included): the OpenAI SDKs raise on an ``error`` object in the stream.
    if result.answer is None or result.error_code:
        yield _frame({"error": {
            "message": result.message or "the stream failed after its commit point",
            "type": "routing_error",
            "code": result.error_code or ErrorCode.FAILED_AFTER_COMMIT,
            "failure_class": result.failure_class or None,
            "operation_id": result.operation_id,
        }}) + DONE
        return
    answer = result.answer
    yield _frame({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": answer.finish_reason}],
                  "usage": answer.usage}) + DONE
