"""A refused value is quoted, never echoed whole: a 100 KB field came back entire in the
400 that refused it. The gateway and the internal API over the real view and database."""

from __future__ import annotations

import json

import pytest

from core.tokens import service_token_issue
from tests.routing.conftest import api_world

CHAT = {"name": "chat", "workload": "text", "deadline_s": 8, "max_attempts": 2, "max_fallbacks": 1,
        "finish_reasons": ["stop"], "connect_s": 0.2, "generation_s": 1.0, "validation_s": 0.1}
HUGE = "x" * 100_000


@pytest.mark.django_db
def test_a_100_kb_value_in_a_gateway_request_is_quoted_not_echoed(client, settings, start_sim, use_sim):
    world = api_world(settings, start_sim, use_sim, prices={"alpha": "0.0000001"}, contract=CHAT)
    env = next(world)
    body = {"messages": [{"role": HUGE, "content": "hi"}]}
    response = client.post("/v1/chat/completions", data=json.dumps(body), content_type="application/json", **env.auth)
    assert response.status_code == 400
    assert len(response.content) < 2_000, len(response.content)
    error = response.json()["error"]
    assert error["field"] == "messages[0].role" and "(100" in error["message"] and "characters)" in error["message"]
    next(world, None)


@pytest.mark.django_db
def test_a_100_kb_model_id_in_the_internal_api_is_not_echoed(client):
    _, token = service_token_issue("backend")
    response = client.get("/api/v1/routing/ignore", {"model": "a/" + HUGE}, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 400 and len(response.content) < 2_000


@pytest.mark.django_db
@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
def test_a_body_not_sent_as_json_is_a_415(client, settings, start_sim, use_sim, content_type):
    world = api_world(settings, start_sim, use_sim, prices={"alpha": "0.0000001"}, contract=CHAT)
    env = next(world)
    body = json.dumps({"messages": [{"role": "user", "content": "hi"}]})
    headers = {"CONTENT_TYPE": content_type} if content_type else {}
    response = client.generic("POST", "/v1/chat/completions", body, **headers, **env.auth)
    assert response.status_code == 415, response.content[:300]
    assert response["Accept-Post"] == "application/json"
    assert response.json()["error"]["code"] == "unsupported_media_type"
    ok = client.post("/v1/chat/completions", data=body, content_type="application/json; charset=utf-8", **env.auth)
    assert ok.status_code != 415
    next(world, None)


@pytest.mark.django_db
def test_an_unknown_body_field_is_a_400_naming_it_and_never_forwarded(client, settings, start_sim, use_sim):
    world = api_world(settings, start_sim, use_sim, prices={"alpha": "0.0000001"}, contract=CHAT)
    env = next(world)
    body = {"messages": [{"role": "user", "content": "hi"}], "temprature": 0.2, "max_tokens": 20}
    response = client.post("/v1/chat/completions", data=json.dumps(body), content_type="application/json", **env.auth)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == "temprature" and "unknown request field" in error["message"]
    next(world, None)


@pytest.mark.django_db
@pytest.mark.parametrize(("body", "field"), [
    ({"messages": [{"role": "user", "content": "hi", "nmae": "Ana"}]}, "messages[0].nmae"),
    ({"messages": [{"role": "user", "content": "hi"}],
      "tools": [{"type": "function", "function": {"name": "f", "parameters": {}, "strcit": True}}]}, "tools[0].function.strcit"),
    ({"messages": [{"role": "user", "content": "hi"}],
      "tools": [{"type": "function", "functoin": {"name": "f", "parameters": {}}}]}, "tools[0].functoin"),
])
def test_an_unknown_nested_field_is_a_400_naming_its_path_as_the_top_level_is(client, settings, start_sim, use_sim, body, field):
    world = api_world(settings, start_sim, use_sim, prices={"alpha": "0.0000001"}, contract=CHAT)
    env = next(world)
    response = client.post("/v1/chat/completions", data=json.dumps({**body, "max_tokens": 20}),
                           content_type="application/json", **env.auth)
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["field"]) == ("invalid_request", field)
    assert error["message"].startswith(f"{field}: unknown field")
    next(world, None)
