"""Routing services on PostgreSQL: the execution ledger, route measurements, the admin."""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from canary.models import Endpoint, ProbeResult, Provider, Round
from canary.probes import STRUCTURED
from reverie_ops.schedule import LEDGER_SWEEP_EVERY_S, routing_beat_schedule
from routing.models import AttemptEvent, ContractVersion, ExecutionLedger, RequestEvent, Route
from routing.services.contracts import contract_version_create
from routing.services.ledger import (
    LedgerConflict,
    LedgerMismatch,
    claim_lease_s,
    fingerprint,
    ledger_claim,
    ledger_finish,
    ledger_sweep,
)
from routing.services.routes import route_measurements_refresh, route_profiles, routes_cache_clear


@pytest.mark.django_db
def test_a_tool_execution_key_is_claimed_once_and_then_replayed():
    args = {"order_id": "A7", "amount": 12.5}
    claimed, row = ledger_claim("tool:refund:op-1:0", kind="tool", fingerprint_hex=fingerprint(args))
    assert claimed and row.status == "claimed"
    with pytest.raises(LedgerConflict):  # still running: 409, not a second execution
        ledger_claim("tool:refund:op-1:0", kind="tool", fingerprint_hex=fingerprint(args))
    ledger_finish("tool:refund:op-1:0", "done", {"refund_id": "r-9"})
    claimed, row = ledger_claim("tool:refund:op-1:0", kind="tool", fingerprint_hex=fingerprint(args))
    assert not claimed and row.result == {"refund_id": "r-9"}
    with pytest.raises(LedgerMismatch):
        ledger_claim("tool:refund:op-1:0", kind="tool", fingerprint_hex=fingerprint({**args, "amount": 99}))


@pytest.mark.django_db
def test_a_failed_execution_releases_its_key():
    ledger_claim("tool:x:1", kind="tool", fingerprint_hex="f")
    ledger_finish("tool:x:1", "failed")
    assert ledger_claim("tool:x:1", kind="tool", fingerprint_hex="f")[0]


@pytest.mark.django_db(transaction=True)
def test_concurrent_claims_of_one_key_execute_once():
    results: list[str] = []

    def claim() -> None:
        try:
            claimed, _ = ledger_claim("tool:race:1", kind="tool", fingerprint_hex="f")
            results.append("claimed" if claimed else "replayed")
        except LedgerConflict:
            results.append("conflict")
        finally:
            connection.close()

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count("claimed") == 1 and results.count("conflict") == 7
    assert ExecutionLedger.objects.filter(key="tool:race:1").count() == 1


@pytest.mark.django_db
def test_route_measurements_come_from_attempt_events_and_canary_verdicts():
    now = timezone.now()
    Route.objects.create(name="alpha", model_id="acme/chat-1", provider_tag="alpha/fp8", modalities=["text"],
                         context_length=131072, output_modes=["json_schema"])
    request = RequestEvent.objects.create(operation_id="op", contract="c@1", outcome="accepted", attempt_count=4,
                                          latency_ms=1, started_at=now)
    for i, (status, ms) in enumerate([("accepted", 100), ("accepted", 300), ("failed", 50), ("accepted", 200)]):
        AttemptEvent.objects.create(request=request, attempt_id=f"a{i}", index=i, route="alpha", status=status,
                                    latency_ms=ms, fallback_reason="primary", breaker_state="closed", started_at=now)
    provider = Provider.objects.create(slug="alpha", name="Alpha", first_seen=now, last_seen=now)
    endpoint = Endpoint.objects.create(model_id="acme/chat-1", tag="alpha/fp8", provider=provider, provider_name="Alpha",
                                       first_seen=now, last_seen=now)
    round_ = Round.objects.create(model_id="acme/chat-1", language="en", started_at=now)
    for i, verdict in enumerate(["pass", "fail", "fail", "fail", "transport_error"]):
        ProbeResult.objects.create(round=round_, endpoint=endpoint, kind=STRUCTURED, sample=i, verdict=verdict,
                                   raw_verdict=verdict, created_at=now - timedelta(hours=1))
    assert route_measurements_refresh() == 1
    route = Route.objects.get(name="alpha")
    assert route.health == pytest.approx(0.75) and route.latency_ms == 200
    assert route.structured_honoured == pytest.approx(0.25)  # advertised, honoured 1 in 4


@pytest.mark.django_db
def test_saving_a_contract_in_the_admin_creates_a_new_version(admin_client):
    row = contract_version_create({"name": "chat", "workload": "text", "deadline_s": 10})
    response = admin_client.post(f"/admin/routing/contractversion/{row.pk}/change/", {
        "name": "chat", "spec": '{"name": "chat", "workload": "text", "deadline_s": 12}', "note": "faster",
    })
    assert response.status_code == 302, response.content[:2000]
    assert list(ContractVersion.objects.filter(name="chat").values_list("version", "spec__deadline_s")) == [(2, 12), (1, 10)]


