"""Provider routing semantics, observed over HTTP: only/ignore/order by slug, tag or display
name (case-insensitive), fallbacks, require_parameters, sort, and OpenRouter's error bodies."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.simulator.conftest import MODEL, Sim, endpoint, fleet

SCHEMA_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "scene",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"mood": {"type": "string"}},
            "required": ["mood"],
            "additionalProperties": False,
        },
    },
}


def world() -> dict[str, Any]:
    data = fleet(
        endpoint("atlas/fp8", "Atlas", prompt_price="0.0000003"),
        endpoint("atlas/bf16", "Atlas", prompt_price="0.0000005"),
        endpoint(
            "borealis/fp8",
            "Borealis",
            faults={"http_error": {"rate": 1.0, "status": 429, "retry_after_s": 2.5}},
        ),
        endpoint(
            "cinder/fp8",
            "Cinder Cloud",
            params=["max_tokens", "temperature", "stream"],
            prompt_price="0.0000001",
            completion_price="0.0000001",
        ),
        endpoint("dune/fp8", "Dune", faults={"down": True}),
    )
    data["models"].append({"id": "vendor/empty-model", "endpoints": []})
    return data


@pytest.fixture
def sim(thread_sim: Callable[[dict[str, Any]], Sim]) -> Sim:
    return thread_sim(world())


def only(sim: Sim, names: list[str], **provider: Any) -> Any:
    return sim.client.post(
        "/chat/completions",
        json={
            "model": MODEL,
            "messages": [{"role": "user", "content": "Hi"}],
            "provider": {"only": names, **provider},
        },
    )


def test_only_with_a_slug_allows_every_endpoint_of_that_provider(sim: Sim) -> None:
    for _ in range(6):
        response = only(sim, ["ATLAS"], allow_fallbacks=False)
        assert response.status_code == 200
        assert response.json()["provider"] == "Atlas"
    assert set(sim.stats()) <= {"atlas/fp8", "atlas/bf16"}


def test_only_with_a_tag_pins_one_endpoint_regardless_of_case(sim: Sim) -> None:
    for _ in range(3):
        assert only(sim, ["Atlas/BF16"], allow_fallbacks=False).status_code == 200
    assert sim.stats() == {"atlas/bf16": 3}


def test_only_accepts_the_display_name(sim: Sim) -> None:
    response = only(sim, ["cinder cloud"], allow_fallbacks=False)
    assert response.json()["provider"] == "Cinder Cloud"
    assert sim.stats() == {"cinder/fp8": 1}


def test_ignore_removes_providers_by_slug_tag_or_name(sim: Sim) -> None:
    for _ in range(4):
        response = sim.chat(provider={"ignore": ["atlas/fp8", "Atlas/bf16", "borealis", "DUNE"]})
        assert response.json()["provider"] == "Cinder Cloud"


def test_order_puts_the_listed_endpoints_first(sim: Sim) -> None:
    response = sim.chat(provider={"order": ["atlas/bf16", "cinder"]})
    assert response.json()["provider"] == "Atlas"
    assert sim.stats() == {"atlas/bf16": 1}


def test_without_fallbacks_the_pinned_endpoints_error_comes_back(sim: Sim) -> None:
    response = sim.chat("borealis/fp8", fallbacks=False)
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "3"
    body = response.json()
    assert body["error"]["code"] == 429
    assert body["error"]["message"] == "Provider returned error"
    assert body["error"]["metadata"]["provider_name"] == "Borealis"
    assert body["error"]["metadata"]["is_byok"] is False
    assert isinstance(body["error"]["metadata"]["raw"], str)
    assert body["user_id"].startswith("user_")
    assert sim.stats() == {"borealis/fp8": 1}


def test_with_fallbacks_another_provider_serves_and_generation_lists_both(sim: Sim) -> None:
    response = sim.client.post(
        "/chat/completions",
        json={
            "model": MODEL,
            "messages": [{"role": "user", "content": "Hi"}],
            "provider": {"order": ["borealis", "atlas/fp8"], "only": ["borealis", "atlas/fp8"]},
        },
    )
    assert response.status_code == 200
    assert response.json()["provider"] == "Atlas"
    assert sim.stats() == {"borealis/fp8": 1, "atlas/fp8": 1}
    record = sim.client.get(
        "/generation", params={"id": response.headers["X-Generation-Id"]}
    ).json()["data"]
    assert [(r["provider_name"], r["status"]) for r in record["provider_responses"]] == [
        ("Borealis", 429),
        ("Atlas", 200),
    ]
    assert record["provider_name"] == "Atlas"


def test_a_down_endpoint_answers_503_and_is_skipped_with_fallbacks(sim: Sim) -> None:
    pinned = sim.chat("dune/fp8")
    assert pinned.status_code == 503
    assert pinned.json()["error"]["code"] == 503
    served = sim.chat(provider={"order": ["dune"]})
    assert served.status_code == 200
    assert served.json()["provider"] != "Dune"


def test_require_parameters_keeps_only_endpoints_supporting_every_parameter(sim: Sim) -> None:
    response = only(sim, ["cinder"], require_parameters=True, allow_fallbacks=False)
    assert response.status_code == 200  # no parameters beyond the basics
    refused = sim.client.post(
        "/chat/completions",
        json={
            "model": MODEL,
            "messages": [{"role": "user", "content": "Hi"}],
            "response_format": SCHEMA_FORMAT,
            "provider": {"only": ["cinder"], "require_parameters": True},
        },
    )
    assert refused.status_code == 404
    assert (
        refused.json()["error"]["message"]
        == "No endpoints found that can handle the requested parameters."
    )
    refused_seed = sim.client.post(
        "/chat/completions",
        json={
            "model": MODEL,
            "messages": [{"role": "user", "content": "Hi"}],
            "seed": 3,
            "provider": {"only": ["cinder"], "require_parameters": True},
        },
    )
    assert refused_seed.status_code == 404


def test_an_endpoint_without_schema_support_ignores_the_schema_when_not_required(sim: Sim) -> None:
    response = sim.client.post(
        "/chat/completions",
        json={
            "model": MODEL,
            "messages": [{"role": "user", "content": "Hi"}],
            "response_format": SCHEMA_FORMAT,
            "provider": {"only": ["cinder/fp8"]},
        },
    )
    content = response.json()["choices"][0]["message"]["content"]
    assert response.json()["choices"][0]["finish_reason"] == "stop"
    assert content.startswith("**Mood:**")


def test_only_matching_nothing_is_no_allowed_providers(sim: Sim) -> None:
    response = only(sim, ["openai", "nowhere/fp8"])
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["message"] == "No allowed providers are available for the selected model."
    assert error["metadata"]["available_providers"] == ["atlas", "borealis", "cinder", "dune"]
    assert error["metadata"]["requested_providers"] == ["openai", "nowhere/fp8"]


def test_model_errors(sim: Sim) -> None:
    unknown = sim.client.post(
        "/chat/completions",
        json={"model": "acme/fake-1.0", "messages": [{"role": "user", "content": "x"}]},
    )
    assert unknown.status_code == 400
    assert unknown.json()["error"] == {
        "code": 400,
        "message": "acme/fake-1.0 is not a valid model ID",
    }
    empty = sim.client.post(
        "/chat/completions",
        json={"model": "vendor/empty-model", "messages": [{"role": "user", "content": "x"}]},
    )
    assert empty.status_code == 404
    assert empty.json()["error"]["message"] == "No endpoints found for vendor/empty-model."


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"[]",
        b'{"model": "vendor/story-model", "messages": []}',
        b'{"model": "vendor/story-model"}',
        b'{"model": "vendor/story-model", "messages": [{"role": "user", "content": "x"}], "provider": {"onlyy": ["atlas"]}}',
        b'{"model": "vendor/story-model", "messages": [{"role": "user", "content": "x"}], "provider": {"only": "atlas"}}',
        b'{"model": "vendor/story-model", "messages": [{"role": "user", "content": "x"}], "provider": {"sort": "cheapest"}}',
        b'{"model": "vendor/story-model", "messages": [{"role": "user", "content": "x"}], "max_tokens": -3}',
        b'{"model": "vendor/story-model", "messages": ["hello"]}',
        b"\xff\xfe",
    ],
)
def test_malformed_requests_get_a_400_error_body(sim: Sim, body: bytes) -> None:
    response = sim.client.post(
        "/chat/completions", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == 400
    assert response.json()["error"]["message"]


def test_requests_without_authorization_are_served(sim: Sim) -> None:
    response = sim.chat("atlas/fp8")
    assert "Authorization" not in response.request.headers
    assert response.status_code == 200


def test_sort_by_price_serves_the_cheapest_endpoint_first(sim: Sim) -> None:
    for _ in range(3):
        assert sim.chat(provider={"sort": {"by": "price"}}).json()["provider"] == "Cinder Cloud"
    assert sim.chat(provider={"sort": "price", "ignore": ["cinder"]}).json()["provider"] == "Atlas"
