"""Time to first token against the hard limit."""

from __future__ import annotations

import math

import pytest

from canary.judges import judge_ttft
from canary.verdicts import Reply, Verdict

LIMIT_MS = 10_000


def test_first_token_within_the_limit_passes() -> None:
    judgement = judge_ttft(Reply(content="Oi!", ttft_ms=850.0, total_ms=2_300.0), LIMIT_MS)
    assert (judgement.check, judgement.verdict) == ("ttft", Verdict.PASS)
    assert judgement.evidence == {
        "ttft_ms": 850.0,
        "total_ms": 2_300.0,
        "limit_ms": 10_000.0,
        "stream_opened": True,
    }


def test_first_token_exactly_at_the_limit_passes_and_just_past_fails() -> None:
    assert judge_ttft(Reply(content="Oi", ttft_ms=10_000.0), LIMIT_MS).verdict is Verdict.PASS
    assert judge_ttft(Reply(content="Oi", ttft_ms=10_000.5), LIMIT_MS).verdict is Verdict.FAIL


def test_slow_first_token_fails_even_if_the_reply_then_arrives() -> None:
    judgement = judge_ttft(Reply(content="Oi!", ttft_ms=12_000.0, total_ms=13_000.0), LIMIT_MS)
    assert judgement.verdict is Verdict.FAIL
    assert "12.0 s" in judgement.reason


def test_open_stream_with_only_keepalives_past_the_limit_fails() -> None:
    # Status 200, role chunk and comments, then the probe gave up at 10.5 s: no content.
    reply = Reply(
        content=None, finish_reason=None, ttft_ms=None, total_ms=10_500.0, stream_opened=True
    )
    assert judge_ttft(reply, LIMIT_MS).verdict is Verdict.FAIL


def test_stream_that_ended_empty_before_the_limit_is_not_a_ttft_failure() -> None:
    reply = Reply(content="", ttft_ms=None, total_ms=900.0, stream_opened=True)
    assert judge_ttft(reply, LIMIT_MS).verdict is Verdict.INCONCLUSIVE


def test_no_response_at_all_is_left_to_the_caller() -> None:
    reply = Reply(
        content=None, finish_reason=None, ttft_ms=None, total_ms=30_000.0, stream_opened=False
    )
    judgement = judge_ttft(reply, LIMIT_MS)
    assert judgement.verdict is Verdict.INCONCLUSIVE
    assert judgement.evidence["stream_opened"] is False


def test_non_streamed_reply_within_the_limit_passes() -> None:
    assert (
        judge_ttft(Reply(content="Oi!", ttft_ms=None, total_ms=3_000.0), LIMIT_MS).verdict
        is Verdict.PASS
    )


def test_non_streamed_reply_slower_than_the_limit_is_inconclusive() -> None:
    reply = Reply(content="Oi!", ttft_ms=None, total_ms=15_000.0)
    assert judge_ttft(reply, LIMIT_MS).verdict is Verdict.INCONCLUSIVE


@pytest.mark.parametrize("ttft", [math.nan, math.inf, -5.0])
def test_impossible_ttft_values_are_not_trusted(ttft: float) -> None:
    judgement = judge_ttft(Reply(content="Oi!", ttft_ms=ttft, total_ms=None), LIMIT_MS)
    assert judgement.verdict is Verdict.INCONCLUSIVE


@pytest.mark.parametrize("limit", [0, -1, math.nan, None])
def test_a_bad_limit_is_a_caller_bug(limit: float) -> None:
    with pytest.raises(ValueError):
        judge_ttft(Reply(content="Oi!", ttft_ms=100.0), limit)
