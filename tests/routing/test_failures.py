"""The failure-class table: pure cases, then real error bodies fetched
from the simulator over HTTP."""

from __future__ import annotations

import json

import pytest

from openrouter.errors import ErrorInfo
from routing.deadline import AttemptTimes
from routing.failures import FailureClass, Signal, classify, classify_http
from routing.gateway.upstream import Upstream
from tests.routing.conftest import MODEL, endpoint, fleet, route

P, T, I, V, A = (  # noqa: E741 - one letter per class keeps the table readable
    FailureClass.PERMANENT, FailureClass.TRANSIENT, FailureClass.INCOMPATIBLE,
                 FailureClass.INVALID_RESPONSE, FailureClass.AMBIGUOUS)


@pytest.mark.parametrize(
    ("status", "message", "metadata", "expected", "blame"),
    [
        (401, "User not found.", {}, P, "account"),
        (402, "Insufficient credits. Add more using https://openrouter.ai/credits", {}, P, "account"),
        (400, "Invalid request parameters", {}, P, "client"),
        (400, "acme/fake-1.0 is not a valid model ID", {}, P, "route"),
        (429, "Rate limit exceeded", {}, T, "route"),
        (500, "Internal Server Error", {}, T, "route"),
        (503, "Provider returned error", {}, T, "route"),
        (524, "edge timeout", {}, T, "route"),
        (529, "overloaded", {}, T, "route"),
        (408, "Operation timed out. Please try again later.", {}, T, "route"),
        # Incompatible, whatever the wording (OpenAI, Anthropic, vLLM, typed):
        (400, "This model's maximum context length is 8192 tokens. However, you requested 10000 tokens", {}, I, "route"),
        (400, "prompt is too long: 210000 tokens > 200000 maximum", {}, I, "route"),
        (400, "Provider returned error", {"raw": '{"error":{"message":"Input length 9000 exceeds the max_model_len"}}'}, I, "route"),
        (400, "whatever", {"error_type": "context_length_exceeded"}, I, "route"),
        (400, "Unsupported parameter: 'response_format' is not supported with this model.", {}, I, "route"),
        (400, "This model does not support image input", {}, I, "route"),
        (404, "No endpoints found that can handle the requested parameters.", {}, I, "route"),
        (413, "Request payload too large", {}, I, "route"),
        (403, "flagged", {"reasons": ["violence"], "flagged_input": "..."}, I, "route"),
    ],
)
def test_http_errors_map_to_their_class(status, message, metadata, expected, blame):
    failure = classify_http(status, ErrorInfo(code=status, message=message, raw=metadata.get("raw"),
                                              error_type=metadata.get("error_type"), metadata=metadata))
    assert (failure.cls, failure.blame) == (expected, blame)


@pytest.mark.parametrize(
    ("signal", "expected", "reason"),
    [
        (Signal("connect"), T, "connect"),
        (Signal("timeout"), T, "first_token_timeout"),
        (Signal("timeout", output_seen=True), A, "timeout_after_output"),
        (Signal("reset"), T, "reset"),
        (Signal("reset", output_seen=True), A, "reset_after_output"),
        (Signal("no_finish", output_seen=True), A, "no_finish_after_output"),
        (Signal("error_body", error=ErrorInfo(code=502, message="Network connection lost.", error_type="provider_unavailable")), T, "provider_unavailable"),
        (Signal("error_body", error=ErrorInfo(code=400, message="bad")), T, "error_chunk"),
        (Signal("error_body", output_seen=True, error=ErrorInfo(code=502)), A, "error_body_after_output"),
        (Signal("invalid_body", message="SSE data frame is not JSON"), V, "invalid_body"),
    ],
)
def test_transport_signals_map_to_their_class(signal, expected, reason):
    failure = classify(signal)
    assert (failure.cls, failure.reason) == (expected, reason)


def test_only_an_early_connect_failure_allows_a_same_route_retry():
    assert classify(Signal("connect")).early_connect
    assert not classify(Signal("timeout")).early_connect
    assert not classify(Signal("http_error", http_status=429)).early_connect


def test_a_clients_malformed_request_never_counts_against_the_route():
    assert not classify_http(400, ErrorInfo(message="Invalid request parameters")).counts_against_route
    assert not classify_http(400, ErrorInfo(message="context length exceeded")).counts_against_route
    assert classify_http(429, ErrorInfo()).counts_against_route


def test_an_unreadable_error_body_is_still_classified():
    assert classify(Signal("http_error", http_status=502, error=None)).cls == T


# --------------------------------------------------------------------------- real bodies


def _fetch(sim, tag: str, **body_extra):
    upstream = Upstream(default_base_url=sim.base_url)
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hello"}], "max_tokens": 20, "stream": True,
            "provider": {"only": [tag], "allow_fallbacks": False}, **body_extra}
    try:
        outcome = upstream.attempt(route(tag.split("/")[0]), json.dumps(body).encode(), AttemptTimes(5, 5), idle_s=5)
    finally:
        upstream.close()
    assert outcome.signal is not None, outcome
    return classify(outcome.signal)


def test_the_table_holds_for_the_simulators_real_error_bodies(start_sim):
    statuses = [401, 402, 408, 429, 500, 502, 503, 504]
    endpoints = [endpoint(f"e{s}", {"http_error": {"rate": 1, "status": s}}) for s in statuses]
    endpoints += [
        endpoint("down", {"down": True}),
        endpoint("moderated", {"refusal": {"rate": 1, "style": "http_403"}}),
        endpoint("plain", supported_parameters=["max_tokens", "stream"]),
    ]
    sim = start_sim(fleet(*endpoints))
    got = {s: _fetch(sim, f"e{s}/fp8") for s in statuses}
    assert {s: (f.cls, f.blame) for s, f in got.items()} == {
        401: (P, "account"), 402: (P, "account"), 408: (T, "route"), 429: (T, "route"),
        500: (T, "route"), 502: (T, "route"), 503: (T, "route"), 504: (T, "route"),
    }
    assert _fetch(sim, "down/fp8").cls == T
    assert _fetch(sim, "moderated/fp8").cls == I
    # Routing errors OpenRouter answers itself:
    unknown_tag = _fetch(sim, "nosuch/fp8")  # 404 "No allowed providers are available ..."
    assert (unknown_tag.cls, unknown_tag.blame) == (P, "route")
    unsupported = _fetch(sim, "plain/fp8", provider={"only": ["plain/fp8"], "allow_fallbacks": False, "require_parameters": True},
                         response_format={"type": "json_object"})
    assert unsupported.cls == I
    malformed = _fetch(sim, "e429/fp8", messages=[])
    assert (malformed.cls, malformed.blame) == (P, "client")
    unknown_model = _fetch(sim, "e429/fp8", model="acme/nope")
    assert (unknown_model.cls, unknown_model.blame) == (P, "route")
