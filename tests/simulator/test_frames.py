"""The simulator's cheaper frames send exactly what the plain encoding sends."""

from __future__ import annotations

import pytest

from fake_openrouter.server import coalesced
from fake_openrouter.wire import DeltaFrames, ResponseMeta, chunk, delta_choice, sse_data
from fake_openrouter.world import Head, Wait, Write


@pytest.mark.parametrize("content", ["", "Olá", " mundo\n", '"q"\\', "\u2028 \x00 \t", "日本語", "😀", "\x00content\x00"])
def test_a_delta_frame_is_the_plain_encoding_byte_for_byte(content: str) -> None:
    meta = ResponseMeta("gen-1700000000-abcdefghij0123456789", 'Atlas "x"', "bench/model-0", 1700000000)
    assert DeltaFrames(meta).frame(content) == sse_data(chunk(meta, [delta_choice(content)]))


def test_writes_without_a_wait_between_them_are_sent_together() -> None:
    head = Head(200, ())
    steps = (head, Write(b"a"), Write(b"b", first_token=True), Wait(0.1), Write(b"c"), Write(b"d"))
    assert coalesced(steps) == [head, Write(b"ab", first_token=True), Wait(0.1), Write(b"cd")]
