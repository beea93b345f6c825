"""The gateway's event writer against poison: a lone surrogate in a caller's message or
an upstream's answer, and a row the database refuses. Real gateway over HTTP to the
simulator, the background writer thread, real PostgreSQL."""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from routing.events import BackgroundEventSink, events_write
from routing.gateway.result import AttemptRecord, GatewayResult
from routing.models import AttemptEvent, RequestEvent
from tests.routing.conftest import endpoint, fleet, route, user

CHAT = {"name": "chat", "version": 1, "workload": "text", "deadline_s": 8, "max_attempts": 2, "max_fallbacks": 1,
        "finish_reasons": ["stop", "length"], "connect_s": 0.2, "generation_s": 1.0, "validation_s": 0.1}


def _result(op: str, *, text: str = "[]", message: str = "") -> GatewayResult:
    attempt = AttemptRecord(attempt_id=f"{op}-a", index=0, route="alpha", fallback_reason="primary",
                            breaker_state="closed", started_at=time.time(), status="failed", message=message)
    return GatewayResult(operation_id=op, contract="chat@1", outcome="failed", attempts=[attempt],
                         started_at=time.time(), latency_ms=1.0, request_text=text, message=message)


@pytest.mark.django_db(transaction=True)
def test_five_poison_requests_among_150_leave_every_request_its_event(start_sim, gateway_for):
    from routing.contracts import contract_from_dict

    fast = {"ttft_ms": 0, "tokens_per_s": 100000}
    sim = start_sim(fleet(endpoint("alpha", fast), endpoint("beta", fast)))
    sink = BackgroundEventSink(interval_s=0.2)
    gw = gateway_for(sim, [route("alpha"), route("beta")], sink=sink)
    contract = contract_from_dict(CHAT)
    poison = {7, 40, 77, 110, 149}

    def one(i: int) -> str:
        text = f"Say hello \ud800 number {i}" if i in poison else f"Say hello number {i}"
        return gw.complete(contract, user(text, max_tokens=8), operation_id=f"poison-test-{i}").operation_id

    with ThreadPoolExecutor(8) as pool:  # concurrent callers: their events share batches
        ops = list(pool.map(one, range(150)))
    sink.close()
    stored = set(RequestEvent.objects.filter(operation_id__in=ops).values_list("operation_id", flat=True))
    assert len(stored) == 150
    assert AttemptEvent.objects.filter(request__operation_id__in=ops).count() >= 150
    poisoned = RequestEvent.objects.get(operation_id="poison-test-7")
    assert poisoned.prompt.startswith("sha256:")


@pytest.mark.django_db(transaction=True)
def test_a_row_the_database_refuses_is_logged_with_its_operation_id_and_dropped_alone(caplog):
    results = [_result(f"alone-{i}", message="bad \ud800 and \x00 nul" if i == 2 else "") for i in range(6)]
    results.append(_result("alone-3"))  # the same operation id twice: the unique index refuses it
    with caplog.at_level(logging.WARNING, logger="routing.services"):
        stored = events_write(results)
    assert stored == 6
    assert RequestEvent.objects.filter(operation_id__startswith="alone-").count() == 6
    assert RequestEvent.objects.get(operation_id="alone-2").message == "bad \ufffd and \ufffd nul"
    dropped = [r for r in caplog.records if "dropped" in r.getMessage()]
    assert len(dropped) == 1 and "alone-3" in dropped[0].getMessage()
