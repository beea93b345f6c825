"""A stream cut at its first-token deadline reads as having lasted the limit, whichever
clock fired the cut (pure logic: a call context on a hand-set clock)."""

from __future__ import annotations

from canary.judges import judge_ttft
from canary.verdicts import Reply, Verdict
from openrouter.result import CallContext
from openrouter.streamcall import StreamCall


def test_a_cut_at_the_first_token_deadline_a_hair_early_by_the_calls_clock_still_fails_the_ttft() -> None:
    # The event loop's timer fired at 9.995 s by the call's own clock (uvloop reads its
    # clock once per turn): still no content within the 10 s limit, a TTFT failure.
    now = {"s": 100.0}
    ctx = CallContext(start=100.0, clock=lambda: now["s"], expected_provider=None, max_tokens=64)
    stream = StreamCall(ctx, max_line_bytes=4096, ttft_limit_s=10.0, total_timeout_s=45.0)
    stream.feed(b": OPENROUTER PROCESSING\n\n")
    now["s"] = 109.995
    call = stream.cut("first_token_timeout")
    assert call.reply is not None and call.reply.total_ms == 10_000.0
    reply = Reply(content=call.reply.content, total_ms=call.reply.total_ms, stream_opened=True)
    assert judge_ttft(reply, 10_000.0).verdict == Verdict.FAIL


def test_a_cut_past_the_deadline_keeps_its_own_duration() -> None:
    now = {"s": 0.0}
    ctx = CallContext(start=0.0, clock=lambda: now["s"], expected_provider=None, max_tokens=64)
    stream = StreamCall(ctx, max_line_bytes=4096, ttft_limit_s=10.0, total_timeout_s=45.0)
    now["s"] = 10.25
    call = stream.cut("first_token_timeout")
    assert call.reply is not None and call.reply.total_ms == 10_250.0
