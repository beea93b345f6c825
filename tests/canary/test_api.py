"""The internal ignore-list API over real HTTP (pytest-django's live server)."""

from __future__ import annotations

from datetime import datetime, timedelta

import httpx
import jsonschema
import pytest
from django.utils import timezone

from canary.models import Endpoint, EndpointPolicyState, Provider
from canary.services.quarantine import exclusion_add
from core.tokens import service_token_issue, service_token_revoke

MODEL = "meta-llama/llama-3.3-70b-instruct"
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def token() -> str:
    return service_token_issue("product-backend")[1]


def _suspend(tag: str, until: datetime) -> None:
    now = timezone.now()
    slug = tag.split("/")[0]
    provider = Provider.objects.create(slug=slug, name=slug.title(), first_seen=now, last_seen=now)
    ep = Endpoint.objects.create(model_id=MODEL, tag=tag, provider=provider, provider_name=slug.title(), first_seen=now, last_seen=now)
    EndpointPolicyState.objects.create(endpoint=ep, fail_streak=2, suspended_until=until, enforced=True, suspension_level=1)


def test_ignore_list_requires_a_valid_token(live_server):
    r = httpx.get(f"{live_server.url}/api/v1/routing/ignore", params={"model": MODEL})
    assert r.status_code == 401
    assert r.json()["error"]["code"] == 401
    r = httpx.get(f"{live_server.url}/api/v1/routing/ignore", params={"model": MODEL}, headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401


def test_ignore_list_merges_the_three_layers_with_sources(live_server, token):
    now = timezone.now()
    exclusion_add(MODEL, "reviewed", "Dynamo", actor="ana", reason="runs its own content filter", now=now)
    exclusion_add(MODEL, "incident", "fjord/fp8", actor="bo", reason="429 storm", now=now, expires_at=now + timedelta(hours=2))
    _suspend("borealis/fp8", now + timedelta(days=1))
    r = httpx.get(f"{live_server.url}/api/v1/routing/ignore", params={"model": MODEL}, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200
    body = r.json()
    assert body["ignore"] == ["borealis/fp8", "dynamo", "fjord/fp8"]
    assert body["sources"] == {"reviewed": ["dynamo"], "incident": ["fjord/fp8"], "canary": ["borealis/fp8"]}
    assert datetime.fromisoformat(body["generated_at"]).tzinfo is not None
    assert "max-age=" in r.headers["Cache-Control"]
    provider = httpx.get(f"{live_server.url}/api/v1/routing/provider", params={"model": MODEL}, headers={"Authorization": f"Bearer {token}"})
    assert provider.json()["provider"] == {"ignore": ["borealis/fp8", "dynamo", "fjord/fp8"]}


def test_etag_gives_304_until_the_list_changes(live_server, token):
    auth = {"Authorization": f"Bearer {token}"}
    url = f"{live_server.url}/api/v1/routing/ignore"
    first = httpx.get(url, params={"model": MODEL}, headers=auth)
    etag = first.headers["ETag"]
    again = httpx.get(url, params={"model": MODEL}, headers={**auth, "If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert "Content-Type" not in again.headers  # no body to describe
    assert int(again.headers["Content-Length"]) == len(first.content)  # the 200's, or none (RFC 9110 section 8.6)
    exclusion_add(MODEL, "incident", "orchid", actor="bo", reason="incident 42", now=timezone.now(),
                  expires_at=timezone.now() + timedelta(hours=1))
    changed = httpx.get(url, params={"model": MODEL}, headers={**auth, "If-None-Match": etag})
    assert changed.status_code == 200 and changed.json()["ignore"] == ["orchid"]


def test_expired_incident_and_suspension_leave_the_list(live_server, token):
    now = timezone.now()
    _suspend("borealis/fp8", now - timedelta(seconds=1))
    r = httpx.get(f"{live_server.url}/api/v1/routing/ignore", params={"model": MODEL}, headers={"Authorization": f"Bearer {token}"})
    assert r.json()["ignore"] == []


def test_missing_model_is_a_clear_400(live_server, token):
    r = httpx.get(f"{live_server.url}/api/v1/routing/ignore", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 400
    assert "model" in r.json()["error"]["message"]


def test_a_model_given_twice_is_a_400_not_a_silent_choice(live_server, token):
    r = httpx.get(f"{live_server.url}/api/v1/routing/ignore", params=[("model", MODEL), ("model", "a/b")],
                  headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 400
    assert r.json()["error"]["message"] == "query parameter 'model' is given more than once; ask for one model per request"


def test_a_revoked_token_is_refused(live_server):
    _, token = service_token_issue("old-backend")
    service_token_revoke("old-backend", reason="retired")
    r = httpx.get(f"{live_server.url}/api/v1/routing/ignore", params={"model": MODEL}, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 401


def test_openapi_document_describes_the_ignore_endpoint(live_server):
    doc = httpx.get(f"{live_server.url}/api/v1/openapi.json").json()
    assert doc["openapi"].startswith("3.")
    assert "/api/v1/routing/ignore" in doc["paths"]
    assert doc["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"


def test_openapi_document_describes_the_gateway_and_its_real_errors(live_server, token):
    doc = httpx.get(f"{live_server.url}/api/v1/openapi.json").json()
    gateway = doc["paths"]["/v1/chat/completions"]["post"]
    assert {p["name"] for p in gateway["parameters"]} == {"X-Routing-Contract", "Idempotency-Key"}
    assert set(gateway["responses"]["200"]["headers"]) == {"X-Routing-Route", "X-Routing-Attempts", "X-Routing-Operation-Id"}
    schema = doc["components"]["schemas"]["GatewayError"]
    url = f"{live_server.url}/v1/chat/completions"
    # Real refusals of the gateway match the documented error shape and status.
    answers = [
        httpx.post(url, json={"messages": []}),
        httpx.post(url, json={"messages": []}, headers={"Authorization": f"Bearer {token}"}),
        httpx.post(url, json={"messages": []}, headers={"Authorization": f"Bearer {token}", "X-Routing-Contract": "nope@1"}),
    ]
    assert [a.status_code for a in answers] == [401, 400, 404]
    for answer in answers:
        assert str(answer.status_code) in gateway["responses"]
        jsonschema.validate(answer.json(), schema)




def test_other_methods_get_a_json_405_not_a_csrf_page(live_server, token):
    r = httpx.post(f"{live_server.url}/api/v1/routing/ignore", params={"model": MODEL}, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 405
    assert r.json()["error"]["code"] == 405 and r.headers["Allow"] == "GET, HEAD"


def test_weak_etags_and_star_match_and_the_scheme_is_case_insensitive(live_server, token):
    url = f"{live_server.url}/api/v1/routing/ignore"
    auth = {"Authorization": f"bearer {token}"}
    etag = httpx.get(url, params={"model": MODEL}, headers=auth).headers["ETag"]
    assert httpx.get(url, params={"model": MODEL}, headers={**auth, "If-None-Match": f"W/{etag}"}).status_code == 304
    assert httpx.get(url, params={"model": MODEL}, headers={**auth, "If-None-Match": "*"}).status_code == 304


@pytest.mark.parametrize("model", ["noslash", "a/b\x00c", "a/" + "b" * 300, "a/b/c", "a//b", "/slug", "author/"])
def test_a_malformed_model_is_a_400_with_the_reason(live_server, token, model):
    r = httpx.get(f"{live_server.url}/api/v1/routing/ignore", params={"model": model}, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 400
    assert "query parameter 'model'" in r.json()["error"]["message"]


def test_an_upper_cased_model_id_in_the_ignore_api_names_the_same_model(live_server, token):
    now = timezone.now()
    exclusion_add("Meta-Llama/Llama-3.3-70B-Instruct", "reviewed", "dynamo", actor="ana", reason="own filter", now=now)
    _suspend("borealis/fp8", now + timedelta(days=1))
    r = httpx.get(f"{live_server.url}/api/v1/routing/ignore", params={"model": MODEL.upper()}, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200
    assert r.json()["model"] == MODEL
    assert r.json()["ignore"] == ["borealis/fp8", "dynamo"]


def test_a_misspelt_query_parameter_is_named(live_server, token):
    # Found by a new user's trial: ?modle= was answered "'model' is required".
    r = httpx.get(f"{live_server.url}/api/v1/routing/ignore", params={"modle": MODEL}, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 400
    assert "unknown query parameter 'modle' (did you mean 'model'?)" in r.json()["error"]["message"]


def test_the_breakers_endpoint_answers_in_the_api_error_shape_and_is_documented(live_server, token, monkeypatch):
    doc = httpx.get(f"{live_server.url}/api/v1/openapi.json").json()
    assert {"/api/v1/routing/breakers", "/api/v1/health"} <= set(doc["paths"])
    url = f"{live_server.url}/api/v1/routing/breakers"
    unauthorized = httpx.get(url)
    assert unauthorized.status_code == 401
    jsonschema.validate(unauthorized.json(), doc["components"]["schemas"]["Error"])

    def unreadable():
        raise ConnectionError("redis is away")

    monkeypatch.setattr("observability.views.breaker_store", unreadable)
    down = httpx.get(url, headers={"Authorization": f"Bearer {token}"})
    assert down.status_code == 503
    jsonschema.validate(down.json(), doc["components"]["schemas"]["Error"])
    assert down.json()["error"]["code"] == 503 and "redis is away" in down.json()["error"]["message"]


def test_a_gateway_body_sent_without_content_type_is_told_the_header_may_be_missing(live_server, token):
    # Found by a new user's trial: told "not 'text/plain'" for a header it never sent (the
    # wsgiref-based server reports a missing Content-Type as text/plain).
    r = httpx.post(f"{live_server.url}/v1/chat/completions", content=b'{"messages": []}',
                   headers={"Authorization": f"Bearer {token}", "X-Routing-Contract": "chat@1"})
    assert r.status_code == 415
    assert "the Content-Type header is missing" in r.json()["error"]["message"]
    assert r.json()["error"]["header"] == "Content-Type"
