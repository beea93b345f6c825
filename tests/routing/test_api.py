"""POST /v1/chat/completions and the in-process client, end to
end: Django test client -> gateway -> simulator over HTTP, real PostgreSQL and Redis."""

from __future__ import annotations

import gzip
import inspect
import json
import os
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from reverie_ops.middleware import database_unavailable_body
from routing.models import AttemptEvent, ExecutionLedger, RequestEvent, Route
from routing.services.chat import chat_completion_create
from routing.services.contracts import contract_version_create
from routing.services.ledger import ledger_sweep
from routing.services.routes import routes_cache_clear
from routing.services.wiring import breaker_store
from tests.routing.conftest import MODEL, api_world, endpoint, fleet, sim_reset_stats, sim_stats

CHAT = {"name": "chat", "workload": "text", "deadline_s": 8, "max_attempts": 3, "max_fallbacks": 2,
        "finish_reasons": ["stop", "length"], "connect_s": 0.2, "generation_s": 1.0, "validation_s": 0.1}
BODY = {"model": MODEL, "messages": [{"role": "user", "content": "Say hello to the traveller."}], "max_tokens": 60}


@pytest.fixture
def gateway_env(settings, start_sim, use_sim):
    """Routes alpha/beta/gamma in the database, events written synchronously, a private
    breaker prefix; ``env.sim(fleet)`` starts the simulator and points the gateway at it."""
    settings.ROUTING_EVENT_CONTENT = "hash"
    prices = {name: f"0.000000{i + 1}" for i, name in enumerate(["alpha", "beta", "gamma"])}
    yield from api_world(settings, start_sim, use_sim, prices=prices, contract=CHAT)


def post(client, env, body=BODY, **headers):
    return client.post("/v1/chat/completions", data=json.dumps(body), content_type="application/json", **{**env.auth, **headers})


@pytest.mark.django_db
def test_the_accepted_answer_names_its_route_and_attempt_count(client, gateway_env):
    gateway_env.sim(fleet(endpoint("alpha", {"http_error": {"rate": 1, "status": 503}}), endpoint("beta"), endpoint("gamma")))
    response = post(client, gateway_env)
    assert response.status_code == 200, response.content
    assert response["X-Routing-Route"] == "beta" and response["X-Routing-Attempts"] == "2"
    body = response.json()
    assert body["object"] == "chat.completion" and body["choices"][0]["finish_reason"] == "stop"
    content = body["choices"][0]["message"]["content"]
    assert content and content == content.strip()
    event = RequestEvent.objects.get(operation_id=response["X-Routing-Operation-Id"])
    assert (event.outcome, event.final_route, event.attempt_count, event.contract) == ("accepted", "beta", 2, "chat@1")
    assert event.prompt.startswith("sha256:") and "traveller" not in event.prompt
    attempts = list(AttemptEvent.objects.filter(request=event).order_by("index"))
    assert [(a.route, a.status, a.failure_class, a.http_status) for a in attempts] == [
        ("alpha", "failed", "transient", 503), ("beta", "accepted", "", 200)]
    assert attempts[1].fallback_reason == "fallback after transient (http_503) on alpha"
    assert attempts[1].validation.startswith("passed; answer: leading_garbage=pass") and attempts[1].cost_usd > 0
    # Not streamed: the whole answer passed the content checks before it was accepted.
    assert attempts[1].checks["answer.mojibake"] == "pass"


@pytest.mark.django_db
def test_a_failure_names_the_class_and_lists_every_attempt(client, gateway_env):
    always_429 = {"http_error": {"rate": 1, "status": 429}}
    gateway_env.sim(fleet(endpoint("alpha", always_429), endpoint("beta", always_429), endpoint("gamma", always_429)))
    response = post(client, gateway_env)
    assert response.status_code == 502
    error = response.json()["error"]
    assert error["failure_class"] == "transient" and error["code"] == "attempt_budget_exhausted"
    assert [a["route"] for a in error["attempts"]] == ["alpha", "beta", "gamma"]
    assert response["X-Routing-Attempts"] == "3"


