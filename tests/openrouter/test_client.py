"""The canary's OpenRouter client (``openrouter/``) on the real wire captures
(``tests/fixtures/captures/``), served byte for byte by pytest-httpserver with their status
and content type: bodies, streams, request shape, HTTP errors."""

from __future__ import annotations

import json

import pytest
from pytest_httpserver import HTTPServer

from openrouter.chat import accumulate_stream
from openrouter.client import OpenRouterClient
from tests.openrouter.scripted import (
    COMMENT,
    MESSAGES,
    USAGE,
    capture,
    chunk,
    frame,
    pinned,
    serve_chat,
    serve_sse,
)

pytestmark = pytest.mark.timeout(30)

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
