"""The event-loop client's own behaviour (``openrouter.aiochat`` over ``aiohttp.ClientSession``):
the wait on our side before a request is on the wire is reported apart from the time to
first token (``Call.wait_ms``), a broken body reads as a plain reason, connections are
kept alive, and a client that could not send is refused when built. What both clients
share (the same ``Call`` for the same bytes) is in the other modules of this folder."""

from __future__ import annotations

import socket
import struct
import time
import tracemalloc
import zlib
from concurrent.futures import ThreadPoolExecutor

import pytest

from openrouter.aiochat import DRAIN_S, LoopOpenRouterClient
from openrouter.result import Call
from tests.openrouter.scripted import (
    DONE,
    SSE_HEAD,
    USAGE,
    ScriptedServer,
    chunk,
    frame,
    pinned,
    read_request,
)

pytestmark = pytest.mark.timeout(30)


def slow_first_token(delay_s: float):  # type: ignore[no-untyped-def]
    def script(sock: socket.socket) -> None:
        sock.sendall(SSE_HEAD)
        time.sleep(delay_s)
        sock.sendall(frame(chunk("Hello")) + frame(chunk(finish="stop")) + frame({**chunk(), "choices": [], "usage": USAGE}) + DONE)

    return script


def test_a_wait_for_the_local_pool_is_reported_apart_from_the_ttft(scripted: ScriptedServer) -> None:
    # One connection for two calls: the second waits for the first to finish (0.8 s)
    # before its request can go out. Its TTFT counts from its own sending.
    scripted.script = slow_first_token(0.8)
    with LoopOpenRouterClient(base_url=scripted.base_url, max_connections=1) as client, ThreadPoolExecutor(2) as pool:
        calls: list[Call] = list(pool.map(lambda _: pinned(client, stream=True), range(2)))

    first, second = sorted(calls, key=lambda c: c.wait_ms or 0.0)
    assert all(c.outcome == "completed" and c.reply is not None and c.reply.content == "Hello" for c in calls)
    assert first.wait_ms is not None and first.wait_ms < 400
    assert second.wait_ms is not None and second.wait_ms >= 600
    for call in calls:
        # 0.8 s at the wire; the second call's 0.8 s in the pool is not in it.
        assert call.ttft_ms is not None and 700 <= call.ttft_ms < 1400


def test_an_unused_connection_slot_costs_no_wait(scripted: ScriptedServer) -> None:
    scripted.script = slow_first_token(0.1)
    with LoopOpenRouterClient(base_url=scripted.base_url) as client:
        call = pinned(client, stream=True)
    assert call.outcome == "completed"
    assert call.wait_ms is not None and call.wait_ms < 400
    assert call.ttft_ms is not None and call.ttft_ms >= 90


