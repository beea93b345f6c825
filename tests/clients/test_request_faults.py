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


@pytest.mark.django_db
@pytest.mark.parametrize("poison", [{"extra_headers": {"X-Expected-Language": "pt"}}, {"stop": ["*"]}],
                         ids=["language-header", "stop-star"])
def test_request_caused_failures_open_no_breaker_and_cost_others_nothing(live: Live, poison: dict) -> None:
    client = sdk(live)
    headers = {**live.headers("chat@1"), **poison.get("extra_headers", {})}
    kwargs = {k: v for k, v in poison.items() if k != "extra_headers"}
    for _ in range(12):  # more than the breaker's 5 consecutive failures
        with pytest.raises(openai.APIStatusError) as err:
            client.chat.completions.create(model=MODEL, messages=HELLO, extra_headers=headers, **kwargs)
        assert err.value.status_code == 502
    assert open_breakers(live) == {}
    served = client.chat.completions.with_raw_response.create(model=MODEL, messages=HELLO, extra_headers=live.headers("chat@1"))
    assert served.headers["X-Routing-Route"] == "alpha" and served.headers["X-Routing-Attempts"] == "1"