@pytest.mark.django_db
def test_retry_after_when_every_route_is_suppressed(client, gateway_env):
    sim = gateway_env.sim(fleet(endpoint("alpha", {"http_error": {"rate": 1, "status": 429, "retry_after_s": 45}}),
                                endpoint("beta", {"http_error": {"rate": 1, "status": 500}}),
                                endpoint("gamma", {"http_error": {"rate": 1, "status": 500}})))
    first = post(client, gateway_env)
    # All three failed: alpha suppressed 45 s (its Retry-After, longer than the 30 s
    # breaker), beta and gamma 30 s (breakers).
    assert first.status_code == 502
    sim_reset_stats(sim)
    second = post(client, gateway_env)
    assert second.status_code == 503
    assert second.json()["error"]["code"] == "all_routes_suppressed"
    assert 28 <= int(second["Retry-After"]) <= 30  # the earliest a route comes back
    assert sum(sim_stats(sim).values()) == 0
    assert breaker_store().suppressed_until_ms("beta") > 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("headers", "body", "status", "fragment"),
    [
        ({"HTTP_AUTHORIZATION": "Bearer wrong"}, BODY, 401, "service token"),
        ({"HTTP_X_ROUTING_CONTRACT": "chat"}, BODY, 400, "<contract name>@<version>"),
        ({"HTTP_X_ROUTING_CONTRACT": "nope@1"}, BODY, 404, "no contract nope@1"),
        # Another case or another version: the contracts of that name are named.
        ({"HTTP_X_ROUTING_CONTRACT": "CHAT@1"}, BODY, 404, "no contract CHAT@1; known: chat@1"),
        ({"HTTP_X_ROUTING_CONTRACT": "chat@9"}, BODY, 404, "no contract chat@9; known: chat@1"),
        # Two headers, as a WSGI server joins them: one contract is asked for, not a 404.
        ({"HTTP_X_ROUTING_CONTRACT": "chat@1,chat@2"}, BODY, 400, "'chat@1,chat@2' (was the header sent twice?)"),
        # A huge bad header is named, not echoed whole.
        ({"HTTP_X_ROUTING_CONTRACT": "x" * 20_000}, BODY, 400, "... (20000 characters)"),
        # UTF-8 the client sent is quoted as sent, not as WSGI's Latin-1 reading of it.
        ({"HTTP_X_ROUTING_CONTRACT": "rôleplay@1".encode().decode("latin-1")}, BODY, 404, "no contract rôleplay@1"),
        # An Arabic-Indic one is a digit to Python, not a version.
        ({"HTTP_X_ROUTING_CONTRACT": "chat@١".encode().decode("latin-1")}, BODY, 400, "got 'chat@١'"),
        # Longer than any contract name: refused before a lookup (SQLite's LIKE broke on it).
        ({"HTTP_X_ROUTING_CONTRACT": "a" * 60_000 + "@1"}, BODY, 400, "at most 100 characters"),
        ({"HTTP_X_EXPECTED_LANGUAGE": "xx"}, BODY, 400, "X-Expected-Language: unknown language 'xx'; expected one of"),
        ({"HTTP_X_EXPECTED_LANGUAGE": "klingon"}, BODY, 400, "(a region may follow, as in pt-BR)"),
        ({"HTTP_X_EXPECTED_LANGUAGE": "en,pt"}, BODY, 400, "'en,pt' (was the header sent twice?)"),
        ({"HTTP_X_EXPECTED_LANGUAGE": "x" * 60_000}, BODY, 400, "... (60000 characters)"),
        # WSGI's Latin-1 reading of UTF-8 bytes: quoted as the client wrote it.
        ({"HTTP_X_EXPECTED_LANGUAGE": "português".encode().decode("latin-1")}, BODY, 400, "'português'"),
        ({}, {"messages": []}, 400, "messages: a non-empty list"),
        ({}, {**BODY, "provider": {"only": ["x"]}}, 400, "provider.only: chosen by the gateway"),
        # Unhashable values where a name belongs were a TypeError and a 500.
        ({}, {"messages": [{"role": ["user"], "content": "Hi"}]}, 400, "messages[0].role"),
        ({}, {"messages": [{"role": "user", "content": [{"type": ["text"], "text": "hi"}]}]}, 400, "messages[0].content[0].type"),
        ({}, {**BODY, "tools": [{"type": "function", "function": {"name": ["x"]}}]}, 400, "tools[0]"),
        ({}, {"messages": [*BODY["messages"], {"role": "tool", "content": "42"}]}, 400,
         "messages[1].tool_call_id: required in a tool message"),
        ({}, {**BODY, "tool_choice": "sometimes"}, 400, "tool_choice: expected one of ['none', 'auto', 'required']"),
        ({}, {**BODY, "tool_choice": {"type": "function", "function": {"name": "refund"}}}, 400,
         "tool_choice.function.name: 'refund' is not one of the request's tools []"),
    ],
)
def test_bad_input_gets_a_clear_error(client, gateway_env, headers, body, status, fragment):
    response = post(client, gateway_env, body, **headers)
    assert response.status_code == status
    assert fragment in response.json()["error"]["message"]


