"""The canary's client where the connection itself misbehaves, through ``ScriptedServer``
(a tiny threaded socket server with its own timing): malformed input, truncation, resets,
10 MB bodies, keep-alive comments every 0.2 s, TTFT and deadlines."""

from __future__ import annotations

import socket
import struct
import threading
import time
from typing import Any

import pytest
from pytest_httpserver import HTTPServer

from openrouter.client import OpenRouterClient
from openrouter.result import Call
from tests.openrouter.scripted import (
    COMMENT,
    DONE,
    SSE_HEAD,
    USAGE,
    ScriptedServer,
    capture,
    chunk,
    closed_port,
    comments_for,
    frame,
    pinned,
    serve_chat,
    serve_sse,
)

pytestmark = pytest.mark.timeout(30)

# --------------------------------------------------------------------------- malformed upstream input


def test_invalid_json_body_is_invalid_body(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    serve_chat(httpserver, b'\n         \n{"id":"gen-3","choices":[{"message":')

    call = pinned(client, stream=False)

    assert call.transport_kind == "invalid_body"
    assert call.http_status == 200


def test_invalid_json_sse_frame_is_invalid_body(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    serve_sse(httpserver, frame(chunk("Hi", role=True)) + b"data: {not json\n\n" + DONE)

    call = pinned(client, stream=True)

    assert call.transport_kind == "invalid_body"


def test_invalid_utf8_inside_content_is_replaced_not_fatal(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    body = b'{"id":"g","provider":"OpenAI","choices":[{"finish_reason":"stop","message":{"content":"ol\xff\xfe!"}}]}'
    serve_chat(httpserver, body)

    call = pinned(client, stream=False)

    assert call.outcome == "completed"
    assert call.reply is not None and call.reply.content == "ol\ufffd\ufffd!"


def test_invalid_utf8_in_sse_content_is_replaced_not_fatal(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    bad = b'data: {"provider":"OpenAI","choices":[{"index":0,"delta":{"content":"a\xc3"},"finish_reason":"stop"}]}\n\n'
    serve_sse(httpserver, bad + DONE)

    call = pinned(client, stream=True)

    assert call.outcome == "completed"
    assert call.reply is not None and call.reply.content == "a\ufffd"


def test_binary_garbage_body_is_invalid_body(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    serve_chat(httpserver, bytes(range(256)) * 4)

    assert pinned(client, stream=False).transport_kind == "invalid_body"


@pytest.mark.parametrize(
    "body",
    [
        b"[]",
        b'"just a string"',
        b'{"choices": "x"}',
        b'{"choices": [5]}',
        b'{"choices": [{"message": 5, "finish_reason": 3}], "usage": [1], "provider": 9}',
        b"",
        b"\n         \n",
    ],
)
def test_odd_json_shapes_never_crash(
    httpserver: HTTPServer, client: OpenRouterClient, body: bytes
) -> None:
    serve_chat(httpserver, body)

    call = pinned(client, stream=False)

    assert call.outcome in ("completed", "transport_error")
    assert call.transport_kind in (None, "invalid_body")


def test_odd_sse_chunk_shapes_never_crash(httpserver: HTTPServer, client: OpenRouterClient) -> None:
    odd: list[dict[str, Any]] = [
        {"choices": "x"},
        {"choices": [{"delta": 5}]},
        {"choices": [{"delta": {"content": 7, "reasoning": ["x"]}, "finish_reason": 1}]},
        {"choices": [{"index": 1, "delta": {"content": "other choice"}}]},
        {"usage": "n/a", "provider": None, "error": None},
        {
            "choices": [
                {"delta": {"content": [{"type": "text", "text": "part"}]}, "finish_reason": "stop"}
            ]
        },
    ]
    serve_sse(httpserver, b"".join(frame(o) for o in odd) + b"event: ping\ndata:\n\n" + DONE)

    call = pinned(client, stream=True)

    assert call.outcome == "completed"
    assert call.reply is not None and call.reply.content == "part"


def test_ten_megabyte_body_is_too_large_without_reading_it(
    scripted: ScriptedServer, sclient: OpenRouterClient
) -> None:
    payload = b" " * (10 * 1024 * 1024)

    def script(sock: socket.socket) -> None:
        # No Content-Length: the cap must be enforced while reading.
        sock.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
        )
        sock.sendall(payload)

    scripted.script = script

    call = pinned(sclient, stream=False)

    assert call.transport_kind == "too_large"
    assert call.http_status == 200


def test_declared_content_length_over_the_cap_is_too_large(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    serve_chat(httpserver, b"{" + b" " * (1024 * 1024 + 10) + b"}")

    call = pinned(client, stream=False)

    assert call.transport_kind == "too_large"


def test_ten_megabyte_stream_is_too_large(
    scripted: ScriptedServer, sclient: OpenRouterClient
) -> None:
    def script(sock: socket.socket) -> None:
        sock.sendall(SSE_HEAD + frame(chunk("x" * 1000, role=True)))
        big = frame(chunk("y" * 10_000))
        for _ in range(1000):  # ~10 MB
            sock.sendall(big)

    scripted.script = script

    call = pinned(sclient, stream=True)

    assert call.transport_kind == "too_large"
    assert call.ttft_ms is not None


def test_truncated_sse_mid_frame_is_reset(
    scripted: ScriptedServer, sclient: OpenRouterClient
) -> None:
    whole = capture("stream-amazon-bedrock-1.sse")
    cut = whole[: whole.index(b'"choices":[]') + 5]  # inside the usage frame

    def script(sock: socket.socket) -> None:
        sock.sendall(SSE_HEAD + cut)

    scripted.script = script

    call = pinned(sclient, stream=True)

    assert call.transport_kind == "reset"
    assert call.http_status == 200
    assert call.serving_provider == "Amazon Bedrock"


def test_stream_closed_on_a_frame_boundary_before_finish_is_reset(
    scripted: ScriptedServer, sclient: OpenRouterClient
) -> None:
    scripted.script = lambda sock: sock.sendall(SSE_HEAD + COMMENT + frame(chunk("Hel", role=True)))

    call = pinned(sclient, stream=True)

    assert call.transport_kind == "reset"
    assert call.ttft_ms is not None


def test_stream_closed_after_finish_without_done_is_completed(
    scripted: ScriptedServer, sclient: OpenRouterClient
) -> None:
    scripted.script = lambda sock: sock.sendall(
        SSE_HEAD + frame(chunk("Hi", role=True)) + frame(chunk(finish="stop", usage=USAGE))
    )

    call = pinned(sclient, stream=True)

    assert call.outcome == "completed"
    assert call.reply is not None and call.reply.content == "Hi"
    assert call.usage == USAGE


def test_chunked_stream_cut_before_terminator_is_reset(
    scripted: ScriptedServer, sclient: OpenRouterClient
) -> None:
    def script(sock: socket.socket) -> None:
        sock.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        data = frame(chunk("Hi", role=True))
        sock.sendall(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        sock.sendall(b'400\r\ndata: {"partial')  # a chunk announced, then the peer vanishes

    scripted.script = script

    call = pinned(sclient, stream=True)

    assert call.transport_kind == "reset"


def test_tcp_reset_mid_stream_is_reset(scripted: ScriptedServer, sclient: OpenRouterClient) -> None:
    def script(sock: socket.socket) -> None:
        sock.sendall(SSE_HEAD + frame(chunk("Hi", role=True)))
        time.sleep(0.1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()  # RST

    scripted.script = script

    call = pinned(sclient, stream=True)

    assert call.transport_kind == "reset"


def test_connection_closed_without_response_is_reset(
    scripted: ScriptedServer, sclient: OpenRouterClient
) -> None:
    scripted.script = lambda sock: None  # read the request, then close

    call = pinned(sclient, stream=False)

    assert call.transport_kind == "reset"
    assert call.http_status is None


def test_connection_refused_is_connect() -> None:
    with OpenRouterClient(base_url=f"http://127.0.0.1:{closed_port()}/api/v1") as dead:
        call = pinned(dead, stream=True)

    assert call.transport_kind == "connect"
    assert call.http_status is None and call.reply is None


# --------------------------------------------------------------------------- TTFT and deadlines


def test_ttft_counts_from_the_first_non_empty_content_not_comments_or_role(
    scripted: ScriptedServer, sclient: OpenRouterClient
) -> None:
    def script(sock: socket.socket) -> None:
        sock.sendall(SSE_HEAD + frame(chunk(role=True)))  # role chunk, empty content
        comments_for(sock, 0.6)
        sock.sendall(
            frame(chunk(""))
            + frame({**chunk(), "choices": [{"index": 0, "delta": {"reasoning": "hmm"}}]})
        )
        comments_for(sock, 0.9)
        sock.sendall(
            frame(chunk("Hello"))
            + COMMENT
            + frame(chunk(finish="stop"))
            + frame({**chunk(), "choices": [], "usage": USAGE})
            + DONE
        )

    scripted.script = script

    call = pinned(sclient, stream=True, ttft_limit_s=5.0)

    assert call.outcome == "completed"
    assert call.reply is not None and call.reply.ttft_ms is not None
    assert 1400 <= call.reply.ttft_ms <= 2200
    assert call.ttft_ms == call.reply.ttft_ms
    assert call.reply.reasoning == "hmm"
    assert call.reply.content == "Hello"
    assert call.first_token_timeout is False


def test_no_content_within_the_limit_while_comments_flow_is_first_token_timeout(
    scripted: ScriptedServer, sclient: OpenRouterClient
) -> None:
    def script(sock: socket.socket) -> None:
        sock.sendall(SSE_HEAD + COMMENT + frame(chunk(role=True)))
        comments_for(sock, 3.0)
        sock.sendall(frame(chunk("too late")) + DONE)

    scripted.script = script

    started = time.monotonic()
    call = pinned(sclient, stream=True, ttft_limit_s=1.0, total_timeout_s=10.0)
    waited = time.monotonic() - started

    assert call.outcome == "completed"
    assert call.first_token_timeout is True
    assert call.reply is not None
    assert call.reply.ttft_ms is None and call.ttft_ms is None
    assert call.reply.stream_opened is True
    assert call.reply.finish_reason is None
    assert waited < 1.8  # comments did not keep the call alive


def test_silent_open_stream_is_first_token_timeout(
    scripted: ScriptedServer, sclient: OpenRouterClient
) -> None:
    def script(sock: socket.socket) -> None:
        sock.sendall(SSE_HEAD)
        time.sleep(2.5)

    scripted.script = script

    started = time.monotonic()
    call = pinned(sclient, stream=True, ttft_limit_s=1.0)

    assert call.first_token_timeout is True
    assert call.outcome == "completed"
    assert time.monotonic() - started < 2.2


def test_no_headers_within_the_limit_is_timeout(
    scripted: ScriptedServer, sclient: OpenRouterClient
) -> None:
    def script(sock: socket.socket) -> None:
        time.sleep(2.5)
        sock.sendall(SSE_HEAD + frame(chunk("late")) + DONE)

    scripted.script = script

    started = time.monotonic()
    call = pinned(sclient, stream=True, ttft_limit_s=1.0)

    assert call.outcome == "transport_error"
    assert call.transport_kind == "timeout"
    assert call.http_status is None
    assert call.first_token_timeout is False
    assert time.monotonic() - started < 2.0


def test_total_timeout_after_first_token_is_timeout(
    scripted: ScriptedServer, sclient: OpenRouterClient
) -> None:
    def script(sock: socket.socket) -> None:
        sock.sendall(SSE_HEAD + frame(chunk("Hi", role=True)))
        end = time.monotonic() + 3.0
        while time.monotonic() < end:
            sock.sendall(frame(chunk(" more")))
            time.sleep(0.2)

    scripted.script = script

    started = time.monotonic()
    call = pinned(sclient, stream=True, ttft_limit_s=1.0, total_timeout_s=1.2)

    assert call.transport_kind == "timeout"
    assert call.ttft_ms is not None and call.ttft_ms < 500
    assert time.monotonic() - started < 2.0


def test_keep_alive_comments_between_data_frames_are_skipped(
    scripted: ScriptedServer, sclient: OpenRouterClient
) -> None:
    def script(sock: socket.socket) -> None:
        sock.sendall(SSE_HEAD + frame(chunk("A", role=True)))
        comments_for(sock, 0.5)
        sock.sendall(frame(chunk("B")))
        comments_for(sock, 0.3)
        sock.sendall(frame(chunk(finish="stop", usage=USAGE)) + DONE)

    scripted.script = script

    call = pinned(sclient, stream=True, ttft_limit_s=1.0)

    assert call.outcome == "completed"
    assert call.reply is not None and call.reply.content == "AB"
    assert call.reply.total_ms is not None and call.reply.total_ms >= 800


def test_one_client_serves_many_threads(httpserver: HTTPServer, client: OpenRouterClient) -> None:
    serve_sse(httpserver, capture("stream-amazon-bedrock-1.sse"))
    results: list[Call] = []

    def work() -> None:
        results.append(pinned(client, stream=True))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert len(results) == 8
    assert {r.outcome for r in results} == {"completed"}
    assert {r.reply.content for r in results if r.reply} == {"Hello!"}
