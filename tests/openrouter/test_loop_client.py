"""The event-loop client's own behaviour (``openrouter.aiochat`` over ``openrouter.http1_loop``):
the wait on our side before a request is on the wire is reported apart from the time to
first token (``Call.wait_ms``), a broken body reads as a plain reason, connections are
kept alive, and a client that could not send is refused when built. What both clients
share (the same ``Call`` for the same bytes) is in the other modules of this folder."""

from __future__ import annotations

import socket
import struct
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from openrouter.aiochat import LoopOpenRouterClient
from openrouter.result import Call
from tests.openrouter.scripted import DONE, SSE_HEAD, USAGE, ScriptedServer, chunk, frame, pinned

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
        "connection closed before [DONE]: the connection closed mid-body",
        "connection closed before [DONE]: [Errno 104] Connection reset by peer",
    )


def test_a_chunk_size_that_does_not_parse_is_named_not_read_as_a_closed_connection(scripted: ScriptedServer) -> None:
    def script(sock: socket.socket) -> None:
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n")

    scripted.script = script
    with LoopOpenRouterClient(base_url=scripted.base_url) as client:
        call = pinned(client, stream=True)
    assert call.transport_kind == "reset"
    assert call.error_message == "the response could not be read: the reply is not valid HTTP/1.1: Invalid character in chunk size"


def test_sequential_streams_share_one_kept_alive_connection(start_sim, default_fleet) -> None:  # type: ignore[no-untyped-def]
    # After [DONE] the rest of the chunked body is read, so the connection goes back to
    # the pool: three probes one after another open one connection, not three.
    sim = start_sim(default_fleet)
    with LoopOpenRouterClient(base_url=sim.base_url) as client:
        calls = [
            client.chat_pinned("meta-llama/llama-3.3-70b-instruct", "atlas/fp8", [{"role": "user", "content": "Hi"}],
                               max_tokens=64, stream=True, ttft_limit_s=5.0, total_timeout_s=10.0)
            for _ in range(3)
        ]
        assert [call.transport_kind for call in calls] == [None, None, None]
        pool = client._pool  # noqa: SLF001 - the pool's count of open connections is what is tested
        assert pool is not None and pool._open == 1  # noqa: SLF001


@pytest.mark.parametrize(("kwargs", "says"), [
    ({"base_url": "ftp://127.0.0.1/api/v1"}, "scheme must be http or https"),
    ({"base_url": "http://127.0.0.1:1/api/v1", "api_key": "sk-or-abc\r\nX-Smuggled: 1"}, "line break"),
])
def test_a_client_that_could_not_send_its_requests_is_refused_when_built(kwargs: dict[str, str], says: str) -> None:
    with pytest.raises(ValueError, match=says):
        LoopOpenRouterClient(**kwargs)