@pytest.mark.django_db
def test_every_refusal_carries_an_operation_id_in_the_body_and_the_header(client, gateway_env):
    contract_version_create({**CHAT, "name": "vision-only", "workload": "vision", "modalities": ["text", "image"]})
    gateway_env.sim(fleet(endpoint("alpha"), endpoint("beta"), endpoint("gamma")))
    assert post(client, gateway_env, HTTP_IDEMPOTENCY_KEY="ref-1").status_code == 200
    answers = {
        "401 unauthorized": post(client, gateway_env, HTTP_AUTHORIZATION="Bearer wrong"),
        "400 invalid_contract_header": post(client, gateway_env, HTTP_X_ROUTING_CONTRACT="chat"),
        "400 invalid_request": post(client, gateway_env, {"messages": []}),
        "404 unknown_contract": post(client, gateway_env, HTTP_X_ROUTING_CONTRACT="nope@1"),
        "422 no_eligible_route": post(client, gateway_env, HTTP_X_ROUTING_CONTRACT="vision-only@1"),
        "422 idempotency_key_reused": post(client, gateway_env, {**BODY, "max_tokens": 5}, HTTP_IDEMPOTENCY_KEY="ref-1"),
    }
    ids = set()
    for label, response in answers.items():
        error = response.json()["error"]
        assert f"{response.status_code} {error['code']}" == label
        assert error["operation_id"] and response["X-Routing-Operation-Id"] == error["operation_id"], label
        ids.add(error["operation_id"])
    assert len(ids) == len(answers)  # one id per failure, never shared


def test_the_gateways_database_outage_answer_carries_an_operation_id_too():
    error = database_unavailable_body("/v1/chat/completions")["error"]
    assert error["code"] == "database_unavailable" and len(error["operation_id"]) == 32
    assert "operation_id" not in database_unavailable_body("/api/v1/routing/ignore")["error"]


@pytest.mark.django_db
def test_invalid_json_is_a_400(client, gateway_env):
    response = client.post("/v1/chat/completions", data=b"{not json", content_type="application/json", **gateway_env.auth)
    assert response.status_code == 400 and "not valid JSON" in response.json()["error"]["message"]


@pytest.mark.django_db
@pytest.mark.parametrize(("number", "says"), [
    (b"1e400", "max_tokens: 1e400 is out of range for a number"),
    (b"-Infinity", "max_tokens: -Infinity is not JSON (RFC 8259 has no NaN or Infinity)"),
    # Past Python's integer conversion limit: named like any other number, never with
    # the interpreter's hint to the server's code (found by a new user's try).
    (b"9" * 5000, "max_tokens: 999999999999... (5000 digits) is out of range for a number"),
])
def test_a_number_json_has_not_is_a_400_naming_the_field_and_the_number(client, gateway_env, number, says):
    raw = b'{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": ' + number + b"}"
    response = client.post("/v1/chat/completions", data=raw, content_type="application/json", **gateway_env.auth)
    assert response.status_code == 400
    assert (response.json()["error"]["field"], response.json()["error"]["message"]) == ("max_tokens", says)


