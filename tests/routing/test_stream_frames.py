"""What a gateway stream does with frames it cannot fold: a frame already received that no
later byte can mend fails the attempt before its commit point (``openrouter.heldframe``),
a frame merely split across reads does not, and a chunk whose ``choices`` is null is noted
in the attempt's record. Real HTTP from a scripted loopback server; no database."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from openrouter.heldframe import held_frame_fault
from openrouter.sse import SSEFrames
from routing.contracts import contract_from_dict
from routing.gateway.door import Gateway
from routing.gateway.upstream import Upstream
from tests.openrouter.scripted import DONE, SSE_HEAD, ScriptedServer, chunk, frame
from tests.routing.conftest import route

CHAT = contract_from_dict({
    "name": "chat", "version": 1, "workload": "text", "deadline_s": 8, "max_attempts": 1, "max_fallbacks": 0,
    "finish_reasons": ["stop"], "first_token_s": 3, "stream_commit": {"mode": "prefix", "hold_chars": 64, "hold_ms": 250}})
BODY = {"messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 60, "stream": True}
OPENING = frame(chunk("", role=True)) + frame(chunk("Hello there, traveller! "))
ENDING = frame(chunk("Welcome to the inn.")) + frame(chunk("", finish="stop")) + DONE


def served(script):
    """The final result of one streamed request to a route served by ``script``."""
    server = ScriptedServer()
    server.script = script
    upstream = Upstream(default_base_url=server.base_url)
    try:
        result = Gateway(routes=lambda: [route("a", base_url=server.base_url)], upstream=upstream).complete(
            CHAT, BODY, stream=True)
        if result.committed is not None:
            list(result.committed.deltas())
            result = result.committed.result
        return result
    finally:
        upstream.close()
        server.close()


def test_a_frame_cut_inside_its_string_in_the_first_read_fails_the_attempt_before_the_commit():
    def script(sock):
        sock.sendall(SSE_HEAD + OPENING + b'data: {"choices":[{"index":0,"delta":{"content":"We\n')
        time.sleep(0.3)

    result = served(script)
    [attempt] = result.attempts
    assert result.error_code == "attempt_budget_exhausted", "never committed: an HTTP error, not failed_after_commit"
    assert (attempt.status, attempt.failure_class, attempt.failure_reason) == ("failed", "invalid_response", "invalid_body")
    assert "before the commit point" in attempt.message and "ended inside a JSON string" in attempt.message


def test_a_frame_split_across_reads_is_waited_for_not_judged():
    # The same bytes as a healthy stream, the second content frame split mid-string
    # across two reads: the part in hand can still parse, so the stream commits.
    whole = frame(chunk("Welcome to the inn."))
    def script(sock):
        sock.sendall(SSE_HEAD + OPENING + whole[:30])
        time.sleep(0.2)
        sock.sendall(whole[30:] + frame(chunk("", finish="stop")) + DONE)

    result = served(script)
    assert result.outcome == "accepted" and result.answer.content == "Hello there, traveller! Welcome to the inn."


def test_a_chunk_whose_choices_is_null_is_noted_in_the_record_not_failed():
    def script(sock):
        sock.sendall(SSE_HEAD + OPENING)
        sock.sendall(frame({**chunk(""), "choices": None}) + ENDING)

    result = served(script)
    [attempt] = result.attempts
    assert result.outcome == "accepted" and attempt.status == "accepted"
    assert "1 chunk with choices null skipped" in attempt.validation


CAPTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "captures").glob("stream-*.sse"))


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.stem)
def test_no_split_of_a_captured_openrouter_stream_is_judged_broken(capture):
    # Real streams of five providers (reasoning deltas, usage chunks, a mid-stream error),
    # fed a byte at a time: after every byte, what is held can still parse.
    body = capture.read_bytes()
    frames = SSEFrames()
    for at in range(len(body)):
        frames.feed(body[at:at + 1])
        assert held_frame_fault(*frames.held()) is None, body[max(0, at - 60):at + 1]


STREAM = OPENING + frame(chunk("Olá, \\\"viajante\\\"\n")) + frame(chunk("", finish="stop", usage={"total_tokens": 7})) + DONE


def test_no_prefix_of_a_healthy_stream_is_judged_broken():
    # Every split point of a healthy stream (a content string with escapes and non-ASCII
    # bytes, CRLF lines, multi-line data): what is held can always still parse.
    multiline = b'data: {"choices":\ndata: [{"index":0,"delta":{"content":"x"}}]}\n\n'
    for stream in (STREAM, STREAM.replace(b"\n", b"\r\n"), multiline):
        for cut in range(len(stream) + 1):
            frames = SSEFrames()
            frames.feed(stream[:cut])
            assert held_frame_fault(*frames.held()) is None, (cut, stream[:cut][-60:])


@pytest.mark.parametrize(("held", "fault"), [
    (b'data: {"choices":[{"delta":{"content":"Hel\n', "ended inside a JSON string"),
    (b"data: <html><body>502</body></html>\n", "does not open a JSON object"),
    (b'data: {"choices":[{"delta":{}}}]}', "matches no opening one"),
    (b'data: {"choices":[]} {"choices":[]}', "after the end of the JSON object"),
    (b'data: {"content":"a\tb"}', "control character inside a JSON string"),
    (b'data: {"choices": \x01', "no JSON text holds outside a string"),
])
def test_bytes_no_continuation_can_mend_are_judged_broken(held, fault):
    frames = SSEFrames()
    frames.feed(held)
    found = held_frame_fault(*frames.held())
    assert found is not None and fault in found
