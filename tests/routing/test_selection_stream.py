"""Capability filtering and ranking and the chat stream parser."""

from __future__ import annotations

import json

import pytest

from openrouter.jsonbody import InvalidBodyError, decode_json
from routing.contracts import contract_from_dict
from routing.selection import (
    RequestNeeds,
    candidates,
    estimate_needs,
    no_route_message,
    rank,
    suppressed_message,
)
from routing.stream import ChatStream, parse_body
from tests.routing.conftest import route

TEXT = contract_from_dict({"name": "chat", "version": 1, "workload": "text"})


def needs(chars=400, max_tokens=100):
    return estimate_needs([{"role": "user", "content": "x" * chars}], max_tokens=max_tokens)


def test_context_must_hold_the_estimated_input_and_reserved_output():
    big = needs(chars=40_000)  # ~10,000 tokens
    ranked, rejected = candidates([route("a", context_length=8192), route("b", context_length=32768)], TEXT, big, budget_left_usd=None)
    assert [r.name for r in ranked] == ["b"]
    assert rejected["a"].startswith("context 8192 <")


def test_structured_output_must_be_advertised_and_honoured():
    contract = contract_from_dict({"name": "x", "version": 1, "workload": "structured", "output_mode": "json_schema",
                                   "output_schema": {"type": "object"}})
    routes = [
        route("plain", output_modes=frozenset()),
        route("liar", structured_honoured=0.4),  # advertises json_schema, canary says 40 %
        route("good", structured_honoured=0.99),
        route("unknown"),  # no canary evidence yet: trusted
    ]
    ranked, rejected = candidates(routes, contract, needs(), budget_left_usd=None)
    assert sorted(r.name for r in ranked) == ["good", "unknown"]
    assert "honoured in 40%" in rejected["liar"] and "not advertised" in rejected["plain"]


def test_modalities_tools_class_region_cost_and_ignore_list_filter():
    contract = contract_from_dict({"name": "v", "version": 1, "workload": "vision", "modalities": ["text", "image"],
                                   "model_classes": ["frontier"], "regions": ["eu"], "max_cost_usd": 0.01})
    routes = [
        route("text-only", model_class="frontier", region="eu"),
        route("us", modalities=frozenset({"text", "image"}), model_class="frontier", region="us"),
        route("small", modalities=frozenset({"text", "image"}), model_class="small", region="eu"),
        route("pricey", modalities=frozenset({"text", "image"}), model_class="frontier", region="eu", price_completion_usd=1.0),
        route("ignored", modalities=frozenset({"text", "image"}), model_class="frontier", region="eu"),
        route("ok", modalities=frozenset({"text", "image"}), model_class="frontier", region="eu"),
    ]
    ranked, rejected = candidates(routes, contract, needs(), budget_left_usd=0.01, ignored=frozenset({"ignored/fp8"}))
    assert [r.name for r in ranked] == ["ok"]
    assert set(rejected) == {"text-only", "us", "small", "pricey", "ignored"}


def test_ranking_is_health_then_latency_then_price():
    routes = [route("slow", latency_ms=900), route("sick", health=0.5, latency_ms=10), route("fast", latency_ms=100),
              route("cheap-unmeasured", price_prompt_usd=0)]
    assert [r.name for r in rank(routes)] == ["fast", "slow", "cheap-unmeasured", "sick"]


def test_images_count_as_a_modality():
    msg = [{"role": "user", "content": [{"type": "text", "text": "what is this"}, {"type": "image_url", "image_url": {"url": "x"}}]}]
    assert estimate_needs(msg, max_tokens=None).modalities == frozenset({"text", "image"})


def _feed(stream: ChatStream, raw: bytes) -> None:
    for line in raw.split(b"\n"):
        stream.feed(line + b"\n")


def test_tool_call_deltas_are_merged_by_index():
    stream = ChatStream()
    _feed(stream, (
        b': OPENROUTER PROCESSING\n\n'
        b'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"refund","arguments":"{\\"order"}}]}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"_id\\": \\"A7\\"}"}}]}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n'
        b'data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7}}\n\n'
        b'data: [DONE]\n\n'
    ))
    answer = stream.answer()
    assert stream.done and answer.finish_reason == "tool_calls" and answer.usage == {"prompt_tokens": 5, "completion_tokens": 7}
    assert [(c.id, c.name, c.arguments) for c in answer.tool_calls] == [("c1", "refund", '{"order_id": "A7"}')]