@pytest.mark.django_db
def test_a_body_that_is_not_utf8_is_a_400_naming_the_byte_and_a_bom_is_ignored(client, gateway_env):
    latin1 = '{"messages": [{"role": "user", "content": "Olá"}]}'.encode("latin-1")
    response = client.post("/v1/chat/completions", data=latin1, content_type="application/json", **gateway_env.auth)
    assert response.status_code == 400
    assert response.json()["error"]["message"].endswith("byte 0xe1 at offset 45")
    bom = b"\xef\xbb\xbf" + latin1.decode("latin-1").encode() + b" "
    # Past the body check (a BOM is not an error): the request reaches contract routing.
    response = client.post("/v1/chat/completions", data=bom, content_type="application/json", **gateway_env.auth)
    assert response.json()["error"]["code"] != "invalid_json"


@pytest.mark.django_db
def test_json_nested_past_the_parsers_depth_is_a_400_not_a_crash(client, gateway_env):
    deep = b"[" * 100_000 + b"]" * 100_000
    response = client.post("/v1/chat/completions", data=deep, content_type="application/json", **gateway_env.auth)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_json" and "too deeply" in response.json()["error"]["message"]


@pytest.mark.django_db
def test_a_streaming_client_gets_only_the_accepted_answer(client, gateway_env):
    gateway_env.sim(fleet(endpoint("alpha", {"midstream_error": {"rate": 1}}), endpoint("beta"), endpoint("gamma")))
    response = post(client, gateway_env, {**BODY, "stream": True})
    assert response.status_code == 200 and response["Content-Type"] == "text/event-stream"
    text = b"".join(response.streaming_content).decode()
    assert text.endswith("data: [DONE]\n\n") and '"finish_reason": "stop"' in text
    assert "error" not in text and response["X-Routing-Route"] == "beta"


@pytest.mark.django_db
def test_the_in_process_client_does_the_same(gateway_env):
    gateway_env.sim(fleet(endpoint("alpha"), endpoint("beta"), endpoint("gamma")))
    reply = chat_completion_create("chat", 1, dict(BODY))
    assert reply.ok and reply.headers["X-Routing-Route"] == "alpha" and reply.content


@pytest.mark.django_db
def test_a_side_effect_workload_needs_a_key_and_is_replayed_not_rerun(gateway_env, settings):
    contract_version_create({**CHAT, "name": "book-table", "side_effects": True})
    sim = gateway_env.sim(fleet(endpoint("alpha"), endpoint("beta"), endpoint("gamma")))
    assert chat_completion_create("book-table", 1, dict(BODY)).status == 400
    first = chat_completion_create("book-table", 1, dict(BODY), operation_id="op-1")
    assert first.ok
    sim_reset_stats(sim)
    again = chat_completion_create("book-table", 1, dict(BODY), operation_id="op-1")
    assert again.replayed and again.body == first.body and sum(sim_stats(sim).values()) == 0
    other = chat_completion_create("book-table", 1, {**BODY, "max_tokens": 10}, operation_id="op-1")
    assert other.status == 422


@pytest.mark.django_db
def test_an_idempotency_key_on_a_contract_without_side_effects_replays_and_refuses_another_body(client, gateway_env):
    sim = gateway_env.sim(fleet(endpoint("alpha"), endpoint("beta"), endpoint("gamma")))
    first = post(client, gateway_env, HTTP_IDEMPOTENCY_KEY="chat-op-1")
    assert first.status_code == 200 and "Idempotent-Replayed" not in first
    sim_reset_stats(sim)
    again = post(client, gateway_env, HTTP_IDEMPOTENCY_KEY="chat-op-1")
    assert again.status_code == 200 and again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json() and again["X-Routing-Route"] == first["X-Routing-Route"]
    assert sum(sim_stats(sim).values()) == 0
    other = post(client, gateway_env, {**BODY, "max_tokens": 10}, HTTP_IDEMPOTENCY_KEY="chat-op-1")
    assert other.status_code == 422 and other.json()["error"]["code"] == "idempotency_key_reused"
    assert sum(sim_stats(sim).values()) == 0
    # Without a key nothing is remembered: the same body runs again.
    assert post(client, gateway_env).status_code == 200 and sum(sim_stats(sim).values()) == 1


