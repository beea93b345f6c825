"""Tests for the canary's OpenRouter client (``openrouter/``) over real HTTP.

Two servers:
- pytest-httpserver (werkzeug) serves the real wire captures in
  tests/fixtures/captures/ byte for byte, with their status and content type;
- ``ScriptedServer``, a tiny threaded socket server, where a test needs control
  of timing or of the connection itself (delays, keep-alive comments every
  0.2 s, truncation, resets, 10 MB bodies).
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from pytest_httpserver import HTTPServer

from openrouter.chat import accumulate_stream, parse_chat_body
from openrouter.client import OpenRouterClient
from openrouter.endpoints import slugify_provider
from openrouter.errors import (
    DiscoveryError,
    GenerationNotFoundError,
    parse_error_body,
    parse_retry_after,
)
from openrouter.jsonbody import InvalidBodyError
from openrouter.result import Call
from openrouter.sse import parse_sse_events
from tests.openrouter.scripted import COMMENT, SSE_HEAD, ScriptedServer, chunk, frame

pytestmark = pytest.mark.timeout(30)

CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "captures"
CHAT_PATH = "/api/v1/chat/completions"
MESSAGES = [{"role": "user", "content": "Say hello."}]


def capture(name: str) -> bytes:
    return (CAPTURES / name).read_bytes()


def pinned(client: OpenRouterClient, *, stream: bool, **overrides: Any) -> Call:
    """One pinned call with test-sized limits; keyword overrides win."""
    kwargs: dict[str, Any] = {
        "max_tokens": 64,
        "stream": stream,
        "ttft_limit_s": 5.0,
        "total_timeout_s": 10.0,
    }
    kwargs.update(overrides)
    return client.chat_pinned("openai/gpt-4o", "openai", MESSAGES, **kwargs)


@pytest.fixture
def client(httpserver: HTTPServer) -> Iterator[OpenRouterClient]:
    with OpenRouterClient(base_url=httpserver.url_for("/api/v1"), api_key="sk-or-test") as c:
        yield c


def serve_chat(
    httpserver: HTTPServer,
    body: bytes,
    *,
    status: int = 200,
    content_type: str = "application/json",
    headers: dict[str, str] | None = None,
) -> None:
    httpserver.expect_request(CHAT_PATH, method="POST").respond_with_data(
        body, status=status, content_type=content_type, headers=headers
    )


def serve_sse(httpserver: HTTPServer, body: bytes, headers: dict[str, str] | None = None) -> None:
    serve_chat(httpserver, body, content_type="text/event-stream", headers=headers)


USAGE = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7, "cost": 0.00001}
DONE = b"data: [DONE]\n\n"


def comments_for(sock: socket.socket, seconds: float, every_s: float = 0.2) -> None:
    """Send a keep-alive comment every ``every_s`` for ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sock.sendall(COMMENT)
        time.sleep(every_s)


def json_response(body: bytes, status: str = "200 OK", extra: str = "") -> bytes:
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n{extra}Connection: close\r\n\r\n"
    ).encode() + body


# --------------------------------------------------------------------------- non-streaming captures


