"""The simulator's cheaper frames send exactly what the plain encoding sends."""

from __future__ import annotations

import pytest

from fake_openrouter.pacing import chunk_frame, coalesced, due_writes, paced_run_end, send_groups
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


def test_writes_whose_instants_have_passed_go_out_in_one_send() -> None:
    # The schedule: a at 10.0 s, b at 10.1, c at 10.2, d at 15.2; the loop is at 10.25.
    steps = [Write(b"a"), Wait(0.1), Write(b"b", first_token=True), Wait(0.1), Write(b"c"), Wait(5.0), Write(b"d")]
    joined, at, due = due_writes(steps, 1, Write(b"a"), 10.0, 10.25)
    assert joined == Write(b"abc", first_token=True)
    assert steps[at] == Wait(5.0)
    assert due == pytest.approx(10.2)


def test_a_write_on_schedule_goes_out_alone() -> None:
    first = Write(b"a", first_token=True)
    steps = [first, Wait(0.1), Write(b"b")]
    assert due_writes(steps, 1, first, 10.0, 10.05) == (first, 1, 10.0)
    # Nor does a write join one past an abort or a hang: only Wait-then-Write pairs.
    assert due_writes([first, Wait(0.1)], 1, first, 10.0, 99.0) == (first, 1, 10.0)


def test_a_long_reply_far_behind_its_schedule_is_joined_whole() -> None:
    # 200,000 writes of 100 bytes, all due: one send of all of them. (Joined by appending
    # to one growing bytes object, as a first version did, this copied about 2 TB and
    # held the simulator's loop for hours; joined once, 20 MB.)
    frame = Write(b"x" * 100)
    steps = [frame] + [Wait(0.001), frame] * 200_000
    joined, at, _ = due_writes(steps, 1, frame, 0.0, 1e9)
    assert len(joined.data) == 100 * 200_001 and at == len(steps)


def test_frames_less_than_the_quantum_apart_leave_together_at_the_last_ones_instant() -> None:
    sends = [(0.0, b"a"), (0.005, b"b"), (0.019, b"c"), (0.02, b"d"), (0.05, b"e")]
    assert send_groups(sends, 0.02) == [(0.019, b"abc"), (0.02, b"d"), (0.05, b"e")]
    # Frames further apart than the quantum (50 tokens per second or slower) go alone.
    slow = [(i * 0.05, bytes([65 + i])) for i in range(4)]
    assert send_groups(slow, 0.02) == slow
    assert send_groups([], 0.02) == []


def test_a_chunk_is_framed_as_aiohttp_frames_a_chunked_body() -> None:
    assert chunk_frame(b"abc") == b"3\r\nabc\r\n"
    assert chunk_frame(b"x" * 26) == b"1a\r\n" + b"x" * 26 + b"\r\n"


def test_the_paced_run_is_the_wait_write_pairs_up_to_anything_else() -> None:
    steps = [Write(b"a", first_token=True), Wait(0.1), Write(b"b"), Wait(0.1), Write(b"c"), Wait(1.0)]
    assert paced_run_end(steps, 1) == 5  # the trailing wait (before an abort or a hang) stays
    assert paced_run_end(steps, 0) == 0  # not a pair
    assert paced_run_end([Head(200, ()), Wait(0.1)], 1) == 1
