"""The probes over real HTTP (pytest-httpserver, the real OpenRouter client): a 200 whose
body never parses is a confirmed quality failure, transport errors carry evidence."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest
from django.utils import timezone
from pytest_httpserver import HTTPServer

from canary.models import Endpoint, Round
from canary.probes import MALFORMED_BODY, TTFT, EndpointFacts, ProbeSettings, probe_run
from canary.round_judgement import round_judge
from canary.services.probes_run import _result_row
from canary.verdicts import Verdict
from openrouter.client import OpenRouterClient
from tests.openrouter.scripted import CHAT_PATH, DONE, USAGE, chunk, frame

pytestmark = pytest.mark.timeout(30)
EP = EndpointFacts(tag="openai/fp8", provider_name="OpenAI", supports_structured_outputs=True)
SETTINGS = ProbeSettings(ttft_limit_s=5.0, total_timeout_s=10.0, max_tokens=64)
GOOD = frame(chunk("Hello there, traveller.", role=True)) + frame(chunk(finish="stop", usage=USAGE)) + DONE
MALFORMED = frame(chunk("Hel", role=True)) + b"data: {not json at all <html>\n\n" + DONE


@pytest.fixture
def client(httpserver: HTTPServer) -> Iterator[OpenRouterClient]:
    with OpenRouterClient(base_url=httpserver.url_for("/api/v1"), api_key="sk-or-test") as c:
        yield c


def answers(httpserver: HTTPServer, *bodies: tuple[bytes, int, str]) -> None:
    for body, status, content_type in bodies:
        httpserver.expect_ordered_request(CHAT_PATH, method="POST").respond_with_data(body, status=status, content_type=content_type)


def sse(body: bytes) -> tuple[bytes, int, str]:
    return body, 200, "text/event-stream"


def test_a_200_whose_body_never_parses_is_a_confirmed_malformed_body_failure(httpserver, client):
    answers(httpserver, sse(MALFORMED), sse(MALFORMED), sse(GOOD))
    outcomes = probe_run(TTFT, client, "openai/gpt-4o", EP, "en", SETTINGS)
    assert [o.sample for o in outcomes] == [0, 1, 2]
    decided = outcomes[0].judgement
    assert (decided.verdict, decided.check) == (Verdict.FAIL, MALFORMED_BODY)
    assert "confirmed in 2 of 3 samples" in decided.reason and "never parsed" in decided.reason
    assert decided.evidence["http_status"] == 200
    assert "{not json at all <html>" in decided.evidence["body_excerpt"]
    assert decided.evidence["samples"] == ["fail", "fail", "pass"]
    # The endpoint's round outcome is a failure (counts toward suspension), not frozen.
    judged = round_judge({EP.tag: outcomes}, {})
    assert judged.endpoints[EP.tag].outcome == "fail"
    assert judged.endpoints[EP.tag].evidence["failed"][TTFT]["check"] == MALFORMED_BODY


def test_one_malformed_body_that_the_next_samples_do_not_repeat_is_not_a_failure(httpserver, client):
    answers(httpserver, sse(MALFORMED), sse(GOOD), sse(GOOD))
    outcomes = probe_run(TTFT, client, "openai/gpt-4o", EP, "en", SETTINGS)
    assert outcomes[0].judgement.verdict == Verdict.PASS
    assert outcomes[0].extra["raw_judgement"].check == MALFORMED_BODY


def test_a_plain_200_body_that_is_not_json_is_malformed_too(httpserver, client):
    body = b'{"id":"gen-3","choices":[{"message":'
    answers(httpserver, (body, 200, "application/json"), (body, 200, "application/json"), (body, 200, "application/json"))
    outcomes = probe_run(TTFT, client, "openai/gpt-4o", EP, "en", SETTINGS)
    decided = outcomes[0].judgement
    assert (decided.verdict, decided.check) == (Verdict.FAIL, MALFORMED_BODY)
    assert decided.evidence["body_excerpt"] == '{"id":"gen-3","choices":[{"message":'
    assert "confirmed in 3 of 3 samples" in decided.reason


@pytest.mark.parametrize(("status", "kind"), [(503, "http_5xx"), (429, "http_429"), (502, "http_5xx")])
def test_transport_errors_stay_transport_errors_and_carry_status_message_and_body(httpserver, client, status, kind):
    body = b'{"error": {"code": %d, "message": "Provider returned error: upstream overloaded", "metadata": {"raw": "queue full"}}}' % status
    answers(httpserver, (body, status, "application/json"))
    (outcome,) = probe_run(TTFT, client, "openai/gpt-4o", EP, "en", SETTINGS)
    j = outcome.judgement
    assert (j.verdict, j.check) == (Verdict.TRANSPORT_ERROR, f"transport:{kind}")
    assert f"HTTP {status}" in j.reason and "Provider returned error: upstream overloaded" in j.reason
    assert "queue full" in j.reason  # the body excerpt
    assert j.evidence["http_status"] == status
    assert j.evidence["message"] == "Provider returned error: upstream overloaded"
    assert "queue full" in j.evidence["body_excerpt"]
    assert round_judge({EP.tag: [outcome]}, {}).endpoints[EP.tag].outcome == "frozen"


def test_a_stream_cut_mid_frame_stays_a_transport_error_with_the_last_frame(httpserver, client):
    answers(httpserver, sse(frame(chunk("Hello", role=True)) + b'data: {"id": "gen-1-test", "choices": [{"delta": {"content": "wor'))
    (outcome,) = probe_run(TTFT, client, "openai/gpt-4o", EP, "en", SETTINGS)
    j = outcome.judgement
    assert (j.verdict, j.check) == (Verdict.TRANSPORT_ERROR, "transport:reset")
    assert "truncated SSE" in j.reason and '"content": "wor' in j.evidence["body_excerpt"]


def test_a_usage_block_no_reply_can_have_is_stored_as_unknown_not_a_lost_round(httpserver, client):
    # Before: "x" raised in int() and aborted the round; 1e30 overflowed the column; a
    # negative cost lowered the round's spend.
    bad = {"prompt_tokens": 1e30, "completion_tokens": "x", "cost": -1}
    body = frame(chunk("Hello there, traveller.", role=True)) + frame(chunk(finish="stop", usage=bad)) + DONE
    answers(httpserver, sse(body), sse(body), sse(body))
    outcomes = probe_run(TTFT, client, "openai/gpt-4o", EP, "en", SETTINGS)
    row = _result_row(Round(model_id="openai/gpt-4o"), Endpoint(model_id="openai/gpt-4o", tag=EP.tag), outcomes[0],
                      timezone.now())
    assert (row.prompt_tokens, row.completion_tokens, row.cost_usd) == (0, 0, Decimal(0))
    assert outcomes[0].judgement.verdict is Verdict.PASS