def test_whitespace_padding_before_json_body_is_tolerated(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    body = capture("chat-google-vertex-padded-1.json")
    assert body.startswith(b"\n         \n" * 42 + b"{")
    serve_chat(httpserver, body)

    call = pinned(client, stream=False, expected_provider="Google")

    assert call.outcome == "completed"
    assert call.transport_kind is None
    assert call.reply is not None
    assert call.reply.content == "LARGE-M9N3T"
    assert call.reply.finish_reason == "stop"
    assert call.reply.completion_tokens == 7
    assert call.reply.max_tokens == 64
    assert call.reply.ttft_ms is None  # not streamed
    assert call.reply.stream_opened is True
    assert call.http_status == 200
    assert call.serving_provider == "Google"
    assert call.provider_mismatch is False
    assert call.generation_id == "gen-1767762650-1LbvRjUyJPGdeomxwUuD"
    assert call.usage is not None and call.usage["cost"] == 0.00019995


def test_single_padding_unit_openai_body(httpserver: HTTPServer, client: OpenRouterClient) -> None:
    serve_chat(httpserver, capture("chat-openai-1.json"))

    call = pinned(client, stream=False, expected_provider="OpenAI")

    assert call.reply is not None and call.reply.content == "Hello!"
    assert call.usage == json.loads(capture("chat-openai-1.json"))["usage"]
    assert call.total_ms > 0 and call.ttft_ms is None


def test_structured_output_body_without_cost_in_usage(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    serve_chat(httpserver, capture("structured-output-openai-json-schema-1.json"))

    call = pinned(client, stream=False, response_format={"type": "json_object"})

    assert call.outcome == "completed"
    assert call.reply is not None
    assert json.loads(call.reply.content or "")["author"] == "Delia Owens"
    assert call.usage == {"prompt_tokens": 80, "completion_tokens": 37, "total_tokens": 117}


def test_unusual_display_name_casing_matches_case_insensitively(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    serve_chat(httpserver, capture("structured-output-sambanova-schema-ignored-1.json"))

    call = pinned(client, stream=False, expected_provider="sambanova")

    assert call.serving_provider == "SambaNova"
    assert call.provider_mismatch is False
    assert call.reply is not None and (call.reply.content or "").startswith("**Title:**")


def test_serving_provider_other_than_the_pin_is_a_mismatch(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    serve_chat(httpserver, capture("structured-output-sambanova-schema-ignored-1.json"))

    call = pinned(client, stream=False, expected_provider="Groq")

    assert call.outcome == "completed"
    assert call.serving_provider == "SambaNova"
    assert call.provider_mismatch is True


def test_no_expected_provider_means_no_mismatch(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    serve_chat(httpserver, capture("chat-openai-1.json"))

    assert pinned(client, stream=False).provider_mismatch is False


# --------------------------------------------------------------------------- request shape


def test_request_pins_the_endpoint_and_sends_attribution_headers(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    serve_chat(httpserver, capture("chat-openai-1.json"))

    client.chat_pinned(
        "openai/gpt-4o",
        "deepinfra/fp8",
        MESSAGES,
        max_tokens=32,
        temperature=0.2,
        stream=False,
        response_format={"type": "json_object"},
        require_parameters=True,
        ttft_limit_s=5.0,
        total_timeout_s=10.0,
        seed=7,
    )

    request, _ = httpserver.log[0]
    sent = request.get_json()
    assert sent["provider"] == {
        "only": ["deepinfra/fp8"],
        "allow_fallbacks": False,
        "require_parameters": True,
    }
    assert sent["model"] == "openai/gpt-4o"
    assert sent["messages"] == MESSAGES
    assert (sent["max_tokens"], sent["temperature"], sent["seed"], sent["stream"]) == (
        32,
        0.2,
        7,
        False,
    )
    assert sent["response_format"] == {"type": "json_object"}
    assert request.headers["Authorization"] == "Bearer sk-or-test"
    assert request.headers["HTTP-Referer"] == "https://github.com/reverie-ops"
    assert request.headers["X-OpenRouter-Title"] == "Reverie Ops canary"


def test_defaults_omit_require_parameters_seed_and_response_format(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    serve_sse(httpserver, capture("stream-amazon-bedrock-1.sse"))

    pinned(client, stream=True)

    sent = httpserver.log[0][0].get_json()
    assert sent["provider"] == {"only": ["openai"], "allow_fallbacks": False}
    assert "seed" not in sent and "response_format" not in sent
    assert sent["stream"] is True


def test_empty_api_key_sends_no_authorization_header(httpserver: HTTPServer) -> None:
    serve_chat(httpserver, capture("chat-openai-1.json"))
    with OpenRouterClient(
        base_url=httpserver.url_for("/api/v1"), api_key="", referer="https://x.test", title="T"
    ) as anon:
        pinned(anon, stream=False)

    request, _ = httpserver.log[0]
    assert "Authorization" not in request.headers
    assert request.headers["HTTP-Referer"] == "https://x.test"
    assert request.headers["X-OpenRouter-Title"] == "T"


# --------------------------------------------------------------------------- streaming captures


def test_usage_chunk_with_empty_choices_bedrock(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    serve_sse(httpserver, capture("stream-amazon-bedrock-1.sse"))

    call = pinned(client, stream=True, expected_provider="amazon bedrock")

    assert call.outcome == "completed"
    assert call.reply is not None
    assert call.reply.content == "Hello!"
    assert call.reply.finish_reason == "stop"
    assert call.reply.completion_tokens == 5
    assert call.reply.ttft_ms is not None and call.reply.ttft_ms == call.ttft_ms
    assert call.usage is not None and call.usage["cost"] == 0.000837
    assert call.serving_provider == "Amazon Bedrock"
    assert call.provider_mismatch is False
    assert call.generation_id == "gen-1773012759-4u9w7As08eMtL75bWtu8"


def test_usage_chunk_repeating_the_finish_choice_openai(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    serve_sse(httpserver, capture("stream-openai-1.sse"))

    call = pinned(client, stream=True, expected_provider="OpenAI")

    assert call.outcome == "completed"
    assert call.reply is not None and call.reply.finish_reason == "stop"
    assert call.usage is not None
    assert call.usage["cost"] == 0.0133176
    assert call.usage["server_tool_use_details"] == {"web_search_requests": 1}
    assert call.reply.completion_tokens == 30
    # Content is not duplicated by the repeated finish choice (its delta is empty).
    acc = accumulate_stream(capture("stream-openai-1.sse"))
    assert call.reply.content == acc.content and acc.native_finish_reason == "completed"


def test_usage_on_extra_choice_with_null_finish_keeps_last_non_null_finish_xai(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    serve_sse(httpserver, capture("stream-xai-1.sse"))

    call = pinned(client, stream=True, expected_provider="XAI")

    assert call.outcome == "completed"
    assert call.reply is not None
    assert call.reply.finish_reason == "stop"  # the usage chunk's null does not erase it
    assert (
        call.usage is not None
        and call.usage["completion_tokens_details"]["reasoning_tokens"] == 118
    )
    assert call.usage["prompt_tokens_details"]["cached_tokens"] == 679
    assert call.reply.content is not None and call.reply.content.endswith(" What's on your mind?")
    assert call.serving_provider == "xAI"
    assert call.provider_mismatch is False


def test_keep_alive_comments_between_frames_and_reasoning_are_not_content(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    raw = capture("stream-google-vertex-claude-reasoning-1.sse")
    # The capture has a second comment between data frames.
    assert raw.count(b": OPENROUTER PROCESSING") == 2 and not raw.startswith(b"data")
    serve_sse(httpserver, raw)

    call = pinned(client, stream=True, expected_provider="Google AI Studio")

    assert call.outcome == "completed"
    assert call.reply is not None
    assert call.reply.reasoning is not None and call.reply.reasoning.startswith(
        "The user is greeting me"
    )
    assert call.reply.content is not None and call.reply.content.startswith(
        "I'm doing well, thank you"
    )
    assert call.reply.completion_tokens == 112
    assert call.serving_provider == "Google"
    assert call.provider_mismatch is True  # "Google" is Vertex, not AI Studio


def test_midstream_error_with_null_finish_followed_by_done_is_error_chunk(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    serve_sse(httpserver, capture("stream-minimax-midstream-error-1.sse"))

    call = pinned(client, stream=True, expected_provider="MiniMax")

    assert call.outcome == "transport_error"
    assert call.transport_kind == "error_chunk"
    assert call.reply is None
    assert call.http_status == 200
    assert call.error_message == "Token limit reached"
    assert call.error_raw is None
    assert call.usage is not None and call.usage["completion_tokens"] == 10
    assert call.serving_provider == "Minimax"
    assert call.provider_mismatch is False
    assert call.generation_id == "gen-1762179802-UN8pkJI4AGZvryk0kFnb"
    assert call.ttft_ms is None  # only reasoning arrived


def test_documented_error_chunk_with_object_raw_atlascloud(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    error_member = json.loads(capture("error-502-midstream-atlascloud.json"))
    body = (
        COMMENT
        + frame(chunk("Hi", role=True, provider="AtlasCloud"))
        + frame(chunk(finish="error", provider="AtlasCloud", error=error_member))
    )
    serve_sse(httpserver, body)

    call = pinned(client, stream=True, expected_provider="AtlasCloud")

    assert call.transport_kind == "error_chunk"
    assert call.error_message is not None and call.error_message.startswith(
        "Upstream error from AtlasCloud"
    )
    assert call.error_raw == error_member["metadata"]["raw"]
    assert isinstance(call.error_raw, dict) and call.error_raw["type"] == "BadRequestError"
    assert call.serving_provider == "AtlasCloud"
    assert call.ttft_ms is not None  # content arrived before the error


# --------------------------------------------------------------------------- HTTP error captures


@pytest.mark.parametrize(
    ("name", "status", "kind", "message_start", "raw_type", "provider"),
    [
        (
            "error-400-json-schema-unsupported-openai.json",
            400,
            "http_4xx",
            "Provider returned error",
            str,
            "OpenAI",
        ),
        (
            "error-400-provider-returned-error-anthropic.json",
            400,
            "http_4xx",
            "Provider returned error",
            str,
            "Anthropic",
        ),
        ("error-401-user-not-found.json", 401, "http_4xx", "User not found.", type(None), None),
        (
            "error-402-insufficient-credits.json",
            402,
            "http_4xx",
            "This request requires more credits",
            type(None),
            None,
        ),
        (
            "error-402-previous-errors-limit-source.json",
            402,
            "http_4xx",
            "This request requires more credits",
            type(None),
            None,
        ),
        (
            "error-404-no-allowed-providers.json",
            404,
            "http_4xx",
            "No allowed providers are available",
            type(None),
            None,
        ),
        (
            "error-404-no-endpoints-free-model.json",
            404,
            "http_4xx",
            "No endpoints found for google/gemini-2.5-flash:free.",
            type(None),
            None,
        ),
        (
            "error-429-provider-returned-error-google.json",
            429,
            "http_429",
            "Provider returned error",
            str,
            "Google",
        ),
    ],
)
def test_error_captures_are_classified_with_their_message_and_raw(
    httpserver: HTTPServer,
    client: OpenRouterClient,
    name: str,
    status: int,
    kind: str,
    message_start: str,
    raw_type: type,
    provider: str | None,
) -> None:
    body = capture(name)
    serve_chat(httpserver, body, status=status)

    call = pinned(client, stream=True, expected_provider=provider or "OpenAI")

    assert call.outcome == "transport_error"
    assert call.transport_kind == kind
    assert call.http_status == status
    assert call.reply is None
    assert call.error_message is not None and call.error_message.startswith(message_start)
    assert isinstance(call.error_raw, raw_type)
    expected_raw = json.loads(body)["error"].get("metadata", {}).get("raw")
    assert call.error_raw == expected_raw  # kept exactly as given
    assert call.serving_provider == provider
    assert call.provider_mismatch is False


def test_json_encoded_string_raw_stays_a_string(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    serve_chat(httpserver, capture("error-400-provider-returned-error-anthropic.json"), status=400)

    call = pinned(client, stream=False)

    assert isinstance(call.error_raw, str)
    assert json.loads(call.error_raw)["request_id"] == "req_011CWsW8qRDXNXZBwuvPzGjC"


def test_429_records_retry_after_and_header_generation_id(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    serve_chat(
        httpserver,
        capture("error-429-provider-returned-error-google.json"),
        status=429,
        headers={"Retry-After": "7", "X-Generation-Id": "gen-hdr-1"},
    )

    call = pinned(client, stream=False, expected_provider="Google AI Studio")

    assert call.transport_kind == "http_429"
    assert call.retry_after_s == 7.0
    assert call.generation_id == "gen-hdr-1"
    assert call.error_raw.startswith("google/gemini-2.0-flash-exp:free is temporarily rate-limited")
    assert call.provider_mismatch is True  # error came from "Google" (Vertex)


def test_503_with_html_body_is_http_5xx_with_excerpt(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    serve_chat(
        httpserver,
        b"<html><body><h1>503 Service Unavailable</h1></body></html>",
        status=503,
        content_type="text/html",
        headers={"Retry-After": "2.5"},
    )

    call = pinned(client, stream=True)

    assert call.transport_kind == "http_5xx"
    assert call.http_status == 503
    assert call.retry_after_s == 2.5
    assert call.error_message is not None and "503 Service Unavailable" in call.error_message


def test_403_moderation_is_its_own_kind(httpserver: HTTPServer, client: OpenRouterClient) -> None:
    body = {
        "error": {
            "code": 403,
            "message": 'gpt-4o requires moderation on OpenAI. Your input was flagged for "violence".',
            "metadata": {
                "reasons": ["violence"],
                "flagged_input": "some…text",
                "provider_name": "OpenAI",
                "model_slug": "openai/gpt-4o",
            },
        }
    }
    serve_chat(httpserver, json.dumps(body).encode(), status=403)

    call = pinned(client, stream=False, expected_provider="OpenAI")

    assert call.transport_kind == "moderation"
    assert call.error_message is not None and "violence" in call.error_message
    assert call.serving_provider == "OpenAI"


def test_403_guardrail_is_plain_http_4xx(httpserver: HTTPServer, client: OpenRouterClient) -> None:
    body = {
        "error": {
            "code": 403,
            "message": "Request blocked: prompt injection patterns detected",
            "metadata": {"patterns": ["x"]},
        }
    }
    serve_chat(httpserver, json.dumps(body).encode(), status=403)

    assert pinned(client, stream=False).transport_kind == "http_4xx"


def test_http_200_body_that_is_only_an_error_is_error_chunk(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    # Seen in the wild: a 524 error body returned with HTTP 200 after padding.
    body = (
        b"\n         \n"
        + json.dumps(
            {
                "error": {
                    "message": "Provider returned error",
                    "code": 524,
                    "metadata": {"raw": "error code: 524", "provider_name": "Google AI Studio"},
                },
                "user_id": "user_x",
            }
        ).encode()
    )
    serve_chat(httpserver, body)

    call = pinned(client, stream=False, expected_provider="Google AI Studio")

    assert call.transport_kind == "error_chunk"
    assert call.http_status == 200
    assert call.error_raw == "error code: 524"
    assert call.serving_provider == "Google AI Studio"


def test_http_200_body_with_finish_reason_error_is_error_chunk(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    body = {
        "id": "gen-2",
        "provider": "DeepInfra",
        "choices": [
            {
                "index": 0,
                "finish_reason": "error",
                "message": {"role": "assistant", "content": "partial"},
                "error": {
                    "code": 502,
                    "message": "Network connection lost.",
                    "metadata": {"error_type": "provider_unavailable"},
                },
            }
        ],
        "usage": USAGE,
    }
    serve_chat(httpserver, json.dumps(body).encode())

    call = pinned(client, stream=False, expected_provider="DeepInfra")

    assert call.transport_kind == "error_chunk"
    assert call.error_message == "Network connection lost."
    assert call.usage == USAGE
    assert call.generation_id == "gen-2"


def test_stream_request_answered_with_json_error_body_is_parsed(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    serve_chat(httpserver, b'{"error":{"code":502,"message":"boom"}}')

    call = pinned(client, stream=True)

    assert call.transport_kind == "error_chunk"
    assert call.error_message == "boom"


# --------------------------------------------------------------------------- endpoints and generation


def test_endpoints_old_shape_gemini(httpserver: HTTPServer, client: OpenRouterClient) -> None:
    httpserver.expect_request(
        "/api/v1/models/google/gemini-2.5-pro-preview/endpoints"
    ).respond_with_data(
        capture("endpoints-google-gemini-2.5-pro-preview.json"), content_type="application/json"
    )

    endpoints = client.list_endpoints("google/gemini-2.5-pro-preview")

    assert [e.tag for e in endpoints] == ["google-vertex", "google-ai-studio"]
    vertex, studio = endpoints
    assert (vertex.provider_name, vertex.provider_slug) == ("Google", "google-vertex")
    assert studio.provider_name == "Google AI Studio"
    assert vertex.quantization is None
    assert vertex.context_length == 1048576
    assert vertex.max_completion_tokens == 65535
    assert vertex.pricing_prompt == Decimal("0.00000125")
    assert vertex.pricing_completion == Decimal("0.00001")
    assert "structured_outputs" in vertex.supported_parameters
    assert isinstance(vertex.supported_parameters, tuple)
    assert vertex.status == 0
    assert vertex.raw["pricing"]["image"] == "0.00516"


def test_endpoints_without_tag_derive_the_slug_from_the_name(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    body = json.loads(capture("endpoints-google-gemini-2.5-pro-preview.json"))
    for endpoint in body["data"]["endpoints"]:
        del endpoint["tag"]  # the shape before late May 2025
    httpserver.expect_request(
        "/api/v1/models/google/gemini-2.5-pro-preview/endpoints"
    ).respond_with_json(body)

    endpoints = client.list_endpoints("google/gemini-2.5-pro-preview")

    assert [(e.tag, e.provider_slug) for e in endpoints] == [
        ("google", "google"),
        ("google-ai-studio", "google-ai-studio"),
    ]


def test_endpoints_new_shape_kimi_with_variants_and_degraded_status(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    httpserver.expect_request("/api/v1/models/moonshotai/kimi-k3/endpoints").respond_with_data(
        capture("endpoints-moonshotai-kimi-k3-reduced.json"), content_type="application/json"
    )

    endpoints = client.list_endpoints("moonshotai/kimi-k3")

    assert [e.tag for e in endpoints] == ["fireworks", "alibaba", "fireworks/fast", "morph/fast"]
    fast = endpoints[2]
    assert (fast.provider_name, fast.provider_slug) == ("Fireworks", "fireworks")
    assert "tools" in endpoints[0].supported_parameters and "tools" not in fast.supported_parameters
    assert fast.pricing_completion == Decimal("0.0000225")
    assert fast.max_completion_tokens is None
    assert [e.status for e in endpoints] == [0, -2, 0, -2]
    assert endpoints[3].quantization == "fp4"
    assert fast.raw["latency_last_30m"]["p50"] == 814.5


def test_empty_endpoint_list_is_valid(httpserver: HTTPServer, client: OpenRouterClient) -> None:
    httpserver.expect_request("/api/v1/models/openrouter/auto/endpoints").respond_with_json(
        {"data": {"id": "openrouter/auto", "endpoints": []}}
    )

    assert client.list_endpoints("openrouter/auto") == []


def test_discovery_error_carries_status_and_body_excerpt(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    httpserver.expect_request("/api/v1/models/acme/nope/endpoints").respond_with_json(
        {"error": {"code": 404, "message": "Resource not found"}}, status=404
    )

    with pytest.raises(DiscoveryError) as info:
        client.list_endpoints("acme/nope")

    assert info.value.status == 404
    assert "HTTP 404" in str(info.value) and "Resource not found" in str(info.value)


def test_discovery_error_on_invalid_json_and_on_connect_failure(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    httpserver.expect_request("/api/v1/models/acme/bad/endpoints").respond_with_data("<html>oops")
    with pytest.raises(DiscoveryError, match="not JSON"):
        client.list_endpoints("acme/bad")

    with OpenRouterClient(base_url=f"http://127.0.0.1:{_closed_port()}/api/v1") as dead:
        with pytest.raises(DiscoveryError, match="could not connect"):
            dead.list_endpoints("acme/any")


def test_get_generation_returns_data(httpserver: HTTPServer, client: OpenRouterClient) -> None:
    httpserver.expect_request(
        "/api/v1/generation", query_string={"id": "gen-1771967973-0hZ8J5kY7qLMOKbPx0u3"}
    ).respond_with_data(
        capture("generation-deepinfra-cancelled-stream.json"), content_type="application/json"
    )

    data = client.get_generation("gen-1771967973-0hZ8J5kY7qLMOKbPx0u3")

    assert data["provider_name"] == "DeepInfra"
    assert data["cancelled"] is True and data["finish_reason"] is None
    assert data["total_cost"] == 0.00003452
    assert data["provider_responses"][0]["status"] == 200


def test_get_generation_404_raises_not_found(
    httpserver: HTTPServer, client: OpenRouterClient
) -> None:
    httpserver.expect_request("/api/v1/generation").respond_with_json(
        {"error": {"code": 404, "message": "Generation not found"}}, status=404
    )

    with pytest.raises(GenerationNotFoundError, match="not found") as info:
        client.get_generation("gen-missing")
    assert info.value.status == 404


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


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_connection_refused_is_connect() -> None:
    with OpenRouterClient(base_url=f"http://127.0.0.1:{_closed_port()}/api/v1") as dead:
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


# --------------------------------------------------------------------------- pure helpers


def test_parse_chat_body_strips_padding_and_rejects_non_objects() -> None:
    parsed = parse_chat_body(capture("chat-openai-1.json"))
    assert (parsed.content, parsed.provider, parsed.native_finish_reason) == (
        "Hello!",
        "OpenAI",
        "stop",
    )

    with pytest.raises(InvalidBodyError):
        parse_chat_body(b"\n         \n")
    with pytest.raises(InvalidBodyError):
        parse_chat_body(b"[1, 2]")


def test_parse_sse_events_drops_comments_and_keeps_data() -> None:
    events = parse_sse_events(capture("stream-minimax-midstream-error-1.sse"))

    assert len(events) == 5  # 17 comment lines produce no event
    assert events[-1].data == "[DONE]"
    assert all(e.data for e in events)


def test_accumulate_stream_reads_minimax_error_and_usage() -> None:
    acc = accumulate_stream(capture("stream-minimax-midstream-error-1.sse"))

    assert acc.error is not None and acc.error.code == 400
    assert acc.finish_reason == "length"  # two "length" chunks before the error
    assert acc.reasoning == "We need to respond to a greeting. The user"
    assert acc.content == "" and acc.ttft_ms is None
    assert acc.usage is not None and acc.usage["total_tokens"] == 53


def test_parse_error_body_reads_bare_error_member_with_object_raw() -> None:
    info = parse_error_body(capture("error-502-midstream-atlascloud.json"))

    assert info.code == 502
    assert info.provider_name == "AtlasCloud"
    assert info.raw == {
        "object": "error",
        "message": "Unexpected token 173781 while expecting start token 200006",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }


def test_parse_error_body_handles_text_and_invalid_utf8() -> None:
    assert parse_error_body(b"Bad Gateway\n").message == "Bad Gateway"
    assert parse_error_body(b"\xff\xfe oops").message == "\ufffd\ufffd oops"
    assert parse_error_body(b"").message is None


def test_parse_retry_after_seconds_and_http_date() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("30") == 30.0
    assert parse_retry_after("Thu, 01 Jan 2026 12:00:45 GMT", now=now) == 45.0
    assert parse_retry_after("Thu, 01 Jan 2026 11:00:00 GMT", now=now) == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def test_slugify_provider_display_names() -> None:
    assert slugify_provider("Google AI Studio") == "google-ai-studio"
    assert slugify_provider("xAI") == "xai"
    assert slugify_provider("Z.AI") == "z-ai"


def test_streamed_calls_reuse_one_connection(start_sim, default_fleet) -> None:  # type: ignore[no-untyped-def]
    """After ``[DONE]`` the rest of the body is drained, so sequential probes share one
    kept-alive connection instead of a new TCP (and, on OpenRouter, TLS) handshake each."""
    sim = start_sim(default_fleet)
    transport = httpx.HTTPTransport(retries=0)
    with OpenRouterClient(base_url=sim.base_url, transport=transport) as c:
        calls = [
            c.chat_pinned("meta-llama/llama-3.3-70b-instruct", "atlas/fp8", MESSAGES, max_tokens=64, stream=True,
                          ttft_limit_s=5.0, total_timeout_s=10.0)
            for _ in range(3)
        ]
        assert [call.transport_kind for call in calls] == [None, None, None]
        assert all(call.reply is not None and call.reply.finish_reason for call in calls)
        # httpcore's pool keeps the connection the three calls shared.
        assert len(transport._pool.connections) == 1
