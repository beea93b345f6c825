"""The gateway driven by the official OpenAI Python SDK and by LiteLLM over real HTTP
(gunicorn gthread in a child process, against the simulator), with the SDK's defaults
(``max_retries=2``) unless a test says otherwise."""

from __future__ import annotations

import json
import os
import time

import httpx
import jsonschema
import openai
import pytest
import redis
from django.conf import settings

from routing.breaker import BreakerConfig, BreakerStore
from tests.clients.conftest import BOOK, Live
from tests.invoice_model import Invoice
from tests.routing.conftest import MODEL

HELLO = [{"role": "user", "content": "Say hello to the traveller."}]


def sdk(live: Live, **kw) -> openai.OpenAI:
    return openai.OpenAI(base_url=live.url, api_key=live.token, **kw)


def test_a_non_streamed_answer_through_the_sdk(live: Live) -> None:
    raw = sdk(live).chat.completions.with_raw_response.create(
        model=MODEL, messages=HELLO, max_tokens=80, extra_headers=live.headers("chat@1"))
    completion = raw.parse()
    assert raw.headers["X-Routing-Route"] == "alpha" and raw.headers["X-Routing-Attempts"] == "1"
    assert completion.choices[0].finish_reason == "stop" and len(completion.choices[0].message.content) > 20
    assert completion.model == MODEL and completion.usage.completion_tokens > 0


def test_a_streamed_answer_reaches_the_sdk_while_the_host_is_still_generating(live: Live) -> None:
    started = time.monotonic()
    stream = sdk(live).chat.completions.create(
        model=MODEL, messages=HELLO, max_tokens=200, stream=True, extra_headers=live.headers("slowchat@1"))
    arrivals, text, finish = [], [], None
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            arrivals.append(time.monotonic() - started)
            text.append(chunk.choices[0].delta.content)
        if chunk.choices and chunk.choices[0].finish_reason:
            finish = chunk.choices[0].finish_reason
    assert finish == "stop" and len(arrivals) > 10
    # The slow host makes about 40 tokens a second: the first chunk arrived long before
    # the host produced its last one, and chunks kept arriving in between.
    assert arrivals[-1] - arrivals[0] > 0.8
    assert sum(1 for t in arrivals if t < arrivals[-1] - 0.4) > 3
    assert "".join(text).strip()


@pytest.mark.parametrize(
    ("contract", "body", "error", "status"),
    [
        ("chat@1", {"messages": []}, openai.BadRequestError, 400),
        ("nope@1", {}, openai.NotFoundError, 404),
        ("caption@1", {"messages": [{"role": "user", "content": [
            {"type": "text", "text": "Caption this."},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}]},
         openai.UnprocessableEntityError, 422),
        ("failing@1", {}, openai.InternalServerError, 502),
        ("chat@1", {"model": "other/model"}, openai.BadRequestError, 400),
    ],
)
def test_each_error_status_is_the_sdks_exception_class(live: Live, contract, body, error, status) -> None:
    kwargs = {"model": MODEL, "messages": HELLO, "max_tokens": 40, **body}
    with pytest.raises(error) as caught:
        sdk(live).chat.completions.create(**kwargs, extra_headers=live.headers(contract))
    assert caught.value.status_code == status
    assert caught.value.response.headers["x-should-retry"] == "false"
    assert caught.value.body["code"]


def test_a_bad_token_is_an_authentication_error(live: Live) -> None:
    client = openai.OpenAI(base_url=live.url, api_key="not-a-token")
    with pytest.raises(openai.AuthenticationError):
        client.chat.completions.create(model=MODEL, messages=HELLO, extra_headers=live.headers("chat@1"))


def test_every_route_suppressed_is_a_503_with_retry_after(live: Live) -> None:
    store = BreakerStore(redis.Redis.from_url(settings.REDIS_URL), BreakerConfig(), prefix=live.prefix)
    store.record("sup", int(time.time() * 1000), "transient", retry_after_s=60)
    with pytest.raises(openai.InternalServerError) as caught:
        sdk(live).chat.completions.create(model=MODEL, messages=HELLO, extra_headers=live.headers("suppressed@1"))
    assert caught.value.status_code == 503 and caught.value.body["code"] == "all_routes_suppressed"
    assert 50 <= int(caught.value.response.headers["Retry-After"]) <= 60


@pytest.mark.django_db
def test_one_sdk_call_with_its_default_retries_is_one_gateway_operation(live: Live) -> None:
    from routing.models import RequestEvent

    client = sdk(live)
    assert client.max_retries == 2
    before = live.sim_requests()
    with live.db():
        operations = RequestEvent.objects.filter(contract="failing@1").count()
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model=MODEL, messages=HELLO, extra_headers=live.headers("failing@1"))
    after = live.sim_requests()
    upstream = sum(after.get(t, 0) - before.get(t, 0) for t in ("down1/fp8", "down2/fp8"))
    assert upstream == 2, "each route once, not three SDK tries times two"
    with live.db():
        assert RequestEvent.objects.filter(contract="failing@1").count() == operations + 1


def test_tool_calls_through_the_sdk(live: Live) -> None:
    tools = [{"type": "function", "function": {"name": "book_table", "parameters": BOOK}}]
    completion = sdk(live).chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "Book a table for four tonight."}], tools=tools,
        extra_headers=live.headers("booking@1"))
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    [call] = choice.message.tool_calls
    assert call.function.name == "book_table"
    jsonschema.validate(json.loads(call.function.arguments), BOOK)


