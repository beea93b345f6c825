"""Mistakes a new user's trial sent through the openai SDK, refused at the door over real
HTTP (gunicorn) with a 400 naming the field, before any route sees them."""

from __future__ import annotations

import time
from typing import Any

import openai
import pytest
import redis
from django.conf import settings

from routing.breaker import BreakerConfig, BreakerStore
from tests.clients.conftest import ROUTES, Live
from tests.routing.conftest import MODEL

USER = {"role": "user", "content": "Say hello to the traveller."}


def refused(live: Live, contract: str, **kwargs: Any) -> dict[str, Any]:
    """The error body of a call the gateway answers 400, after checking no route saw it."""
    client = openai.OpenAI(base_url=live.url, api_key=live.token, max_retries=0)
    before = sum(live.sim_requests().values())
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MODEL, extra_headers=live.headers(contract), **kwargs)
    assert sum(live.sim_requests().values()) == before
    body = caught.value.body
    return body.get("error", body) if isinstance(body, dict) else {}


@pytest.mark.django_db
@pytest.mark.parametrize(("messages", "field", "says"), [
    ([{"role": "system", "content": ""}, USER], "messages[0].content", "a system message needs text"),
    ([{"role": "developer", "content": "  "}, USER], "messages[0].content", "a developer message needs text"),
    ([USER, {"role": "assistant", "content": "Hello!"}, {"role": "assistant", "content": " "}, USER],
     "messages[2].content", "an assistant message needs text"),
    ([USER, {"role": "assistant", "content": None}, USER], "messages[1].content", "unless tool_calls"),
], ids=["system-empty", "developer-blank", "assistant-blank", "assistant-null"])
def test_a_blank_system_or_assistant_message_is_a_400_naming_it(live: Live, messages: list, field: str, says: str) -> None:
    error = refused(live, "chat@1", messages=messages)
    assert (error["code"], error["field"]) == ("invalid_request", field) and says in error["message"]


@pytest.mark.django_db
def test_an_assistant_turn_of_tool_calls_alone_still_passes(live: Live) -> None:
    client = openai.OpenAI(base_url=live.url, api_key=live.token, max_retries=0)
    call = {"id": "c1", "type": "function", "function": {"name": "book_table", "arguments": "{}"}}
    messages = [USER, {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": "booked"}, {"role": "user", "content": "Thanks!"}]
    completion = client.chat.completions.create(model=MODEL, messages=messages, extra_headers=live.headers("chat@1"))
    assert completion.choices[0].message.content


@pytest.mark.django_db
@pytest.mark.parametrize(("response_format", "names"), [
    ({"type": "json_schema", "json_schema": {"name": "greeting", "schema": {"type": "object"}}}, "invoice@1"),
    ({"type": "json_object"}, "no contract loaded here has json_object output"),
], ids=["json_schema", "json_object"])
def test_a_json_format_under_a_contract_without_structured_output_is_a_400_naming_those_that_take_it(
        live: Live, response_format: dict, names: str) -> None:
    # Before, passed on to the host unvalidated: any reply, JSON or not, was accepted.
    error = refused(live, "chat@1", messages=[USER], response_format=response_format)
    assert (error["code"], error["field"]) == ("invalid_request", "response_format.type")
    assert "chat@1 has no structured output" in error["message"] and names in error["message"]


@pytest.mark.django_db
def test_every_route_suppressed_names_the_breakers_apart_from_the_routes_not_capable(live: Live) -> None:
    store = BreakerStore(redis.Redis.from_url(settings.REDIS_URL), BreakerConfig(), prefix=live.prefix)
    store.record("sup", int(time.time() * 1000), "transient", retry_after_s=60)
    client = openai.OpenAI(base_url=live.url, api_key=live.token, max_retries=0)
    with pytest.raises(openai.InternalServerError) as caught:
        client.chat.completions.create(model=MODEL, messages=[USER], extra_headers=live.headers("suppressed@1"))
    body = caught.value.body
    error = body.get("error", body) if isinstance(body, dict) else {}
    assert caught.value.status_code == 503 and error["code"] == "all_routes_suppressed"
    # Before: one run of reasons, the breaker's among the other routes' model classes.
    suppressed, _, incapable = error["message"].partition(". Not capable: ")
    assert suppressed == "every capable route is suppressed by its circuit breaker. Suppressed by breakers: sup: open (retry_after)"
    others = len(ROUTES) - 1
    assert incapable.startswith(f"{others} routes (") and "model class 'down' not allowed: 2" in incapable, incapable
    assert incapable.count("not allowed") == len(set(ROUTES.values())) - 1
