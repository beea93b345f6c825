"""The context window, as OpenRouter enforces it: a request whose prompt plus max_tokens
exceeds an endpoint's ``context_length`` gets a 400 ``context_length_exceeded`` from that
endpoint, and routing with fallbacks moves on to an endpoint where it fits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.simulator.conftest import MODEL, Sim, endpoint, fleet

LONG = [{"role": "user", "content": "Tell me about the old lighthouse. " * 60}]  # ~510 tokens


def small_and_large() -> dict[str, Any]:
    return fleet(
        {**endpoint("tiny/fp8", "Tiny"), "context_length": 256},
        {**endpoint("roomy/fp8", "Roomy"), "context_length": 8192},
    )


def test_a_pinned_request_larger_than_the_window_is_a_400_context_length_exceeded(
    thread_sim: Callable[[dict[str, Any]], Sim],
) -> None:
    sim = thread_sim(small_and_large())
    response = sim.chat("tiny/fp8", messages=LONG, max_tokens=100)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == 400
    assert error["metadata"]["error_type"] == "context_length_exceeded"
    assert error["metadata"]["provider_name"] == "Tiny"
    assert "maximum context length is 256 tokens" in error["message"]
    # The output budget counts too: prompt tokens + 100.
    assert "100 in the output" in error["message"]


def test_the_same_request_fits_a_larger_window(thread_sim: Callable[[dict[str, Any]], Sim]) -> None:
    sim = thread_sim(small_and_large())
    response = sim.chat("roomy/fp8", messages=LONG, max_tokens=100)
    assert response.status_code == 200
    assert response.json()["provider"] == "Roomy"


def test_max_tokens_alone_can_overflow_the_window(thread_sim: Callable[[dict[str, Any]], Sim]) -> None:
    sim = thread_sim(small_and_large())
    response = sim.chat("tiny/fp8", messages=[{"role": "user", "content": "Hi"}], max_tokens=300)
    assert response.status_code == 400
    assert response.json()["error"]["metadata"]["error_type"] == "context_length_exceeded"


def test_with_fallbacks_routing_moves_on_to_an_endpoint_where_it_fits(
    thread_sim: Callable[[dict[str, Any]], Sim],
) -> None:
    sim = thread_sim(small_and_large())
    response = sim.client.post(
        "/chat/completions",
        json={"model": MODEL, "messages": LONG, "max_tokens": 100,
              "provider": {"order": ["tiny/fp8", "roomy/fp8"], "allow_fallbacks": True}},
    )
    assert response.status_code == 200
    assert response.json()["provider"] == "Roomy"