@pytest.mark.django_db
def test_the_admin_refuses_an_invalid_contract_with_its_reason(admin_client):
    response = admin_client.post("/admin/routing/contractversion/add/", {
        "name": "chat", "spec": '{"name": "chat", "workload": "text", "max_fallbacks": 2}', "note": "",
    })
    assert response.status_code == 200 and b"attempt budget" in response.content
    assert not ContractVersion.objects.exists()


@pytest.mark.django_db
def test_the_route_changelist_shows_breaker_state(admin_client):
    Route.objects.create(name="alpha", model_id="acme/chat-1", modalities=["text"], context_length=8192)
    response = admin_client.get("/admin/routing/route/")
    assert response.status_code == 200 and b"alpha" in response.content


def _result(op: str):  # type: ignore[no-untyped-def]
    import time

    from routing.gateway.result import AttemptRecord, GatewayResult

    attempt = AttemptRecord(attempt_id=f"{op}-a", index=0, route="alpha", fallback_reason="primary",
                            breaker_state="closed", started_at=time.time(), status="accepted")
    return GatewayResult(operation_id=op, contract="c@1", outcome="accepted", attempts=[attempt],
                         started_at=time.time(), latency_ms=1.0, request_text="[]")


@pytest.mark.django_db(transaction=True)
def test_the_background_writer_writes_every_result_once_in_batches():
    from routing.events import BackgroundEventSink

    sink = BackgroundEventSink(batch=30, interval_s=0.05)
    # Operation ids of this test's own: a live-server test of the same worker commits events too.
    tag = f"bw{uuid.uuid4().hex[:8]}"
    for burst in range(3):  # later bursts come after the writer went idle again
        threads = [threading.Thread(target=lambda t=t: [sink.emit(_result(f"{tag}-{burst}-{t}-{i}")) for i in range(25)])
                   for t in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if burst < 2:
            sink.flush()
        else:
            sink.close()  # writes what is pending, then ends the thread and its connection
        assert RequestEvent.objects.filter(operation_id__startswith=f"{tag}-{burst}-").count() == 200
    assert RequestEvent.objects.filter(operation_id__startswith=tag).count() == 600
    assert AttemptEvent.objects.filter(request__operation_id__startswith=tag).count() == 600


@pytest.mark.django_db(transaction=True)
def test_the_writers_listeners_see_each_batch_off_the_request_thread_and_one_that_fails_costs_no_event():
    from routing.events import BackgroundEventSink

    seen: list[tuple[str, list[str]]] = []

    def listener(batch):  # type: ignore[no-untyped-def]
        seen.append((threading.current_thread().name, [r.operation_id for r in batch]))

    def broken(batch):  # type: ignore[no-untyped-def]
        raise RuntimeError("the scorecard is away")

    sink = BackgroundEventSink(interval_s=1.0, listeners=[broken, listener])  # close() hurries it
    tag = f"ls{uuid.uuid4().hex[:8]}"
    for i in range(4):
        sink.emit(_result(f"{tag}-{i}"))
    assert seen == []  # emit returned before any listener ran
    sink.close()
    assert {name for name, _ in seen} == {"routing-events"}
    assert [op for _, ops in seen for op in ops] == [f"{tag}-{i}" for i in range(4)]
    assert RequestEvent.objects.filter(operation_id__startswith=tag).count() == 4


@pytest.mark.django_db(transaction=True)
def test_the_background_writer_retries_a_failed_batch_once_on_a_new_connection(monkeypatch):
    from routing import events

    real = events.events_write
    calls: list[int] = []

    def flaky(results):  # type: ignore[no-untyped-def]
        calls.append(len(results))
        if len(calls) == 1:
            connection.close()  # as if the database had restarted under the writer
            raise events.transaction.TransactionManagementError("connection lost")
        real(results)

    monkeypatch.setattr(events, "events_write", flaky)
    sink = events.BackgroundEventSink(interval_s=0.05)
    for i in range(5):
        sink.emit(_result(f"retry-{i}"))
    sink.close()
    assert calls == [5, 5] and RequestEvent.objects.filter(operation_id__startswith="retry-").count() == 5


def test_an_expired_cache_is_reloaded_by_one_thread_while_others_keep_the_old_value():
    from routing.services.routes import _Cached

    loads: list[int] = []
    release = threading.Event()

    def load() -> int:
        loads.append(1)
        if len(loads) == 2:  # the reload: blocks until the test lets it go
            release.wait(5)
        return len(loads)

    cache = _Cached(lambda: 0.0, load)  # expires at once
    assert cache.get() == 1
    reloading = threading.Thread(target=cache.get)
    reloading.start()
    while len(loads) < 2:
        pass
    assert cache.get() == 1  # served the previous value, did not queue behind the reload
    release.set()
    reloading.join()
    assert len(loads) == 2
    cache.clear()  # no previous value now: the caller waits for a fresh one
    assert cache.get() == 3


def test_an_expired_ignore_list_is_looked_up_once_per_process(monkeypatch, settings):
    import time

    import canary.services.ignore_list
    from routing.services import routes as services

    settings.ROUTING_IGNORE_CACHE_S = 0.0  # every call finds it expired
    calls: list[str] = []

    def slow_lookup(model_id, now):  # type: ignore[no-untyped-def]
        calls.append(model_id)
        time.sleep(0.2)
        return {"ignore": ["Borealis/FP8"]}

    monkeypatch.setattr(canary.services.ignore_list, "ignore_list_get", slow_lookup)
    canary.services.ignore_list.ignore_cache_clear()
    assert services.ignored_get("m") == frozenset({"borealis/fp8"})
    calls.clear()
    seen: list[frozenset[str]] = []
    threads = [threading.Thread(target=lambda: seen.append(services.ignored_get("m"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == ["m"] and seen == [frozenset({"borealis/fp8"})] * 8
    canary.services.ignore_list.ignore_cache_clear()


def _aged(key: str, status: str, age_s: float, now) -> None:  # type: ignore[no-untyped-def]
    at = now - timedelta(seconds=age_s)
    ExecutionLedger.objects.create(key=key, kind="request", fingerprint="f", status=status, created_at=at, updated_at=at)


def _ours(prefix: str) -> dict[str, str]:
    """This test's ledger rows, key -> status: a live-server module of the same xdist
    worker commits rows of its own (``request@<caller>:...``) that no rollback removes."""
    return dict(ExecutionLedger.objects.filter(key__startswith=prefix).values_list("key", "status"))


@pytest.mark.django_db
def test_the_sweep_prunes_settled_keys_past_their_keeping_time_and_only_them():
    now = timezone.now()
    # Rows other tests committed are swept first, at the same instant: the next sweep's
    # counts are then this test's rows alone.
    ledger_sweep(now, keep_s=86_400, lease_s=300)
    mine = f"sweep-{uuid.uuid4().hex[:8]}:"
    for status in ("done", "failed", "unknown", "claimed"):
        _aged(f"{mine}old-{status}", status, 90_000, now)
        _aged(f"{mine}new-{status}", status, 60, now)
    assert ledger_sweep(now, keep_s=86_400, lease_s=300) == {"pruned": 2, "expired_claims": 1}
    left = {k.removeprefix(mine): v for k, v in _ours(mine).items()}
    assert left == {"old-unknown": "unknown", "old-claimed": "unknown", "new-done": "done", "new-failed": "failed",
                    "new-unknown": "unknown", "new-claimed": "claimed"}
    # A pruned key is free again: the next request with it runs, as a new one.
    claimed, row = ledger_claim(f"{mine}old-done", kind="request", fingerprint_hex="other")
    assert claimed and row.runs == 1


@pytest.mark.django_db
def test_a_claim_left_by_a_dead_process_becomes_unknown_after_its_lease_never_replayed():
    now = timezone.now()
    ledger_sweep(now, keep_s=86_400, lease_s=300)  # other tests' committed rows, as above
    key = f"request:booking:{uuid.uuid4().hex[:8]}"
    _aged(key, "claimed", 301, now)
    assert ledger_sweep(now, keep_s=86_400, lease_s=300)["expired_claims"] == 1
    with pytest.raises(LedgerConflict) as conflict:
        ledger_claim(key, kind="request", fingerprint_hex="f")
    assert conflict.value.row.status == "unknown"
    # Unknown keys wait for a person, whatever their age.
    ledger_sweep(now + timedelta(days=30), keep_s=86_400, lease_s=300)
    assert _ours(key) == {key: "unknown"}


@pytest.mark.django_db
def test_the_claim_lease_outlasts_the_longest_contract_deadline(settings):
    settings.ROUTING_CLAIM_LEASE_S = 300
    assert claim_lease_s() == 300
    contract_version_create({"name": "slow", "workload": "text", "deadline_s": 900})
    assert claim_lease_s() == 960


def test_the_ledger_sweep_is_on_the_beat_with_an_expiry_shorter_than_its_period(settings):
    entry = routing_beat_schedule()["routing-ledger-sweep"]
    assert entry["task"] == "routing.tasks.ledger_sweep_task"
    assert entry["options"]["expires"] < entry["schedule"] == LEDGER_SWEEP_EVERY_S
    assert settings.CELERY_BEAT_SCHEDULE["routing-ledger-sweep"] == entry


@pytest.mark.django_db
def test_a_routes_quantization_is_its_endpoints_in_the_canarys_listing():
    now = timezone.now()
    provider = Provider.objects.create(slug="alpha", name="Alpha", first_seen=now, last_seen=now)
    Endpoint.objects.create(model_id="acme/chat-1", tag="alpha/bf16", provider=provider, provider_name="Alpha",
                            quantization="bf16", first_seen=now, last_seen=now)
    for name, tag in (("alpha", "Alpha/BF16"), ("beta", "beta/fp8")):
        Route.objects.create(name=name, model_id="acme/chat-1", provider_tag=tag, modalities=["text"], context_length=8192)
    routes_cache_clear()
    try:
        assert {r.name: r.quantization for r in route_profiles()} == {"alpha": "bf16", "beta": None}
    finally:
        routes_cache_clear()
