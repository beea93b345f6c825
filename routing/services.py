"""Routing services: the only writers of routing rows, and the process's gateway.

- contracts: ``contract_version_create``, ``contracts_load_files`` (and ``_file``), ``contract_get``;
- routes: ``route_profiles`` (cached), ``route_measurements_refresh``;
- events: the sinks of ``routing.events``, chosen by ROUTING_EVENTS_ASYNC;
- the execution ledger: ``ledger_claim``, ``ledger_finish``, and for a gateway request's
  ``Idempotency-Key`` (any contract) ``request_idempotency_claim``/``_settle``;
- ``gateway_get`` (one per process) and ``chat_completion_create``, the in-process
  client function backends call (the API view calls it too).

Settings read (all optional, with defaults): ROUTING_REDIS_URL (default REDIS_URL),
ROUTING_BREAKER (dict of ``BreakerConfig`` fields), ROUTING_EVENT_CONTENT ("hash" or
"redact"), ROUTING_EVENTS_ASYNC (True), ROUTING_CACHE_S (5), ROUTING_CONNECT_TIMEOUT_S
(3.0), ROUTING_MIN_STRUCTURED_HONOURED (0.9), ROUTING_MAX_CONNECTIONS (256),
ROUTING_BREAKER_PREFIX ("routing:breaker").
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import redis
from django.conf import settings
from django.db import (
    DatabaseError,
    IntegrityError,
    connections,
    transaction,
)
from django.db.models import F, Max
from django.utils import timezone
from redis.backoff import NoBackoff
from redis.retry import Retry

from canary.live.store import demoted_get, scorecard_get, scorecard_reset
from canary.selectors import ignored_targets, structured_honour_rate
from openrouter import egress
from routing.breaker import BreakerConfig, BreakerStore
from routing.contracts import (
    Contract,
    ContractError,
    contract_file_read,
    contract_from_dict,
    file_names_unique,
    file_version_check,
)
from routing.events import BackgroundEventSink, DbEventSink
from routing.gateway import Gateway
from routing.gateway_result import EventSink
from routing.live_feed import ScorecardSink
from routing.models import AttemptEvent, ContractVersion, ExecutionLedger, RequestEvent, Route
from routing.request_check import BodyInvalid, RequestInvalid, body_check
from routing.request_fields import request_fields_check
from routing.responses import GatewayReply, error_reply, reply_for
from routing.selection import DEFAULT_MIN_STRUCTURED_HONOURED, RouteProfile
from routing.upstream import Upstream

log = logging.getLogger(__name__)


def _setting(name: str, default: Any) -> Any:
    return getattr(settings, name, default)


# ---------------------------------------------------------------------------- contracts


class ContractNotFound(LookupError):
    """No contract version with that name and version."""


def contract_version_create(spec: dict[str, Any], *, actor: str = "", note: str = "") -> ContractVersion:
    """Store ``spec`` as the next version of its contract (``spec["name"]``).

    The version number is assigned here (latest + 1) and written into the stored spec.
    Raises ``ContractError`` when the spec is not a valid contract.
    """
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
        raise ContractError("a contract needs a 'name'")
    name = spec["name"]
    with transaction.atomic():
        # Serialise version numbering per name; the unique constraint is the last guard.
        latest = ContractVersion.objects.select_for_update().filter(name=name).aggregate(v=Max("version"))["v"] or 0
        stored = {**spec, "version": latest + 1}
        contract_from_dict(stored)
        return ContractVersion.objects.create(
            name=name, version=latest + 1, spec=stored, note=note, created_by=actor, created_at=timezone.now()
        )


def contracts_load_file(path: str | Path, *, actor: str = "file") -> list[ContractVersion]:
    """``contracts_load_files([path])``: the versions created from one file."""
    return contracts_load_files([path], actor=actor)[0][1]


def contracts_load_files(
    paths: Sequence[str | Path], *, actor: str = "file"
) -> list[tuple[str, list[ContractVersion]]]:
    """Load contract files (each JSON: one object or a list; ``contract_file_read``), in
    one transaction: a refused file leaves the stored contracts as they were, including
    the files before it. A contract whose content equals its latest stored version is
    skipped; any other becomes a new version. Each entry's ``version`` must be the one
    the load assigns (``file_version_check``) and a name appears once per file
    (``file_names_unique``). Returns ``[(path, created versions)]`` in order.
    Raises ``ContractError`` naming the file (and the entry, 0-based) on the first
    problem."""
    loaded: list[tuple[str, list[ContractVersion]]] = []
    with transaction.atomic():
        for path in paths:
            loaded.append((str(path), _contracts_load_one(path, actor)))
    return loaded


def _contracts_load_one(path: str | Path, actor: str) -> list[ContractVersion]:
    entries = contract_file_read(path)
    where = f"contracts file {path}"
    try:
        file_names_unique(entries)
    except ContractError as exc:
        raise ContractError(f"{where}: {exc}") from exc
    created: list[ContractVersion] = []
    for i, entry in enumerate(entries):
        try:
            if not isinstance(entry, dict):
                raise ContractError("expected a JSON object")
            latest = ContractVersion.objects.filter(name=entry.get("name")).order_by("-version").first()
            same = latest is not None and (
                {k: v for k, v in latest.spec.items() if k != "version"} == {k: v for k, v in entry.items() if k != "version"}
            )
            assigned = latest.version if same and latest else (latest.version + 1 if latest else 1)
            if not same and isinstance(entry.get("name"), str):
                # A bad value is named before the version: the version check would
                # otherwise speak first of a changed contract whose change is the mistake.
                contract_from_dict({**entry, "version": assigned})
            if isinstance(entry.get("name"), str):
                file_version_check(entry, assigned)
            if same:
                continue
            created.append(contract_version_create(dict(entry), actor=actor, note=f"loaded from {Path(path).name}"))
        except ContractError as exc:
            raise ContractError(f"{where} entry {i}: {exc}") from exc
    return created


def contract_model_classes() -> set[str]:
    """The model classes the latest version of some contract names in ``model_classes``."""
    latest: dict[str, dict[str, Any]] = {}
    for row in ContractVersion.objects.order_by("name", "version"):
        latest[row.name] = row.spec
    return {c for spec in latest.values() for c in (spec.get("model_classes") or []) if isinstance(c, str)}


_contracts: dict[tuple[str, int], Contract] = {}
_contracts_lock = threading.Lock()


def contract_get(name: str, version: int) -> Contract:
    """The parsed contract ``name@version`` (cached: versions are immutable). Marks the
    version as in use on first use. Raises ``ContractNotFound``."""
    key = (name, version)
    with _contracts_lock:
        cached = _contracts.get(key)
    if cached is not None:
        return cached
    row = ContractVersion.objects.filter(name=name, version=version).first()
    if row is None:
        raise ContractNotFound(f"no contract {name}@{version}")
    contract = contract_from_dict(row.spec)
    if row.first_used_at is None:
        ContractVersion.objects.filter(pk=row.pk, first_used_at__isnull=True).update(first_used_at=timezone.now())
    with _contracts_lock:
        _contracts[key] = contract
    return contract


# ---------------------------------------------------------------------------- routes


def route_profile(row: Route) -> RouteProfile:
    """A ``Route`` row as the pure ``RouteProfile`` the gateway reads."""
    return RouteProfile(
        name=row.name,
        model_id=row.model_id,
        provider_tag=row.provider_tag or None,
        base_url=row.base_url or None,
        api_key=str(_setting(row.api_key_setting, "")) if row.api_key_setting else "",
        modalities=frozenset(row.modalities or ["text"]),
        context_length=row.context_length,
        tools=row.tools,
        output_modes=frozenset(row.output_modes or []),
        model_class=row.model_class,
        price_prompt_usd=float(row.price_prompt_usd),
        price_completion_usd=float(row.price_completion_usd),
        region=row.region,
        health=row.health,
        latency_ms=row.latency_ms,
        structured_honoured=row.structured_honoured,
    )


class _Cached:
    """A value recomputed at most every ``ttl_s()`` seconds (thread-safe). The TTL is
    read when the value is loaded, not on every hit (a Django setting costs a lookup).

    One thread reloads an expired value; the others keep the previous one meanwhile
    instead of queueing behind the query (a request thread must not wait on it). After
    ``clear`` there is no previous value: callers wait for the reload."""

    def __init__(self, ttl_s: Callable[[], float], load: Callable[[], Any]) -> None:
        self.ttl_s = ttl_s
        self.load = load
        self._value: Any = None
        self._has_value = False
        self._until = 0.0
        self._lock = threading.Lock()

    def get(self) -> Any:
        now = time.monotonic()
        if now < self._until:
            return self._value
        if not self._lock.acquire(blocking=not self._has_value):
            return self._value  # another thread is reloading it
        try:
            if time.monotonic() >= self._until:
                self._value = self.load()
                self._has_value = True
                self._until = time.monotonic() + self.ttl_s()
            return self._value
        finally:
            self._lock.release()

    def clear(self) -> None:
        self._has_value = False
        self._until = 0.0

    def previous(self, default: Any) -> Any:
        """The value before the reload in progress (``default`` if there is none): what a
        loader falls back on when its source fails."""
        return self._value if self._has_value else default


def _cache_ttl_s() -> float:
    return float(_setting("ROUTING_CACHE_S", 5.0))


_routes_cache = _Cached(_cache_ttl_s, lambda: [route_profile(r) for r in Route.objects.filter(enabled=True)])


def route_profiles() -> list[RouteProfile]:
    """Enabled routes as profiles, cached ``ROUTING_CACHE_S`` seconds per process (a
    route edited in the admin reaches every process within that time;
    ``routes_cache_clear`` drops this process's copy at once)."""
    return list(_routes_cache.get())


def routes_cache_clear() -> None:
    _routes_cache.clear()


def ignored_get(model_id: str) -> frozenset[str]:
    """The canary's merged ignore list for ``model_id`` (lower-cased tags and slugs),
    from the canary's one per-process cache (``canary.selectors.ignored_targets``). A
    failing lookup never blocks routing: the canary keeps its previous list, and with none
    the gateway routes without one."""
    try:
        return ignored_targets(model_id)
    except Exception as exc:  # noqa: BLE001 - the ops state must never block a chat
        log.error("ignore list of %s unavailable, routing without it: %s", model_id, exc)
        return frozenset()


def route_measurements_refresh(*, window: timedelta = timedelta(hours=1)) -> int:
    """Recompute each route's health (accepted share of its attempts), median latency (ms)
    from recent attempt events, and its structured-output honour rate from the canary's
    structured verdicts on the pinned endpoint ("advertised versus honoured", issue
    point 2). Returns the number of routes updated."""
    since = timezone.now() - window
    updated = 0
    for route in Route.objects.all():
        attempts = list(
            AttemptEvent.objects.filter(route=route.name, started_at__gte=since)
            .exclude(status="cancelled").exclude(failure_class="incompatible").values_list("status", "latency_ms")
        )
        if attempts:
            route.health = sum(1 for s, _ in attempts if s == "accepted") / len(attempts)
            latencies = sorted(ms for s, ms in attempts if s == "accepted")
            route.latency_ms = latencies[len(latencies) // 2] if latencies else None
        if route.provider_tag:
            honoured = structured_honour_rate(route.model_id, route.provider_tag, timezone.now() - timedelta(days=7))
            if honoured is not None:
                route.structured_honoured = honoured
        route.measured_at = timezone.now()
        route.save(update_fields=["health", "latency_ms", "structured_honoured", "measured_at"])
        updated += 1
    routes_cache_clear()
    return updated


# ---------------------------------------------------------------------------- ledger


class LedgerConflict(Exception):
    """The key is claimed and still running (409), or its outcome is unknown."""

    def __init__(self, row: ExecutionLedger) -> None:
        super().__init__(f"{row.key} is {row.status}")
        self.row = row


class LedgerMismatch(Exception):
    """The key was used with other arguments (422)."""


def fingerprint(value: Any) -> str:
    """A stable digest of JSON-serialisable arguments."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()


def ledger_claim(key: str, *, kind: str, fingerprint_hex: str, operation_id: str = "") -> tuple[bool, ExecutionLedger]:
    """Claim execution ``key`` once. Returns (True, row) when this caller must run the
    side effect, (False, row) when it already ran ("done": replay ``row.result``).
    Raises ``LedgerConflict`` when it is running or its outcome is unknown, and
    ``LedgerMismatch`` when the key was used with different arguments.
    The unique constraint on ``key`` decides races between processes (style guide)."""
    now = timezone.now()
    try:
        with transaction.atomic():
            row = ExecutionLedger.objects.create(
                key=key, kind=kind, fingerprint=fingerprint_hex, operation_id=operation_id,
                status="claimed", created_at=now, updated_at=now,
            )
        return True, row
    except IntegrityError:
        row = ExecutionLedger.objects.get(key=key)
    if row.status == "failed":
        # A released key runs again, with whatever arguments (nothing happened under it);
        # the conditional UPDATE lets exactly one of racing retries win.
        won = ExecutionLedger.objects.filter(pk=row.pk, status="failed").update(
            status="claimed", fingerprint=fingerprint_hex, operation_id=operation_id, result=None,
            runs=F("runs") + 1, updated_at=now,
        )
        row = ExecutionLedger.objects.get(pk=row.pk)
        if won:
            return True, row
    if row.fingerprint != fingerprint_hex:
        raise LedgerMismatch(f"{key} was used with different arguments")
    if row.status == "done":
        return False, row
    raise LedgerConflict(row)


def ledger_finish(key: str, status: str, result: Any = None) -> None:
    """Settle a claimed key: "done" (keep ``result`` for replay), "unknown" (keep, never
    replay), or "failed" (release: nothing happened, the caller may try again; the row
    stays, and the next ``ledger_claim`` reclaims it)."""
    if status == "failed":
        ExecutionLedger.objects.filter(key=key, status="claimed").update(status="failed", updated_at=timezone.now())
        return
    ExecutionLedger.objects.filter(key=key).update(status=status, result=result, updated_at=timezone.now())


def ledger_sweep(now: datetime, *, keep_s: float, lease_s: float) -> dict[str, int]:
    """Keep the execution ledger to what it promises (routing/README.md, "Idempotency").

    - Settled keys ("done", "failed") last updated more than ``keep_s`` seconds before
      ``now`` are deleted: the key may then be used again, as a new request. The IETF
      idempotency-key draft asks a server to publish how long it keeps keys; Stripe
      prunes them after 24 hours (docs/sources/resilience.md, "Idempotency keys").
    - A "claimed" key older than ``lease_s`` seconds belonged to a process that died
      while running it (no request outlives its contract's deadline): its side effect
      may have happened, so it becomes "unknown" (never replayed; an admin reads it in
      the ledger) instead of answering 409 "still running" for ever.
    - "unknown" keys are never deleted: only a person can say what happened.

    Returns ``{"pruned": n, "expired_claims": m}``.
    """
    pruned, _ = ExecutionLedger.objects.filter(
        status__in=("done", "failed"), updated_at__lt=now - timedelta(seconds=keep_s)
    ).delete()
    expired = ExecutionLedger.objects.filter(status="claimed", updated_at__lt=now - timedelta(seconds=lease_s)).update(
        status="unknown", updated_at=now
    )
    return {"pruned": pruned, "expired_claims": expired}


# A claim's lease past the longest contract deadline (s): the request's own cleanup
# (settling its key) runs after the deadline, on a loaded machine a little later.
CLAIM_LEASE_MARGIN_S = 60.0


def claim_lease_s() -> float:
    """How long a "claimed" key may run before ``ledger_sweep`` takes its process for
    dead (s): ``ROUTING_CLAIM_LEASE_S``, and never less than the longest ``deadline_s``
    of any stored contract version plus ``CLAIM_LEASE_MARGIN_S``."""
    # A spec without deadline_s has the contract's default one.
    deadlines = [
        float(spec.get("deadline_s", Contract.deadline_s))
        for spec in ContractVersion.objects.values_list("spec", flat=True)
        if isinstance(spec, dict) and isinstance(spec.get("deadline_s", Contract.deadline_s), int | float)
    ]
    return max([float(settings.ROUTING_CLAIM_LEASE_S), *(d + CLAIM_LEASE_MARGIN_S for d in deadlines)])


def ledger_sweep_now() -> dict[str, int]:
    """``ledger_sweep`` at the current time with ``ROUTING_IDEMPOTENCY_KEEP_S`` and
    ``claim_lease_s()`` (the beat's ``routing-ledger-sweep``)."""
    return ledger_sweep(timezone.now(), keep_s=settings.ROUTING_IDEMPOTENCY_KEEP_S, lease_s=claim_lease_s())


IDEMPOTENCY_KEY_MAX = 100  # the operation_id columns' length


def request_idempotency_claim(
    spec: Contract, operation_id: str | None, body: dict[str, Any]
) -> tuple[str | None, str | None, GatewayReply | None]:
    """Claim a gateway request's idempotency key in the execution ledger, for every
    contract alike (IETF draft "The Idempotency-Key HTTP Header Field": a key names one
    request; the same key with another body is 422, a repeat of a finished request gets
    the first answer, a repeat while it runs gets 409).

    Returns ``(ledger_key, run_id, None)`` when the caller must run the request under the
    operation id ``run_id`` and then call ``request_idempotency_settle`` with
    ``ledger_key`` (both ``None`` without a key), or ``(None, None, reply)`` to answer at
    once: the replayed first answer (``replayed=True``), 400 for a key longer than 100
    characters or a contract with side effects without one, 422 for another body, 409
    while the first request runs or, with side effects, after its outcome was unknown.
    ``run_id`` is the key itself on its first run; a key released by a failure runs again
    under a fresh id (each run has its own request event), and so does a key whose id an
    earlier request holds already (the same key on another contract, or on this one after
    ``ledger_sweep`` pruned it): request events are unique per operation id.
    """
    if not operation_id:
        if spec.side_effects:
            return None, None, error_reply(400, "idempotency_key_required",
                                           f"contract {spec.key} has side effects: send an Idempotency-Key")
        return None, None, None
    if len(operation_id) > IDEMPOTENCY_KEY_MAX:
        return None, None, error_reply(400, "invalid_idempotency_key",
                                       f"Idempotency-Key must be 1 to {IDEMPOTENCY_KEY_MAX} characters, got {len(operation_id)}")
    ledger_key = f"request:{spec.name}:{operation_id}"
    try:
        claimed, row = ledger_claim(ledger_key, kind="request", fingerprint_hex=fingerprint(body), operation_id=operation_id)
    except LedgerMismatch as exc:
        return None, None, error_reply(422, "idempotency_key_reused", f"{exc}; use a new key for a new request")
    except LedgerConflict as exc:
        detail = "is still running" if exc.row.status == "claimed" else "has an unknown outcome and is not replayed"
        return None, None, error_reply(409, "idempotency_conflict", f"operation {operation_id} {detail}",
                                       failure_class="ambiguous" if exc.row.status == "unknown" else "transient")
    if not claimed:
        stored = row.result or {}
        return None, None, GatewayReply(stored.get("status", 200), stored.get("body", {}), stored.get("headers", {}), replayed=True)
    if row.runs == 1 and not _operation_id_taken(operation_id, row.pk):
        return ledger_key, operation_id, None
    run_id = uuid.uuid4().hex
    ExecutionLedger.objects.filter(pk=row.pk).update(operation_id=run_id)
    return ledger_key, run_id, None


def _operation_id_taken(operation_id: str, ledger_pk: int) -> bool:
    """Does another request hold ``operation_id`` already: another ledger row (the same
    key claimed on another contract; the ledger is written before the request runs) or a
    request event (a run whose ledger row was pruned)? Two contracts claiming one key in
    the same instant can still both see it free; the second's events are then dropped
    with a log line."""
    return (
        ExecutionLedger.objects.filter(operation_id=operation_id).exclude(pk=ledger_pk).exists()
        or RequestEvent.objects.filter(operation_id=operation_id).exists()
    )


def request_idempotency_settle(spec: Contract, ledger_key: str | None, outcome: str, reply: GatewayReply | None = None) -> None:
    """Settle the key ``request_idempotency_claim`` claimed, from the gateway's outcome: an
    accepted answer is kept and replayed; any other outcome releases the key, so the
    caller may retry with it, except an unknown outcome of a contract with side effects,
    kept and never replayed (it may have happened). Without side effects an unknown outcome
    is released too: running the request again harms nothing. A streamed answer (past its
    commit point) has no body to replay: its key is released. No-op without a key."""
    if ledger_key is None:
        return
    if outcome == "accepted" and reply is not None and reply.stream is None:
        ledger_finish(ledger_key, "done", {"status": reply.status, "body": reply.body, "headers": reply.headers})
    elif outcome == "unknown" and spec.side_effects:
        ledger_finish(ledger_key, "unknown")
    else:
        ledger_finish(ledger_key, "failed")


# ---------------------------------------------------------------------------- the gateway


_gateway: Gateway | None = None
_gateway_events: EventSink | None = None
_gateway_lock = threading.Lock()

SinkWrapper = Callable[[EventSink, Callable[[], list[RouteProfile]]], EventSink]
# Wrappers of the gateway's event sink registered by apps above routing (observability
# adds metrics and traces in its ``ready()``), so routing never imports them.
_sink_wrappers: list[SinkWrapper] = []


def sink_wrapper_register(wrapper: SinkWrapper) -> None:
    """Wrap the event sink of every gateway built from now on: ``wrapper(sink, routes)``
    returns the sink to use (``routes()`` gives the current route profiles)."""
    if wrapper not in _sink_wrappers:
        _sink_wrappers.append(wrapper)


def breaker_store(config: BreakerConfig | None = None) -> BreakerStore:
    """A breaker store on ``ROUTING_REDIS_URL`` (default ``REDIS_URL``) under the key
    prefix ``ROUTING_BREAKER_PREFIX`` with ``ROUTING_BREAKER`` overrides."""
    url = _setting("ROUTING_REDIS_URL", None) or settings.REDIS_URL
    overrides = {"local_cache_s": 1.0, **(_setting("ROUTING_BREAKER", {}) or {})}
    prefix = _setting("ROUTING_BREAKER_PREFIX", "routing:breaker")
    # Short timeouts and no client retries: the breaker is on every request's path and
    # fails open when Redis is away (breaker.py).
    client = redis.Redis.from_url(url, socket_connect_timeout=0.25, socket_timeout=0.25, retry=Retry(NoBackoff(), 0))
    return BreakerStore(client, config or BreakerConfig(**overrides), prefix=prefix)


def gateway_get() -> Gateway:
    """The process's gateway (built on first use from settings): one HTTP client, one
    Redis pool, one event writer."""
    global _gateway, _gateway_events
    with _gateway_lock:
        if _gateway is None:
            upstream = Upstream(
                default_base_url=settings.OPENROUTER_BASE_URL,
                api_key=settings.OPENROUTER_API_KEY,
                connect_timeout_s=float(_setting("ROUTING_CONNECT_TIMEOUT_S", 3.0)),
                max_connections=int(_setting("ROUTING_MAX_CONNECTIONS", 256)),
                max_reply_bytes=settings.OPENROUTER_MAX_REPLY_BYTES,
                max_line_bytes=settings.OPENROUTER_MAX_LINE_BYTES,
                headers={"HTTP-Referer": settings.OPENROUTER_REFERER, "X-OpenRouter-Title": "Reverie Ops gateway"},
                proxy_rule=egress.rule(settings.OPENROUTER_PROXY_FROM_ENV),
            )
            events = BackgroundEventSink() if _setting("ROUTING_EVENTS_ASYNC", True) else DbEventSink()
            # The live scorecard hears every attempt's verdicts (docs/live-evidence.md).
            sink: EventSink = ScorecardSink(events, route_profiles, scorecard_get().record)
            for wrap in _sink_wrappers:
                sink = wrap(sink, route_profiles)
            _gateway_events = events
            _gateway = Gateway(
                routes=route_profiles,
                upstream=upstream,
                breakers=breaker_store(),
                ignored=ignored_get,
                sink=sink,
                min_structured_honoured=float(_setting("ROUTING_MIN_STRUCTURED_HONOURED", DEFAULT_MIN_STRUCTURED_HONOURED)),
                demoted=demoted_get,
            )
        return _gateway


def gateway_warm() -> None:
    """Build the process's gateway and fill what its first request would otherwise read
    on its own path: a Redis connection and the breakers' scripts, the enabled routes,
    the canary's ignore list of each routed model, the contracts already in use (parsed,
    validators compiled), the database pool (its ``min_size`` connections). Called before a server process
    accepts work (``routing.warm``), never before a fork. Raises what the database
    or Redis raise (the caller logs it and starts cold)."""
    gateway = gateway_get()
    if gateway.breakers is not None:
        gateway.breakers.warm()
    for model_id in sorted({r.model_id for r in route_profiles()}):
        ignored_get(model_id)
    # Contracts already in use are parsed now (their validators compiled); one never used
    # stays for its first request, which marks it in use.
    for name, version in ContractVersion.objects.filter(first_used_at__isnull=False).values_list("name", "version"):
        try:
            contract_get(name, version)
        except ContractError:
            continue  # its own requests answer 500 naming the problem
    # This thread's connection back to the pool, for the request threads.
    connections.close_all()


def gateway_flush(timeout_s: float = 5.0) -> None:
    """Wait (at most ``timeout_s``) until the process's gateway wrote its events."""
    events = _gateway_events
    if isinstance(events, BackgroundEventSink):
        events.flush(timeout_s)


def gateway_reset() -> None:
    """Drop the process's gateway (tests change settings between cases)."""
    global _gateway, _gateway_events
    with _gateway_lock:
        if _gateway is not None:
            _gateway.upstream.close()
            if isinstance(_gateway_events, BackgroundEventSink):
                _gateway_events.close()
        _gateway = None
        _gateway_events = None
    routes_cache_clear()
    scorecard_reset()
    with _contracts_lock:
        _contracts.clear()


def chat_completion_create(
    contract: str,
    version: int,
    body: dict[str, Any],
    *,
    operation_id: str | None = None,
    gateway: Gateway | None = None,
    language: str | None = None,
) -> GatewayReply:
    """The in-process client: what ``POST /v1/chat/completions`` does, without HTTP.

    ``contract``/``version`` name the contract; ``body`` is an OpenAI chat request;
    ``operation_id`` is the idempotency key, optional except for contracts with side
    effects; with any contract it means the same (``request_idempotency_claim``).
    ``body["stream"]`` true under a ``prefix`` commit point: an accepted reply carries
    ``stream`` (the event stream, passed on as it arrives). ``language`` (ISO 639-1) is
    the language the reply must be in (pre-commit check).
    Returns a ``GatewayReply`` (status, body, headers); never raises for bad input.
    """
    try:
        spec = contract_get(contract, version)
    except ContractNotFound as exc:
        return error_reply(404, "unknown_contract", str(exc))
    except ContractError as exc:
        return error_reply(500, "invalid_contract", f"stored contract {contract}@{version} is invalid: {exc}")
    try:
        body_check(body)
        request_fields_check(body)
    except BodyInvalid as exc:
        # Refused at the edge: no route sees it, so none can be charged for it.
        return error_reply(400, "invalid_request", str(exc), field=exc.path or None)
    gw = gateway or gateway_get()
    ledger_key, run_id, early = request_idempotency_claim(spec, operation_id, body)
    if early is not None:
        return early
    try:
        result = gw.complete(spec, body, operation_id=run_id or operation_id, stream=body.get("stream") is True,
                             language=language)
    except RequestInvalid as exc:
        request_idempotency_settle(spec, ledger_key, "failed")
        return error_reply(400, "invalid_request", str(exc), field=exc.path or None)
    except Exception:
        request_idempotency_abandon(spec, ledger_key)
        raise
    reply = reply_for(result)
    try:
        # Atomic: a refused write rolls back alone (a savepoint inside a caller's transaction).
        with transaction.atomic():
            request_idempotency_settle(spec, ledger_key, result.outcome, reply)
    except DatabaseError:
        # The answer could not be kept for replay (jsonb refuses U+0000) or the database
        # went away: the client still gets its answer, and the key is not left claimed.
        log.exception("operation %s: its idempotency key could not be settled %s", result.operation_id, result.outcome)
        request_idempotency_abandon(spec, ledger_key)
    return reply


def request_idempotency_abandon(spec: Contract, ledger_key: str | None) -> None:
    """Settle a claimed key whose outcome could not be recorded: "unknown" (kept, never
    replayed) for a contract with side effects, released otherwise, as
    ``request_idempotency_settle`` does for an unknown outcome. When the database refuses
    that too, the key stays claimed until ``ledger_sweep`` marks it unknown after its
    lease (``claim_lease_s``); nothing is raised."""
    try:
        request_idempotency_settle(spec, ledger_key, "unknown")
    except DatabaseError:
        log.exception("idempotency key %s stays claimed until its lease ends", ledger_key)
