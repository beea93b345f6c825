"""A host's ``usage`` block is its word, not a count: values no reply can have (negative,
not a number, past the database's integer, a negative or absurd cost) are unknown, so the
request's events are written and the canary's probe row stored (``openrouter.values``)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from pytest_httpserver import HTTPServer

from openrouter.values import USAGE_COST_MAX_USD, USAGE_TOKENS_MAX, usage_cost, usage_tokens
from routing.contracts import contract_from_dict
from routing.events import DbEventSink
from routing.models import AttemptEvent, RequestEvent
from tests.routing.conftest import route, user

BAD_USAGE = {"prompt_tokens": -5, "completion_tokens": "x", "total_tokens": 1e30, "cost": -1}


@pytest.mark.parametrize(("value", "tokens"), [
    (0, 0), (12, 12), (12.0, 12), (USAGE_TOKENS_MAX, USAGE_TOKENS_MAX),
    (-5, None), ("12", None), (True, None), (1.5, None), (1e30, None), (USAGE_TOKENS_MAX + 1, None), (None, None),
])
def test_a_usage_count_is_a_whole_number_a_column_holds(value: Any, tokens: int | None) -> None:
    assert usage_tokens(value) == tokens


@pytest.mark.parametrize(("value", "cost"), [
    (0, 0.0), (0.0012, 0.0012), (3, 3.0),
    (-1, None), (float("nan"), None), (float("inf"), None), (USAGE_COST_MAX_USD, None), ("0.1", None), (False, None),
])
def test_a_usage_cost_is_a_finite_amount_of_usd_from_zero(value: Any, cost: float | None) -> None:
    assert usage_cost(value) == cost


@pytest.mark.django_db
def test_a_reply_with_garbage_usage_is_served_and_its_events_are_written(httpserver: HTTPServer, gateway_for) -> None:
    reply = {"id": "gen-1", "object": "chat.completion", "model": "m", "provider": "Alpha",
             "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello there, traveller."},
                          "finish_reason": "stop"}], "usage": BAD_USAGE}
    httpserver.expect_request("/api/v1/chat/completions").respond_with_data(json.dumps(reply),
                                                                             content_type="application/json")
    gw = gateway_for(SimpleNamespace(base_url=httpserver.url_for("/api/v1")), [route("alpha")], sink=DbEventSink())
    result = gw.complete(contract_from_dict({"name": "c", "version": 1, "workload": "text",
                                             "finish_reasons": ["stop"]}), user())
    assert result.ok, result.error_code
    request = RequestEvent.objects.get(operation_id=result.operation_id)  # before, the database refused the rows
    attempt = AttemptEvent.objects.get(request=request)
    # Unknown counts: the request's estimate in, none out, priced at the route's list price.
    assert attempt.tokens_in > 0 and attempt.tokens_out == 0 and attempt.cost_usd >= 0
    assert float(attempt.cost_usd) == pytest.approx(attempt.tokens_in * 1e-7)