def test_the_role_chunk_and_keepalives_are_not_output():
    stream = ChatStream()
    _feed(stream, b': OPENROUTER PROCESSING\n\ndata: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n')
    assert not stream.output_seen


def test_a_frame_that_is_not_json_is_an_error():
    stream = ChatStream()
    with pytest.raises(InvalidBodyError):
        _feed(stream, b"data: {nope\n\n")


def test_a_whole_body_with_an_error_inside_the_choice():
    body = b'\n   \n{"choices":[{"index":0,"finish_reason":"error","message":{"content":"part"},"error":{"code":502,"message":"lost"}}]}'
    parsed = parse_body(body)
    assert parsed.error is not None and parsed.error.message == "lost" and parsed.output_seen


RAW = (
    b': OPENROUTER PROCESSING\r\n\r\n'
    b'data: {"id":"gen-1","provider":"Swift","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\r\n\r\n'
    b'data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n'
    b': keep-alive between frames\n\n'
    b'event: message\ndata: {"choices":[{"index":0,\ndata: "delta":{"content":"lo \xe2\x9c\x93"}}]}\n\n'
    b'data:{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    b'data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}\n\n'
    b'data: [DONE]\n\n'
)


def test_body_bytes_split_anywhere_fold_to_the_same_answer_as_lines():
    by_lines = ChatStream()
    _feed(by_lines, RAW.replace(b"\r", b""))
    expected = by_lines.answer()
    assert expected.content == "Hello ✓" and expected.finish_reason == "stop" and expected.generation_id == "gen-1"
    for cut in range(1, len(RAW)):
        stream = ChatStream()
        stream.feed(RAW[:cut])
        stream.feed(RAW[cut:])
        stream.feed_end()
        assert stream.answer() == expected and stream.done and stream.finished, cut


def test_nothing_after_done_or_an_error_is_folded():
    stream = ChatStream()
    stream.feed(b'data: {"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
                b'data: {"choices":[{"index":0,"delta":{"content":"late"}}]}\n\n')
    stream.feed(b"data: {nope\n\n")
    assert stream.finished and stream.answer().content == "a"
    errored = ChatStream()
    errored.feed(b'data: {"error":{"code":502,"message":"lost"},"choices":[]}\n\ndata: {nope\n\n')
    assert errored.finished and errored.error is not None and errored.error.message == "lost"


def test_a_last_line_without_newline_is_folded_at_the_end_of_the_body():
    stream = ChatStream()
    stream.feed(b'data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}')
    assert stream.finish_reason is None
    stream.feed_end()
    assert stream.finish_reason == "stop" and stream.answer().content == "x"


@pytest.mark.parametrize("frame", [
    b'{"a":"\\ud83d"}',  # a lone surrogate escape (a host splitting an emoji): accepted as json.loads does
    b'{"a":NaN,"b":1e400}',
    b'{"a":123456789012345678901234567890}',
    b'{"a":-9223372036854775809,"b":18446744073709551616}',  # just past 64 bits: still exact integers
    b'{"a":1,"a":2}',
    b'\xef\xbb\xbf{"a":1}',  # a byte-order mark
])
def test_the_frame_decoder_is_json_loads(frame):
    assert repr(decode_json(frame, invalid_utf8="reject")) == repr(json.loads(frame))


@pytest.mark.parametrize("frame", [b'{"a":1} x', b'{"a":"\xff"}', b"{nope", b'{"a":1}{"b":2}'])
def test_the_frame_decoder_refuses_what_json_loads_refuses(frame):
    with pytest.raises(ValueError):
        json.loads(frame)
    with pytest.raises(ValueError):
        decode_json(frame, invalid_utf8="reject")


