"""The wire's pure parsers: the SSE splitter's end-of-body rule and line cap, the one JSON
decoder's invalid-UTF-8 policy and nesting limit, and which limit a silence ran into."""

from __future__ import annotations

import json

import pytest

from openrouter.chat import accumulate_stream, parse_chat_body
from openrouter.endpoints import parse_endpoints_body
from openrouter.jsonbody import InvalidBodyError, TooLargeError, decode_json
from openrouter.sse import SSEFrames, parse_sse_events
from openrouter.transport import silence_label
from routing.stream import ChatStream, parse_body

FINISH = b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}'
DEEP = b'{"choices":' + b"[" * 100_000 + b"]" * 100_000 + b"}"


@pytest.mark.parametrize("ending", [b"", b"\n", b"\r\n"], ids=["no-newline", "lf", "crlf"])
def test_a_last_event_without_its_blank_line_is_kept_by_the_splitter(ending: bytes) -> None:
    frames = SSEFrames()
    assert frames.feed(b": OPENROUTER PROCESSING\n\n" + FINISH + ending) == []
    assert frames.end() == [FINISH[len(b"data: "):]]


@pytest.mark.parametrize("ending", [b"", b"\n"], ids=["no-newline", "lf"])
def test_the_canary_and_the_gateway_keep_the_same_last_event(ending: bytes) -> None:
    acc = accumulate_stream(FINISH + ending)
    stream = ChatStream()
    stream.feed(FINISH + ending)
    stream.feed_end()
    assert (acc.content, acc.finish_reason) == ("hi", "stop")
    assert (stream.answer().content, stream.finish_reason) == ("hi", "stop")


def test_a_recorded_stream_keeps_its_unterminated_last_event() -> None:
    events = parse_sse_events(b"data: 1\n\ndata: 2\n")
    assert [e.data for e in events] == ["1", "2"]


def test_a_line_split_over_many_chunks_is_one_line() -> None:
    frames = SSEFrames()
    payload = b'{"x":"' + b"a" * 50_000 + b'"}'
    line = b"data: " + payload
    out: list[bytes] = []
    for i in range(0, len(line), 7):
        out += frames.feed(line[i : i + 7])
    out += frames.feed(b"\n\n")
    assert out == [payload]


def test_a_line_over_the_cap_stops_reading_at_the_cap() -> None:
    frames = SSEFrames(max_line_bytes=1000)
    frames.feed(b"data: " + b"x" * 900)
    with pytest.raises(TooLargeError) as caught:
        frames.feed(b"x" * 200)  # no newline yet: refused before the line is whole
    assert caught.value.what == "line" and caught.value.limit == 1000
    with pytest.raises(TooLargeError):
        SSEFrames(max_line_bytes=1000).feed(b"data: " + b"y" * 2000 + b"\n\n")


def test_the_gateways_stream_refuses_an_oversized_line() -> None:
    stream = ChatStream(max_line_bytes=100)
    with pytest.raises(InvalidBodyError):  # TooLargeError is one: an invalid_response
        stream.feed(b"data: " + b"z" * 200)


def test_invalid_utf8_is_replaced_for_the_canary_and_refused_for_the_gateway() -> None:
    body = b'{"choices":[{"index":0,"message":{"content":"caf\xe9"},"finish_reason":"stop"}]}'
    assert parse_chat_body(body).content == "caf\ufffd"
    with pytest.raises(InvalidBodyError, match="not UTF-8"):
        parse_body(body)
    assert decode_json(b'"\xff"', invalid_utf8="replace") == "\ufffd"
    with pytest.raises(InvalidBodyError):
        decode_json(b'"\xff"', invalid_utf8="reject")


def test_deeply_nested_json_is_an_invalid_body_never_a_recursion_error() -> None:
    for policy in ("replace", "reject"):
        with pytest.raises(InvalidBodyError, match="nested too deeply"):
            decode_json(DEEP, invalid_utf8=policy)  # type: ignore[arg-type]
    with pytest.raises(InvalidBodyError):
        parse_chat_body(DEEP)
    with pytest.raises(InvalidBodyError):
        parse_body(DEEP)
    stream = ChatStream()
    with pytest.raises(InvalidBodyError):
        stream.feed(b"data: " + DEEP + b"\n\n")
    with pytest.raises(InvalidBodyError):
        accumulate_stream(b"data: " + DEEP + b"\n\n")


def test_a_silence_is_named_by_the_limit_it_ran_into() -> None:
    # No content yet, first-token limit 5 s, idle 0.3 s: a silence at 0.3 s is the idle limit.
    assert silence_label(elapsed_s=0.3, first_token_seen=False, first_token_s=5.0, total_s=45.0) == "idle"
    assert silence_label(elapsed_s=5.0, first_token_seen=False, first_token_s=5.0, total_s=45.0) == "first_token"
    assert silence_label(elapsed_s=6.0, first_token_seen=True, first_token_s=5.0, total_s=45.0) == "idle"
    assert silence_label(elapsed_s=45.0, first_token_seen=True, first_token_s=5.0, total_s=45.0) == "total"


def test_listing_fields_that_do_not_parse_are_named_not_silently_empty() -> None:
    body = json.dumps({"data": {"endpoints": [
        {"tag": "atlas/fp8", "provider_name": "Atlas", "pricing": {"prompt": "abc", "completion": "0.0000004"},
         "context_length": "lots", "supported_parameters": "max_tokens"},
        {"tag": "borealis/fp8", "provider_name": "Borealis", "pricing": {"prompt": "0.0000002", "completion": "0.0000004"},
         "context_length": 131072},
    ]}}).encode()
    atlas, borealis = parse_endpoints_body(body)
    assert atlas.pricing_prompt is None and atlas.pricing_completion is not None
    assert atlas.problems == (
        "pricing.prompt: 'abc' is not a price (USD per token, 0 to 1000)",
        "context_length: 'lots' is not a token count (1 to 2147483647)",
        "supported_parameters: 'max_tokens' is not a list",
    )
    assert borealis.problems == ()


def test_listing_numbers_past_what_a_price_or_a_token_count_can_be_are_problems_not_a_failed_discovery() -> None:
    # Found by a new user's try: 1e999999 and 1e30 failed the whole model's discovery with
    # PostgreSQL's "numeric overflow" and "integer out of range".
    body = json.dumps({"data": {"endpoints": [
        {"tag": "atlas/fp8", "provider_name": "Atlas", "pricing": {"prompt": "1e999999", "completion": "1e-999999"},
         "context_length": 1e30, "max_completion_tokens": 0},
        {"tag": "cinder/fp8", "provider_name": "Cinder", "pricing": {"prompt": "0", "completion": "1000"},
         "context_length": 2**31 - 1},
    ]}}).encode()
    atlas, cinder = parse_endpoints_body(body)
    assert (atlas.pricing_prompt, atlas.pricing_completion, atlas.context_length, atlas.max_completion_tokens) == (None, None, None, None)
    assert [p.split(":")[0] for p in atlas.problems] == ["pricing.prompt", "pricing.completion", "context_length", "max_completion_tokens"]
    assert cinder.problems == () and cinder.context_length == 2**31 - 1
