"""What a request causes is its own, through gunicorn and the OpenAI SDK: the three
poisonings (a language header no reply matches, ``stop: ["*"]``, the caller's own looser
tool schema) fail only their own requests, open no breaker, and the next plain request
of another client is served by the same route."""

from __future__ import annotations

import json

import jsonschema
import openai
import pytest
import redis
from django.conf import settings

from tests.clients.conftest import BOOK, Live
from tests.routing.conftest import MODEL

HELLO = [{"role": "user", "content": "Say hello to the traveller."}]
LOOSE = {**BOOK, "properties": {**BOOK["properties"], "party_size": {"type": "integer", "minimum": 1},
                                "time": {"type": "string"}}}


def sdk(live: Live) -> openai.OpenAI:
    return openai.OpenAI(base_url=live.url, api_key=live.token, max_retries=0)


def open_breakers(live: Live) -> dict[str, list[str]]:
    client = redis.Redis.from_url(settings.REDIS_URL, decode_responses=True)
    out: dict[str, list[str]] = {}
    for key in client.scan_iter(f"{live.prefix}:*"):
        if client.type(key) != "hash":
            continue
        fields = client.hgetall(key)
        opened = [k[:-6] for k, v in fields.items() if k.endswith(":state") and v != "closed"]
        counted = [k for k, v in fields.items() if k.endswith(":window") and "1" in v]
        if opened or counted:
            out[key] = opened + counted
    return out


@pytest.mark.django_db
def test_ten_looser_tool_schemas_then_ten_plain_calls_no_502_or_503(live: Live) -> None:
    client = sdk(live)
    book = [{"role": "user", "content": "Book a table for four tonight at eight."}]
    for _ in range(10):
        with pytest.raises(openai.BadRequestError) as err:
            client.chat.completions.create(model=MODEL, messages=book, extra_headers=live.headers("booking@1"),
                                           tools=[{"type": "function", "function": {"name": "book_table", "parameters": LOOSE}}])
        assert "'book_table'" in err.value.message and "$.properties.party_size.maximum" in err.value.message
    for _ in range(10):
        completion = client.chat.completions.create(model=MODEL, messages=book, extra_headers=live.headers("booking@1"))
        [call] = completion.choices[0].message.tool_calls
        jsonschema.validate(json.loads(call.function.arguments), BOOK, format_checker=jsonschema.FormatChecker())
    assert open_breakers(live) == {}


def error_of(err: pytest.ExceptionInfo) -> dict:
    body = err.value.body
    return body.get("error", body) if isinstance(body, dict) else {}


@pytest.mark.django_db
@pytest.mark.parametrize(("poison", "where"), [
    ({"extra_headers": {"X-Expected-Language": "pt"}}, ("header", "X-Expected-Language")),
    ({"stop": ["*"]}, ("field", "stop")),
], ids=["language-header", "stop-star"])
def test_request_caused_failures_open_no_breaker_and_cost_others_nothing(live: Live, poison: dict, where: tuple) -> None:
    client = sdk(live)
    headers = {**live.headers("chat@1"), **poison.get("extra_headers", {})}
    kwargs = {k: v for k, v in poison.items() if k != "extra_headers"}
    for _ in range(12):  # more than the breaker's 5 consecutive failures
        # A 422 naming what to change, not a 502 the SDK reads as the server's fault.
        with pytest.raises(openai.UnprocessableEntityError) as err:
            client.chat.completions.create(model=MODEL, messages=HELLO, extra_headers=headers, **kwargs)
        error = error_of(err)
        assert (error["code"], error[where[0]]) == ("request_unservable", where[1])
        assert error["attempts"] and where[1] in error["message"]
    assert open_breakers(live) == {}
    served = client.chat.completions.with_raw_response.create(model=MODEL, messages=HELLO, extra_headers=live.headers("chat@1"))
    assert served.headers["X-Routing-Route"] == "alpha" and served.headers["X-Routing-Attempts"] == "1"


BOOK_IT = [{"role": "user", "content": "Book a table for four tonight at eight."}]
INVOICE_IT = [{"role": "user", "content": "Extract the invoice."}]


@pytest.mark.django_db
@pytest.mark.parametrize(("contract", "messages", "provider", "field", "sent"), [
    ("chat@1", HELLO, {"quantizations": ["int4"]}, "provider.quantizations", True),
    ("booking@1", BOOK_IT, {"quantizations": ["int4"]}, "provider.quantizations", True),
    ("chat@1", HELLO, {"max_price": {"prompt": 0, "completion": 0}}, "provider.max_price.prompt", False),
    ("invoice@1", INVOICE_IT, {"max_price": {"prompt": 0}}, "provider.max_price.prompt", False),
], ids=["chat-int4", "booking-int4", "chat-free", "invoice-free"])
def test_provider_preferences_no_endpoint_meets_are_a_422_and_open_no_breaker(
        live: Live, contract: str, messages: list, provider: dict, field: str, sent: bool) -> None:
    client = sdk(live)
    before = sum(live.sim_requests().values())
    for _ in range(8):
        with pytest.raises(openai.UnprocessableEntityError) as err:
            client.chat.completions.create(model=MODEL, messages=messages, extra_headers=live.headers(contract),
                                           extra_body={"provider": provider})
        error = error_of(err)
        assert (error["code"], error["field"], error["check"]) == ("request_unservable", field, "provider_preferences")
        # A price limit below every route's list price is refused before any upstream
        # request; a quantization the routes do not know is asked of the endpoint (404).
        assert [a["http_status"] for a in error["attempts"]] == ([404] if sent else [])
    if not sent:
        assert sum(live.sim_requests().values()) == before
    assert open_breakers(live) == {}
    served = client.chat.completions.with_raw_response.create(model=MODEL, messages=HELLO, extra_headers=live.headers("chat@1"))
    assert served.headers["X-Routing-Route"] == "alpha" and served.headers["X-Routing-Attempts"] == "1"


@pytest.mark.django_db
def test_an_output_cap_no_answer_fits_is_a_422_naming_it(live: Live) -> None:
    client = sdk(live)
    with pytest.raises(openai.UnprocessableEntityError) as err:
        client.chat.completions.create(model=MODEL, messages=INVOICE_IT, extra_headers=live.headers("invoice@1"), max_tokens=5)
    assert (error_of(err)["code"], error_of(err)["field"]) == ("request_unservable", "max_tokens")
    assert open_breakers(live) == {}


@pytest.mark.django_db
def test_max_tokens_with_max_completion_tokens_is_a_400_before_any_route(live: Live) -> None:
    client = sdk(live)
    before = sum(live.sim_requests().values())
    with pytest.raises(openai.BadRequestError) as err:
        client.chat.completions.create(model=MODEL, messages=HELLO, extra_headers=live.headers("chat@1"),
                                       max_tokens=1, max_completion_tokens=200)
    assert error_of(err)["field"] == "max_tokens" and "max_completion_tokens" in err.value.message
    assert sum(live.sim_requests().values()) == before
