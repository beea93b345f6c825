"""The canary's client over real HTTP at the wire's limits: the per-line cap, nesting too
deep to decode, the end-of-body rule, and a silent stream named by the limit that fired."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import pytest

from openrouter.client import OpenRouterClient
from openrouter.result import Call
from tests.openrouter.scripted import SSE_HEAD, ScriptedServer, chunk, frame

pytestmark = pytest.mark.timeout(30)
MESSAGES = [{"role": "user", "content": "Say hello."}]


def pinned(client: OpenRouterClient, **overrides: float) -> Call:
    limits = {"ttft_limit_s": 5.0, "total_timeout_s": 10.0, **overrides}
    return client.chat_pinned("openai/gpt-4o", "openai", MESSAGES, max_tokens=64, stream=True, **limits)


@pytest.fixture
def capped(scripted: ScriptedServer) -> Iterator[OpenRouterClient]:
    with OpenRouterClient(base_url=scripted.base_url, max_line_bytes=4096, idle_timeout_s=0.3) as c:
        yield c


def test_a_line_over_the_cap_is_too_large(scripted: ScriptedServer, capped: OpenRouterClient) -> None:
    def script(sock: socket.socket) -> None:
        sock.sendall(SSE_HEAD + frame(chunk("Hel", role=True)) + b"data: " + b"x" * 10_000)

    scripted.script = script
    call = pinned(capped)
    assert call.transport_kind == "too_large" and "line" in (call.error_message or "")
    assert call.ttft_ms is not None


def test_a_frame_nested_too_deeply_is_an_invalid_body(scripted: ScriptedServer, sclient: OpenRouterClient) -> None:
    deep = b"data: " + b"[" * 200_000 + b"]" * 200_000 + b"\n\n"
    scripted.script = lambda sock: sock.sendall(SSE_HEAD + frame(chunk("Hel", role=True)) + deep)
    call = pinned(sclient)
    assert call.transport_kind == "invalid_body" and "nested too deeply" in (call.error_message or "")


def test_a_last_finish_event_without_its_blank_line_completes(scripted: ScriptedServer, sclient: OpenRouterClient) -> None:
    last = b"data: " + json.dumps(chunk("!", finish="stop")).encode() + b"\n"  # no closing blank line
    scripted.script = lambda sock: sock.sendall(SSE_HEAD + frame(chunk("Hello", role=True)) + last)
    call = pinned(sclient)
    assert call.outcome == "completed" and call.reply is not None
    assert (call.reply.content, call.reply.finish_reason) == ("Hello!", "stop")


def test_a_stream_silent_before_content_is_named_by_the_idle_limit(scripted: ScriptedServer, capped: OpenRouterClient) -> None:
    def script(sock: socket.socket) -> None:
        sock.sendall(SSE_HEAD + frame(chunk("", role=True)))
        time.sleep(2.0)  # silent: the idle limit (0.3 s) fires long before the TTFT limit (5 s)

    scripted.script = script
    call = pinned(capped)
    assert call.transport_kind == "timeout" and not call.first_token_timeout
    assert "idle" in (call.error_message or "")


def test_a_stream_silent_past_the_ttft_limit_is_a_first_token_timeout(scripted: ScriptedServer, sclient: OpenRouterClient) -> None:
    def script(sock: socket.socket) -> None:
        sock.sendall(SSE_HEAD + frame(chunk("", role=True)))
        time.sleep(2.0)

    scripted.script = script
    call = pinned(sclient, ttft_limit_s=0.5)
    assert call.outcome == "completed" and call.first_token_timeout
    assert call.reply is not None and call.reply.ttft_ms is None