@pytest.mark.django_db
def test_one_key_on_two_contracts_and_again_after_its_pruning_keeps_every_requests_events(client, gateway_env):
    gateway_env.sim(fleet(endpoint("alpha"), endpoint("beta"), endpoint("gamma")))
    contract_version_create({**CHAT, "name": "chat-two"})
    first = post(client, gateway_env, HTTP_IDEMPOTENCY_KEY="shared-1")
    second = post(client, gateway_env, HTTP_IDEMPOTENCY_KEY="shared-1", HTTP_X_ROUTING_CONTRACT="chat-two@1")
    assert first.status_code == second.status_code == 200
    assert "Idempotent-Replayed" not in second  # another contract: another request
    ids = {first["X-Routing-Operation-Id"], second["X-Routing-Operation-Id"]}
    assert len(ids) == 2
    # The key pruned after its keeping time: a new request under it keeps its events too.
    ledger_sweep(timezone.now() + timedelta(days=2), keep_s=86_400, lease_s=300)
    third = post(client, gateway_env, HTTP_IDEMPOTENCY_KEY="shared-1")
    assert third.status_code == 200 and "Idempotent-Replayed" not in third
    ids.add(third["X-Routing-Operation-Id"])
    assert len(ids) == 3
    assert RequestEvent.objects.filter(operation_id__in=ids).count() == 3


@pytest.mark.django_db
def test_an_idempotency_key_longer_than_its_column_is_a_400(client, gateway_env):
    response = post(client, gateway_env, HTTP_IDEMPOTENCY_KEY="k" * 101)
    assert response.status_code == 400 and "1 to 100 printable characters" in response.json()["error"]["message"]
    assert chat_completion_create("chat", 1, dict(BODY), operation_id="k" * 101).status == 400
    # No row for this key (rows another module's committed test left behind are not ours).
    assert not ExecutionLedger.objects.filter(key__contains="k" * 100).exists()


@pytest.mark.django_db
def test_a_failed_request_without_side_effects_releases_its_key(gateway_env):
    always_500 = {"http_error": {"rate": 1, "status": 500}}
    sim = gateway_env.sim(fleet(endpoint("alpha", always_500), endpoint("beta", always_500), endpoint("gamma", always_500)))
    assert chat_completion_create("chat", 1, dict(BODY), operation_id="chat-op-2").status == 502
    assert ExecutionLedger.objects.get(key="request:chat:chat-op-2").status == "failed"
    sim_reset_stats(sim)
    for name in ("alpha", "beta", "gamma"):
        breaker_store().reset(name)
    second = chat_completion_create("chat", 1, dict(BODY), operation_id="chat-op-2")
    assert not second.replayed and sum(sim_stats(sim).values()) > 0
    # Each run has its own request event: the first under the key, the retry under a new id.
    row = ExecutionLedger.objects.get(key="request:chat:chat-op-2")
    assert row.runs == 2 and row.operation_id == second.body["error"]["operation_id"] != "chat-op-2"
    assert RequestEvent.objects.filter(operation_id__in=["chat-op-2", row.operation_id]).count() == 2


@pytest.mark.django_db
def test_an_unknown_outcome_is_recorded_and_never_replayed(gateway_env):
    contract_version_create({**CHAT, "name": "book-table", "side_effects": True})
    sim = gateway_env.sim(fleet(endpoint("alpha", {"reset": {"rate": 1}}), endpoint("beta"), endpoint("gamma")))
    first = chat_completion_create("book-table", 1, dict(BODY), operation_id="op-2")
    assert first.body["error"]["code"] == "outcome_unknown" and first.body["error"]["failure_class"] == "ambiguous"
    assert ExecutionLedger.objects.get(key="request:book-table:op-2").status == "unknown"
    sim_reset_stats(sim)
    again = chat_completion_create("book-table", 1, dict(BODY), operation_id="op-2")
    assert again.status == 409 and "not replayed" in again.body["error"]["message"]
    assert again.body["error"]["header"] == "Idempotency-Key" and "'op-2'" in again.body["error"]["message"]
    assert sum(sim_stats(sim).values()) == 0
    assert RequestEvent.objects.get(operation_id="op-2").outcome == "unknown"