def cut_chunked_body(reset: bool):  # type: ignore[no-untyped-def]
    def script(sock: socket.socket) -> None:
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        data = frame(chunk("Hel"))
        sock.sendall(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        if reset:  # an RST instead of a FIN
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    return script


@pytest.mark.parametrize("reset", [False, True])
def test_a_stream_cut_mid_body_reads_as_a_plain_reason(scripted: ScriptedServer, reset: bool) -> None:
    scripted.script = cut_chunked_body(reset)
    with LoopOpenRouterClient(base_url=scripted.base_url) as client:
        call = pinned(client, stream=True)
    assert call.transport_kind == "reset"
    assert call.error_message in (
        "connection closed before [DONE]: peer closed connection without sending complete message body "
        "(incomplete chunked read)",
        "connection closed before [DONE]: [Errno 104] Connection reset by peer",
        # aiohttp's words (the probe loop's wire), its parser's reason without its internal code
        "connection closed before [DONE]: Response payload is not completed: Not enough data to satisfy transfer length header.",
    )


def test_a_chunk_size_that_does_not_parse_is_named_not_read_as_a_closed_connection(scripted: ScriptedServer) -> None:
    def script(sock: socket.socket) -> None:
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n")

    scripted.script = script
    with LoopOpenRouterClient(base_url=scripted.base_url) as client:
        call = pinned(client, stream=True)
    assert call.transport_kind == "reset"
    # The parser's words for it (llhttp's, under aiohttp), not "connection closed".
    assert call.error_message == "malformed reply: Invalid character in chunk size"


def test_sequential_streams_share_one_kept_alive_connection(scripted: ScriptedServer) -> None:
    # After [DONE] the rest of the chunked body is read, so the connection goes back to
    # the pool: three probes one after another open one connection, not three.
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    data = frame(chunk("Hello")) + frame(chunk(finish="stop")) + DONE
    reply = head + f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n\r\n"

    def script(sock: socket.socket) -> None:
        sock.sendall(reply)
        while read_request(sock):  # the same connection's next requests, until it closes
            sock.sendall(reply)

    scripted.script = script
    with LoopOpenRouterClient(base_url=scripted.base_url) as client:
        calls = [pinned(client, stream=True) for _ in range(3)]
    assert [call.transport_kind for call in calls] == [None, None, None]
    assert len(scripted.requests) == 1  # the first request of each connection: one connection


@pytest.mark.parametrize(("kwargs", "says"), [
    ({"base_url": "ftp://127.0.0.1/api/v1"}, "is not http\\(s\\) with a host"),
    ({"base_url": "http://127.0.0.1:1/api/v1", "api_key": "sk-or-abc\r\nX-Smuggled: 1"}, "line break"),
])
def test_a_client_that_could_not_send_its_requests_is_refused_when_built(kwargs: dict[str, str], says: str) -> None:
    with pytest.raises(ValueError, match=says):
        LoopOpenRouterClient(**kwargs)


def trickle(data: bytes, every_s: float = 0.15):  # type: ignore[no-untyped-def]
    def script(sock: socket.socket) -> None:
        for i in range(len(data)):
            sock.sendall(data[i : i + 1])
            time.sleep(every_s)

    return script


def test_a_head_trickled_past_the_ttft_limit_ends_at_the_limit(scripted: ScriptedServer) -> None:
    # Each byte resets the silence timer; the TTFT limit still holds the whole head.
    scripted.script = trickle(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n" + b"X-Pad: " + b"a" * 100)
    with LoopOpenRouterClient(base_url=scripted.base_url) as client:
        started = time.monotonic()
        call = pinned(client, stream=True, ttft_limit_s=1.0, total_timeout_s=3.0)
    assert call.transport_kind == "timeout" and call.error_message == "no response headers within 1.0s"
    assert time.monotonic() - started < 1.8


@pytest.mark.parametrize("after_head", [b"000000000000000000000000000000", b"10;" + b"e" * 60])
def test_chunk_framing_trickled_without_content_ends_at_the_ttft_limit(scripted: ScriptedServer, after_head: bytes) -> None:
    # A chunk size (or its extension) trickled byte by byte never becomes body bytes.
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"

    def script(sock: socket.socket) -> None:
        sock.sendall(head)
        trickle(after_head)(sock)

    scripted.script = script
    with LoopOpenRouterClient(base_url=scripted.base_url) as client:
        started = time.monotonic()
        call = pinned(client, stream=True, ttft_limit_s=1.0, total_timeout_s=3.0)
    assert call.outcome == "completed" and call.first_token_timeout
    assert time.monotonic() - started < 1.8


def test_the_end_of_a_body_after_done_is_waited_for_briefly(scripted: ScriptedServer) -> None:
    # [DONE] arrives, the chunked body's last chunk never does: the verdict is not held
    # for a read timeout (here 5 s) waiting for it, only for DRAIN_S.
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    data = frame(chunk("Hello")) + frame(chunk(finish="stop")) + DONE

    def script(sock: socket.socket) -> None:
        sock.sendall(head + f"{len(data):x}\r\n".encode() + data + b"\r\n")
        time.sleep(6.0)

    scripted.script = script
    with LoopOpenRouterClient(base_url=scripted.base_url) as client:
        started = time.monotonic()
        call = pinned(client, stream=True, ttft_limit_s=5.0, total_timeout_s=10.0)
    assert call.outcome == "completed" and call.reply is not None and call.reply.content == "Hello"
    assert time.monotonic() - started < DRAIN_S + 1.0


def test_a_gzip_bomb_is_cut_at_the_cap_without_inflating_it_whole(scripted: ScriptedServer) -> None:
    squeezer = zlib.compressobj(9, wbits=31)
    zeros = b"\0" * (1 << 20)
    body = b"".join(squeezer.compress(zeros) for _ in range(100)) + squeezer.flush()  # 100 MB inflated
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n"
    scripted.script = lambda sock: sock.sendall(head % len(body) + body)
    tracemalloc.start()
    try:
        with LoopOpenRouterClient(base_url=scripted.base_url, max_response_bytes=1 << 20) as client:
            call = pinned(client, stream=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert call.transport_kind == "too_large"
    assert peak < 40 * (1 << 20)  # inflated whole, the body alone is 100 MB


def test_a_content_coding_that_was_not_offered_is_an_invalid_body(scripted: ScriptedServer) -> None:
    scripted.script = lambda sock: sock.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Encoding: br\r\nContent-Length: 4\r\n\r\nabcd")
    with LoopOpenRouterClient(base_url=scripted.base_url) as client:
        call = pinned(client, stream=True)
    assert call.transport_kind == "invalid_body"
    assert call.error_message == "undecodable stream: content-coding 'br' is not supported"


def test_warm_builds_the_loop_and_its_session_before_the_first_call_and_the_call_keeps_them(scripted: ScriptedServer) -> None:
    # A worker warms its client at start (reverie_ops/celery.py): the first probe then
    # finds the loop running and the session built (no SSL context on its path).
    scripted.script = slow_first_token(0.0)
    with LoopOpenRouterClient(base_url=scripted.base_url) as client:
        assert client._session is None
        client.warm()
        session = client._session
        assert session is not None and not session.closed
        assert scripted.requests == []  # warming sends nothing
        call = pinned(client, stream=True)
        assert call.outcome == "completed" and client._session is session
