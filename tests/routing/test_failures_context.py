"""Context overflow from the simulator's real 400 body is ``incompatible`` (the route
cannot serve this request; another with a larger window may), never a client error."""

from __future__ import annotations

from routing.failures import FailureClass
from tests.routing.conftest import endpoint, fleet
from tests.routing.test_failures import _fetch

LONG = [{"role": "user", "content": "Tell me about the old lighthouse. " * 60}]


def test_context_overflow_from_the_simulator_is_incompatible(start_sim):  # type: ignore[no-untyped-def]
    sim = start_sim(fleet(endpoint("tiny", context_length=256), endpoint("roomy", context_length=8192)))
    failure = _fetch(sim, "tiny/fp8", messages=LONG, max_tokens=100)
    assert (failure.cls, failure.reason, failure.blame, failure.http_status) == (
        FailureClass.INCOMPATIBLE, "context_length_exceeded", "route", 400,
    )
    # Incompatible is about this request, not the route's health: no breaker count.
    assert not failure.counts_against_route
