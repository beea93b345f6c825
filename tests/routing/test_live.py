"""The committed stream's bytes (``routing.gateway.live``): one write per upstream read, and the
same bytes as encoding every chunk whole."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from routing.gateway.live import DONE, sse_stream
from routing.stream import Answer

STRANGE = ["", "plain", ' "quoted" ', "back\\slash", "line\nbreak\ttab", "\x00\x1f\x7f", "é ü ß", "\u2028\u2029",
           "😀 emoji", "\ufeffbom", "</script>", "\x00delta\x00", '{"content": "x"}']


@dataclass
class _Route:
    model_id: str


@dataclass
class _Result:
    answer: Answer | None
    error_code: str = ""
    message: str = ""
    failure_class: str = ""
    operation_id: str = "op1"


class _Committed:
    """What ``sse_stream`` reads of ``routing.gateway.result.Committed``."""

    def __init__(self, batches: list[list[dict[str, Any]]], result: _Result, model_id: str = "acme/m-1") -> None:
        self.operation_id = "op1"
        self.route = _Route(model_id)
        self._batches = batches
        self.result: _Result | None = None
        self._final = result

    def batches(self) -> Any:
        yield from self._batches
        self.result = self._final


def _whole(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n"


def _expected(committed: _Committed, created: int) -> list[bytes]:
    """Every chunk encoded whole, one by one: the stream's bytes before writes were grouped."""
    base = {"id": "rvo-op1", "object": "chat.completion.chunk", "created": created, "model": committed.route.model_id}
    out = []
    deltas = [d for batch in committed._batches for d in batch]
    for i, delta in enumerate(deltas):
        if i == 0:
            delta = {"role": "assistant", **delta}
        out.append(_whole({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}))
    answer = committed._final.answer
    assert answer is not None
    out.append(_whole({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": answer.finish_reason},
                                           ], "usage": answer.usage}))
    out.append(DONE)
    return out


def test_the_chunks_of_one_read_go_out_in_one_write_with_the_same_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("routing.gateway.live.time.time", lambda: 1700000000.5)
    batches = [[{"content": "Held "}, {"content": "prefix"}], [{"content": " one"}],
               [{"content": " two"}, {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}, {"content": "!"}]]
    answer = Answer(content="x", tool_calls=(), finish_reason="stop", usage={"prompt_tokens": 3, "cost": 1e-06})
    committed = _Committed(batches, _Result(answer))
    writes = list(sse_stream(committed))  # type: ignore[arg-type]
    # One write per batch, then the finish chunk with [DONE].
    assert len(writes) == len(batches) + 1
    assert writes[-1].endswith(DONE) and writes[-1].count(b"data: ") == 2
    assert b"".join(writes) == b"".join(_expected(committed, 1700000000))


@pytest.mark.parametrize("text", STRANGE)
def test_a_content_chunk_has_the_bytes_of_the_whole_encoding(text: str) -> None:
    model = "acme/\x00delta\x00-é\"m"  # the model id cannot confuse the chunk template
    answer = Answer(content=text, tool_calls=(), finish_reason="length", usage=None)
    committed = _Committed([[{"content": text}, {"content": text, "extra": 1}, {"content": text}]], _Result(answer), model)
    out = b"".join(sse_stream(committed))  # type: ignore[arg-type]
    created = json.loads(out.split(b"\n\n")[0][6:])["created"]
    assert out == b"".join(_expected(committed, created))


def test_a_chunk_that_cannot_be_encoded_ends_the_stream_after_the_chunks_before_it() -> None:
    answer = Answer(content="x", tool_calls=(), finish_reason="stop")
    committed = _Committed([[{"content": "fine"}, {"content": "bad \ud800"}, {"content": "never"}]], _Result(answer))
    stream = sse_stream(committed)  # type: ignore[arg-type]
    first = next(stream)
    assert first.count(b"data: ") == 1 and b"fine" in first
    with pytest.raises(UnicodeEncodeError):
        next(stream)


def test_a_failure_after_the_commit_point_ends_with_its_error_event_and_done() -> None:
    committed = _Committed([[{"content": "a"}]], _Result(None, error_code="failed_after_commit", message="cut",
                                                        failure_class="transient"))
    writes = list(sse_stream(committed))  # type: ignore[arg-type]
    assert writes[-1].endswith(DONE)
    error = json.loads(writes[-1].split(b"\n\n")[0][6:])["error"]
    assert error == {"message": "cut", "type": "routing_error", "code": "failed_after_commit",
                     "failure_class": "transient", "operation_id": "op1"}