def test_one_event_per_chunk_folds_as_the_splitter_does():
    # Upstreams write one event per chunk; that shape skips the splitter (routing.stream).
    events = [
        b'data: {"id":"gen-2","provider":"Swift","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n',
        b': OPENROUTER PROCESSING\n\n',
        b'data: {"choices":[{"index":0,"delta":{"content":"caf\xc3\xa9 "}}]}\r\n\n',
        b'data:  {"choices":[{"index":0,"delta":{"content":"ok"}}]}\n\n',
        b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
        b'data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}\n\n',
        b'data: [DONE]\n\n',
    ]
    by_bytes = ChatStream()
    for byte in b"".join(events):
        by_bytes.feed(bytes([byte]))
    by_bytes.feed_end()
    by_event = ChatStream()
    for event in events:
        by_event.feed(event)
    by_event.feed_end()
    assert by_event.answer() == by_bytes.answer()
    assert by_event.answer().content == "café ok" and by_event.answer().generation_id == "gen-2"
    assert by_event.done and by_event.finished and by_event.usage == {"prompt_tokens": 5, "completion_tokens": 2}


def test_an_event_chunk_after_an_oversized_line_is_still_refused():
    stream = ChatStream(max_line_bytes=200)
    # The splitter hands out the event before the oversized line and refuses on the next call.
    stream.feed(b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\ndata: ' + b"z" * 300 + b"\n\n")
    assert stream.content_so_far == "a"
    with pytest.raises(InvalidBodyError):
        stream.feed(b'data: {"choices":[{"index":0,"delta":{"content":"b"}}]}\n\n')


def test_an_event_chunk_over_the_line_cap_is_refused():
    stream = ChatStream(max_line_bytes=100)
    with pytest.raises(InvalidBodyError):
        stream.feed(b'data: {"choices":[{"index":0,"delta":{"content":"' + b"q" * 200 + b'"}}]}\n\n')



def test_no_route_says_each_reason_once_and_names_max_tokens_when_only_context_is_short():
    # Found by a new user's try: max_tokens=200000 answered with every route's reason in
    # a 1.5 KB dict and no word of what to change.
    rejected = {f"r{i}": "context 131072 < 200002 tokens needed" for i in range(5)}
    rejected["small"] = "context 8192 < 200002 tokens needed"
    needs = RequestNeeds(2, 200000, frozenset({"text"}))
    assert no_route_message("chat@1", rejected, needs) == (
        "no route satisfies contract chat@1: context 131072 < 200002 tokens needed (5 routes: r0, r1, r2, ...); "
        "context 8192 < 200002 tokens needed (1 route: small). The prompt and max_tokens (200000) need more "
        "context than any route has: lower max_tokens")
    mixed = {"a": "no tool use", "b": "context 8192 < 9000 tokens needed"}
    assert no_route_message("chat@1", mixed, needs) == (
        "no route satisfies contract chat@1: no tool use (1 route: a); context 8192 < 9000 tokens needed (1 route: b)")
    assert no_route_message("chat@1", {}, needs) == "no route satisfies contract chat@1: it has no routes"


def test_every_route_suppressed_says_the_breakers_apart_from_the_routes_not_capable():
    # Found by a new user's trial: booking-agent's 503 named the one suppressed route in a
    # list with the 15 routes that lack tools, in one run of reasons.
    rejected = {f"r{i:02}": "no tool use" for i in range(15)}
    rejected["atlas-fp8"] = "circuit breaker open (transient)"
    rejected["small"] = "context 8192 < 9000 tokens needed"
    assert suppressed_message(rejected, {"atlas-fp8"}) == (
        "every capable route is suppressed by its circuit breaker. Suppressed by breakers: atlas-fp8: open "
        "(transient). Not capable: 16 routes (no tool use: 15; context 8192 < 9000 tokens needed: 1)")
    # Two suppressed, one tried already (it failed, the others' breakers are open), none incapable.
    both = {"a": "circuit breaker open (retry_after)", "b": "circuit breaker half_open (invalid_response)"}
    assert suppressed_message(both, {"a", "b"}, ["c"]) == (
        "every capable route is suppressed by its circuit breaker. Suppressed by breakers: a: open (retry_after); "
        "b: half_open (invalid_response). Tried already: c")