@pytest.mark.django_db
def test_outputs_can_be_redacted_instead_of_hashed(gateway_env, settings):
    settings.ROUTING_EVENT_CONTENT = "redact"
    gateway_env.sim(fleet(endpoint("alpha"), endpoint("beta"), endpoint("gamma")))
    reply = chat_completion_create("chat", 1, dict(BODY))
    event = RequestEvent.objects.get(operation_id=reply.headers["X-Routing-Operation-Id"])
    assert event.prompt.startswith("[redacted ") and event.output.startswith("[redacted ")


@pytest.mark.django_db
def test_a_body_over_the_upload_limit_is_a_json_413(client, gateway_env, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    big = dict(BODY, messages=[{"role": "user", "content": "x" * 5000}])
    response = post(client, gateway_env, big)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"


@pytest.mark.django_db
def test_other_methods_get_a_json_405(client, gateway_env):
    response = client.get("/v1/chat/completions", **gateway_env.auth)
    assert response.status_code == 405 and response["Allow"] == "POST"
    assert response.json()["error"]["code"] == "method_not_allowed"


@pytest.mark.django_db
def test_header_errors_name_their_header_and_show_only_the_callers_key(client, gateway_env):
    # Found by a new user's trial: only an invalid key's error named its header, and the
    # reused-key 422 showed the ledger's row key (a digest of the caller's name).
    contract_version_create({**CHAT, "name": "book-table", "side_effects": True})
    gateway_env.sim(fleet(endpoint("alpha"), endpoint("beta"), endpoint("gamma")))
    language = post(client, gateway_env, HTTP_X_EXPECTED_LANGUAGE="xx").json()["error"]
    assert language["header"] == "X-Expected-Language"
    unknown = post(client, gateway_env, HTTP_X_ROUTING_CONTRACT="nosuch@1").json()["error"]
    assert unknown["code"] == "unknown_contract" and unknown["header"] == "X-Routing-Contract"
    refused = post(client, gateway_env, HTTP_AUTHORIZATION="Bearer wrong")
    assert refused.status_code == 401 and refused["WWW-Authenticate"] == "Bearer"
    assert refused.json()["error"]["header"] == "Authorization"
    contract = post(client, gateway_env, HTTP_X_ROUTING_CONTRACT="@@@").json()["error"]
    assert contract["header"] == "X-Routing-Contract"
    # No comma, so not a header sent twice: no such guess.
    assert contract["message"].endswith("<contract name>@<version>; got '@@@'")
    missing = post(client, gateway_env, HTTP_X_ROUTING_CONTRACT="book-table@1").json()["error"]
    assert missing["code"] == "idempotency_key_required" and missing["header"] == "Idempotency-Key"
    assert post(client, gateway_env, HTTP_IDEMPOTENCY_KEY="mine-1").status_code == 200
    reused = post(client, gateway_env, {**BODY, "max_tokens": 5}, HTTP_IDEMPOTENCY_KEY="mine-1").json()["error"]
    assert reused["header"] == "Idempotency-Key" and "'mine-1'" in reused["message"]
    assert "request@" not in reused["message"] and ":chat:" not in reused["message"]


@pytest.mark.django_db
def test_a_body_without_content_type_is_told_it_is_missing(client, gateway_env):
    response = client.generic("POST", "/v1/chat/completions", json.dumps(BODY).encode(), content_type="", **gateway_env.auth)
    error = response.json()["error"]
    assert response.status_code == 415 and "Content-Type header is missing" in error["message"]
    assert "text/plain" not in error["message"]


@pytest.mark.django_db
def test_a_body_django_cannot_read_is_refused_saying_why(client, gateway_env):
    garbage = client.generic("POST", "/v1/chat/completions", json.dumps(BODY).encode(), content_type="application/json",
                             CONTENT_LENGTH="abc", **gateway_env.auth)
    error = garbage.json()["error"]
    assert garbage.status_code == 400 and error["header"] == "Content-Length" and "'abc'" in error["message"]
    empty = client.generic("POST", "/v1/chat/completions", b"", CONTENT_TYPE="application/json", **gateway_env.auth)
    assert empty.status_code == 400 and empty.json()["error"]["message"].startswith("the body is empty")
    # Chunked, no Content-Length: Django reads no body; the caller is told to send its length.
    chunked = client.generic("POST", "/v1/chat/completions", b"", CONTENT_TYPE="application/json",
                             HTTP_TRANSFER_ENCODING="chunked", **gateway_env.auth)
    assert chunked.status_code == 411 and chunked.json()["error"]["header"] == "Content-Length"
    gzipped = client.generic("POST", "/v1/chat/completions", gzip.compress(json.dumps(BODY).encode()),
                             content_type="application/json", HTTP_CONTENT_ENCODING="gzip", **gateway_env.auth)
    error = gzipped.json()["error"]
    assert gzipped.status_code == 415 and error["header"] == "Content-Encoding" and "'gzip'" in error["message"]


@pytest.mark.django_db
def test_a_route_of_unknown_price_is_passed_over_under_max_price_and_the_records_say_why(client, gateway_env):
    # alpha's price unknown; beta 0.2 and gamma 0.3 USD per million prompt tokens.
    Route.objects.filter(name="alpha").update(price_prompt_usd=None, price_completion_usd=None)
    routes_cache_clear()
    gateway_env.sim(fleet(endpoint("alpha"), endpoint("beta"), endpoint("gamma")))
    # Before, alpha was priced 0 and served a caller whose ceiling no known route met.
    refused = post(client, gateway_env, {**BODY, "provider": {"max_price": {"prompt": 0.15}}})
    assert refused.status_code == 422, refused.content
    error = refused.json()["error"]
    assert (error["code"], error["field"], error["attempts"]) == ("request_unservable", "provider.max_price.prompt", [])
    assert "prompt price unknown" in error["rejected_routes"]["alpha"] and "above" in error["rejected_routes"]["beta"]
    served = post(client, gateway_env, {**BODY, "provider": {"max_price": {"prompt": 0.25}}})
    assert served.status_code == 200 and served["X-Routing-Route"] == "beta"
    event = RequestEvent.objects.get(operation_id=served["X-Routing-Operation-Id"])
    assert "passed over for the provider preferences" in event.message and "alpha" in event.message
    assert "prompt price unknown" in event.message and "gamma" in event.message
    # Without a ceiling it is a candidate, ranked after the known prices.
    plain = post(client, gateway_env)
    assert plain.status_code == 200 and plain["X-Routing-Route"] == "beta"
    assert RequestEvent.objects.get(operation_id=plain["X-Routing-Operation-Id"]).message == ""


@pytest.mark.django_db
def test_a_request_without_an_idempotency_key_touches_no_table_but_the_events(client, gateway_env, settings):
    # Before, settling a key it did not have opened a transaction, and so a database
    # connection per request (the ignore list and the token are cached).
    settings.ROUTING_IGNORE_CACHE_S = 600
    gateway_env.sim(fleet(endpoint("alpha"), endpoint("beta"), endpoint("gamma")))
    assert post(client, gateway_env).status_code == 200
    outside: list[str] = []

    def spy(execute, sql, params, many, context):
        if not any(frame.filename.endswith(os.path.join("routing", "events.py")) for frame in inspect.stack()):
            outside.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(spy):
        assert post(client, gateway_env).status_code == 200
    assert outside == []
    # The spy sees what a key costs: its claim and its settling.
    with connection.execute_wrapper(spy):
        assert post(client, gateway_env, HTTP_IDEMPOTENCY_KEY="op-settled").status_code == 200
    assert any("routing_executionledger" in sql for sql in outside)