def test_streamed_tool_calls_through_the_sdk(live: Live) -> None:
    tools = [{"type": "function", "function": {"name": "book_table", "parameters": BOOK}}]
    stream = sdk(live).chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "Book a table."}], tools=tools, stream=True,
        extra_headers=live.headers("booking@1"))
    name, arguments = None, []
    for chunk in stream:
        for call in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            name = name or (call.function.name if call.function else None)
            arguments.append(call.function.arguments or "" if call.function else "")
    assert name == "book_table"
    jsonschema.validate(json.loads("".join(arguments)), BOOK)




@pytest.mark.parametrize("beta", [False, True])
def test_json_schema_through_the_sdks_parse_helper(live: Live, beta: bool) -> None:
    client = sdk(live)
    completions = client.beta.chat.completions if beta else client.chat.completions
    completion = completions.parse(
        model=MODEL, messages=[{"role": "user", "content": "Extract the invoice."}], response_format=Invoice,
        extra_headers=live.headers("invoice@1"))
    invoice = completion.choices[0].message.parsed
    assert isinstance(invoice, Invoice) and invoice.currency == "EUR"
    assert invoice.total == pytest.approx(sum(i.amount for i in invoice.line_items), abs=0.01)


def test_litellm_completes_and_streams_through_the_gateway(live: Live) -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch in tests
    import litellm

    common = {"model": f"openai/{MODEL}", "api_base": live.url, "api_key": live.token, "messages": HELLO,
              "extra_headers": live.headers("chat@1"), "max_tokens": 80, "num_retries": 0}
    reply = litellm.completion(**common)
    assert reply.choices[0].message.content and reply.choices[0].finish_reason == "stop"
    pieces = [c.choices[0].delta.content or "" for c in litellm.completion(**common, stream=True) if c.choices]
    assert len([p for p in pieces if p]) > 3


def test_a_client_that_disconnects_mid_stream_cancels_the_upstream_request(live: Live) -> None:
    from routing.models import AttemptEvent, RequestEvent

    body = {"model": MODEL, "messages": HELLO, "max_tokens": 300, "stream": True}
    headers = {"Authorization": f"Bearer {live.token}", **live.headers("slowchat@1")}
    with httpx.stream("POST", f"{live.url}/chat/completions", json=body, headers=headers, timeout=10) as response:
        operation = response.headers["X-Routing-Operation-Id"]
        for line in response.iter_lines():
            if line.startswith("data: "):
                break  # one chunk read, then the client goes away
    end = time.monotonic() + 10
    event = None
    while time.monotonic() < end:
        with live.db():
            event = RequestEvent.objects.filter(operation_id=operation).first()
            if event is not None:
                attempts = list(AttemptEvent.objects.filter(request=event))
                break
        time.sleep(0.1)
    assert event is not None, "the request event is written once the disconnect is seen"
    assert (event.outcome, event.error_code) == ("cancelled", "client_disconnected")
    [attempt] = attempts
    assert attempt.status == "cancelled" and attempt.failure_reason == "client_disconnected"
    # Recorded, not counted against the route: its breaker has no failure.
    store = BreakerStore(redis.Redis.from_url(settings.REDIS_URL), BreakerConfig(), prefix=live.prefix)
    assert not any(v == "open" for v in store.snapshot("slow").values())
    assert "fail" not in json.dumps(store.snapshot("slow"))


def test_a_stream_rejected_after_its_commit_point_raises_in_the_sdk(live: Live) -> None:
    # The loop host's reply opens cleanly (the prefix commits) and then repeats itself:
    # the post-stream checks reject it, and the stream ends with an error event the SDK
    # raises on instead of a normal end.
    stream = sdk(live, max_retries=0).chat.completions.create(
        model=MODEL, messages=HELLO, max_tokens=300, stream=True, extra_headers=live.headers("loopchat@1"))
    text = []
    with pytest.raises(openai.APIError) as raised:
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                text.append(chunk.choices[0].delta.content)
    assert text, "the prefix was committed and sent before the rejection"
    assert raised.value.body["code"] == "rejected_after_commit" and "repetition" in raised.value.message



def test_a_frame_cut_in_the_first_read_falls_back_before_the_commit_point(live: Live) -> None:
    # The cut host's first read holds 24+ characters of a clean opening (enough for an
    # early commit without a language) and a frame cut inside its content string. The
    # failure is in hand before the commit: the gateway falls back invisibly, charging
    # the host, instead of committing and ending the SDK's stream with an error.
    from routing.models import AttemptEvent

    raw = sdk(live, max_retries=0).chat.completions.with_raw_response.create(
        model=MODEL, messages=HELLO, max_tokens=200, stream=True, extra_headers=live.headers("cutchat@1"))
    text = "".join(c.choices[0].delta.content or "" for c in raw.parse() if c.choices)
    assert raw.headers["X-Routing-Route"] == "cutok" and raw.headers["X-Routing-Attempts"] == "2"
    assert len(text) > 20
    with live.db():
        first, second = AttemptEvent.objects.filter(
            request_id=raw.headers["X-Routing-Operation-Id"]).order_by("index")
    assert (first.route, first.status, first.failure_class, first.failure_reason) == (
        "cut", "failed", "invalid_response", "invalid_body")
    assert "before the commit point" in first.message and "inside a JSON string" in first.message
    assert (second.route, second.status) == ("cutok", "accepted")
    # Charged to the host that sent it: its breaker records the invalid response.
    store = BreakerStore(redis.Redis.from_url(settings.REDIS_URL), BreakerConfig(), prefix=live.prefix)
    assert "invalid_response" in json.dumps(store.snapshot("cut"))
