"""The canary's client for endpoint listings and generation lookups over real HTTP, and the
wire's pure helpers (SSE events, error bodies, Retry-After, provider slugs)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal

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
from openrouter.sse import parse_sse_events
from tests.openrouter.scripted import (
    MESSAGES,
    capture,
    closed_port,
)

pytestmark = pytest.mark.timeout(30)

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
    # The model's input modalities, as the capture's architecture lists them.
    assert vertex.input_modalities == studio.input_modalities == ("text", "image", "file")


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

    with OpenRouterClient(base_url=f"http://127.0.0.1:{closed_port()}/api/v1") as dead:
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


def test_list_endpoints_checks_the_model_id_before_sending(httpserver: HTTPServer, client: OpenRouterClient) -> None:
    for bad in ("no-slash", "author/ slug", "author/" + "x" * 300):
        with pytest.raises(ValueError):
            client.list_endpoints(bad)
    assert httpserver.log == []  # nothing was sent


def test_a_404_from_a_base_url_without_api_v1_says_what_is_likely_missing(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/models/a/b/endpoints").respond_with_data("Not Found", status=404)
    with OpenRouterClient(base_url=httpserver.url_for("/"), api_key="sk-or-test") as bare:
        with pytest.raises(DiscoveryError, match=r"does not end in /api/v1: is OPENROUTER_BASE_URL missing it\?"):
            bare.list_endpoints("a/b")


def test_a_404_under_api_v1_gives_no_such_hint(httpserver: HTTPServer, client: OpenRouterClient) -> None:
    httpserver.expect_request("/api/v1/models/a/b/endpoints").respond_with_data("Not Found", status=404)
    with pytest.raises(DiscoveryError) as info:
        client.list_endpoints("a/b")
    assert "OPENROUTER_BASE_URL" not in str(info.value)
